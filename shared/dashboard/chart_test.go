package dashboard

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
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
		{name: "thirty days", days: chartDays(thirty...), currency: "GHS", contains: []string{"Nov 1<", "Nov 26<"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svg := string(dailyChart(tt.days, tt.currency))
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
			if again := string(dailyChart(tt.days, tt.currency)); again != svg {
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
