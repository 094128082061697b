package dashboard

import (
	"net/http"
	"testing"
	"time"

	"bizdata/shared/business"
)

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
		// what is owed: 10.00 not yet due (due 2099), with the unpaid sales
		"Ama Mensah", "GHS 10.00", `href="/dashboard/sales?payment_status=partial"`,
		// the item running out
		`href="/dashboard/inventory/SALT"`, "Salt 1kg", "Low stock")
}
