package main

// The reports step: what each report reads, at 10,000 and at 20,000 sales
// spread over a year, against a get-sale.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"bizdata/shared/store"
)

// reportCase is one report request.
type reportCase struct {
	name, function, query string
	runs                  int
	target                func(s *reportShop, c reqCost, body string) (string, bool) // the target, and whether c meets it
	// sameCount: the items read must not grow from one volume to the
	// next; maxRatio (if set): the latency at most this many get-sales.
	sameCount bool
	maxRatio  float64
}

// reportRun is one case measured at one volume.
type reportRun struct {
	cost        reqCost   // the most any run cost (each figure on its own)
	costs       []reqCost // each run's
	median, get time.Duration
	body        string
}

// spread formats the runs' values of one figure: "n" when every run had the
// same, "min–max" otherwise.
func (r reportRun) spread(of func(reqCost) int, format func(int) string) string {
	lo, hi := of(r.costs[0]), of(r.costs[0])
	for _, c := range r.costs {
		lo, hi = min(lo, of(c)), max(hi, of(c))
	}
	if lo == hi {
		return format(lo)
	}
	return format(lo) + "–" + format(hi)
}

// readsText and tripsText are the runs' items read, and calls (sequential
// round trips), as spread formats them.
func (r reportRun) readsText() string {
	return r.spread(func(c reqCost) int { return c.reads }, thousands)
}

func (r reportRun) tripsText() string {
	return r.spread(func(c reqCost) int { return c.calls }, thousands) + " (" + r.spread(func(c reqCost) int { return c.depth }, thousands) + ")"
}

// measureCase makes the case warm+runs times, each followed by a get-sale of the
// shop, and returns the median of each and what each run cost.
func (s *reportShop) measureCase(c reportCase, warm int, before func() error) (reportRun, error) {
	var rep, get []time.Duration
	var out reportRun
	for i := 0; i < warm+c.runs; i++ {
		if before != nil && i >= warm {
			if err := before(); err != nil {
				return out, err
			}
		}
		body, d, cost, err := s.invoke(c.function, "GET", "/api/v1/reports/"+strings.TrimPrefix(c.function, "report-"), c.query)
		if err != nil {
			return out, fmt.Errorf("%s: %w", c.name, err)
		}
		_, g, _, err := s.invoke("get-sale", "GET", "/api/v1/sales/100042", "")
		if err != nil {
			return out, err
		}
		if i < warm {
			continue
		}
		out.costs, out.body = append(out.costs, cost), body
		out.cost = reqCost{max(out.cost.reads, cost.reads), max(out.cost.calls, cost.calls), max(out.cost.depth, cost.depth)}
		rep, get = append(rep, d), append(get, g)
	}
	out.median, out.get = median(rep), median(get)
	return out, nil
}

// reportField reads a number of a report's response: data.report.<path>.
func reportField(body string, path ...string) float64 {
	var v any
	if json.Unmarshal([]byte(body), &v) != nil {
		return -1
	}
	for _, k := range append([]string{"data", "report"}, path...) {
		m, ok := v.(map[string]any)
		if !ok {
			return -1
		}
		v = m[k]
	}
	switch x := v.(type) {
	case float64:
		return x
	case string:
		var f float64
		if _, err := fmt.Sscan(x, &f); err == nil {
			return f
		}
	}
	return -1
}

func atMost(n int) func(*reportShop, reqCost, string) (string, bool) {
	return func(_ *reportShop, c reqCost, _ string) (string, bool) {
		return fmt.Sprintf("<= %d", n), c.reads <= n
	}
}

// reports measures each report at 10,000 and at 20,000 sales.
func (b *bench) reports() error {
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	s, cleanup, err := b.newReportShop(ctx)
	if cleanup != nil {
		defer cleanup()
	}
	if err != nil {
		return err
	}
	defer func() { // the consumer stopped between batches
		s.gate.Lock()
		cancel()
		s.gate.Unlock()
	}()
	if err := s.setup(); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	cases := []reportCase{
		{"summary, 12 months by month", "report-summary", "from=2025-01-01&to=2025-12-31&group_by=month", 21, atMost(400), true, 0},
		{"summary, 31 days by day", "report-summary", "from=2025-03-01&to=2025-03-31&group_by=day", 21, atMost(200), true, 0},
		{"summary, a quarter by week", "report-summary", "from=2025-04-01&to=2025-06-30&group_by=week", 21,
			func(_ *reportShop, c reqCost, _ string) (string, bool) {
				return "none stated (91 days + settings: 92)", true
			}, true, 0},
		{"receivables", "report-receivables", "", 11, atMost(400), true, 10},
		{"inventory", "report-inventory", "", 11, atMost(400), false, 10},
	}
	waitCase := reportCase{fmt.Sprintf("summary, 12 months by month, %d figures items waiting", reportWaiting), "report-summary",
		"from=2025-01-01&to=2025-12-31&group_by=month", 5, nil, false, 0}
	freshCase := reportCase{fmt.Sprintf("receivables, a debt written less than %s before", store.DebtsSettle), "report-receivables", "", 11, nil, false, 0}
	type volume struct {
		sales, items            int
		loaded, took            time.Duration
		first, left             int
		runs                    []reportRun
		waited, fresh           reportRun
		totalSales, totalIssued float64
	}
	var vols []volume
	for v := 0; v < 2; v++ {
		var vol volume
		start := time.Now()
		if v == 1 { // the second volume's inventory is ten times the first's
			if err := s.addItems(s.items, reportItemsMore); err != nil {
				return fmt.Errorf("load items: %w", err)
			}
		}
		if err := s.loadYear(reportVolume, reportExpenses); err != nil {
			return fmt.Errorf("load: %w", err)
		}
		vol.items = s.items
		vol.sales, vol.loaded = s.sales, time.Since(start)
		if vol.first, vol.took, vol.left, err = s.settleFigures(5 * time.Minute); err != nil {
			return fmt.Errorf("settle: %w", err)
		}
		for _, c := range cases {
			r, err := s.measureCase(c, 3, nil)
			if err != nil {
				return err
			}
			vol.runs = append(vol.runs, r)
		}
		renames := 0
		if vol.fresh, err = s.measureCase(freshCase, 0, func() error { renames++; return s.renameApplied(renames) }); err != nil {
			return err
		}
		sum := vol.runs[0].body
		vol.totalSales, vol.totalIssued = reportField(sum, "totals", "sales_count"), reportField(sum, "totals", "invoiced")
		// A consumer that has fallen behind: paused, while 50 expenses each
		// of a day of its own wait to be applied by the report.
		s.gate.Lock()
		batch := 0
		vol.waited, err = s.measureCase(waitCase, 0, func() error {
			s.clock.spread(reportYear.Add(time.Duration(batch)*time.Hour), reportYearLen, reportWaiting)
			batch++
			defer s.clock.stop(reportAfter)
			if err := parallel(reportWaiting, func(i int) error {
				_, err := s.request("POST", "/api/v1/expenses/add", map[string]any{"expense_type": "Fuel",
					"expense_amount": "1.00", "payment_method": "Cash", "created_by": "Bench"})
				return err
			}); err != nil {
				return err
			}
			if n, err := s.figuresWaiting(); err != nil || n != reportWaiting {
				return fmt.Errorf("%d figures items wait, want %d (%v)", n, reportWaiting, err)
			}
			return nil
		})
		s.gate.Unlock()
		if err != nil {
			return err
		}
		vols = append(vols, vol)
	}

	b.printf("## Reports\n\n")
	b.printf("A shop of its own, on a table of its own in a DynamoDB Local of its own, whose stream feeds the apply-report-figures handler (`lambdas.ApplyReportFigures` through `streampoll.PollMapping` with the template's mapping, as the devserver runs it, on a DynamoDB client of its own). "+
		"The store's clock (`SetClock`) stamps the shop's sales and expenses evenly over 2025 (timezone Africa/Accra: UTC days), so every day of the year has figures: "+
		"%s sales (a third draft, a third partial, a third paid, as the main load; each due 30 days after it was made) with %s expenses, then %s sales and %s expenses more; %s inventory items (a quarter alerting at 10, a fortieth out of stock), then 18,000 more with the second volume; 20 customers. "+
		"(The main load is not used: its sales are all stamped within a few minutes, so all its figures fall on one day.) "+
		"Each report through its Lambda function, API key cache warm, once every figures item had been applied and %s had passed since (the steady state: receivables read the debts' index entries alone once no debt has been written for that long; the last row measures them within it); items read are the Query's ScannedCount and the items GetItem and BatchGetItem returned, counted by SDK middleware; calls and sequential round trips as in the round trips table; where the runs differed, the least and the most (a target is checked against the most). "+
		"Latency: the median of the runs (summaries 21, receivables and inventory 11, after 3 warm-ups), each followed by a get-sale of the shop, against the median of those get-sales. "+
		"Targets: a 12-month summary by month reads at most 400 items and a 31-day summary by day at most 200, the same count at 10,000 and at 20,000 sales; receivables at most 400 items, the same count at both volumes, and inventory at most 400 at %s and at %s items, each at most 10 times as long as a get-sale.\n\n",
		thousands(reportVolume), thousands(reportExpenses), thousands(reportVolume), thousands(reportExpenses), thousands(vols[0].items), store.DebtsSettle, thousands(vols[0].items), thousands(vols[1].items))
	v0, v1 := thousands(vols[0].sales), thousands(vols[1].sales)
	b.printf("| report | query | items read at %s sales | at %s | target | met | calls (sequential) at %s | at %s | latency ÷ get-sale at %s | at %s |\n|---|---|---|---|---|---|---|---|---|---|\n",
		v0, v1, v0, v1, v0, v1)
	for i, c := range cases {
		r0, r1 := vols[0].runs[i], vols[1].runs[i]
		t0, ok0 := c.target(s, r0.cost, r0.body)
		t1, ok1 := c.target(s, r1.cost, r1.body)
		target := t0
		if t1 != t0 {
			target = t0 + " at " + thousands(vols[0].sales) + "; " + t1 + " at " + thousands(vols[1].sales)
		}
		met := "yes"
		if !ok0 || !ok1 {
			met = "no"
		}
		r0x, r1x := float64(r0.median)/float64(r0.get), float64(r1.median)/float64(r1.get)
		if c.maxRatio > 0 {
			target += fmt.Sprintf("; latency <= %.0f× a get-sale", c.maxRatio)
			if r0x > c.maxRatio || r1x > c.maxRatio {
				met = "no (latency)"
			}
		}
		if c.sameCount {
			if r0.cost.reads != r1.cost.reads {
				met = "no (the count grew)"
			} else if met == "yes" {
				met = "yes, the same count"
			}
		}
		query := c.query
		if query == "" {
			query = "(none)"
		}
		b.printf("| %s | `%s` | %s | %s | %s | %s | %s | %s | %.2f | %.2f |\n", c.name, query,
			r0.readsText(), r1.readsText(), target, met, r0.tripsText(), r1.tripsText(), r0x, r1x)
	}
	w0, w1 := vols[0].waited, vols[1].waited
	b.printf("| %s (the consumer paused; %d runs) | `%s` | %s | %s | none: the bound holds once applied (a report applies at most 1,000; more is EBUSY) | n/a | %s | %s | %.2f | %.2f |\n",
		waitCase.name, waitCase.runs, waitCase.query, w0.readsText(), w1.readsText(), w0.tripsText(), w1.tripsText(),
		float64(w0.median)/float64(w0.get), float64(w1.median)/float64(w1.get))
	f0, f1 := vols[0].fresh, vols[1].fresh
	b.printf("| %s (each run after a rename of a debtor, applied by the consumer; %d runs) | `(none)` | %s | %s | none: the debts listed are read from the table again, until the index has surely caught up | n/a | %s | %s | %.2f | %.2f |\n\n",
		freshCase.name, freshCase.runs, f0.readsText(), f1.readsText(), f0.tripsText(), f1.tripsText(),
		float64(f0.median)/float64(f0.get), float64(f1.median)/float64(f1.get))
	for _, v := range vols {
		consumer := fmt.Sprintf("the stream's consumer had applied all %d figures items waiting at the end of the load %s later", v.first, v.took.Round(100*time.Millisecond))
		if v.left > 0 {
			consumer = fmt.Sprintf("of the %d figures items waiting at the end of the load, %d were still waiting %s later and were applied by report calls", v.first, v.left, v.took.Round(100*time.Millisecond))
		}
		b.printf("- At %s sales: loaded in %s; %s; get-sale median %s; the 12-month summary counted %s sales, %.2f invoiced (expected %s, %d.00).\n",
			thousands(v.sales), v.loaded.Round(time.Second), consumer, v.runs[0].get.Round(time.Microsecond), thousands(int(v.totalSales)), v.totalIssued, thousands(v.sales), v.sales*50)
	}
	b.printf("- The waiting row: before each run, %d expenses of 1.00 are added (each on a day of its own; they stay, so the second volume has %d more expenses than loaded) while the consumer is paused; the report applies them (a Query of each partition of waiting items, in parallel, a GetItem of the account's timezones, one TransactWriteItems per %d at most) before it reads the days. The consumer was handed %d figures inserts in all (those a report had applied first it skips).\n\n",
		reportWaiting, waitCase.runs*reportWaiting, 40, s.consumed.Load())
	return s.busySummaries()
}
