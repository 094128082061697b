package dashboard

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// salesFixture makes, through the API, customer 1 ("Ama Mensah"), a stocked
// item RICE (10 in stock) and sale code: two RICE at 10.00 and one bag at
// 5.00 (total 25.00), paid as given.
func salesFixture(t testing.TB, o *owner, code, paid string) {
	t.Helper()
	for _, c := range []struct {
		path string
		body map[string]any
	}{
		{"/api/v1/customers/add", map[string]any{"name": "Ama Mensah"}},
		{"/api/v1/inventory/categories/add", map[string]any{"category_name": "Food"}},
		{"/api/v1/inventory/items/add", map[string]any{"item_code": "RICE", "item_name": "Rice 5kg", "category_id": 1, "item_price": "10.00", "quantity": "10"}},
	} {
		if st, data := o.callAPI(http.MethodPost, c.path, c.body); st != http.StatusOK {
			t.Fatalf("POST %s: %d %s", c.path, st, data)
		}
	}
	salesAdd(t, o, code, paid)
}

// salesAdd adds sale code for customer 1 through the API (total 25.00).
func salesAdd(t testing.TB, o *owner, code, paid string) {
	t.Helper()
	body := map[string]any{
		"invoice_code": code, "customer_id": 1, "sub_total_amount": "25.00", "total_amount": "25.00", "amount_paid": paid,
		"invoice_type": "main", "payment_type": "Cash", "due_date": "2099-12-31",
		"items": []map[string]any{
			{"item_code": "RICE", "item_name": "Rice 5kg", "unit_price": "10.00", "quantity": "2"},
			{"item_name": "Gift bag", "unit_price": "5.00", "quantity": "1"},
		},
	}
	if st, data := o.callAPI(http.MethodPost, "/api/v1/sales/add", body); st != http.StatusOK {
		t.Fatalf("add sale %s: %d %s", code, st, data)
	}
}

// apiSale is what get-sale reports of a sale, read over the API.
type apiSale struct {
	Sales struct {
		AmountPaid     string `json:"amount_paid"`
		AmountRefunded string `json:"amount_refunded"`
		PaymentStatus  string `json:"payment_status"`
		PaymentType    string `json:"payment_type"`
	} `json:"sales"`
	Lines []struct {
		Returned string `json:"quantity_returned"`
	} `json:"sales-item"`
	Payments []struct {
		Amount string `json:"amount_paid"`
		Method string `json:"payment_method"`
	} `json:"sales-payment"`
	Refunds []struct {
		Amount string `json:"amount"`
		Reason string `json:"reason"`
	} `json:"sales-refund"`
}

// salesGet reads sale code over the API.
func salesGet(t *testing.T, o *owner, code string) apiSale {
	t.Helper()
	st, data := o.callAPI(http.MethodGet, "/api/v1/sales/"+code, nil)
	if st != http.StatusOK {
		t.Fatalf("get sale %s: %d %s", code, st, data)
	}
	var s apiSale
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// salesSalePage reads the dashboard's page of sale code, with the forms'
// idempotency keys, and fails unless it answers 200.
func salesSalePage(t *testing.T, o *owner, code string) string {
	t.Helper()
	st, body, _ := o.get("/dashboard/sales/" + code)
	if st != http.StatusOK {
		t.Fatalf("sale page: %d %s", st, body)
	}
	return body
}

// salesIdem is the idempotency key of the form posting to action in page.
func salesIdem(t *testing.T, page, action string) string {
	t.Helper()
	_, form, ok := strings.Cut(page, `action="`+action+`"`)
	_, rest, ok2 := strings.Cut(form, `name="idem" value="`)
	key, _, ok3 := strings.Cut(rest, `"`)
	if !ok || !ok2 || !ok3 {
		t.Fatalf("no idem in the form to %s", action)
	}
	return key
}

func TestSalesListAndFilters(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("SALES1")
	salesFixture(t, o, "200001", "25.00")
	salesAdd(t, o, "200002", "0")

	st, body, _ := o.get("/dashboard/sales")
	if st != http.StatusOK {
		t.Fatalf("list: %d %s", st, body)
	}
	mustContain(t, body, `href="/dashboard/sales/200001"`, `href="/dashboard/sales/200002"`, "Ama Mensah",
		"GHS 25.00", `class="status paid"`, `class="status draft"`, `<label for="f-status">`, "<caption>")

	for _, c := range []struct {
		name, query, in, out string
	}{
		{"paid only", "payment_status=paid", "200001", "200002"},
		{"unpaid only", "payment_status=draft&invoice_type=", "200002", "200001"},
		{"by code", "invoice_code=200002", "200002", "200001"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, body, _ := o.get("/dashboard/sales?" + c.query)
			if st != http.StatusOK {
				t.Fatalf("%d %s", st, body)
			}
			mustContain(t, body, `href="/dashboard/sales/`+c.in+`"`)
			if strings.Contains(body, `href="/dashboard/sales/`+c.out+`"`) {
				t.Errorf("the filter %s kept sale %s", c.query, c.out)
			}
		})
	}

	t.Run("refused filter", func(t *testing.T) {
		st, body, _ := o.get("/dashboard/sales?invoice_code=12")
		if st != http.StatusBadRequest {
			t.Fatalf("status %d, want 400", st)
		}
		mustContain(t, body, "must be 6 digits", `aria-invalid="true"`, `id="f-code-err"`, `value="12"`)
	})

	t.Run("next page keeps the filters", func(t *testing.T) {
		st, body, _ := o.get("/dashboard/sales?limit=1&invoice_type=main")
		if st != http.StatusOK {
			t.Fatalf("%d %s", st, body)
		}
		_, rest, ok := strings.Cut(body, `<a href="/dashboard/sales?`)
		next, _, _ := strings.Cut(rest, `" rel="next">Next page</a>`)
		if !ok || !strings.Contains(body, "Next page") {
			t.Fatalf("no Next page link: %s", body)
		}
		q, err := url.ParseQuery(strings.ReplaceAll(next, "&amp;", "&"))
		if err != nil || q.Get("cursor") == "" || q.Get("invoice_type") != "main" || q.Get("limit") != "1" {
			t.Fatalf("the Next page link %q lost the filters", next)
		}
		st, second, _ := o.get("/dashboard/sales?" + q.Encode())
		if st != http.StatusOK {
			t.Fatalf("%d %s", st, second)
		}
		mustContain(t, second, "First page")
		first := strings.Contains(body, `href="/dashboard/sales/200001"`)
		if first == strings.Contains(second, `href="/dashboard/sales/200001"`) {
			t.Error("the second page shows the first page's sale, or neither page shows it")
		}
	})
}

func TestSalePageAndPayment(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("SALES2")
	salesFixture(t, o, "200011", "10.00")

	page := salesSalePage(t, o, "200011")
	mustContain(t, page, "Rice 5kg", "Gift bag", "GHS 10.00", "GHS 15.00", "Ama Mensah", `class="status partial"`,
		`href="/dashboard/inventory/RICE"`, "Record a payment", "I understand this cannot be undone")

	st, body, path := o.post("/dashboard/sales/200011/payments", url.Values{
		"form": {"payment"}, "amount": {"5.50"}, "payment_type": {"Mobile Money"}, "paid_before": {"10.00"}})
	if st != http.StatusOK || path != "/dashboard/sales/200011" {
		t.Fatalf("payment: %d %s %s", st, path, body)
	}
	mustContain(t, body, "Payment of GHS 5.50 recorded")
	got := salesGet(t, o, "200011")
	if got.Sales.AmountPaid != "15.50" || len(got.Payments) != 2 || got.Payments[1].Amount != "5.50" || got.Payments[1].Method != "Mobile Money" {
		t.Fatalf("after the payment the API reports %+v", got)
	}

	for _, c := range []struct {
		name, amount, before, want string
		status                     int
	}{
		{"more than is owed", "100.00", "15.50", "must not exceed total_amount", http.StatusBadRequest},
		{"not an amount", "abc", "15.50", "must be an amount above 0", http.StatusBadRequest},
		{"paid meanwhile", "1.00", "10.00", "payments changed since the page was drawn", http.StatusConflict},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, body, _ := o.post("/dashboard/sales/200011/payments", url.Values{
				"form": {"payment"}, "amount": {c.amount}, "payment_type": {"Cash"}, "paid_before": {c.before}})
			if st != c.status {
				t.Fatalf("status %d, want %d", st, c.status)
			}
			mustContain(t, body, c.want, `value="`+c.amount+`"`)
			if got := salesGet(t, o, "200011"); got.Sales.AmountPaid != "15.50" || len(got.Payments) != 2 {
				t.Fatalf("a refused payment changed the sale: %+v", got)
			}
		})
	}
}

func TestSaleRefund(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("SALES3")
	salesFixture(t, o, "200021", "25.00")

	t.Run("more than was paid is refused", func(t *testing.T) {
		page := salesSalePage(t, o, "200021")
		st, body, _ := o.post("/dashboard/sales/200021/refunds", url.Values{
			"form": {"refund"}, "amount": {"30.00"}, "reason": {"Too much"}, "idem": {salesIdem(t, page, "/dashboard/sales/200021/refunds")}})
		if st != http.StatusBadRequest {
			t.Fatalf("status %d, want 400", st)
		}
		mustContain(t, body, "must be at most 25.00, the most that can still be refunded", `id="refund-amount-err"`, `value="30.00"`)
		if got := salesGet(t, o, "200021"); got.Sales.AmountRefunded != "0.00" || len(got.Refunds) != 0 {
			t.Fatalf("a refused refund changed the sale: %+v", got)
		}
	})

	t.Run("a refund with goods returned", func(t *testing.T) {
		page := salesSalePage(t, o, "200021")
		st, body, path := o.post("/dashboard/sales/200021/refunds", url.Values{
			"form": {"refund"}, "amount": {"10.00"}, "reason": {"Torn bag"}, "lines[0].quantity": {"1"}, "lines[1].quantity": {""},
			"idem": {salesIdem(t, page, "/dashboard/sales/200021/refunds")}})
		if st != http.StatusOK || path != "/dashboard/sales/200021" {
			t.Fatalf("refund: %d %s %s", st, path, body)
		}
		mustContain(t, body, "Refund recorded", "Torn bag", "line 1: 1")
		got := salesGet(t, o, "200021")
		if got.Sales.AmountRefunded != "10.00" || len(got.Refunds) != 1 || got.Refunds[0].Reason != "Torn bag" || got.Lines[0].Returned != "1" {
			t.Fatalf("after the refund the API reports %+v", got)
		}
	})

	t.Run("a line returned beyond its quantity names the line", func(t *testing.T) {
		page := salesSalePage(t, o, "200021")
		st, body, _ := o.post("/dashboard/sales/200021/refunds", url.Values{
			"form": {"refund"}, "amount": {"1.00"}, "lines[0].quantity": {"5"},
			"idem": {salesIdem(t, page, "/dashboard/sales/200021/refunds")}})
		if st != http.StatusBadRequest {
			t.Fatalf("status %d, want 400", st)
		}
		mustContain(t, body, `id="refund-line-1-err"`, "must be at most 1")
	})
}

func TestSaleVoid(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("SALES4")
	salesFixture(t, o, "200031", "0")

	page := salesSalePage(t, o, "200031")
	idem := salesIdem(t, page, "/dashboard/sales/200031/void")
	st, body, _ := o.post("/dashboard/sales/200031/void", url.Values{"form": {"void"}, "reason": {"Cancelled"}, "idem": {idem}})
	if st != http.StatusBadRequest {
		t.Fatalf("void without the confirmation: %d, want 400", st)
	}
	mustContain(t, body, `id="void-confirm-err"`)
	if got := salesGet(t, o, "200031"); got.Sales.PaymentStatus == "void" {
		t.Fatal("voided without the confirmation")
	}

	page = salesSalePage(t, o, "200031")
	st, body, path := o.post("/dashboard/sales/200031/void", url.Values{"form": {"void"}, "reason": {"Cancelled"}, "confirm": {"yes"},
		"idem": {salesIdem(t, page, "/dashboard/sales/200031/void")}})
	if st != http.StatusOK || path != "/dashboard/sales/200031" {
		t.Fatalf("void: %d %s %s", st, path, body)
	}
	mustContain(t, body, "Sale voided", "Cancelled", "This sale is void")
	if strings.Contains(body, "Record a payment") {
		t.Error("a void sale still offers its forms")
	}
	if got := salesGet(t, o, "200031"); got.Sales.PaymentStatus != "void" {
		t.Fatalf("after the void the API reports %+v", got)
	}

	t.Run("a sale holding money is refused", func(t *testing.T) {
		salesAdd(t, o, "200032", "5.00")
		page := salesSalePage(t, o, "200032")
		st, body, _ := o.post("/dashboard/sales/200032/void", url.Values{"form": {"void"}, "confirm": {"yes"},
			"idem": {salesIdem(t, page, "/dashboard/sales/200032/void")}})
		if st != http.StatusConflict {
			t.Fatalf("status %d, want 409: %s", st, body)
		}
		mustContain(t, body, `role="alert"`)
		if got := salesGet(t, o, "200032"); got.Sales.PaymentStatus == "void" {
			t.Fatal("a sale holding money was voided")
		}
	})
}
