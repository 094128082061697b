package api_test

// Contract tests of reports and the settings they depend on, by
// outcome, against DynamoDB Local, over HTTP and through the Lambda path.
// The store's clock is set to chosen instants, so facts fall on either side
// of a merchant's local midnight. No stream consumer runs here: every report
// applies the figures still waiting itself, which is what makes it count a
// change answered just before it.

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// summary asks a summary report and returns it decoded.
func summary(t *testing.T, c *client, query string) summaryWire {
	t.Helper()
	r := c.get(t, "/api/v1/reports/summary?"+query)
	want(t, r, 200, "Report ready")
	var out struct {
		Data struct {
			Report summaryWire `json:"report"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.raw, &out); err != nil {
		t.Fatal(err)
	}
	return out.Data.Report
}

type figuresWire struct {
	Start             string            `json:"start"`
	End               string            `json:"end"`
	SalesCount        int               `json:"sales_count"`
	Invoiced          string            `json:"invoiced"`
	Collected         string            `json:"collected"`
	Refunded          string            `json:"refunded"`
	Expenses          string            `json:"expenses"`
	Net               string            `json:"net"`
	CollectedByMethod map[string]string `json:"collected_by_method"`
	ExpensesByType    map[string]string `json:"expenses_by_type"`
	ExpensesOther     string            `json:"expenses_other_types"`
}

// String is the figures in one line, for comparisons that show what differs.
func (f figuresWire) String() string {
	return fmt.Sprintf("%s..%s n=%d inv=%s col=%s ref=%s exp=%s net=%s by=%v types=%v", f.Start, f.End, f.SalesCount, f.Invoiced,
		f.Collected, f.Refunded, f.Expenses, f.Net, f.CollectedByMethod, f.ExpensesByType)
}

type summaryWire struct {
	From     string        `json:"from"`
	To       string        `json:"to"`
	GroupBy  string        `json:"group_by"`
	Timezone string        `json:"timezone"`
	Currency string        `json:"currency"`
	AsOf     string        `json:"as_of"`
	Complete bool          `json:"complete"`
	Periods  []figuresWire `json:"periods"`
	Totals   figuresWire   `json:"totals"`
}

// lines renders a summary's periods and totals one per line.
func (s summaryWire) lines() string {
	var b strings.Builder
	for _, p := range s.Periods {
		b.WriteString(p.String() + "\n")
	}
	b.WriteString("total " + s.Totals.String())
	return b.String()
}

// fig builds the expected figures of a period.
func fig(start, end string, n int, invoiced, collected, refunded, expenses, net string, methods, types map[string]string) figuresWire {
	if methods == nil {
		methods = map[string]string{}
	}
	if types == nil {
		types = map[string]string{}
	}
	return figuresWire{Start: start, End: end, SalesCount: n, Invoiced: invoiced, Collected: collected, Refunded: refunded,
		Expenses: expenses, Net: net, CollectedByMethod: methods, ExpensesByType: types}
}

func wantPeriods(t *testing.T, got summaryWire, want ...figuresWire) {
	t.Helper()
	var b strings.Builder
	for _, p := range want {
		b.WriteString(p.String() + "\n")
	}
	if g := got.lines(); !strings.HasPrefix(g, b.String()) || len(got.Periods) != len(want) {
		t.Fatalf("summary %s..%s by %s:\n got %s\nwant %s", got.From, got.To, got.GroupBy, g, b.String())
	}
}

// plainSale is a sale without lines or discount: its amounts as sent.
func plainSale(over map[string]any) map[string]any {
	over["items"], over["discount"] = nil, nil
	return saleBody(over)
}

// addPlainSale adds a sale of no lines, code (its invoice number too), of
// total, paid by payType.
func addPlainSale(t *testing.T, c *client, code, total, paid, payType, due string) {
	t.Helper()
	want(t, c.post(t, "/api/v1/sales/add", plainSale(map[string]any{"invoice_code": code, "invoice_number": code,
		"sub_total_amount": total, "total_amount": total, "amount_paid": paid, "payment_type": payType, "due_date": due})), 200, "")
}

// reportEnv runs f on a fresh sales env over HTTP and through the Lambda
// path.
func reportEnv(t *testing.T, f func(t *testing.T, c *client)) { onBothPaths(t, newSaleEnv, f) }

func setTimezone(t *testing.T, c *client, tz, effective string) {
	t.Helper()
	r := c.put(t, "/api/v1/user/settings", map[string]any{"timezone": tz})
	want(t, r, 200, "Settings updated")
	st, _ := r.data()["settings"].(map[string]any)
	if st["timezone"] != tz || st["timezone_effective_at"] != effective {
		t.Fatalf("settings after setting %s: %v, want it in effect from %s", tz, st, effective)
	}
}

// TestReportNairobiMonthEnd: a shop in Nairobi (UTC+3) sells at 22:30 UTC on
// the last day of January, which is 01:30 on 1 February where it is: the
// sale counts in February; an expense at 20:59:59 UTC (23:59:59 local)
// stays in January. A payment made on an edit in March counts in March
// while the sale stays invoiced in February.
func TestReportNairobiMonthEnd(t *testing.T) {
	reportEnv(t, func(t *testing.T, c *client) {
		e := c.e
		e.clock.set(t, "2026-01-20 09:00:00")
		setTimezone(t, c, "Africa/Nairobi", "2026-01-20 09:00:15")
		e.clock.set(t, "2026-01-31 20:59:59")
		want(t, c.post(t, "/api/v1/expenses/add", map[string]any{"expense_type": "Fuel", "expense_amount": "2.00", "payment_method": "Cash", "created_by": "Ama"}), 200, "")
		e.clock.set(t, "2026-01-31 22:30:00")
		addPlainSale(t, c, "410001", "50.00", "20.00", "Cash", "2026-02-28")
		want(t, c.post(t, "/api/v1/expenses/add", map[string]any{"expense_type": "Rent", "expense_amount": "5.00", "payment_method": "Cash", "created_by": "Ama"}), 200, "")

		wantPeriods(t, summary(t, c, "from=2026-01-01&to=2026-02-28&group_by=month"),
			fig("2026-01-01", "2026-01-31", 0, "0.00", "0.00", "0.00", "2.00", "-2.00", nil, map[string]string{"Fuel": "2.00"}),
			fig("2026-02-01", "2026-02-28", 1, "50.00", "20.00", "0.00", "5.00", "15.00", map[string]string{"Cash": "20.00"}, map[string]string{"Rent": "5.00"}))
		byDay := summary(t, c, "from=2026-01-31&to=2026-02-02&group_by=day")
		wantPeriods(t, byDay,
			fig("2026-01-31", "2026-01-31", 0, "0.00", "0.00", "0.00", "2.00", "-2.00", nil, map[string]string{"Fuel": "2.00"}),
			fig("2026-02-01", "2026-02-01", 1, "50.00", "20.00", "0.00", "5.00", "15.00", map[string]string{"Cash": "20.00"}, map[string]string{"Rent": "5.00"}),
			fig("2026-02-02", "2026-02-02", 0, "0.00", "0.00", "0.00", "0.00", "0.00", nil, nil))
		if byDay.Timezone != "Africa/Nairobi" || byDay.Currency != "GHS" || byDay.AsOf != "2026-01-31 22:30:00" {
			t.Fatalf("report header %+v", byDay)
		}

		// Paid in full on 2 March, by mobile money.
		e.clock.set(t, "2026-03-02 08:00:00")
		want(t, c.put(t, "/api/v1/sales/edit/410001", map[string]any{"invoice_code": "410001", "invoice_number": "410001", "customer_id": 1,
			"sub_total_amount": "50.00", "total_amount": "50.00", "amount_paid": "50.00", "payment_type": "Mobile Money"}), 200, "")
		wantPeriods(t, summary(t, c, "from=2026-02-01&to=2026-03-31"),
			fig("2026-02-01", "2026-02-28", 1, "50.00", "20.00", "0.00", "5.00", "15.00", map[string]string{"Cash": "20.00"}, map[string]string{"Rent": "5.00"}),
			fig("2026-03-01", "2026-03-31", 0, "0.00", "30.00", "0.00", "0.00", "30.00", map[string]string{"Mobile Money": "30.00"}, nil))
	})
}

// TestReportTimezoneChange: a change of timezone takes effect 15 s after it
// is made and never moves what happened before: a fact 5 s after the change
// is still dated in Nairobi, one after it in New York (UTC-4 in March 2026),
// and January's figures read the same before and after.
func TestReportTimezoneChange(t *testing.T) {
	reportEnv(t, func(t *testing.T, c *client) {
		e := c.e
		e.clock.set(t, "2026-01-20 09:00:00")
		setTimezone(t, c, "Africa/Nairobi", "2026-01-20 09:00:15")
		e.clock.set(t, "2026-01-31 22:30:00")
		want(t, c.post(t, "/api/v1/expenses/add", map[string]any{"expense_type": "Rent", "expense_amount": "5.00", "payment_method": "Cash", "created_by": "Ama"}), 200, "")
		before := summary(t, c, "from=2026-01-01&to=2026-02-28")

		e.clock.set(t, "2026-03-10 20:59:00")
		setTimezone(t, c, "America/New_York", "2026-03-10 20:59:15")
		e.clock.set(t, "2026-03-10 20:59:05") // 23:59:05 in Nairobi, 16:59:05 in New York
		want(t, c.post(t, "/api/v1/expenses/add", map[string]any{"expense_type": "Fuel", "expense_amount": "1.00", "payment_method": "Cash", "created_by": "Ama"}), 200, "")
		e.clock.set(t, "2026-03-11 03:30:00") // 06:30 on the 11th in Nairobi, 23:30 on the 10th in New York
		want(t, c.post(t, "/api/v1/expenses/add", map[string]any{"expense_type": "Fuel", "expense_amount": "4.00", "payment_method": "Cash", "created_by": "Ama"}), 200, "")
		e.clock.set(t, "2026-03-11 04:30:00") // 00:30 on the 11th in New York
		want(t, c.post(t, "/api/v1/expenses/add", map[string]any{"expense_type": "Fuel", "expense_amount": "0.50", "payment_method": "Cash", "created_by": "Ama"}), 200, "")

		got := summary(t, c, "from=2026-03-10&to=2026-03-11&group_by=day")
		wantPeriods(t, got,
			fig("2026-03-10", "2026-03-10", 0, "0.00", "0.00", "0.00", "5.00", "-5.00", nil, map[string]string{"Fuel": "5.00"}),
			fig("2026-03-11", "2026-03-11", 0, "0.00", "0.00", "0.00", "0.50", "-0.50", nil, map[string]string{"Fuel": "0.50"}))
		if got.Timezone != "America/New_York" {
			t.Fatalf("report timezone %s", got.Timezone)
		}
		if after := summary(t, c, "from=2026-01-01&to=2026-02-28"); after.lines() != before.lines() {
			t.Fatalf("January and February moved with the change:\nbefore %s\nafter  %s", before.lines(), after.lines())
		}
		r := c.get(t, "/api/v1/user/settings")
		want(t, r, 200, "Settings found")
		if h := fmt.Sprint(r.data()["settings"].(map[string]any)["timezone_history"]); h != "[map[from:<nil> timezone:UTC] map[from:2026-01-20 09:00:15 timezone:Africa/Nairobi] map[from:2026-03-10 20:59:15 timezone:America/New_York]]" {
			t.Fatalf("timezone history %s", h)
		}
	})
}

// TestReportCorrections: a refund counts when it is made, a void takes its
// sale out of the count and total of the day it was created (not what it
// collected), and an expense's edit moves its amount between types on the
// day it was created.
func TestReportCorrections(t *testing.T) {
	reportEnv(t, func(t *testing.T, c *client) {
		e := c.e
		e.clock.set(t, "2026-05-04 10:00:00")
		addPlainSale(t, c, "420001", "10.00", "10.00", "Cash", "2026-05-31")
		addPlainSale(t, c, "420002", "7.00", "0", "None", "2026-05-31")
		want(t, c.post(t, "/api/v1/expenses/add", map[string]any{"expense_type": "Fuel", "expense_amount": "3.00", "payment_method": "Cash", "created_by": "Ama"}), 200, "")
		e.clock.set(t, "2026-05-05 09:00:00")
		want(t, c.post(t, refundPath("420001"), map[string]any{"amount": "4.00"}), 200, "Refund recorded")
		want(t, c.post(t, voidPath("420002"), nil), 200, "Sale voided")
		want(t, c.put(t, "/api/v1/expenses/1", map[string]any{"expense_type": "Transport", "expense_amount": "3.50", "payment_method": "Cash", "created_by": "Ama"}), 200, "")
		got := summary(t, c, "from=2026-05-04&to=2026-05-05&group_by=day")
		wantPeriods(t, got,
			fig("2026-05-04", "2026-05-04", 1, "10.00", "10.00", "0.00", "3.50", "6.50", map[string]string{"Cash": "10.00"}, map[string]string{"Transport": "3.50"}),
			fig("2026-05-05", "2026-05-05", 0, "0.00", "0.00", "4.00", "0.00", "-4.00", nil, nil))
		if want := fig("", "", 1, "10.00", "10.00", "4.00", "3.50", "2.50", map[string]string{"Cash": "10.00"}, map[string]string{"Transport": "3.50"}); got.Totals.String() != want.String() {
			t.Fatalf("totals %s, want %s", got.Totals, want)
		}
		// By week (Monday to Sunday): 4 May 2026 is a Monday.
		wantPeriods(t, summary(t, c, "from=2026-05-01&to=2026-05-12&group_by=week"),
			fig("2026-05-01", "2026-05-03", 0, "0.00", "0.00", "0.00", "0.00", "0.00", nil, nil),
			fig("2026-05-04", "2026-05-10", 1, "10.00", "10.00", "4.00", "3.50", "2.50", map[string]string{"Cash": "10.00"}, map[string]string{"Transport": "3.50"}),
			fig("2026-05-11", "2026-05-12", 0, "0.00", "0.00", "0.00", "0.00", "0.00", nil, nil))
	})
}

// TestReceivables: what is owed, by days past due on the report's date, and
// the largest debtors with their current names; paid and void sales owe
// nothing.
func TestReceivables(t *testing.T) {
	reportEnv(t, func(t *testing.T, c *client) {
		e := c.e
		e.clock.set(t, "2026-06-01 10:00:00")
		want(t, c.post(t, "/api/v1/customers/add", map[string]any{"name": "Kwame"}), 200, "")
		var kwame string
		for _, cu := range c.get(t, "/api/v1/customers").data()["customers"].([]any) {
			if cu := cu.(map[string]any); cu["name"] == "Kwame" {
				kwame = fmt.Sprint(cu["id"])
			}
		}
		sale := func(code, customer, total, paid, due string) {
			t.Helper()
			pt := "Cash"
			if paid == "0" {
				pt = "None"
			}
			want(t, c.post(t, "/api/v1/sales/add", plainSale(map[string]any{"invoice_code": code, "invoice_number": code, "customer_id": json.Number(customer),
				"sub_total_amount": total, "total_amount": total, "amount_paid": paid, "payment_type": pt, "due_date": due})), 200, "")
		}
		sale("430001", "1", "100.00", "25.00", "2026-04-01") // 75.00, 91 days past due on 1 July
		sale("430002", "1", "10.00", "0", "2026-06-20")      // 10.00, 11 days
		sale("430003", kwame, "40.00", "0", "2026-07-01")    // 40.00, due that day
		sale("430004", kwame, "5.00", "5.00", "2026-01-01")  // paid
		sale("430005", kwame, "9.00", "0", "2026-01-01")     // voided below
		want(t, c.post(t, voidPath("430005"), nil), 200, "")
		want(t, c.put(t, "/api/v1/customers/1", map[string]any{"name": "Ama Owusu"}), 200, "")

		r := c.get(t, "/api/v1/reports/receivables?as_of=2026-07-01")
		want(t, r, 200, "Report ready")
		got, _ := json.Marshal(r.data()["report"])
		wantJSON := `{"as_of":"2026-07-01","buckets":{"1_30":"10.00","31_60":"0.00","61_90":"0.00","current":"40.00","over_90":"75.00"},` +
			`"currency":"GHS","customers":[{"buckets":{"1_30":"10.00","31_60":"0.00","61_90":"0.00","current":"0.00","over_90":"75.00"},"customer_id":"1","name":"Ama Owusu","outstanding":"85.00"},` +
			`{"buckets":{"1_30":"0.00","31_60":"0.00","61_90":"0.00","current":"40.00","over_90":"0.00"},"customer_id":"` + kwame + `","name":"Kwame","outstanding":"40.00"}],` +
			`"open_sales":3,"outstanding":"125.00"}`
		if string(got) != wantJSON {
			t.Fatalf("receivables:\n got %s\nwant %s", got, wantJSON)
		}
		// Without as_of: today where the shop is.
		r = c.get(t, "/api/v1/reports/receivables")
		if want(t, r, 200, "Report ready"); r.data()["report"].(map[string]any)["as_of"] != "2026-06-01" {
			t.Fatalf("default as_of: %v", r.data()["report"])
		}
	})
}

// TestInventoryReport: stock valued at cost and at price (each sum rounded
// once), items counted by status, and the low and out items listed, out
// first.
func TestInventoryReport(t *testing.T) {
	reportEnv(t, func(t *testing.T, c *client) {
		want(t, c.post(t, "/api/v1/inventory/categories/add", map[string]any{"category_name": "Shop"}), 200, "")
		for _, it := range []map[string]any{
			{"item_code": "OIL", "item_name": "Oil", "category_id": 1, "unit_cost": "1.25", "item_price": "2.00", "quantity": "10.5", "minimum_qty_alert": "2"},
			{"item_code": "SALT", "item_name": "Salt", "category_id": 1, "unit_cost": "0.33", "item_price": "0.50", "quantity": "0.333", "minimum_qty_alert": "1"},
			{"item_code": "RICE", "item_name": "Rice", "category_id": 1, "unit_cost": "4.00", "item_price": "5.00", "quantity": "0"},
			{"item_code": "BEANS", "item_name": "Beans", "category_id": 1, "unit_cost": "2.00", "item_price": "3.00", "quantity": "3", "minimum_qty_alert": "3"},
		} {
			want(t, c.post(t, "/api/v1/inventory/items/add", it), 200, "")
		}
		r := c.get(t, "/api/v1/reports/inventory")
		want(t, r, 200, "Report ready")
		got, _ := json.Marshal(r.data()["report"])
		// cost: 13.125 + 0.10989 + 0 + 6 = 19.23489 -> 19.23; price: 21 + 0.1665 + 0 + 9 = 30.1665 -> 30.17
		wantJSON := `{"counts":{"in-stock":1,"low-stock":2,"out-of-stock":1},"currency":"GHS","items_count":4,"low_and_out_items":[` +
			`{"item_code":"RICE","item_name":"Rice","minimum_qty_alert":"0","quantity":"0","status":"out-of-stock"},` +
			`{"item_code":"SALT","item_name":"Salt","minimum_qty_alert":"1","quantity":"0.333","status":"low-stock"},` +
			`{"item_code":"BEANS","item_name":"Beans","minimum_qty_alert":"3","quantity":"3","status":"low-stock"}],` +
			`"low_and_out_truncated":false,"retail_value":"30.17","stock_value":"19.23"}`
		if string(got) != wantJSON {
			t.Fatalf("inventory:\n got %s\nwant %s", got, wantJSON)
		}
	})
}

// TestSettings: what GET shows, what PUT changes (the name applies at once
// on this process), what it takes back unchanged, and that the default is
// UTC.
func TestSettings(t *testing.T) {
	reportEnv(t, func(t *testing.T, c *client) {
		r := c.get(t, "/api/v1/user/settings")
		want(t, r, 200, "Settings found")
		got, _ := json.Marshal(r.data()["settings"])
		if string(got) != `{"business_code":"KOFI01","business_name":"Kofi Stores","currency":"GHS","invoice_prefix":"INV","timezone":"UTC","timezone_effective_at":null,"timezone_history":[{"from":null,"timezone":"UTC"}]}` {
			t.Fatalf("settings: %s", got)
		}
		r = c.put(t, "/api/v1/user/settings", map[string]any{"business_name": " Kofi & Sons ", "invoice_prefix": "INV", "currency": "GHS", "business_code": "KOFI01"})
		want(t, r, 200, "Settings updated")
		if st := r.data()["settings"].(map[string]any); st["business_name"] != "Kofi & Sons" || st["invoice_prefix"] != "INV" || st["timezone"] != "UTC" {
			t.Fatalf("settings after PUT: %v", st)
		}
		if a := c.get(t, "/api/v1/user/authenticate").data()["account"].(map[string]any); a["name"] != "Kofi & Sons" || a["timezone"] != "UTC" {
			t.Fatalf("authenticate after PUT: %v", a)
		}
	})
}

// TestReportRefusals: every malformed report or settings request is 400
// naming what to fix, and changes nothing.
func TestReportRefusals(t *testing.T) {
	reportEnv(t, func(t *testing.T, c *client) {
		before := c.get(t, "/api/v1/user/settings").raw
		for _, tc := range []struct{ method, path, body, field string }{
			{"GET", "/api/v1/reports/summary?from=2026-02-30&to=2026-03-01", "", "from"},
			{"GET", "/api/v1/reports/summary?from=2026-03-01&to=yesterday", "", "to"},
			{"GET", "/api/v1/reports/summary?from=2026-03-02&to=2026-03-01", "", "to"},
			{"GET", "/api/v1/reports/summary?from=2026-03-01&to=2026-03-02&group_by=year", "", "group_by"},
			{"GET", "/api/v1/reports/summary?from=2025-01-01&to=2026-02-05&group_by=day", "", "to"},
			{"GET", "/api/v1/reports/summary?from=2020-01-01&to=2026-02-05&group_by=week", "", "to"},
			{"GET", "/api/v1/reports/summary?from=2010-01-01&to=2026-02-05", "", "to"},
			{"GET", "/api/v1/reports/summary?from=2026-01-01&from=2026-02-01", "", "from"},
			{"GET", "/api/v1/reports/summary?from=", "", "from"},
			{"GET", "/api/v1/reports/summary?since=2026-01-01", "", "since"},
			{"GET", "/api/v1/reports/receivables?as_of=2026-13-01", "", "as_of"},
			{"GET", "/api/v1/reports/receivables?limit=5", "", "limit"},
			{"GET", "/api/v1/reports/inventory?status=low", "", "status"},
			{"PUT", "/api/v1/user/settings", `{"timezone":"Mars/Olympus"}`, "timezone"},
			{"PUT", "/api/v1/user/settings", `{"timezone":"Local"}`, "timezone"},
			{"PUT", "/api/v1/user/settings", `{"timezone":null}`, "timezone"},
			{"PUT", "/api/v1/user/settings", `{"business_name":"  "}`, "business_name"},
			{"PUT", "/api/v1/user/settings", `{"invoice_prefix":"KS"}`, "invoice_prefix"},
			{"PUT", "/api/v1/user/settings", `{"currency":"USD"}`, "currency"},
			{"PUT", "/api/v1/user/settings", `{"business_code":"OTHER"}`, "business_code"},
			{"PUT", "/api/v1/user/settings", `{"timezone":"UTC","colour":"red"}`, "colour"},
			{"PUT", "/api/v1/user/settings", `{"timezone":"Africa/Nairobi","currency":"USD"}`, "currency"},
		} {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			r := c.do(t, tc.method, tc.path, body)
			if r.code != 400 || field(r, tc.field) == "" {
				t.Errorf("%s %s %s: %d %s, want 400 naming %s", tc.method, tc.path, tc.body, r.code, r.raw, tc.field)
			}
		}
		if after := c.get(t, "/api/v1/user/settings").raw; string(after) != string(before) {
			t.Fatalf("a refused request changed the settings:\n%s\n%s", before, after)
		}
	})
}

// TestReportCountsRecordsFromBeforeReports: records written before reports
// (no counted mark, no figures) are counted once: a change of one counts it
// as it now is with what the change moves, and CountLegacyRecords (admin
// migrate) counts the rest, once however often it runs.
func TestReportCountsRecordsFromBeforeReports(t *testing.T) {
	e := newSaleEnv(t)
	c := &client{e: e}
	ctx := context.Background()
	e.clock.set(t, "2026-04-01 10:00:00")
	addPlainSale(t, c, "450001", "10.00", "4.00", "Cash", "2026-05-31")
	addPlainSale(t, c, "450002", "6.00", "0", "None", "2026-05-31")
	want(t, c.post(t, "/api/v1/expenses/add", map[string]any{"expense_type": "Fuel", "expense_amount": "3.00", "payment_method": "Cash", "created_by": "Ama"}), 200, "")
	e.clock.set(t, "2026-04-02 10:00:00")
	want(t, c.post(t, refundPath("450001"), map[string]any{"amount": "1.00"}), 200, "")
	want(t, c.post(t, voidPath("450002"), nil), 200, "")
	const query = "from=2026-04-01&to=2026-04-03&group_by=day"
	before := summary(t, c, query)

	// The records as a release before reports left them.
	db, table := e.store.Client(), e.store.Table()
	scan, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	stripped := 0
	for _, it := range scan.Items {
		k := map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}
		switch {
		case strings.Contains(it["PK"].(*types.AttributeValueMemberS).Value, "#REPORT"): // days and figures waiting
			_, err = db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: k})
		case it["counted"] != nil:
			stripped++
			_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: k, UpdateExpression: aws.String("REMOVE counted")})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if stripped != 5 { // two sales, a payment, a refund, an expense
		t.Fatalf("%d records stripped of their mark, want 5", stripped)
	}
	if got := summary(t, c, query); got.Totals.String() != fig("", "", 0, "0.00", "0.00", "0.00", "0.00", "0.00", nil, nil).String() {
		t.Fatalf("figures before any counting: %s", got.Totals)
	}

	// A change of a record from before: it is counted as it now is.
	e.clock.set(t, "2026-04-03 10:00:00")
	want(t, c.put(t, "/api/v1/sales/edit/450001", map[string]any{"invoice_code": "450001", "invoice_number": "450001", "customer_id": 1,
		"sub_total_amount": "10.00", "total_amount": "10.00", "amount_paid": "10.00"}), 200, "")
	want(t, c.put(t, "/api/v1/expenses/1", map[string]any{"expense_type": "Fuel", "expense_amount": "3.50", "payment_method": "Cash", "created_by": "Ama"}), 200, "")
	for run, wantN := range []int{3, 0} { // the first payment, the refund and the void sale; then nothing
		if n, err := e.store.CountLegacyRecords(ctx); err != nil || n != wantN {
			t.Fatalf("CountLegacyRecords, run %d: %d %v, want %d", run+1, n, err, wantN)
		}
	}
	wantPeriods(t, summary(t, c, query),
		fig("2026-04-01", "2026-04-01", 1, "10.00", "4.00", "0.00", "3.50", "0.50", map[string]string{"Cash": "4.00"}, map[string]string{"Fuel": "3.50"}),
		fig("2026-04-02", "2026-04-02", 0, "0.00", "0.00", "1.00", "0.00", "-1.00", nil, nil),
		fig("2026-04-03", "2026-04-03", 0, "0.00", "6.00", "0.00", "0.00", "6.00", map[string]string{"Cash": "6.00"}, nil))
	if before.Periods[0].Invoiced != "10.00" || before.Periods[1].Refunded != "1.00" {
		t.Fatalf("before stripping: %s", before.lines())
	}
}

// TestReportManyExpenseTypes: 55 expenses of distinct 100-character types
// in one month. A day's and a month's figures name 50 types and sum the
// rest as expenses_other_types: the summary, by day and by month, names 50
// and is complete and exact to the cent. A change that can be neither
// counted nor set aside (DynamoDB refuses its set-aside copy's key) leaves
// every summary answering 200 with complete false, never 500.
func TestReportManyExpenseTypes(t *testing.T) {
	e := newSaleEnv(t)
	c := &client{e: e}
	e.clock.set(t, "2026-04-01 10:00:00")
	var total int64
	for i := range 55 {
		total += int64(i+1)*100 + int64(i)
		r := c.post(t, "/api/v1/expenses/add", map[string]any{"expense_type": fmt.Sprintf("%s%03d", strings.Repeat("é", 97), i),
			"expense_amount": fmt.Sprintf("%d.%02d", i+1, i), "payment_method": "Cash", "created_by": "Ama"})
		want(t, r, 200, "")
	}
	cents := func(s string) int64 {
		n, err := strconv.ParseInt(strings.Replace(s, ".", "", 1), 10, 64)
		if err != nil {
			t.Fatalf("%q is not money", s)
		}
		return n
	}
	check := func(query string, complete bool) {
		t.Helper()
		got := summary(t, c, query)
		for _, f := range append(got.Periods, got.Totals) {
			var named int64
			for _, v := range f.ExpensesByType {
				named += cents(v)
			}
			if f.Expenses == "0.00" {
				continue
			}
			if cents(f.Expenses) != total || len(f.ExpensesByType) != 50 || named+cents(f.ExpensesOther) != total || f.ExpensesOther == "0.00" {
				t.Fatalf("%s: %s of expenses in %d types naming %d, %s in other types; want %d cents in 50 types and the rest",
					query, f.Expenses, len(f.ExpensesByType), named, f.ExpensesOther, total)
			}
		}
		if got.Complete != complete {
			t.Fatalf("%s: complete %v, want %v", query, got.Complete, complete)
		}
	}
	check("from=2026-04-01&to=2026-04-30&group_by=month", true)
	check("from=2026-04-01&to=2026-04-02&group_by=day", true)

	_, err := e.store.Client().PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.store.Table()), Item: map[string]types.AttributeValue{
		"PK":   &types.AttributeValueMemberS{Value: "A#" + e.acct.ID + "#REPORT#PEND0"},
		"SK":   &types.AttributeValueMemberS{Value: "PEND#evt_" + strings.Repeat("x", 1014)}, // PARKED#<id>: 1,025 bytes
		"type": &types.AttributeValueMemberS{Value: "figures"}, "account_id": &types.AttributeValueMemberS{Value: e.acct.ID},
		"changes": &types.AttributeValueMemberS{Value: "not json"}}})
	if err != nil {
		t.Fatal(err)
	}
	check("from=2026-04-01&to=2026-04-30&group_by=month", false)
	check("from=2026-04-01&to=2026-04-02&group_by=day", false)
}
