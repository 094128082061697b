package dashboard

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
)

// chartBar is one bar found in a chart: its fill, height and title.
type chartBar struct {
	Fill   string
	Height float64
	Title  string
}

// parseChart checks that svg is well-formed XML with an accessible root and
// returns its bars, which are the rect elements that have a title.
func parseChart(t *testing.T, svg string) []chartBar {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	var bars []chartBar
	var rect *chartBar
	var inTitle, root bool
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("chart is not well-formed XML: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			attrs := map[string]string{}
			for _, a := range tok.Attr {
				attrs[a.Name.Local] = a.Value
			}
			switch tok.Name.Local {
			case "svg":
				root = true
				if attrs["role"] != "img" || attrs["aria-labelledby"] == "" || attrs["viewBox"] == "" || attrs["width"] != "100%" {
					t.Errorf("svg root attributes = %v", attrs)
				}
			case "rect":
				h, err := strconv.ParseFloat(attrs["height"], 64)
				if err != nil || h < 0 {
					t.Errorf("bad rect height %q", attrs["height"])
				}
				rect = &chartBar{Fill: attrs["fill"], Height: h}
			case "title":
				inTitle = rect != nil
			}
		case xml.CharData:
			if inTitle {
				rect.Title += string(tok)
			}
		case xml.EndElement:
			switch tok.Name.Local {
			case "title":
				if inTitle {
					bars = append(bars, *rect)
				}
				inTitle = false
			case "rect":
				rect = nil
			}
		}
	}
	if !root {
		t.Fatalf("no svg element in %s", svg)
	}
	return bars
}

// chartDays builds consecutive days from 2026-11-01 with the given amounts,
// given as collected and expenses pairs.
func chartDays(amounts ...string) []chartDay {
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var days []chartDay
	for i := 0; i+1 < len(amounts); i += 2 {
		days = append(days, chartDay{Date: start.AddDate(0, 0, i/2), Collected: amounts[i], Expenses: amounts[i+1]})
	}
	return days
}

// TestDailyChart checks structure, proportions and edge cases of the chart.
func TestDailyChart(t *testing.T) {
	thirty := make([]string, 60)
	for i := range thirty {
		thirty[i] = strconv.Itoa(i*37%500) + ".00"
	}
	tests := []struct {
		name     string
		days     []chartDay
		currency string
		contains []string
		// heights are the expected bar heights relative to each other, or
		// nil to skip the check.
		heights []float64
	}{
		{name: "empty", currency: "GHS", contains: []string{"No data", "0 GHS", "No data for this period."}},
		{name: "zeros", days: chartDays("0.00", "0.00", "0.00", "0.00"), currency: "GHS",
			contains: []string{"100 GHS", "20 GHS", "collected 0.00 GHS and expenses 0.00 GHS"}, heights: []float64{0, 0, 0, 0}},
		{name: "proportional", days: chartDays("100.00", "50.00", "200.00", "25.00"), currency: "GHS",
			contains: []string{"2026-11-02: collected 200.00 GHS", "collected 300.00 GHS and expenses 75.00 GHS in total"},
			heights:  []float64{1, 0.5, 2, 0.25}},
		{name: "negative and unparsable", days: chartDays("40.00", "-30.00", "abc", "NaN", "1e999", "20.00"), currency: "GHS",
			contains: []string{"expenses -30.00 GHS", "2026-11-02: collected 0.00 GHS"}, heights: []float64{1, 0, 0, 0, 0, 0.5}},
		{name: "huge", days: chartDays("1.00", "1000000000000.00", "2.00", "0.00"), currency: "GHS",
			contains: []string{"1T GHS", "expenses 1000000000000.00 GHS"}, heights: []float64{1e-12, 1, 2e-12, 0}},
		{name: "extreme", days: chartDays("1e300", "0.00", "1.7e308", "5.00"), currency: "GHS",
			contains: []string{"e+300 GHS"}},
		{name: "escaped currency", days: chartDays("1.00", "2.00"), currency: `<X&>"`,
			contains: []string{"&lt;X&amp;&gt;&#34;"}},
		{name: "thirty days", days: chartDays(thirty...), currency: "GHS", contains: []string{">2026-11-30<", ">2026-11-26<", ">2026-11-02<"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svg := string(chartOf(tt.days, tt.currency, chartWide))
			bars := parseChart(t, svg)
			if len(bars) != 2*len(tt.days) {
				t.Fatalf("got %d bars for %d days", len(bars), len(tt.days))
			}
			for i, b := range bars {
				want := colourCollect
				if i%2 == 1 {
					want = colourExpenses
				}
				if b.Fill != want {
					t.Errorf("bar %d fill = %q, want %q", i, b.Fill, want)
				}
			}
			if tt.heights != nil {
				top := 0
				for i, rel := range tt.heights {
					if rel > tt.heights[top] {
						top = i
					}
				}
				unit := 0.0
				if tt.heights[top] > 0 {
					unit = bars[top].Height / tt.heights[top]
				}
				for i, rel := range tt.heights {
					if math.Abs(bars[i].Height-rel*unit) > 0.02 {
						t.Errorf("bar %d height = %v, want %v x %v", i, bars[i].Height, rel, unit)
					}
				}
			}
			for _, s := range tt.contains {
				if !strings.Contains(svg, s) {
					t.Errorf("chart lacks %q:\n%s", s, svg)
				}
			}
			for _, s := range []string{"style=", "<style", "<script", "<X", "NaN", "Inf"} {
				if strings.Contains(svg, s) {
					t.Errorf("chart contains %q:\n%s", s, svg)
				}
			}
			if again := string(chartOf(tt.days, tt.currency, chartWide)); again != svg {
				t.Error("chart output is not deterministic")
			}
		})
	}
}

// TestChartAxis checks that gridline steps are round and cover the peak.
func TestChartAxis(t *testing.T) {
	tests := []struct {
		peak, step float64
		ticks      int
	}{
		{0, 20, 5}, {-5, 20, 5}, {0.3, 0.2, 5}, {100, 20, 5}, {101, 25, 5}, {900, 200, 5},
		{1250, 250, 5}, {4100, 1000, 5}, {7e9, 2e9, 4}, {math.MaxFloat64, 2e299, 5},
	}
	for _, tt := range tests {
		step, ticks := chartAxis(tt.peak)
		if math.Abs(step-tt.step) > tt.step*1e-9 || ticks != tt.ticks {
			t.Errorf("chartAxis(%v) = %v, %v, want %v, %v", tt.peak, step, ticks, tt.step, tt.ticks)
		}
	}
}

// chartLabels are the date labels under a chart's bars, in order, with
// their x positions.
func chartLabels(t *testing.T, svg string) (dates []string, xs []float64) {
	t.Helper()
	for _, m := range regexp.MustCompile(`<text x="([0-9.]+)" y="[0-9.]+" text-anchor="middle">(\d{4}-\d{2}-\d{2})</text>`).FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		dates, xs = append(dates, m[2]), append(xs, x)
	}
	return dates, xs
}

// TestChartAxisRunsThroughToday: in both drawings and for every number of
// days, the last day (today) is labelled, the labels are dates as
// YYYY-MM-DD that neither overlap nor leave the drawing, and one day of
// data draws bars that can be seen.
func TestChartAxisRunsThroughToday(t *testing.T) {
	for _, sh := range []chartShape{chartWide, chartNarrow} {
		for n := 1; n <= 30; n++ {
			amounts := make([]string, 2*n)
			for i := range amounts {
				amounts[i] = "0.00"
			}
			amounts[2*n-2] = "32.50" // collected today only
			days := chartDays(amounts...)
			svg := string(chartOf(days, "GHS", sh))
			dates, xs := chartLabels(t, svg)
			last := days[n-1].Date.Format(time.DateOnly)
			if len(dates) == 0 || dates[len(dates)-1] != last {
				t.Errorf("%s, %d days: labels %v, want the last %s", sh.class, n, dates, last)
				continue
			}
			width := float64(len(time.DateOnly)*sh.font) * 0.6
			for i, x := range xs {
				if x-width/2 < 0 || x+width/2 > float64(sh.width) {
					t.Errorf("%s, %d days: label %s at %v leaves the drawing (0 to %d)", sh.class, n, dates[i], x, sh.width)
				}
				if i > 0 && x-xs[i-1] < width {
					t.Errorf("%s, %d days: labels %s and %s overlap (%v apart, %v wide)", sh.class, n, dates[i-1], dates[i], x-xs[i-1], width)
				}
			}
			bars := parseChart(t, svg)
			if today := bars[2*n-2]; today.Height < 10 || !strings.HasPrefix(today.Title, last+": collected 32.50") {
				t.Errorf("%s, %d days: today's bar %+v", sh.class, n, today)
			}
		}
	}
}

// TestOverviewChartOfAYoungAccount: an account opened today with one day
// of figures gets a chart of the last 7 days, today last, not 29 empty days
// and a sliver; an account opened long ago keeps the 30 days; and an
// account with nothing yet is empty, so the overview says where to start.
func TestOverviewChartOfAYoungAccount(t *testing.T) {
	loc, _ := time.LoadLocation("Pacific/Auckland")
	now := time.Date(2026, 11, 27, 23, 30, 0, 0, time.UTC) // 2026-11-28 12:30 in Auckland
	ov := store.Overview{Account: business.Account{Timezone: "Pacific/Auckland", Currency: "NZD", CreatedAt: now.Add(-time.Hour)},
		Today: now.In(loc).Format(time.DateOnly), Days: map[string]business.Figures{}}
	d, err := overviewOf(ov)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Empty {
		t.Error("an account with nothing recorded is not shown as empty")
	}
	ov.Days["2026-11-28"] = business.Figures{SalesCount: 1, Invoiced: 3250, Collected: 3250}
	if d, err = overviewOf(ov); err != nil {
		t.Fatal(err)
	}
	if d.Empty {
		t.Error("an account with a sale is shown as empty")
	}
	if len(d.Days) != 30 || len(d.ChartDays) != chartMinDays || d.ChartDays[len(d.ChartDays)-1].Date.Format(time.DateOnly) != "2026-11-28" ||
		d.ChartDays[6].Collected != "32.50" || d.ChartFrom != "2026-11-22" || d.Opened != "2026-11-28" {
		t.Errorf("an account opened today: %d days, chart of %d from %q: %+v", len(d.Days), len(d.ChartDays), d.ChartFrom, d.ChartDays)
	}
	ov.Account.CreatedAt = now.AddDate(0, 0, -12) // 2026-11-16 in Auckland
	if d, _ = overviewOf(ov); len(d.ChartDays) != 13 || d.ChartFrom != "2026-11-16" {
		t.Errorf("an account opened 12 days ago: chart of %d days from %q", len(d.ChartDays), d.ChartFrom)
	}
	ov.Days["2026-11-10"] = business.Figures{Expenses: 100} // figures before the account's day (an older table)
	if d, _ = overviewOf(ov); len(d.ChartDays) != 19 || d.ChartFrom != "2026-11-10" {
		t.Errorf("figures from before the account opened: chart of %d days from %q", len(d.ChartDays), d.ChartFrom)
	}
	ov.Account.CreatedAt = now.AddDate(-1, 0, 0)
	if d, _ = overviewOf(ov); len(d.ChartDays) != 30 || d.ChartFrom != "" {
		t.Errorf("an account a year old: chart of %d days from %q", len(d.ChartDays), d.ChartFrom)
	}
	if html := string(overviewChart(d.ChartDays, "NZD")); strings.Count(html, "<svg") != 2 || !strings.Contains(html, `class="chart-narrow"`) {
		t.Errorf("the overview's chart is not drawn wide and narrow: %.300s", html)
	}
}
