package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"

	"github.com/google/go-cmp/cmp"
)

// applied applies o's account's changes still waiting, as the stream's
// consumer does within a second: the overview shows the figures as the last
// applied change left them.
func applied(t testing.TB, o *owner) {
	t.Helper()
	ctx := context.Background()
	waiting, err := o.b.st.WaitingFigures(ctx, o.acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.b.st.ApplyFigures(ctx, o.acct.ID, waiting); err != nil {
		t.Fatal(err)
	}
}

func TestOverviewShowsTheMonthTheDaysAndWhatIsOwed(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("OVERVIEW1")
	salesFixture(t, o, "300001", "15.00")
	if st, data := o.callAPI(http.MethodPost, "/api/v1/expenses/add", map[string]any{
		"expense_type": "Rent", "expense_amount": "7.00", "payment_method": "Cash", "created_by": "Ama"}); st != http.StatusOK {
		t.Fatalf("add expense: %d %s", st, data)
	}
	if st, data := o.callAPI(http.MethodPost, "/api/v1/inventory/items/add", map[string]any{
		"item_code": "SALT", "item_name": "Salt 1kg", "category_id": 1, "item_price": "2.00", "quantity": "1", "minimum_qty_alert": "5"}); st != http.StatusOK {
		t.Fatalf("add item: %d %s", st, data)
	}
	applied(t, o)

	st, body, _ := o.get("/dashboard")
	if st != http.StatusOK {
		t.Fatalf("overview: %d %s", st, body)
	}
	loc, err := business.LoadTimezone(o.acct.Timezone)
	if err != nil {
		loc = time.UTC
	}
	today := time.Now().In(loc).Format(time.DateOnly)
	mustContain(t, body,
		"Collected this month", "Expenses this month", "Net this month", "Invoiced this month",
		// this month's figures: 15.00 collected, 25.00 invoiced, 7.00 spent, 8.00 net
		`<p class="value">GHS 15.00</p>`, `<p class="value">GHS 25.00</p>`, `<p class="value">GHS 7.00</p>`, `<p class="value">GHS 8.00</p>`,
		// the chart's bars for today, and the same figures as a table
		"<title>"+today+": collected 15.00 GHS</title>", "<title>"+today+": expenses 7.00 GHS</title>",
		"Collected and expenses per day, last 30 days",
		// what is owed: 10.00 not yet due (due 2099), with the unpaid sales,
		// as of the changes applied
		"Ama Mensah", "GHS 10.00", `href="/dashboard/sales?payment_status=partial"`, "counting the changes applied so far",
		// the item running out
		`href="/dashboard/inventory/SALT"`, "Salt 1kg", "Low stock")
}

// TestOverviewCostAndFigures: the overview of a live session makes at most
// 8 DynamoDB calls in at most 3 sequential round trips (counted by SDK
// middleware: the session, then the account beside the reports' sums, then
// the debtors' names; one more of each within the settle time of a debt's
// write, when the debts are read again), and once the changes are applied
// its figures are the API reports' for the same dates: this month and last
// month, the last 30 days, receivables in every bucket with the customers'
// current names, and the stock alerts.
func TestOverviewCostAndFigures(t *testing.T) {
	var calls atomic.Int64
	var spans store.Calls
	b := newBoard(t, store.CountCalls(&calls), spans.Option())
	o := b.newOwner("OVERVIEW2")
	salesFixture(t, o, "400001", "15.00")
	api := func(method, path string, body any) json.RawMessage {
		t.Helper()
		st, data := o.callAPI(method, path, body)
		if st != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, path, st, data)
		}
		return data
	}
	day := func(d int) string { return time.Now().UTC().AddDate(0, 0, d).Format(time.DateOnly) }
	// Sales owing in every bucket once the clock has moved on.
	for i, due := range []string{day(40), day(20), day(-5), day(-40), day(-70), day(-200)} {
		sale := map[string]any{"invoice_code": fmt.Sprintf("4100%02d", i), "customer_id": 1, "sub_total_amount": "10.00", "total_amount": "10.00",
			"amount_paid": fmt.Sprintf("%d.00", i), "invoice_type": "main", "payment_type": "Cash", "due_date": due,
			"items": []map[string]any{{"item_name": "Service", "unit_price": "10.00", "quantity": "1"}}}
		api(http.MethodPost, "/api/v1/sales/add", sale)
	}
	api(http.MethodPost, "/api/v1/customers/add", map[string]any{"name": "Kojo"})
	api(http.MethodPost, "/api/v1/sales/add", map[string]any{"invoice_code": "420000", "customer_id": 2, "sub_total_amount": "99.00",
		"total_amount": "99.00", "amount_paid": "0", "invoice_type": "main", "payment_type": "Cash", "due_date": day(1),
		"items": []map[string]any{{"item_name": "Service", "unit_price": "99.00", "quantity": "1"}}})
	api(http.MethodPost, "/api/v1/expenses/add", map[string]any{"expense_type": "Rent", "expense_amount": "7.00", "payment_method": "Cash", "created_by": "Ama"})
	api(http.MethodPost, "/api/v1/inventory/items/add", map[string]any{"item_code": "SALT", "item_name": "Salt 1kg", "category_id": 1,
		"item_price": "2.00", "quantity": "1", "minimum_qty_alert": "5"})
	api(http.MethodPost, "/api/v1/inventory/items/add", map[string]any{"item_code": "SUGAR", "item_name": "Sugar", "category_id": 1,
		"item_price": "3.00", "quantity": "0", "minimum_qty_alert": "1"})
	// A month on: what was sold is last month's, and some of it overdue;
	// this month has a sale and an expense of its own, and the first
	// customer a new name.
	b.later(33 * 24 * time.Hour)
	if st, body, _ := o.signIn(o.email, testPassword); st != http.StatusOK {
		t.Fatalf("sign in again: %d %s", st, body)
	}
	salesAdd(t, o, "430000", "25.00")
	api(http.MethodPost, "/api/v1/expenses/add", map[string]any{"expense_type": "Fuel", "expense_amount": "3.50", "payment_method": "Cash", "created_by": "Ama"})
	api(http.MethodPut, "/api/v1/customers/1", map[string]any{"name": "Ama Owusu"})
	applied(t, o)

	if st, _, _ := o.get("/dashboard"); st != http.StatusOK { // the session's last use stamped
		t.Fatalf("overview: %d", st)
	}
	// Within the settle time of a debt's write the debts listed are read
	// from the table again: one BatchGetItem more, one round trip more.
	// After it, the steady state.
	var body string
	for _, c := range []struct {
		settle       time.Duration
		calls, trips int
	}{{time.Hour, 9, 4}, {0, 8, 3}} {
		b.st.SetDebtsSettle(c.settle)
		n, mark := calls.Load(), spans.Mark()
		var st int
		st, body, _ = o.get("/dashboard")
		if st != http.StatusOK {
			t.Fatalf("overview: %d %s", st, body)
		}
		made, depth := spans.Since(mark)
		t.Logf("the overview (debts settle in %s): %d DynamoDB calls, %d sequential", c.settle, calls.Load()-n, depth)
		if made > c.calls || depth > c.trips {
			t.Errorf("the overview (debts settle in %s) made %d DynamoDB calls in %d sequential round trips, want at most %d in %d",
				c.settle, made, depth, c.calls, c.trips)
		}
		mustContain(t, body, "Ama Owusu", "Kojo", "Sugar", "Salt 1kg")
	}

	ov, err := b.st.Overview(context.Background(), o.acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	d, err := overviewOf(ov)
	if err != nil {
		t.Fatal(err)
	}
	today, _ := time.Parse(time.DateOnly, ov.Today)
	thisMonth := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	lastMonth := thisMonth.AddDate(0, -1, 0)
	var summary struct {
		Report struct {
			Complete bool              `json:"complete"`
			Periods  []overviewFigures `json:"periods"`
			Totals   overviewFigures   `json:"totals"`
		} `json:"report"`
	}
	report := func(path string, q url.Values, into any) {
		t.Helper()
		if err := json.Unmarshal(api(http.MethodGet, path+"?"+q.Encode(), nil), into); err != nil {
			t.Fatal(err)
		}
	}
	report("/api/v1/reports/summary", url.Values{"group_by": {"month"}, "from": {lastMonth.Format(time.DateOnly)}, "to": {ov.Today}}, &summary)
	if len(summary.Report.Periods) != 2 {
		t.Fatalf("the API's months: %+v", summary.Report.Periods)
	}
	if d.LastMonth.Invoiced == "0.00" || d.ThisMonth.Invoiced == "0.00" {
		t.Fatalf("the test needs sales in both months: %+v %+v", d.LastMonth, d.ThisMonth)
	}
	if diff := cmp.Diff(summary.Report.Periods, []overviewFigures{d.LastMonth, d.ThisMonth}); diff != "" {
		t.Errorf("the overview's months differ from the API's (-API +overview):\n%s", diff)
	}
	if !summary.Report.Complete || !d.Complete {
		t.Errorf("complete: API %v, overview %v", summary.Report.Complete, d.Complete)
	}
	report("/api/v1/reports/summary", url.Values{"group_by": {"day"}, "from": {today.AddDate(0, 0, -29).Format(time.DateOnly)}, "to": {ov.Today}}, &summary)
	var apiDays, overviewDays []chartDay
	for _, p := range summary.Report.Periods {
		date, _ := time.Parse(time.DateOnly, p.Start)
		apiDays = append(apiDays, chartDay{Date: date, Collected: p.Collected, Expenses: p.Expenses})
	}
	overviewDays = d.Days
	if diff := cmp.Diff(apiDays, overviewDays); diff != "" {
		t.Errorf("the overview's days differ from the API's (-API +overview):\n%s", diff)
	}
	if diff := cmp.Diff(summary.Report.Totals, d.DaysTotals); diff != "" {
		t.Errorf("the overview's 30 days differ from the API's (-API +overview):\n%s", diff)
	}
	var receivables overviewReceivables
	report("/api/v1/reports/receivables", url.Values{"as_of": {ov.Today}}, &receivables)
	if b := receivables.Report.Buckets; b.D1To30 == "0.00" || b.D31To60 == "0.00" || b.D61To90 == "0.00" || b.Over90 == "0.00" || b.Current == "0.00" {
		t.Fatalf("the test needs money owed in every bucket: %+v", b)
	}
	if diff := cmp.Diff(receivables, d.Receivables); diff != "" {
		t.Errorf("the overview's receivables differ from the API's (-API +overview):\n%s", diff)
	}
	var inventory overviewInventory
	report("/api/v1/reports/inventory", url.Values{}, &inventory)
	if len(inventory.Report.Alerts) != 2 {
		t.Fatalf("the API's stock alerts: %+v", inventory.Report.Alerts)
	}
	if diff := cmp.Diff(inventory, d.Stock); diff != "" {
		t.Errorf("the overview's stock differs from the API's (-API +overview):\n%s", diff)
	}
}
