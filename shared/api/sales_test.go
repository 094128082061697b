package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"bizdata/shared/money"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// newSaleEnv is an env with one customer (id 1).
func newSaleEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	want(t, e.post("/api/v1/customers/add", map[string]any{"name": "Ama Mensah"}), 200, "")
	return e
}

func saleBody(over map[string]any) map[string]any {
	b := map[string]any{
		"customer_id":      1,
		"sub_total_amount": "25.00",
		"total_amount":     "27.50",
		"amount_paid":      "10.00",
		"discount":         "0.50",
		"invoice_type":     "main",
		"payment_type":     "Cash",
		"due_date":         "2026-12-31",
		"issued_by":        "Kwame",
		"items": []any{
			map[string]any{"item_name": "Rice 5kg", "description": "bag", "unit_price": "10.00", "quantity": "2", "tax": "2.00"},
			map[string]any{"item_name": "Salt", "unit_price": 2.5, "quantity": 2, "tax": "1.00"},
		},
	}
	for k, v := range over {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	return b
}

func saleOf(r resp) map[string]any { return r.data()["sales"].(map[string]any) }

func paymentsOf(r resp) []any { return r.data()["sales-payment"].([]any) }

// tableCount counts the table's items (a test-only Scan).
func tableCount(t *testing.T, e *env) int32 {
	t.Helper()
	// Id counters are left out: a refused create may draw an id (ids may
	// have gaps), which changes no record. So are rate-limit counts (a test
	// notification counts itself), which are no record either.
	out, err := e.store.Client().Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(e.store.Table()), Select: "COUNT",
		FilterExpression: aws.String("#t <> :c AND #t <> :r"), ExpressionAttributeNames: map[string]string{"#t": "type"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":c": &types.AttributeValueMemberS{Value: "counter"},
			":r": &types.AttributeValueMemberS{Value: "ratelimit"}}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Count
}

func TestAddSale(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	r := e.post("/api/v1/sales/add", saleBody(nil))
	got := dataAs[saleWire](t, r, "Sale added successfully", "sales")
	code, number := got.InvoiceCode.String(), got.InvoiceNumber
	if len(code) != 6 || !strings.HasPrefix(number, "INV-") || len(number) != 10 {
		t.Fatalf("%s %s: generated invoice_code %s, invoice_number %s", r.method, r.path, code, number)
	}
	today := time.Now().UTC().Format("2006-01-02")
	if got.PaymentDate == nil || *got.PaymentDate != today {
		t.Errorf("%s %s: payment_date %v, want today (%s)", r.method, r.path, got.PaymentDate, today)
	}
	same(t, r, saleWire{ID: 1, InvoiceCode: got.InvoiceCode, InvoiceNumber: number, CustomerID: "1",
		SubTotal: "25.00", Total: "27.50", AmountPaid: "10.00", Discount: ptr("0.50"), InvoiceType: "main",
		PaymentDate: got.PaymentDate, PaymentType: "Cash", PaymentStatus: "partial", IssuedBy: "Kwame", DueDate: "2026-12-31",
		AmountRefunded: "0.00",
	}, got, noStamps)
	same(t, r, []saleLineWire{
		{ID: 1, InvoiceCode: code, InvoiceNumber: number, ItemName: "Rice 5kg", Description: "bag", UnitPrice: "10.00", Quantity: "2", Tax: "2.00", Returned: "0"},
		{ID: 2, InvoiceCode: code, InvoiceNumber: number, ItemName: "Salt", UnitPrice: "2.50", Quantity: "2", Tax: "1.00", Returned: "0"},
	}, dataAs[[]saleLineWire](t, r, "Sale added successfully", "sales-item"), noStamps)
	pays := dataAs[[]salePaymentWire](t, r, "Sale added successfully", "sales-payment")
	if len(pays) != 1 || !strings.HasPrefix(pays[0].TransactionID, "txn_") {
		t.Fatalf("%s %s: one payment with a txn_ id expected: %+v", r.method, r.path, pays)
	}
	same(t, r, []salePaymentWire{{TransactionID: pays[0].TransactionID, InvoiceCode: code, CustomerName: "Ama Mensah",
		AmountPaid: "10.00", PaymentMethod: "Cash", IssuedBy: "Kwame", PaymentAt: pays[0].PaymentAt}}, pays, noStamps)

	t.Run("Get", func(t *testing.T) {
		g := e.get("/api/v1/sales/" + code)
		want(t, g, 200, "Sale found")
		if saleOf(g)["total_amount"] != "27.50" || len(paymentsOf(g)) != 1 || g.header.Get("ETag") != `"v1"` {
			t.Fatalf("%s", g.raw)
		}
	})
	t.Run("GivenCodesAndPrefixedNumber", func(t *testing.T) {
		r := e.post("/api/v1/sales/add", saleBody(map[string]any{"invoice_code": "123456", "invoice_number": "INV-654321"}))
		want(t, r, 200, "")
		if saleOf(r)["invoice_code"] != float64(123456) || saleOf(r)["invoice_number"] != "INV-654321" {
			t.Fatalf("%s", r.raw)
		}
		r = e.post("/api/v1/sales/add", saleBody(map[string]any{"invoice_code": 223456, "invoice_number": "765432"}))
		want(t, r, 200, "")
		if saleOf(r)["invoice_number"] != "INV-765432" {
			t.Fatalf("%s", r.raw)
		}
	})
	t.Run("Draft", func(t *testing.T) {
		r := e.post("/api/v1/sales/add", saleBody(map[string]any{"amount_paid": "0", "payment_type": "None", "payment_status": "draft"}))
		want(t, r, 200, "")
		if saleOf(r)["payment_status"] != "draft" || len(paymentsOf(r)) != 0 || saleOf(r)["payment_date"] != nil {
			t.Fatalf("%s", r.raw)
		}
	})
	t.Run("NoItemsAmountsAsSent", func(t *testing.T) {
		r := e.post("/api/v1/sales/add", saleBody(map[string]any{"items": nil, "sub_total_amount": "100", "total_amount": "100", "amount_paid": "100", "discount": nil}))
		want(t, r, 200, "")
		if saleOf(r)["payment_status"] != "paid" || saleOf(r)["discount"] != nil || len(r.data()["sales-item"].([]any)) != 0 {
			t.Fatalf("%s", r.raw)
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		want(t, e.get("/api/v1/sales/999999"), 404, "Sale not found")
		want(t, e.get("/api/v1/sales/abc"), 404, "Sale not found")
	})
}

func TestAddSaleRejects(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	before := tableCount(t, e)
	cases := []struct {
		name  string
		body  map[string]any
		code  int
		field string
		has   string
	}{
		{"SubTotalMismatch", map[string]any{"sub_total_amount": "24.00"}, 400, "sub_total_amount", "expected 25.00"},
		{"TotalMismatch", map[string]any{"total_amount": "30.00"}, 400, "total_amount", "expected 27.50"},
		{"Overpayment", map[string]any{"amount_paid": "27.51"}, 400, "amount_paid", "must not exceed"},
		{"ClaimedStatus", map[string]any{"payment_status": "paid"}, 400, "payment_status", "\"partial\""},
		{"NoCustomer", map[string]any{"customer_id": 42}, 400, "customer_id", "no customer with id 42"},
		{"CustomerNotInt", map[string]any{"customer_id": "x"}, 400, "customer_id", "positive integer"},
		{"MissingRequired", map[string]any{"due_date": nil, "invoice_type": nil}, 400, "due_date", "is required"},
		{"BadType", map[string]any{"invoice_type": "shop"}, 400, "invoice_type", "main, pos, order"},
		{"BadPaymentType", map[string]any{"payment_type": "Barter"}, 400, "payment_type", "Mobile Money"},
		{"PaidWithNone", map[string]any{"payment_type": "None"}, 400, "payment_type", "how the payment was made"},
		{"BadColour", map[string]any{"invoice_colour": "red"}, 400, "invoice_colour", "#RRGGBB"},
		{"BadDate", map[string]any{"due_date": "2026-02-30"}, 400, "due_date", "real date"},
		{"ThreeDecimals", map[string]any{"amount_paid": "1.005"}, 400, "amount_paid", "at most 2 decimal"},
		{"Negative", map[string]any{"amount_paid": -1}, 400, "amount_paid", "negative"},
		{"Exponent", map[string]any{"amount_paid": "1e3"}, 400, "amount_paid", "plain decimal"},
		{"Overflow", map[string]any{"amount_paid": "123456789.00"}, 400, "amount_paid", "at most 8 digits"},
		{"FloatyNumber", map[string]any{"sub_total_amount": 25.000001}, 400, "sub_total_amount", "at most 2 decimal"},
		{"BadCode", map[string]any{"invoice_code": "12345"}, 400, "invoice_code", "6 digits"},
		{"BadNumber", map[string]any{"invoice_number": "ABC-123456"}, 400, "invoice_number", "6 digits"},
		{"LineMissingPrice", map[string]any{"items": []any{map[string]any{"item_name": "x", "quantity": 1}}}, 400, "items[0].unit_price", "is required"},
		{"LineUnknownField", map[string]any{"items": []any{map[string]any{"item_name": "x", "quantity": 1, "unit_price": 1, "colour": "x"}}}, 400, "items[0].colour", "not a known field"},
		{"LineZeroQuantity", map[string]any{"items": []any{map[string]any{"item_name": "x", "quantity": 0, "unit_price": 1}}}, 400, "items[0].quantity", "above 0"},
		{"TooManyLines", map[string]any{"items": make([]any, 101)}, 400, "items", "at most 100"},
		{"DiscountOverSubTotal", map[string]any{"items": nil, "discount": "30.00"}, 400, "discount", "must not exceed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.post("/api/v1/sales/add", saleBody(c.body))
			want(t, r, c.code, "")
			if !strings.Contains(field(r, c.field), c.has) {
				t.Fatalf("field %s: %q does not contain %q: %s", c.field, field(r, c.field), c.has, r.raw)
			}
		})
	}
	if after := tableCount(t, e); after != before {
		t.Fatalf("rejected requests wrote %d items", after-before)
	}
}

func TestEditSale(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	r := e.post("/api/v1/sales/add", saleBody(map[string]any{"invoice_code": "111111", "invoice_number": "200001"}))
	want(t, r, 200, "")
	edit := func(over map[string]any, headers ...string) resp {
		b := saleBody(over)
		delete(b, "items")
		if _, ok := b["invoice_code"]; !ok {
			b["invoice_code"] = "111111"
		}
		if _, ok := b["invoice_number"]; !ok {
			b["invoice_number"] = "200001"
		}
		return e.put("/api/v1/sales/edit/111111", b, headers...)
	}
	t.Run("RaisePaidAddsOnePayment", func(t *testing.T) {
		r := edit(map[string]any{"amount_paid": "20.00"})
		want(t, r, 200, "Sale updated successfully")
		pays := paymentsOf(r)
		if len(pays) != 2 || pays[1].(map[string]any)["amount_paid"] != "10.00" || saleOf(r)["payment_status"] != "partial" {
			t.Fatalf("%s", r.raw)
		}
		if len(r.data()["sales-item"].([]any)) != 2 {
			t.Fatal("lines lost by an edit without items")
		}
	})
	t.Run("Decrease", func(t *testing.T) {
		r := edit(map[string]any{"amount_paid": "5.00"})
		want(t, r, 400, "")
		if !strings.Contains(field(r, "amount_paid"), "must not decrease") {
			t.Fatalf("%s", r.raw)
		}
	})
	t.Run("PathBodyMismatch", func(t *testing.T) {
		want(t, edit(map[string]any{"invoice_code": "222222"}), 400, "")
	})
	t.Run("MissingRequired", func(t *testing.T) {
		r := e.put("/api/v1/sales/edit/111111", map[string]any{"invoice_code": "111111", "invoice_note": "x"})
		want(t, r, 400, "")
		if field(r, "amount_paid") != "is required" || field(r, "invoice_number") != "is required" {
			t.Fatalf("%s", r.raw)
		}
	})
	t.Run("IfMatch", func(t *testing.T) {
		want(t, edit(map[string]any{"amount_paid": "20.00"}, "If-Match", `"v1"`), 412, "")
		want(t, edit(map[string]any{"amount_paid": "20.00", "invoice_note": "thanks"}, "If-Match", `"v2"`), 200, "")
	})
	t.Run("PayInFullFinalizes", func(t *testing.T) {
		r := edit(map[string]any{"amount_paid": "27.50"})
		want(t, r, 200, "")
		if saleOf(r)["payment_status"] != "paid" || len(paymentsOf(r)) != 3 {
			t.Fatalf("%s", r.raw)
		}
		r = edit(map[string]any{"amount_paid": "27.50", "discount": "1.00", "total_amount": "27.00"})
		want(t, r, 400, "")
		if !strings.Contains(field(r, "discount"), "finalized") {
			t.Fatalf("%s", r.raw)
		}
		r = edit(map[string]any{"amount_paid": "27.50", "invoice_note": "Paid, thank you", "invoice_colour": "#00AA00", "reminder_date": nil})
		want(t, r, 200, "")
		if saleOf(r)["invoice_note"] != "Paid, thank you" || saleOf(r)["invoice_colour"] != "#00AA00" {
			t.Fatalf("%s", r.raw)
		}
	})
	t.Run("PaidKeepsCustomerAndNumber", func(t *testing.T) {
		want(t, e.post("/api/v1/customers/add", map[string]any{"name": "Esi"}), 200, "")
		for name, over := range map[string]map[string]any{
			"customer_id":    {"amount_paid": "27.50", "customer_id": 2},
			"invoice_number": {"amount_paid": "27.50", "invoice_number": "INV-500005"},
		} {
			r := edit(over)
			want(t, r, 400, "")
			if !strings.Contains(field(r, name), "finalized") {
				t.Fatalf("%s: %s", name, r.raw)
			}
		}
	})
	t.Run("InvoiceNumberStaysUnique", func(t *testing.T) {
		want(t, e.post("/api/v1/sales/add", saleBody(map[string]any{"invoice_code": "333333", "invoice_number": "300003"})), 200, "")
		want(t, e.post("/api/v1/sales/add", saleBody(map[string]any{"invoice_code": "444444", "invoice_number": "400001"})), 200, "")
		renumber := func(number string) resp {
			b := saleBody(map[string]any{"invoice_code": "444444", "invoice_number": number})
			delete(b, "items")
			return e.put("/api/v1/sales/edit/444444", b)
		}
		want(t, renumber("300003"), 409, "")
		want(t, renumber("INV-400004"), 200, "")
		// The old number is free again; the new one is taken.
		want(t, e.post("/api/v1/sales/add", saleBody(map[string]any{"invoice_number": "400001"})), 200, "")
		want(t, e.post("/api/v1/sales/add", saleBody(map[string]any{"invoice_number": "400004"})), 409, "")
	})
	t.Run("NotFound", func(t *testing.T) {
		b := saleBody(map[string]any{"invoice_code": "999999", "invoice_number": "999999"})
		delete(b, "items")
		want(t, e.put("/api/v1/sales/edit/999999", b), 404, "Sale not found")
	})
	t.Run("OtherAccount", func(t *testing.T) {
		_, keyB := e.newAccount("B", "BBB")
		want(t, e.req("GET", "/api/v1/sales/111111", keyB, nil), 404, "Sale not found")
		b := saleBody(map[string]any{"invoice_code": "111111", "invoice_number": "200001"})
		want(t, e.req("PUT", "/api/v1/sales/edit/111111", keyB, b), 404, "Sale not found")
		want(t, e.req("GET", "/api/v1/sales", keyB, nil), 200, "Sales found: 0")
	})
}

func TestEditSaleLines(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	want(t, e.post("/api/v1/sales/add", saleBody(map[string]any{"invoice_code": "111111", "amount_paid": "0", "payment_type": "None"})), 200, "")
	b := saleBody(map[string]any{"invoice_code": "111111", "invoice_number": saleOf(e.get("/api/v1/sales/111111"))["invoice_number"],
		"amount_paid": "0", "payment_type": "None",
		"items":            []any{map[string]any{"item_name": "Oil", "unit_price": "3.333", "quantity": "1"}},
		"sub_total_amount": "3.33", "total_amount": "3.33", "discount": "0"})
	r := e.put("/api/v1/sales/edit/111111", b)
	want(t, r, 400, "")
	b["items"] = []any{map[string]any{"item_name": "Oil", "unit_price": "3.33", "quantity": "1.5"}}
	r = e.put("/api/v1/sales/edit/111111", b)
	want(t, r, 400, "")
	if !strings.Contains(field(r, "sub_total_amount"), "expected 5.00") { // 3.33 x 1.5 = 4.995 -> 5.00
		t.Fatalf("%s", r.raw)
	}
	b["sub_total_amount"], b["total_amount"] = "5.00", "5.00"
	r = e.put("/api/v1/sales/edit/111111", b)
	want(t, r, 200, "")
	if l := r.data()["sales-item"].([]any); len(l) != 1 || l[0].(map[string]any)["quantity"] != "1.5" {
		t.Fatalf("%s", r.raw)
	}
}

// TestConcurrentPaymentsAddUp raises one sale's amount_paid from many
// goroutines at once: whatever interleaving happens, the payment records add
// up to the final amount_paid.
func TestConcurrentPaymentsAddUp(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	want(t, e.post("/api/v1/sales/add", saleBody(map[string]any{"invoice_code": "555555", "invoice_number": "555555",
		"items": nil, "discount": nil, "sub_total_amount": "1000", "total_amount": "1000", "amount_paid": "0", "payment_type": "None"})), 200, "")
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for i := 1; i <= 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.put("/api/v1/sales/edit/555555", map[string]any{"invoice_code": "555555", "invoice_number": "555555",
				"customer_id": 1, "sub_total_amount": "1000", "total_amount": "1000", "payment_type": "Cash",
				"amount_paid": fmt.Sprintf("%d.25", i*10)})
			mu.Lock()
			codes[r.code]++
			mu.Unlock()
			if r.code != 200 && !(r.code == 400 && strings.Contains(field(r, "amount_paid"), "must not decrease")) {
				t.Errorf("edit %d: %d %s", i, r.code, r.raw)
			}
		}()
	}
	wg.Wait()
	g := e.get("/api/v1/sales/555555")
	paid := money.MustAmount(saleOf(g)["amount_paid"].(string))
	sum := money.Zero
	for _, p := range paymentsOf(g) {
		a := money.MustAmount(p.(map[string]any)["amount_paid"].(string))
		if a.IsZero() {
			t.Fatal("a payment of 0.00 was recorded")
		}
		sum = sum.Add(a)
	}
	if sum.Cmp(paid) != 0 || codes[200] != len(paymentsOf(g)) || codes[200] == 0 {
		t.Fatalf("payments sum %s, amount_paid %s, %d payments, outcomes %v", sum, paid, len(paymentsOf(g)), codes)
	}
}

func TestConcurrentAddsOneWinner(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	run := func(bodies func(i int) map[string]any, headers ...string) map[int]int {
		var wg sync.WaitGroup
		var mu sync.Mutex
		codes := map[int]int{}
		for i := 0; i < 10; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.post("/api/v1/sales/add", bodies(i), headers...)
				mu.Lock()
				codes[r.code]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		return codes
	}
	t.Run("SameInvoiceNumber", func(t *testing.T) {
		codes := run(func(int) map[string]any { return saleBody(map[string]any{"invoice_number": "777777"}) })
		if codes[200] != 1 || codes[409] != 9 {
			t.Fatalf("outcomes %v, want one 200 and nine 409", codes)
		}
	})
	t.Run("SameInvoiceCode", func(t *testing.T) {
		codes := run(func(int) map[string]any { return saleBody(map[string]any{"invoice_code": "888888"}) })
		if codes[200] != 1 || codes[409] != 9 {
			t.Fatalf("outcomes %v, want one 200 and nine 409", codes)
		}
	})
	t.Run("SameIdempotencyKey", func(t *testing.T) {
		before := e.get("/api/v1/sales?limit=200").data()["sales"].([]any)
		codes := run(func(int) map[string]any { return saleBody(nil) }, "Idempotency-Key", "sale-once")
		after := e.get("/api/v1/sales?limit=200").data()["sales"].([]any)
		if codes[200] != 10 || len(after) != len(before)+1 {
			t.Fatalf("outcomes %v, sales %d -> %d", codes, len(before), len(after))
		}
		want(t, e.post("/api/v1/sales/add", saleBody(map[string]any{"amount_paid": "1.00"}), "Idempotency-Key", "sale-once"), http.StatusConflict, "")
	})
	// Three sales were created (two winners of the first two runs, one of the
	// third), with distinct ids; losers may have left gaps.
	r := e.get("/api/v1/sales")
	seen := map[int]bool{}
	for _, s := range r.data()["sales"].([]any) {
		seen[int(s.(map[string]any)["id"].(float64))] = true
	}
	if len(seen) != 3 || len(r.data()["sales"].([]any)) != 3 {
		t.Fatalf("ids %v, want 3 distinct", seen)
	}
}

func TestListSalesFilters(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	want(t, e.post("/api/v1/customers/add", map[string]any{"name": "Yaw"}), 200, "")
	add := func(over map[string]any) {
		t.Helper()
		want(t, e.post("/api/v1/sales/add", saleBody(over)), 200, "")
	}
	add(map[string]any{"invoice_code": "100001", "invoice_type": "pos", "amount_paid": "0", "payment_type": "None", "due_date": "2026-01-10"})
	add(map[string]any{"invoice_code": "100002", "invoice_type": "main", "customer_id": 2, "due_date": "2026-02-10", "payment_date": "2026-01-05"})
	add(map[string]any{"invoice_code": "100003", "invoice_type": "order", "amount_paid": "27.50", "due_date": "2026-03-10", "payment_date": "2026-01-05"})
	count := func(q string) int {
		t.Helper()
		r := e.get("/api/v1/sales" + q)
		want(t, r, 200, "")
		return len(r.data()["sales"].([]any))
	}
	for q, n := range map[string]int{
		"":                                             3,
		"?invoice_code=100002":                         1,
		"?invoice_code=100009":                         0,
		"?customer_id=2":                               1,
		"?customer_id=1":                               2,
		"?invoice_type=pos":                            1,
		"?invoice_type=invoice":                        1,
		"?invoice_type=main":                           1,
		"?invoice_type=storefront":                     1,
		"?payment_status=draft":                        1,
		"?payment_status=partial":                      1,
		"?payment_status=paid":                         1,
		"?payment_date=2026-01-05":                     2,
		"?due_date=2026-02-10":                         2,
		"?due_date=2026-01-09":                         0,
		"?created_at=2000-01-01%2000:00:00":            3,
		"?created_at=2999-01-01":                       0,
		"?customer_id=1&payment_status=paid":           1,
		"?payment_date=2026-01-05&due_date=2026-02-28": 1,
		"?created_at=2000-01-01&due_date=2026-02-10":   2,
		"?invoice_code=100001&payment_status=paid":     0,
	} {
		if got := count(q); got != n {
			t.Errorf("%q: %d sales, want %d", q, got, n)
		}
	}
	for q, f := range map[string]string{
		"?invoice_type=shop": "invoice_type", "?payment_status=open": "payment_status", "?customer_id=x": "customer_id",
		"?payment_date=05-01-2026": "payment_date", "?due_date=tomorrow": "due_date", "?invoice_code=12": "invoice_code",
		"?sort=asc": "sort",
	} {
		wantRefused(t, e.get("/api/v1/sales"+q), f)
	}
	// Newest first: the last added comes first.
	first := e.get("/api/v1/sales").data()["sales"].([]any)[0].(map[string]any)
	if first["invoice_code"] != float64(100003) {
		t.Fatalf("first %v", first["invoice_code"])
	}
}

// TestSaleRoundTrips counts DynamoDB calls per request with a warm key
// cache, and how many of them are sequential: a create draws its id in
// parallel with its reads, so it makes three calls in two round trips.
func TestSaleRoundTrips(t *testing.T) {
	t.Parallel()
	e := newEnvTTL(t, time.Minute)
	want(t, e.post("/api/v1/customers/add", map[string]any{"name": "Ama"}), 200, "")
	type cost struct{ calls, depth int }
	count := func(f func() resp) cost {
		t.Helper()
		mark := e.spans.Mark()
		if r := f(); r.code != 200 {
			t.Fatalf("%d %s", r.code, r.raw)
		}
		calls, depth := e.spans.Since(mark)
		return cost{calls, depth}
	}
	add := count(func() resp { return e.post("/api/v1/sales/add", saleBody(map[string]any{"invoice_code": "424242"})) })
	get := count(func() resp { return e.get("/api/v1/sales/424242") })
	list := count(func() resp { return e.get("/api/v1/sales?payment_status=partial") })
	b := saleBody(map[string]any{"invoice_code": "424242", "invoice_number": saleOf(e.get("/api/v1/sales/424242"))["invoice_number"], "amount_paid": "20.00"})
	edit := count(func() resp { return e.put("/api/v1/sales/edit/424242", b) })
	t.Logf("DynamoDB calls (sequential depth): add %v, get %v, list %v, edit %v", add, get, list, edit)
	if add != (cost{3, 2}) || get != (cost{1, 1}) || list != (cost{1, 1}) || edit != (cost{2, 2}) {
		t.Fatalf("calls/depth add %v get %v list %v edit %v; want {3 2}, {1 1}, {1 1}, {2 2}", add, get, list, edit)
	}
}

// The creates of customers, expenses, categories and items are one DynamoDB
// call in the common case (ids from the process's block, every uniqueness
// and existence check a condition of the write), with or without an
// Idempotency-Key; a replay costs the failed write and one read of the
// key's record.
func TestCreateRoundTrips(t *testing.T) {
	t.Parallel()
	e := newEnvTTL(t, time.Minute)
	want(t, e.post("/api/v1/inventory/categories/add", map[string]any{"category_name": "Warm-up"}), 200, "")
	n := 0
	creates := map[string]func() any{
		"/api/v1/customers/add": func() any { return map[string]any{"name": "Ama"} },
		"/api/v1/expenses/add": func() any {
			return map[string]any{"expense_type": "Fuel", "expense_amount": "9.00", "payment_method": "Cash", "created_by": "Ama"}
		},
		"/api/v1/inventory/categories/add": func() any { n++; return map[string]any{"category_name": fmt.Sprintf("Category %d", n)} },
		"/api/v1/inventory/items/add": func() any {
			n++
			return map[string]any{"item_name": fmt.Sprintf("Item %d", n), "category_id": 1, "item_price": 3}
		},
	}
	for path, body := range creates {
		// The first create of a kind in a process reserves a block of ids.
		want(t, e.post(path, body()), 200, "")
		for _, key := range []string{"", "k-" + path} {
			var headers []string
			if key != "" {
				headers = []string{"Idempotency-Key", key}
			}
			b := body()
			mark := e.spans.Mark()
			want(t, e.post(path, b, headers...), 200, "")
			if calls, depth := e.spans.Since(mark); calls != 1 || depth != 1 {
				t.Errorf("%s (key %q): %d calls, %d sequential; want 1", path, key, calls, depth)
			}
			if key == "" {
				continue
			}
			mark = e.spans.Mark()
			want(t, e.post(path, b, headers...), 200, "")
			if calls, depth := e.spans.Since(mark); calls > 3 || depth > 3 {
				t.Errorf("%s replay: %d calls, %d sequential; want the write, the key's read and at most a block", path, calls, depth)
			}
		}
	}
}
