package dashboard

import (
	"encoding/xml"
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
)

// chartDay is one day of the overview chart: its date and the amounts
// collected and spent, as the reports API writes them (decimal strings with
// two decimals, such as "1250.00").
type chartDay struct {
	Date      time.Time
	Collected string
	Expenses  string
}

// chartShape is one drawing of the chart: its size, margins and text size.
// The overview draws two, a wide one and a narrow one for small screens,
// and the stylesheet shows the one that fits, so a phone gets labels it can
// read rather than a wide drawing shrunk to a third of its size.
type chartShape struct {
	id                       string // suffix of the title's and description's ids
	class                    string
	width, height            int
	left, right, top, bottom int
	font                     int
}

// Chart shapes and colours. The right margin holds half of today's label,
// which sits under the last bars. The colours have a contrast ratio above 4.5:1
// against white.
var (
	chartWide   = chartShape{id: "", class: "chart-wide", width: 720, height: 300, left: 72, right: 36, top: 40, bottom: 40, font: 11}
	chartNarrow = chartShape{id: "-narrow", class: "chart-narrow", width: 360, height: 260, left: 60, right: 40, top: 36, bottom: 34, font: 12}
)

const (
	chartTicks     = 5
	colourCollect  = "#1b6e3a"
	colourExpenses = "#b3261e"
	colourText     = "#333333"
	colourGrid     = "#d0d0d0"
)

// overviewChart is the overview's chart of days in both shapes.
func overviewChart(days []chartDay, currency string) template.HTML {
	return chartOf(days, currency, chartWide) + chartOf(days, currency, chartNarrow)
}

// chartLabelEvery is how many days apart the date labels are, so that
// labels of YYYY-MM-DD at the shape's text size never overlap.
func chartLabelEvery(sh chartShape, days int) int {
	slot := float64(sh.width-sh.left-sh.right) / float64(days)
	label := float64(len(time.DateOnly)*sh.font)*0.6 + 8
	return max(1, int(math.Ceil(label/slot)))
}

// chartOf draws days (oldest first) as grouped bars, collected beside
// expenses, with a y axis of round gridline values labelled in currency, a
// date label every few days counted back from the last day (today, which is
// always labelled), and a legend. The result is a self-contained,
// accessible SVG element that uses presentation attributes only, so it needs
// neither inline styles nor scripts. Unparsable amounts count as zero and
// negative amounts draw as empty bars; every text is XML-escaped.
func chartOf(days []chartDay, currency string, sh chartShape) template.HTML {
	collected := make([]float64, len(days))
	expenses := make([]float64, len(days))
	var totalC, totalE, peak float64
	for i, d := range days {
		collected[i], expenses[i] = chartAmount(d.Collected), chartAmount(d.Expenses)
		totalC += collected[i]
		totalE += expenses[i]
		peak = math.Max(peak, math.Max(collected[i], expenses[i]))
	}
	step, ticks := chartAxis(peak)
	plotW := float64(sh.width - sh.left - sh.right)
	plotH := float64(sh.height - sh.top - sh.bottom)
	baseY := float64(sh.height - sh.bottom)
	cur := chartEsc(currency)

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="%s" role="img" width="100%%" viewBox="0 0 %d %d" preserveAspectRatio="xMidYMid meet" aria-labelledby="daily-chart-title%s" aria-describedby="daily-chart-desc%s" font-family="sans-serif" font-size="%d" fill="%s">`,
		sh.class, sh.width, sh.height, sh.id, sh.id, sh.font, colourText)
	fmt.Fprintf(&b, `<title id="daily-chart-title%s">Collected and expenses per day</title>`, sh.id)
	if len(days) == 0 {
		fmt.Fprintf(&b, `<desc id="daily-chart-desc%s">No data for this period.</desc>`, sh.id)
	} else {
		fmt.Fprintf(&b, `<desc id="daily-chart-desc%s">%d days from %s to %s: collected %s %s and expenses %s %s in total.</desc>`,
			sh.id, len(days), days[0].Date.Format(time.DateOnly), days[len(days)-1].Date.Format(time.DateOnly),
			chartMoney(totalC), cur, chartMoney(totalE), cur)
	}

	// Legend.
	fmt.Fprintf(&b, `<rect x="%d" y="12" width="12" height="12" fill="%s"/><text x="%d" y="22">Collected</text>`, sh.left, colourCollect, sh.left+18)
	fmt.Fprintf(&b, `<rect x="%d" y="12" width="12" height="12" fill="%s"/><text x="%d" y="22">Expenses</text>`, sh.left+100, colourExpenses, sh.left+118)

	// Gridlines and y axis labels.
	for i := 0; i <= ticks; i++ {
		y := baseY - plotH*float64(i)/float64(ticks)
		fmt.Fprintf(&b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s" stroke-width="1"/>`,
			sh.left, chartNum(y), sh.width-sh.right, chartNum(y), colourGrid)
		fmt.Fprintf(&b, `<text x="%d" y="%s" text-anchor="end">%s %s</text>`,
			sh.left-6, chartNum(y+4), chartTick(step*float64(i)), cur)
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="1"/>`,
		sh.left, sh.top, sh.left, sh.height-sh.bottom, colourText)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="1"/>`,
		sh.left, sh.height-sh.bottom, sh.width-sh.right, sh.height-sh.bottom, colourText)

	if len(days) == 0 {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" font-size="14">No data</text></svg>`,
			chartNum(float64(sh.left)+plotW/2), chartNum(float64(sh.top)+plotH/2))
		return template.HTML(b.String())
	}

	slot := plotW / float64(len(days))
	barW := math.Min(slot*0.4, 32)
	for i, d := range days {
		x := float64(sh.left) + slot*float64(i) + slot/2 - barW
		date := d.Date.Format(time.DateOnly)
		chartRect(&b, x, barW, baseY, chartBarHeight(collected[i], step*float64(ticks), plotH), colourCollect,
			date+": collected "+chartMoney(collected[i])+" "+cur)
		chartRect(&b, x+barW, barW, baseY, chartBarHeight(expenses[i], step*float64(ticks), plotH), colourExpenses,
			date+": expenses "+chartMoney(expenses[i])+" "+cur)
	}
	// Date labels, counted back from the last day so that today is always
	// labelled: each centred under its bars but kept inside the drawing,
	// and one that would then touch its right neighbour left out.
	labelW := float64(len(time.DateOnly)*sh.font) * 0.6
	var labels []string
	right := math.Inf(1)
	for i := len(days) - 1; i >= 0; i -= chartLabelEvery(sh, len(days)) {
		cx := float64(sh.left) + slot*float64(i) + slot/2
		cx = math.Min(math.Max(cx, labelW/2+2), float64(sh.width)-labelW/2-2)
		if right-cx < labelW+4 {
			continue
		}
		right = cx
		labels = append(labels, fmt.Sprintf(`<text x="%s" y="%d" text-anchor="middle">%s</text>`,
			chartNum(cx), sh.height-sh.bottom+16, chartEsc(days[i].Date.Format(time.DateOnly))))
	}
	for i := len(labels) - 1; i >= 0; i-- {
		b.WriteString(labels[i])
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// chartRect writes one bar rising from baseY with an already escaped title.
func chartRect(b *strings.Builder, x, w, baseY, h float64, fill, title string) {
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`,
		chartNum(x), chartNum(baseY-h), chartNum(w), chartNum(h), fill, title)
}

// chartBarHeight scales v to the plot height for an axis from 0 to axisMax,
// clamping negative amounts to an empty bar and huge ones to the top.
func chartBarHeight(v, axisMax, plotH float64) float64 {
	return plotH * min(max(v, 0), axisMax) / axisMax
}

// chartAmount parses a decimal amount string, returning zero for anything that is
// not a finite number.
func chartAmount(s string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// chartAxis returns a round gridline step (1, 2, 2.5 or 5 times a power of
// ten) and how many steps, at most chartTicks, cover peak. A non-positive peak
// gets an axis of 0 to 100, a small one an axis of at least 0 to 1, and a
// huge one an axis of at most about 1e300, which keeps the axis finite.
func chartAxis(peak float64) (step float64, ticks int) {
	switch {
	case peak > 1e300:
		peak = 1e300
	case peak <= 0:
		peak = 100
	case peak < 1:
		peak = 1
	}
	raw := peak / chartTicks
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * mag
	for _, m := range []float64{5, 2.5, 2, 1} {
		if m*mag >= raw {
			step = m * mag
		}
	}
	return step, max(1, int(math.Ceil(peak/step-1e-9)))
}

// chartTick formats an axis value compactly, such as "2.5k", "40M" or
// "1e+20".
func chartTick(v float64) string {
	if v >= 1e15 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	suffix := ""
	for _, u := range []struct {
		size float64
		name string
	}{{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "k"}} {
		if v >= u.size {
			v, suffix = v/u.size, u.name
			break
		}
	}
	return chartNum(v) + suffix
}

// chartMoney formats an amount with two decimals.
func chartMoney(v float64) string {
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// chartNum formats a coordinate or label value with at most two decimals.
func chartNum(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// chartEsc escapes s for use in XML or HTML text and attribute values, replacing
// characters that XML does not allow.
func chartEsc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // A strings.Builder never fails.
	return b.String()
}
