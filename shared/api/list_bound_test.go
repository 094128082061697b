package api_test

import (
	"context"
	"testing"

	"bizdata/shared/store"
)

// TestListWorkIsBounded: a filter that matches little reads at most the
// bound per request and answers short (even empty) pages with a cursor, so
// no request reads a whole partition; following the cursors finds every
// match exactly once.
func TestListWorkIsBounded(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	const bound = 10
	e.store.SetMaxEvaluated(bound)
	want(t, e.post("/api/v1/sales/add", saleBody(map[string]any{"invoice_type": "pos", "amount_paid": "27.50"})), 200, "")
	for i := 0; i < 25; i++ {
		want(t, e.post("/api/v1/sales/add", saleBody(map[string]any{"invoice_type": "main", "amount_paid": "27.50"})), 200, "")
	}
	// payment_status reads its own key; invoice_type is filtered within it.
	f := store.SaleFilter{PaymentStatus: "paid", InvoiceType: "pos"}
	cursor, found, pages, empty := "", 0, 0, 0
	for {
		p, err := e.store.ListSales(context.Background(), e.acct.ID, f, 1, cursor)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if p.Scanned > bound {
			t.Fatalf("page %d read %d items, bound %d", pages, p.Scanned, bound)
		}
		if len(p.Items) == 0 && p.Next != "" {
			empty++
		}
		found += len(p.Items)
		if cursor = p.Next; cursor == "" {
			break
		}
	}
	if found != 1 || empty == 0 {
		t.Fatalf("found %d in %d pages (%d empty with a cursor)", found, pages, empty)
	}
	// Through HTTP: an empty page with a cursor, then the match.
	r := e.get("/api/v1/sales?payment_status=paid&invoice_type=pos&limit=1")
	want(t, r, 200, "Sales found: 0")
	next, _ := r.data()["next_cursor"].(string)
	if next == "" {
		t.Fatalf("an empty page without a cursor: %s", r.raw)
	}
}

// TestCombinedFiltersReadWhatTheyReturn: what a customer owes and overdue
// invoices have keys of their own, so they read only what they return.
func TestCombinedFiltersReadWhatTheyReturn(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	want(t, e.post("/api/v1/customers/add", map[string]any{"name": "Other"}), 200, "")
	want(t, e.post("/api/v1/sales/add", saleBody(map[string]any{"amount_paid": "27.50", "due_date": "2020-01-01"})), 200, "")
	for i := 0; i < 12; i++ {
		want(t, e.post("/api/v1/sales/add", saleBody(map[string]any{"due_date": "2030-01-01"})), 200, "")
		want(t, e.post("/api/v1/sales/add", saleBody(map[string]any{"customer_id": 2, "amount_paid": "27.50"})), 200, "")
	}
	for _, c := range []struct {
		name string
		f    store.SaleFilter
		n    int
	}{
		{"customer owes", store.SaleFilter{CustomerID: 1, PaymentStatus: "paid"}, 1},
		{"customer owes, nothing", store.SaleFilter{CustomerID: 1, PaymentStatus: "draft"}, 0},
		{"overdue", store.SaleFilter{PaymentStatus: "partial", DueTo: "2026-01-01~"}, 0},
		{"overdue paid", store.SaleFilter{PaymentStatus: "paid", DueTo: "2026-01-01~"}, 1},
		{"customer in a period", store.SaleFilter{CustomerID: 1, CreatedFrom: "2000-01-01"}, 13},
	} {
		p, err := e.store.ListSales(context.Background(), e.acct.ID, c.f, 50, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != c.n || p.Scanned != c.n {
			t.Errorf("%s: returned %d (want %d), read %d", c.name, len(p.Items), c.n, p.Scanned)
		}
	}
}
