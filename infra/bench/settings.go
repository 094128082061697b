package main

// The settings and report routes' round trips (part of the round-trips
// step).

import (
	"fmt"
	"time"

	"bizdata/shared/store"
)

// settingsTrips reports the round trips of the settings and report routes, in
// a table of their own, over a small account of its own (a few records of
// each kind, their figures applied by a first summary), and marks their
// functions covered. What the reports read at scale is the Reports section's.
func (b *bench) settingsTrips(covered map[string]bool) error {
	restore, err := b.actAsNewAccount("Trips Shop", fmt.Sprintf("TRIPS%d", time.Now().UnixNano()%1e9))
	if err != nil {
		return err
	}
	defer restore()
	err = addSmallShop(b.post, func(i int) map[string]any {
		return map[string]any{"item_name": fmt.Sprintf("Item %d", i), "category_id": 1, "item_price": "12.50", "quantity": fmt.Sprint(i * 5)}
	}, "Bench", "2026-01-31")
	if err != nil {
		return err
	}
	if err := b.warmKey(); err != nil {
		return err
	}
	if _, err := b.invoke("report-summary", "GET", "/api/v1/reports/summary", "", nil); err != nil { // applies the figures waiting
		return err
	}
	zones := []string{"Africa/Nairobi", "Africa/Accra"}
	cases := []struct {
		function, what, method, path, query string
		body                                func(i int) any
		target                              string
		max                                 int // 0: no round-trip target
	}{
		{"get-settings", "the account's settings", "GET", "/api/v1/user/settings", "", nil, "1", 1},
		{"update-settings", "timezone (a change made while another waits to take effect follows it)", "PUT", "/api/v1/user/settings", "",
			func(i int) any { return map[string]any{"timezone": zones[i%2]} }, "<= 2", 2},
		{"report-summary", "12 months by month (the default), nothing waiting", "GET", "/api/v1/reports/summary", "", nil, "none: items read (see Reports)", 0},
		{"report-summary", "31 days by day, nothing waiting", "GET", "/api/v1/reports/summary", "group_by=day", nil, "none: items read (see Reports)", 0},
		{"report-receivables", "4 open sales (one page of each status)", "GET", "/api/v1/reports/receivables", "", nil, "none: items read (see Reports)", 0},
		{"report-inventory", "3 items (one page)", "GET", "/api/v1/reports/inventory", "", nil, "none: items read (see Reports)", 0},
	}
	b.printf("### Settings and reports\n\nThe settings and report routes, through the Lambda function with the API key cache warm (made warm again before each run: a settings change forgets the account's cached key), over an account of its own with 3 customers, a category, 3 items, 3 expenses and 6 sales, their figures applied by a first summary; each case made %d times, the typical run reported. Target: 1 for the settings read, at most 2 sequential for its write; a report's calls are set by what it reads (a summary: the settings, the figures waiting (a Query of each of their partitions, in parallel), the months and days (in parallel); receivables: the settings, the figures waiting, the sums and the largest debts' index entries, in parallel, then, within %s of a debt's write (the first summary's apply), the debts listed and their customers; inventory: the settings, then the figures waiting, then the worth and the alerts' index entries), and its bound is on items read, measured at scale in the Reports section.\n\n",
		corrRuns, store.DebtsSettle)
	b.printf(tripsTableHead)
	for _, c := range cases {
		covered[c.function] = true
		typical, differed, err := b.typicalRunAfter(corrRuns, b.warmKey, func(i int) error {
			_, err := b.invoke(c.function, c.method, c.path, c.query, bodyAt(c.body, i))
			return err
		})
		if err != nil {
			return fmt.Errorf("%s (%s): %w", c.function, c.what, err)
		}
		met := "n/a"
		if c.max > 0 {
			met = verdict(typical.depth <= c.max)
		}
		b.printTripRow(c.function, c.what, c.method, typical, differed, c.target, met)
	}
	b.printf("\n")
	return nil
}
