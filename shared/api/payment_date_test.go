package api_test

import (
	"testing"
)

// TestPaymentDateIsTheBusinessDay: a payment_date left out is the
// business's date of the payment, in the timezone in effect at that moment
// (as the reports date it), on a create and on the edit that records the
// first payment; a date the client sends, or one the sale already has, is
// kept.
func TestPaymentDateIsTheBusinessDay(t *testing.T) {
	t.Parallel()
	e := newSaleEnv(t)
	setTZ := func(tz string) {
		t.Helper()
		want(t, e.put("/api/v1/user/settings", map[string]any{"timezone": tz}), 200, "Settings updated")
	}
	paymentDate := func(r resp) any {
		t.Helper()
		want(t, r, 200, "")
		return saleOf(r)["payment_date"]
	}
	body := func(over map[string]any) map[string]any {
		b := saleBody(map[string]any{"items": nil, "sub_total_amount": "100.00", "total_amount": "100.00", "discount": nil})
		for k, v := range over {
			b[k] = v
		}
		return b
	}

	e.clock.set(t, "2026-11-27 10:00:00")
	setTZ("Pacific/Auckland") // in effect from 10:00:15
	// 23:30 UTC is 12:30 on the 28th in Auckland (UTC+13 in November).
	e.clock.set(t, "2026-11-27 23:30:00")
	if got := paymentDate(e.post("/api/v1/sales/add", body(map[string]any{"invoice_code": "610001", "invoice_number": "610001"}))); got != "2026-11-28" {
		t.Errorf("paid at 23:30 UTC in Auckland: payment_date %v, want 2026-11-28", got)
	}
	if got := paymentDate(e.post("/api/v1/sales/add", body(map[string]any{"invoice_code": "610002", "invoice_number": "610002", "payment_date": "2026-11-20"}))); got != "2026-11-20" {
		t.Errorf("payment_date sent as 2026-11-20, kept as %v", got)
	}
	if got := paymentDate(e.post("/api/v1/sales/add", body(map[string]any{"invoice_code": "610003", "invoice_number": "610003", "amount_paid": "0", "payment_type": "None"}))); got != nil {
		t.Errorf("a draft has payment_date %v", got)
	}
	edit := func(code, paid string) resp {
		return e.put("/api/v1/sales/edit/"+code, map[string]any{"invoice_code": code, "invoice_number": code, "customer_id": 1,
			"sub_total_amount": "100.00", "total_amount": "100.00", "amount_paid": paid, "payment_type": "Cash"})
	}
	if got := paymentDate(edit("610003", "10.00")); got != "2026-11-28" {
		t.Errorf("first paid on an edit at 23:30 UTC in Auckland: payment_date %v, want 2026-11-28", got)
	}

	// Behind UTC: 00:30 UTC on the 28th is 16:30 on the 27th in Los Angeles.
	e.clock.set(t, "2026-11-28 00:00:00")
	setTZ("America/Los_Angeles") // in effect from 00:00:15
	e.clock.set(t, "2026-11-28 00:30:00")
	if got := paymentDate(e.post("/api/v1/sales/add", body(map[string]any{"invoice_code": "610004", "invoice_number": "610004"}))); got != "2026-11-27" {
		t.Errorf("paid at 00:30 UTC in Los Angeles: payment_date %v, want 2026-11-27", got)
	}
	if got := paymentDate(e.post("/api/v1/sales/add", body(map[string]any{"invoice_code": "610005", "invoice_number": "610005", "amount_paid": "0", "payment_type": "None"}))); got != nil {
		t.Errorf("a draft has payment_date %v", got)
	}
	if got := paymentDate(edit("610005", "10.00")); got != "2026-11-27" {
		t.Errorf("first paid on an edit at 00:30 UTC in Los Angeles: payment_date %v, want 2026-11-27", got)
	}
	// A later payment keeps the date the sale has; so does a sale read again.
	if got := paymentDate(edit("610001", "50.00")); got != "2026-11-28" {
		t.Errorf("a second payment moved payment_date to %v", got)
	}
	if got := paymentDate(e.get("/api/v1/sales/610004")); got != "2026-11-27" {
		t.Errorf("read again: payment_date %v", got)
	}
}
