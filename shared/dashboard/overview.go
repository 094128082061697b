package dashboard

import (
	"net/http"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/wire"
)

// The overview is the business at a glance: this month beside last month,
// the last 30 days as a chart, what customers owe by age and what is
// running out. Every figure is computed as the API's reports compute it,
// from the same kept sums, so it matches what a client of the API reads once
// the last changes are applied.

// overviewFigures is one period's sums, as the API's report-summary shows
// them (amounts are the API's decimal strings).
type overviewFigures = wire.Sums

// overviewReceivables is report-receivables' data.
type overviewReceivables struct {
	Report wire.ReceivablesReport `json:"report"`
}

// overviewInventory is report-inventory's data.
type overviewInventory struct {
	Report wire.InventoryReport `json:"report"`
}

// overviewData is what templates/overview.html draws.
type overviewData struct {
	Currency    string
	ThisMonth   overviewFigures
	LastMonth   overviewFigures
	ThisLabel   string // "June 2026"
	LastLabel   string
	Days        []chartDay // the last 30 days, today last
	ChartDays   []chartDay // the days the chart draws: a suffix of Days
	ChartFrom   string     // the chart's first day when it starts after Days' first
	Opened      string     // the account's first day, when ChartFrom is set
	DaysTotals  overviewFigures
	Complete    bool // false when some changes are not counted yet
	Receivables overviewReceivables
	Stock       overviewInventory
	// Empty is an account with nothing in its books yet: no money in or
	// out in the days read, nothing owed and no item. The overview then
	// says what to do first.
	Empty bool
}

// chartMinDays is the fewest days the chart draws: a young account's chart
// starts on the day it opened, but one or two days alone would be a few
// bars spread over the whole width.
const chartMinDays = 7

// overviewPage draws the overview from one read of what the reports keep
// (store.Overview), as of the last change applied to them. For a live
// session the chain leaves the account to it, read beside the rest.
func overviewPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	account := v.acct.ID
	if account == "" {
		account = v.session.Account
	}
	ov, err := s.store.Overview(r.Context(), account)
	if err != nil {
		if v.acct.ID == "" { // no account to draw the page's frame with
			s.renderFailure(w, r, nil, err)
			return nil
		}
		return err
	}
	if v.acct.ID == "" {
		v.acct = ov.Account
	}
	d, err := overviewOf(ov)
	if err != nil {
		return err
	}
	d.Currency = v.acct.Currency
	return s.render(w, r, v, "overview", "Overview", "overview", d)
}

// overviewOf is what the overview draws of ov.
func overviewOf(ov store.Overview) (overviewData, error) {
	today, err := time.Parse(time.DateOnly, ov.Today)
	if err != nil {
		return overviewData{}, err
	}
	thisMonth := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	lastMonth := thisMonth.AddDate(0, -1, 0)
	d := overviewData{Currency: ov.Account.Currency, ThisLabel: thisMonth.Format("January 2006"), LastLabel: lastMonth.Format("January 2006"),
		Complete: ov.Parked == 0}

	// The months and the days as the API's report-summary sums them, from
	// the day sums.
	months, err := business.ReportPeriods(lastMonth.Format(time.DateOnly), ov.Today, business.GroupByMonth)
	if err != nil {
		return overviewData{}, err
	}
	byMonth, _ := business.Summarize(months, ov.Days, nil)
	for _, p := range byMonth {
		switch p.Start {
		case thisMonth.Format(time.DateOnly):
			d.ThisMonth = wire.NewSums(p)
		case lastMonth.Format(time.DateOnly):
			d.LastMonth = wire.NewSums(p)
		}
	}
	days, err := business.ReportPeriods(today.AddDate(0, 0, -29).Format(time.DateOnly), ov.Today, business.GroupByDay)
	if err != nil {
		return overviewData{}, err
	}
	byDay, totals := business.Summarize(days, ov.Days, nil)
	for _, p := range byDay {
		date, err := time.Parse(time.DateOnly, p.Start)
		if err != nil {
			continue
		}
		f := wire.NewSums(p)
		d.Days = append(d.Days, chartDay{Date: date, Collected: f.Collected, Expenses: f.Expenses})
	}
	d.DaysTotals = wire.NewSums(business.PeriodFigures{Figures: totals})
	d.ChartDays = d.Days
	if first := chartFirstDay(ov, today); first > 0 && first < len(d.Days) {
		d.ChartDays, d.ChartFrom = d.Days[first:], d.Days[first].Date.Format(time.DateOnly)
		d.Opened = ov.Account.CreatedAt.In(overviewZone(ov)).Format(time.DateOnly)
	}
	d.Empty = ov.Items == 0 && ov.Receivables.Open == 0 && ov.Receivables.Outstanding == 0 && overviewQuiet(ov.Days)

	d.Receivables.Report = wire.NewReceivablesReport(ov.Receivables, ov.Account.Currency)
	d.Receivables.Report.AsOf = ov.Today
	d.Stock.Report = wire.NewInventoryReport(ov.Stock, ov.Items, ov.Account.Currency)
	return d, nil
}

// chartFirstDay is the index, among the 30 days ending today, of the
// chart's first day: the day the account opened (in its timezone) or the
// first day with figures if earlier, at least chartMinDays before the end;
// 0 for an account older than the 30 days.
func chartFirstDay(ov store.Overview, today time.Time) int {
	if ov.Account.CreatedAt.IsZero() {
		return 0
	}
	opened := ov.Account.CreatedAt.In(overviewZone(ov)).Format(time.DateOnly)
	for date, f := range ov.Days {
		if date < opened && !f.IsZero() {
			opened = date
		}
	}
	start := today.AddDate(0, 0, -29)
	first := 0
	for day := start; day.Format(time.DateOnly) < opened; day = day.AddDate(0, 0, 1) {
		first++
	}
	return min(first, 30-chartMinDays)
}

// overviewQuiet reports whether no day of days has a figure.
func overviewQuiet(days map[string]business.Figures) bool {
	for _, f := range days {
		if !f.IsZero() {
			return false
		}
	}
	return true
}

// overviewZone is the account's timezone (UTC if it cannot be loaded).
func overviewZone(ov store.Overview) *time.Location {
	loc, err := business.LoadTimezone(ov.Account.Timezone)
	if err != nil {
		return time.UTC
	}
	return loc
}
