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

// Chart geometry and colours. The colours have a contrast ratio above 4.5:1
// against white.
const (
	chartWidth     = 720
	chartHeight    = 300
	chartLeft      = 72
	chartRight     = 16
	chartTop       = 40
	chartBottom    = 40
	chartTicks     = 5
	colourCollect  = "#1b6e3a"
	colourExpenses = "#b3261e"
	colourText     = "#333333"
	colourGrid     = "#d0d0d0"
)

// dailyChart draws days (oldest first) as grouped bars, collected beside
// expenses, with a y axis of round gridline values labelled in currency, a
// date label every few days, and a legend. The result is a self-contained,
// accessible SVG element that uses presentation attributes only, so it needs
// neither inline styles nor scripts. Unparsable amounts count as zero and
// negative amounts draw as empty bars; every text is XML-escaped.
func dailyChart(days []chartDay, currency string) template.HTML {
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
	plotW := float64(chartWidth - chartLeft - chartRight)
	plotH := float64(chartHeight - chartTop - chartBottom)
	baseY := float64(chartHeight - chartBottom)
	cur := chartEsc(currency)

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" role="img" width="100%%" viewBox="0 0 %d %d" preserveAspectRatio="xMidYMid meet" aria-labelledby="daily-chart-title" aria-describedby="daily-chart-desc" font-family="sans-serif" font-size="11" fill="%s">`,
		chartWidth, chartHeight, colourText)
	b.WriteString(`<title id="daily-chart-title">Collected and expenses per day</title>`)
	if len(days) == 0 {
		b.WriteString(`<desc id="daily-chart-desc">No data for this period.</desc>`)
	} else {
		fmt.Fprintf(&b, `<desc id="daily-chart-desc">%d days from %s to %s: collected %s %s and expenses %s %s in total.</desc>`,
			len(days), days[0].Date.Format(time.DateOnly), days[len(days)-1].Date.Format(time.DateOnly),
			chartMoney(totalC), cur, chartMoney(totalE), cur)
	}

	// Legend.
	fmt.Fprintf(&b, `<rect x="%d" y="12" width="12" height="12" fill="%s"/><text x="%d" y="22">Collected</text>`, chartLeft, colourCollect, chartLeft+18)
	fmt.Fprintf(&b, `<rect x="%d" y="12" width="12" height="12" fill="%s"/><text x="%d" y="22">Expenses</text>`, chartLeft+100, colourExpenses, chartLeft+118)

	// Gridlines and y axis labels.
	for i := 0; i <= ticks; i++ {
		y := baseY - plotH*float64(i)/float64(ticks)
		fmt.Fprintf(&b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s" stroke-width="1"/>`,
			chartLeft, chartNum(y), chartWidth-chartRight, chartNum(y), colourGrid)
		fmt.Fprintf(&b, `<text x="%d" y="%s" text-anchor="end">%s %s</text>`,
			chartLeft-6, chartNum(y+4), chartTick(step*float64(i)), cur)
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="1"/>`,
		chartLeft, chartTop, chartLeft, chartHeight-chartBottom, colourText)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="1"/>`,
		chartLeft, chartHeight-chartBottom, chartWidth-chartRight, chartHeight-chartBottom, colourText)

	if len(days) == 0 {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" font-size="14">No data</text></svg>`,
			chartNum(chartLeft+plotW/2), chartNum(chartTop+plotH/2))
		return template.HTML(b.String())
	}

	slot := plotW / float64(len(days))
	barW := math.Min(slot*0.4, 32)
	labelEvery := (len(days) + 5) / 6
	for i, d := range days {
		x := chartLeft + slot*float64(i) + slot/2 - barW
		date := d.Date.Format(time.DateOnly)
		chartRect(&b, x, barW, baseY, chartBarHeight(collected[i], step*float64(ticks), plotH), colourCollect,
			date+": collected "+chartMoney(collected[i])+" "+cur)
		chartRect(&b, x+barW, barW, baseY, chartBarHeight(expenses[i], step*float64(ticks), plotH), colourExpenses,
			date+": expenses "+chartMoney(expenses[i])+" "+cur)
		if i%labelEvery == 0 {
			fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle">%s</text>`,
				chartNum(x+barW), chartHeight-chartBottom+16, chartEsc(d.Date.Format("Jan 2")))
		}
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
