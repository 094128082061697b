package dashboard

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"time"

	"bizdata/shared/business"
)

// The overview is the business at a glance: this month beside last month,
// the last 30 days as a chart, what customers owe by age and what is
// running out. Every figure comes from the API's reports, so it matches what
// a client of the API reads.

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

// overviewSummary is the part of report-summary's data the overview reads.
type overviewSummary struct {
	Report struct {
		Complete bool              `json:"complete"`
		Periods  []overviewFigures `json:"periods"`
		Totals   overviewFigures   `json:"totals"`
	} `json:"report"`
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
	Days        []chartDay
	DaysTotals  overviewFigures
	Complete    bool // false when some changes are not counted yet
	Receivables overviewReceivables
	Stock       overviewInventory
}

// overviewPage draws the overview from four reports, read at once.
func overviewPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	loc, err := business.LoadTimezone(v.acct.Timezone)
	if err != nil {
		loc = time.UTC
	}
	now := s.now().In(loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	thisMonth := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	lastMonth := thisMonth.AddDate(0, -1, 0)
	ctx := r.Context()

	var months, days overviewSummary
	d := overviewData{Currency: v.acct.Currency, ThisLabel: thisMonth.Format("January 2006"), LastLabel: lastMonth.Format("January 2006")}
	calls := []struct {
		function string
		query    url.Values
		into     any
	}{
		{"report-summary", url.Values{"group_by": {"month"}, "from": {lastMonth.Format(time.DateOnly)}, "to": {today.Format(time.DateOnly)}}, &months},
		{"report-summary", url.Values{"group_by": {"day"}, "from": {today.AddDate(0, 0, -29).Format(time.DateOnly)}, "to": {today.Format(time.DateOnly)}}, &days},
		{"report-receivables", nil, &d.Receivables},
		{"report-inventory", nil, &d.Stock},
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() {
			data, err := s.api.Call(ctx, v.acct, c.function, nil, c.query, nil, "")
			if err == nil {
				err = json.Unmarshal(data, c.into)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}

	for _, p := range months.Report.Periods {
		switch p.Start {
		case thisMonth.Format(time.DateOnly):
			d.ThisMonth = p
		case lastMonth.Format(time.DateOnly):
			d.LastMonth = p
		}
	}
	for _, p := range days.Report.Periods {
		date, err := time.Parse(time.DateOnly, p.Start)
		if err != nil {
			continue
		}
		d.Days = append(d.Days, chartDay{Date: date, Collected: p.Collected, Expenses: p.Expenses})
	}
	d.DaysTotals = days.Report.Totals
	d.Complete = months.Report.Complete && days.Report.Complete
	return s.render(w, r, v, "overview", "Overview", "overview", d)
}
