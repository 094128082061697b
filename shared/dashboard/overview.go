package dashboard

import (
	"net/http"
	"strconv"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/store"
)

// The overview is the business at a glance: this month beside last month,
// the last 30 days as a chart, what customers owe by age and what is
// running out. Every figure is computed as the API's reports compute it,
// from the same kept sums, so it matches what a client of the API reads once
// the last changes are applied.

// overviewFigures is one period of the API's report-summary, as the
// overview shows it (amounts are the API's decimal strings).
type overviewFigures struct {
	Start      string `json:"start"`
	End        string `json:"end"`
	SalesCount int64  `json:"sales_count"`
	Invoiced   string `json:"invoiced"`
	Collected  string `json:"collected"`
	Refunded   string `json:"refunded"`
	Expenses   string `json:"expenses"`
	Net        string `json:"net"`
}

// overviewAging is the API's receivables by age: what is not yet due
// (current) and what is overdue by 1-30, 31-60, 61-90 and over 90 days.
type overviewAging struct {
	Current string `json:"current"`
	D1To30  string `json:"1_30"`
	D31To60 string `json:"31_60"`
	D61To90 string `json:"61_90"`
	Over90  string `json:"over_90"`
}

// overviewDebtor is one customer who owes money, with its buckets.
type overviewDebtor struct {
	CustomerID  string        `json:"customer_id"`
	Name        string        `json:"name"`
	Outstanding string        `json:"outstanding"`
	Buckets     overviewAging `json:"buckets"`
}

// overviewReceivables is report-receivables' data.
type overviewReceivables struct {
	Report struct {
		AsOf        string           `json:"as_of"`
		Outstanding string           `json:"outstanding"`
		OpenSales   int64            `json:"open_sales"`
		Buckets     overviewAging    `json:"buckets"`
		Customers   []overviewDebtor `json:"customers"`
	} `json:"report"`
}

// overviewStockAlert is an item low on or out of stock.
type overviewStockAlert struct {
	ItemCode        string `json:"item_code"`
	ItemName        string `json:"item_name"`
	Quantity        string `json:"quantity"`
	MinimumQtyAlert string `json:"minimum_qty_alert"`
	Status          string `json:"status"`
}

// overviewInventory is report-inventory's data.
type overviewInventory struct {
	Report struct {
		ItemsCount int                  `json:"items_count"`
		Counts     map[string]int       `json:"counts"`
		Alerts     []overviewStockAlert `json:"low_and_out_items"`
		Truncated  bool                 `json:"low_and_out_truncated"`
	} `json:"report"`
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
			d.ThisMonth = toOverviewFigures(p)
		case lastMonth.Format(time.DateOnly):
			d.LastMonth = toOverviewFigures(p)
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
		f := toOverviewFigures(p)
		d.Days = append(d.Days, chartDay{Date: date, Collected: f.Collected, Expenses: f.Expenses})
	}
	d.DaysTotals = toOverviewFigures(business.PeriodFigures{Figures: totals})
	d.ChartDays = d.Days
	if first := chartFirstDay(ov, today); first > 0 && first < len(d.Days) {
		d.ChartDays, d.ChartFrom = d.Days[first:], d.Days[first].Date.Format(time.DateOnly)
		d.Opened = ov.Account.CreatedAt.In(overviewZone(ov)).Format(time.DateOnly)
	}
	d.Empty = ov.Items == 0 && ov.Receivables.Open == 0 && ov.Receivables.Outstanding == 0 && overviewQuiet(ov.Days)

	rec := &d.Receivables.Report
	rec.AsOf, rec.Outstanding, rec.OpenSales = ov.Today, money.FormatCents(ov.Receivables.Outstanding), int64(ov.Receivables.Open)
	rec.Buckets = toOverviewAging(ov.Receivables.Aging)
	for _, x := range ov.Receivables.Debtors {
		rec.Customers = append(rec.Customers, overviewDebtor{CustomerID: strconv.FormatInt(x.CustomerID, 10), Name: x.Name,
			Outstanding: money.FormatCents(x.Outstanding), Buckets: toOverviewAging(x.Aging)})
	}
	stock := &d.Stock.Report
	stock.ItemsCount, stock.Truncated = ov.Items, ov.Stock.AlertsTruncated
	stock.Counts = map[string]int{business.StockIn: ov.Stock.InStock, business.StockLow: ov.Stock.LowStock, business.StockOut: ov.Stock.OutOfStock}
	for _, it := range ov.Stock.Alerts {
		stock.Alerts = append(stock.Alerts, overviewStockAlert{ItemCode: it.ItemCode, ItemName: it.ItemName, Quantity: it.Quantity.String(),
			MinimumQtyAlert: it.MinimumQtyAlert.String(), Status: it.Status()})
	}
	return d, nil
}

// toOverviewFigures is a period's figures as the API's report-summary
// shows them.
func toOverviewFigures(p business.PeriodFigures) overviewFigures {
	return overviewFigures{Start: p.Start, End: p.End, SalesCount: p.SalesCount, Invoiced: money.FormatCents(p.Invoiced),
		Collected: money.FormatCents(p.Collected), Refunded: money.FormatCents(p.Refunded), Expenses: money.FormatCents(p.Expenses),
		Net: money.FormatCents(p.Net())}
}

// toOverviewAging is an aging as the API's report-receivables shows it.
func toOverviewAging(a business.Aging) overviewAging {
	return overviewAging{Current: money.FormatCents(a.Current), D1To30: money.FormatCents(a.Days1To30), D31To60: money.FormatCents(a.Days31To60),
		D61To90: money.FormatCents(a.Days61To90), Over90: money.FormatCents(a.Over90)}
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
