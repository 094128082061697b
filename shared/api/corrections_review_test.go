package api_test

import (
	"fmt"
	"testing"
)

// Cases a review of the corrections found, each kept as a plain test.

// TestGeneratedCodeNamesTheSaleInTheLedger: a sale sent without an
// invoice_code gets one drawn by the store, and its sale movement names that
// code, not a draw made before it.
func TestGeneratedCodeNamesTheSaleInTheLedger(t *testing.T) {
	t.Parallel()
	bothPaths(t, func(t *testing.T, c *client) {
		body := corrSale("300001", 2, "0")
		delete(body, "invoice_code")
		delete(body, "invoice_number")
		r := c.post(t, "/api/v1/sales/add", body)
		want(t, r, 200, "Sale added successfully")
		code := fmt.Sprint(r.body["data"].(map[string]any)["sales"].(map[string]any)["invoice_code"])
		moves := checkLedger(t, c, "SOAP")
		if moves[0].Kind != "sale" || moves[0].InvoiceCode == nil || *moves[0].InvoiceCode != code {
			t.Fatalf("the sale movement %+v does not name sale %s", moves[0], code)
		}
	})
}

// TestEditMayNotPassTheStockedItemBound: an edit that would take a sale past
// 23 distinct stocked items (store.MaxStockedItemsPerSale) is refused, naming items (so every sale can be
// voided in one transaction), and changes nothing.
func TestEditMayNotPassTheStockedItemBound(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	want(t, e.post("/api/v1/inventory/categories/add", map[string]any{"category_name": "Shop"}), 200, "")
	lines := func(n int) ([]any, string) {
		var l []any
		for i := range n {
			l = append(l, map[string]any{"item_code": fmt.Sprintf("IT-%02d", i), "item_name": "Thing", "unit_price": "1.00", "quantity": "1"})
		}
		return l, fmt.Sprintf("%d.00", n)
	}
	for i := range 24 {
		want(t, e.post("/api/v1/inventory/items/add", map[string]any{"item_code": fmt.Sprintf("IT-%02d", i), "item_name": fmt.Sprintf("Thing %d", i),
			"category_id": 1, "item_price": "1.00", "quantity": "5"}), 200, "")
	}
	l, total := lines(20)
	want(t, e.post("/api/v1/sales/add", map[string]any{"invoice_code": "300001", "customer_id": 1, "sub_total_amount": total, "total_amount": total,
		"amount_paid": "0", "invoice_type": "main", "payment_type": "None", "due_date": "2026-12-31", "items": l}), 200, "")
	l, total = lines(24)
	r := e.put("/api/v1/sales/edit/300001", map[string]any{"invoice_code": "300001", "invoice_number": "INV-300001", "customer_id": 1,
		"sub_total_amount": total, "total_amount": total, "amount_paid": "0", "items": l})
	wantField(t, r, "items", "23")
	if q := dataAs[itemWire](t, e.get("/api/v1/inventory/items/IT-22"), "Item found", "items").Quantity; q != "5" {
		t.Fatalf("a refused edit moved stock: IT-22 has %s", q)
	}
	want(t, e.post(voidPath("300001"), nil), 200, "Sale voided")
}

// TestRefundMethodNone: money refunded goes back somehow, so "None" is no
// refund_method.
func TestRefundMethodNone(t *testing.T) {
	t.Parallel()
	bothPaths(t, func(t *testing.T, c *client) {
		want(t, c.post(t, "/api/v1/sales/add", corrSale("300001", 1, "10.00")), 200, "")
		wantField(t, c.post(t, refundPath("300001"), map[string]any{"amount": "1.00", "refund_method": "None"}), "refund_method", "Cash")
	})
}
