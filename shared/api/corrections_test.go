package api_test

// Refunds and voids of sales, by outcome, over HTTP and through
// the Lambda path (see bothPaths).

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestRefund(t *testing.T) {
	t.Parallel()
	bothPaths(t, func(t *testing.T, c *client) {
		add := c.post(t, "/api/v1/sales/add", corrSale("300001", 3, "20.00"))
		if got := dataAs[[]refundWire](t, add, "Sale added successfully", "sales-refund"); len(got) != 0 {
			t.Errorf("a new sale's sales-refund: %+v", got)
		}
		if s := dataAs[corrSaleWire](t, add, "Sale added successfully", "sales"); s.AmountRefunded != "0.00" || s.VoidReason != nil || s.VoidedAt != nil {
			t.Errorf("a new sale: amount_refunded %q, void_reason %v, voided_at %v", s.AmountRefunded, s.VoidReason, s.VoidedAt)
		}
		if q := itemQty(t, c, "SOAP"); q != "7" {
			t.Fatalf("stock %s after selling 3 of 10", q)
		}

		// An itemised refund: one soap back to stock.
		r := c.post(t, refundPath("300001"), map[string]any{"amount": "5.00", "reason": "damaged", "refund_method": "Mobile Money",
			"issued_by": "Ama", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "1"}}})
		s := dataAs[corrSaleWire](t, r, "Refund recorded", "sales")
		if s.AmountRefunded != "5.00" || s.AmountPaid != "20.00" || s.PaymentStatus != "paid" || s.VoidReason != nil || s.VoidedAt != nil {
			t.Errorf("sale after a refund of 5.00: %+v", s)
		}
		lines := dataAs[[]corrLineWire](t, r, "Refund recorded", "sales-item")
		if len(lines) != 2 || lines[0].QuantityReturned != "1" || lines[1].QuantityReturned != "0" || lines[0].Quantity != "3" {
			t.Errorf("lines after returning 1 of line 1: %+v", lines)
		}
		if pays := dataAs[[]salePaymentWire](t, r, "Refund recorded", "sales-payment"); len(pays) != 1 || pays[0].AmountPaid != "20.00" {
			t.Errorf("payments after a refund: %+v", pays)
		}
		refunds := dataAs[[]refundWire](t, r, "Refund recorded", "sales-refund")
		if len(refunds) != 1 {
			t.Fatalf("sales-refund: %+v", refunds)
		}
		first := refunds[0]
		if !refundIDRE.MatchString(first.RefundID) || !stampRE.MatchString(first.RefundedAt) || first.CreatedAt != first.RefundedAt {
			t.Errorf("refund id %q, refunded_at %q, created_at %q", first.RefundID, first.RefundedAt, first.CreatedAt)
		}
		same(t, r, refundWire{RefundID: first.RefundID, InvoiceCode: "300001", Amount: "5.00", Reason: ptr("damaged"),
			RefundMethod: "Mobile Money", IssuedBy: ptr("Ama"), Lines: []refundLineWire{{SalesItemID: 1, ItemCode: ptr("SOAP"), Quantity: "1"}},
			RefundedAt: first.RefundedAt, CreatedAt: first.CreatedAt}, first)
		for _, k := range []string{"refund_id", "invoice_code", "amount", "reason", "refund_method", "issued_by", "lines", "refunded_at", "created_at"} {
			if _, ok := r.data()["sales-refund"].([]any)[0].(map[string]any)[k]; !ok {
				t.Errorf("sales-refund entry has no %s: %s", k, r.raw)
			}
		}

		// The line's item went back to stock, with a return in its ledger.
		if q := itemQty(t, c, "SOAP"); q != "8" {
			t.Errorf("stock %s after returning 1, want 8", q)
		}
		moves := checkLedger(t, c, "SOAP")
		if len(moves) != 3 || moves[0].Kind != "return" || moves[0].Quantity != "1" || moves[0].QuantityAfter != "8" ||
			moves[0].InvoiceCode == nil || *moves[0].InvoiceCode != "300001" || moves[0].Reason == nil || *moves[0].Reason != "damaged" ||
			moves[1].Kind != "sale" || moves[1].Quantity != "-3" || moves[2].Kind != "initial" || moves[2].Quantity != "10" {
			t.Errorf("ledger after the return: %+v", moves)
		}

		// Fetch and list carry amount_refunded and the refund.
		g := c.get(t, "/api/v1/sales/300001")
		if got := dataAs[corrSaleWire](t, g, "Sale found", "sales"); got.AmountRefunded != "5.00" {
			t.Errorf("fetched amount_refunded %s", got.AmountRefunded)
		}
		same(t, g, refunds, dataAs[[]refundWire](t, g, "Sale found", "sales-refund"))
		if got := dataAs[[]corrLineWire](t, g, "Sale found", "sales-item"); got[0].QuantityReturned != "1" {
			t.Errorf("fetched quantity_returned %s", got[0].QuantityReturned)
		}
		l := c.get(t, "/api/v1/sales?invoice_code=300001")
		if list := dataAs[[]corrSaleWire](t, l, "Sales found: 1", "sales"); len(list) != 1 || list[0].AmountRefunded != "5.00" {
			t.Errorf("listed: %+v", list)
		}

		// A plain refund: the method defaults to the sale's payment_type,
		// no lines, no stock moves.
		r = c.post(t, refundPath("300001"), map[string]any{"amount": "3.00"})
		if s := dataAs[corrSaleWire](t, r, "Refund recorded", "sales"); s.AmountRefunded != "8.00" {
			t.Errorf("amount_refunded %s after 5.00 and 3.00", s.AmountRefunded)
		}
		refunds = dataAs[[]refundWire](t, r, "Refund recorded", "sales-refund")
		if len(refunds) != 2 || refunds[0].RefundID != first.RefundID || refunds[1].RefundID == first.RefundID {
			t.Fatalf("refunds, oldest first: %+v", refunds)
		}
		second := refunds[1]
		same(t, r, refundWire{RefundID: second.RefundID, InvoiceCode: "300001", Amount: "3.00", RefundMethod: "Cash",
			Lines: []refundLineWire{}, RefundedAt: second.RefundedAt, CreatedAt: second.CreatedAt}, second)
		if q := itemQty(t, c, "SOAP"); q != "8" {
			t.Errorf("a refund without lines moved stock: %s", q)
		}

		// A line with no item code is returned without any stock move.
		r = c.post(t, refundPath("300001"), map[string]any{"amount": "5.00", "lines": []any{map[string]any{"sales_item_id": 2, "quantity": 1}}})
		refunds = dataAs[[]refundWire](t, r, "Refund recorded", "sales-refund")
		if got := refunds[len(refunds)-1].Lines; len(got) != 1 || got[0].ItemCode != nil || got[0].SalesItemID != 2 || got[0].Quantity != "1" {
			t.Errorf("lines of a refund of the delivery line: %+v", got)
		}
		if lines := dataAs[[]corrLineWire](t, r, "Refund recorded", "sales-item"); lines[1].QuantityReturned != "1" {
			t.Errorf("delivery line quantity_returned %s", lines[1].QuantityReturned)
		}
		if q := itemQty(t, c, "SOAP"); q != "8" {
			t.Errorf("returning a line without item code moved stock: %s", q)
		}
		checkLedger(t, c, "SOAP")
	})
}

func TestRefundRefused(t *testing.T) {
	t.Parallel()
	bothPaths(t, func(t *testing.T, c *client) {
		want(t, c.post(t, "/api/v1/sales/add", corrSale("300001", 3, "20.00")), 200, "")
		want(t, c.post(t, "/api/v1/sales/add", corrSale("300002", 1, "0")), 200, "")
		want(t, c.post(t, refundPath("300001"), map[string]any{"amount": "8.00", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "1"}}}), 200, "Refund recorded")
		_, keyB := c.e.newAccount("B", "BBB")
		before := tableCount(t, c.e)
		line := func(id any, qty any) map[string]any {
			return map[string]any{"amount": "1.00", "lines": []any{map[string]any{"sales_item_id": id, "quantity": qty}}}
		}

		// Σ refunds ≤ amount_paid: 12.00 is the most that can still be refunded.
		wantField(t, c.post(t, refundPath("300001"), map[string]any{"amount": "12.01"}), "amount", "12.00")
		// A line returns at most its quantity less what was returned.
		wantField(t, c.post(t, refundPath("300001"), line(1, "3")), "lines[0].quantity", "2")
		wantField(t, c.post(t, refundPath("300001"), map[string]any{"amount": "1.00", "lines": []any{
			map[string]any{"sales_item_id": 1, "quantity": "2"}, map[string]any{"sales_item_id": 1, "quantity": "1"}}}), "lines[1].quantity", "")
		wantField(t, c.post(t, refundPath("300001"), line(1, "0")), "lines[0].quantity", "")
		wantField(t, c.post(t, refundPath("300001"), line(1, "-1")), "lines[0].quantity", "")
		wantRefused(t, c.post(t, refundPath("300001"), map[string]any{"amount": "1.00", "lines": []any{map[string]any{"sales_item_id": 1}}}), "lines[0].quantity")
		// Unknown lines.
		wantField(t, c.post(t, refundPath("300001"), line(3, "1")), "lines[0].sales_item_id", "")
		wantField(t, c.post(t, refundPath("300001"), line(99, "1")), "lines[0].sales_item_id", "")
		wantField(t, c.post(t, refundPath("300001"), line(0, "1")), "lines[0].sales_item_id", "")
		wantRefused(t, c.post(t, refundPath("300001"), map[string]any{"amount": "1.00", "lines": []any{map[string]any{"quantity": "1"}}}), "lines[0].sales_item_id")
		wantRefused(t, c.post(t, refundPath("300001"), map[string]any{"amount": "1.00", "lines": "all"}), "lines")
		// Nothing paid, nothing to refund.
		r := c.post(t, refundPath("300002"), map[string]any{"amount": "1.00"})
		want(t, r, 400, "")
		if !strings.Contains(strings.ToLower(string(r.raw)), "nothing") {
			t.Errorf("a refund of an unpaid sale should say nothing was paid: %s", r.raw)
		}
		// The amount.
		wantField(t, c.post(t, refundPath("300001"), map[string]any{"amount": "0"}), "amount", "")
		wantField(t, c.post(t, refundPath("300001"), map[string]any{"amount": "0.00"}), "amount", "")
		wantField(t, c.post(t, refundPath("300001"), map[string]any{"reason": "no amount"}), "amount", "required")
		wantField(t, c.post(t, refundPath("300001"), map[string]any{"amount": "-1.00"}), "amount", "")
		wantField(t, c.post(t, refundPath("300001"), map[string]any{"amount": "1.005"}), "amount", "")
		wantField(t, c.post(t, refundPath("300001"), map[string]any{"amount": "abc"}), "amount", "")
		// Text bounds.
		wantRefused(t, c.post(t, refundPath("300001"), map[string]any{"amount": "1.00", "reason": strings.Repeat("r", 501)}), "reason")
		wantRefused(t, c.post(t, refundPath("300001"), map[string]any{"amount": "1.00", "issued_by": strings.Repeat("i", 256)}), "issued_by")
		// The method.
		wantField(t, c.post(t, refundPath("300001"), map[string]any{"amount": "1.00", "refund_method": "Barter"}), "refund_method", "Cash")
		// Unknown fields and bodies that are no object.
		wantRefused(t, c.post(t, refundPath("300001"), map[string]any{"amount": "1.00", "colour": "red"}), "colour")
		want(t, c.post(t, refundPath("300001"), "[1]"), 400, "")
		// Unknown sales, of this account or any.
		want(t, c.post(t, refundPath("999999"), map[string]any{"amount": "1.00"}), 404, "Sale not found")
		want(t, c.post(t, refundPath("abc"), map[string]any{"amount": "1.00"}), 404, "Sale not found")
		want(t, c.e.req("POST", refundPath("300001"), keyB, map[string]any{"amount": "1.00"}), 404, "Sale not found")

		if after := tableCount(t, c.e); after != before {
			t.Errorf("refused refunds wrote %d items", after-before)
		}
		g := c.get(t, "/api/v1/sales/300001")
		if s := dataAs[corrSaleWire](t, g, "Sale found", "sales"); s.AmountRefunded != "8.00" {
			t.Errorf("amount_refunded %s after refused refunds", s.AmountRefunded)
		}
		if q := itemQty(t, c, "SOAP"); q != "7" {
			t.Errorf("stock %s after refused refunds, want 7 (10 - 3 + 1 - 1)", q)
		}
		// Exactly what is left is still refundable.
		r = c.post(t, refundPath("300001"), map[string]any{"amount": "12.00", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "2"}}})
		if s := dataAs[corrSaleWire](t, r, "Refund recorded", "sales"); s.AmountRefunded != "20.00" {
			t.Errorf("amount_refunded %s", s.AmountRefunded)
		}
		wantField(t, c.post(t, refundPath("300001"), map[string]any{"amount": "0.01"}), "amount", "0.00")
		checkLedger(t, c, "SOAP")
	})
}

func TestRefundIdempotencyKey(t *testing.T) {
	t.Parallel()
	bothPaths(t, func(t *testing.T, c *client) {
		want(t, c.post(t, "/api/v1/sales/add", corrSale("300001", 3, "20.00")), 200, "")
		body := map[string]any{"amount": "20.00", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "3"}}}
		first := c.post(t, refundPath("300001"), body, "Idempotency-Key", "refund-1")
		want(t, first, 200, "Refund recorded")
		// The sale is now fully refunded, its line fully returned: a new
		// refund would be refused, but the key answers first.
		again := c.post(t, refundPath("300001"), body, "Idempotency-Key", "refund-1")
		want(t, again, 200, "Refund recorded")
		if !bytes.Equal(first.raw, again.raw) {
			t.Errorf("replay differs from the first answer:\n%s\n%s", first.raw, again.raw)
		}
		g := c.get(t, "/api/v1/sales/300001")
		if s := dataAs[corrSaleWire](t, g, "Sale found", "sales"); s.AmountRefunded != "20.00" {
			t.Errorf("amount_refunded %s after a replayed refund of 20.00", s.AmountRefunded)
		}
		if n := len(dataAs[[]refundWire](t, g, "Sale found", "sales-refund")); n != 1 {
			t.Errorf("%d refunds after a replay, want 1", n)
		}
		if q := itemQty(t, c, "SOAP"); q != "10" {
			t.Errorf("stock %s: the replay returned the goods again", q)
		}
		// The key with another body is 409.
		want(t, c.post(t, refundPath("300001"), map[string]any{"amount": "1.00"}, "Idempotency-Key", "refund-1"), 409, "")
		if moves := checkLedger(t, c, "SOAP"); len(moves) != 3 {
			t.Errorf("ledger: %+v", moves)
		}
	})
}

// TestIdempotencyKeyNamesOneRecord: one Idempotency-Key sent, with the same
// body, to the corrections of two different records (two sales' refunds,
// two sales' voids, two items' adjustments). The second request is about
// another record: it must be made, or refused (409), but never answered
// with the first record's response while its own record is left unchanged.
func TestIdempotencyKeyNamesOneRecord(t *testing.T) {
	t.Parallel()
	bothPaths(t, func(t *testing.T, c *client) {
		want(t, c.post(t, "/api/v1/inventory/items/add", map[string]any{"item_code": "OIL", "item_name": "Oil", "category_id": 1,
			"item_price": "9.00", "quantity": "4"}), 200, "")
		for _, code := range []string{"300001", "300002", "300003", "300004"} {
			paid := "10.00"
			if code >= "300003" {
				paid = "0"
			}
			want(t, c.post(t, "/api/v1/sales/add", corrSale(code, 1, paid)), 200, "")
		}
		t.Run("Refunds", func(t *testing.T) {
			want(t, c.post(t, refundPath("300001"), map[string]any{"amount": "1.00"}, "Idempotency-Key", "same-key"), 200, "Refund recorded")
			r := c.post(t, refundPath("300002"), map[string]any{"amount": "1.00"}, "Idempotency-Key", "same-key")
			if r.code == 409 {
				return
			}
			if got := saleOf(r)["invoice_code"]; r.code != 200 || fmt.Sprint(got) != "300002" {
				t.Errorf("a refund of sale 300002 answered %d with sale %v: %s", r.code, got, r.raw)
			}
			if s := dataAs[corrSaleWire](t, c.get(t, "/api/v1/sales/300002"), "Sale found", "sales"); s.AmountRefunded != "1.00" {
				t.Errorf("sale 300002 answered 200 to its refund but has amount_refunded %s", s.AmountRefunded)
			}
		})
		t.Run("Voids", func(t *testing.T) {
			want(t, c.post(t, voidPath("300003"), map[string]any{}, "Idempotency-Key", "void-key"), 200, "Sale voided")
			r := c.post(t, voidPath("300004"), map[string]any{}, "Idempotency-Key", "void-key")
			if r.code == 409 {
				return
			}
			if got := saleOf(r)["invoice_code"]; r.code != 200 || fmt.Sprint(got) != "300004" {
				t.Errorf("a void of sale 300004 answered %d with sale %v: %s", r.code, got, r.raw)
			}
			if s := dataAs[corrSaleWire](t, c.get(t, "/api/v1/sales/300004"), "Sale found", "sales"); s.PaymentStatus != "void" {
				t.Errorf("sale 300004 answered 200 to its void but is %s", s.PaymentStatus)
			}
		})
		t.Run("Adjustments", func(t *testing.T) {
			body := map[string]any{"quantity": "1", "reason": "received"}
			want(t, c.post(t, "/api/v1/inventory/items/SOAP/adjustments", body, "Idempotency-Key", "adj-key"), 200, "Stock adjusted")
			r := c.post(t, "/api/v1/inventory/items/OIL/adjustments", body, "Idempotency-Key", "adj-key")
			if r.code == 409 {
				return
			}
			items, _ := r.data()["items"].(map[string]any)
			if r.code != 200 || items["item_code"] != "OIL" {
				t.Errorf("an adjustment of OIL answered %d with item %v: %s", r.code, items["item_code"], r.raw)
			}
			if q := itemQty(t, c, "OIL"); q != "5" {
				t.Errorf("OIL answered 200 to its adjustment of +1 but holds %s (was 4)", q)
			}
		})
	})
}

func TestVoid(t *testing.T) {
	t.Parallel()
	bothPaths(t, func(t *testing.T, c *client) {
		want(t, c.post(t, "/api/v1/sales/add", corrSale("300001", 3, "20.00")), 200, "")
		// Money held: 409 saying how much to refund first.
		r := c.post(t, voidPath("300001"), map[string]any{"reason": "cancelled"})
		want(t, r, 409, "")
		if !strings.Contains(errText(r), "20.00") {
			t.Errorf("void of a sale holding 20.00: %s", r.raw)
		}
		want(t, c.post(t, refundPath("300001"), map[string]any{"amount": "5.00", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "1"}}}), 200, "")
		r = c.post(t, voidPath("300001"), nil)
		want(t, r, 409, "")
		if !strings.Contains(errText(r), "15.00") {
			t.Errorf("void of a sale holding 15.00: %s", r.raw)
		}
		if q := itemQty(t, c, "SOAP"); q != "8" {
			t.Fatalf("stock %s before the void", q)
		}
		want(t, c.post(t, refundPath("300001"), map[string]any{"amount": "15.00"}), 200, "")

		// Nothing held: the void gives back the 2 soaps not returned.
		body := map[string]any{"reason": "customer cancelled"}
		first := c.post(t, voidPath("300001"), body, "Idempotency-Key", "void-1")
		s := dataAs[corrSaleWire](t, first, "Sale voided", "sales")
		if s.PaymentStatus != "void" || s.VoidReason == nil || *s.VoidReason != "customer cancelled" || s.VoidedAt == nil ||
			!stampRE.MatchString(*s.VoidedAt) || s.AmountRefunded != "20.00" || s.AmountPaid != "20.00" {
			t.Errorf("voided sale: %+v", s)
		}
		if n := len(dataAs[[]refundWire](t, first, "Sale voided", "sales-refund")); n != 2 {
			t.Errorf("a void's answer has %d refunds, want 2", n)
		}
		if q := itemQty(t, c, "SOAP"); q != "10" {
			t.Errorf("stock %s after the void, want 10", q)
		}
		moves := checkLedger(t, c, "SOAP")
		if len(moves) == 0 || moves[0].Kind != "void" || moves[0].Quantity != "2" || moves[0].QuantityAfter != "10" ||
			moves[0].InvoiceCode == nil || *moves[0].InvoiceCode != "300001" {
			t.Errorf("ledger after the void: %+v", moves)
		}

		// A retried void with the same key gets its first answer.
		again := c.post(t, voidPath("300001"), body, "Idempotency-Key", "void-1")
		want(t, again, 200, "Sale voided")
		if !bytes.Equal(first.raw, again.raw) {
			t.Errorf("retried void differs:\n%s\n%s", first.raw, again.raw)
		}
		// Anything else that would change it is 409 Sale is void.
		want(t, c.post(t, voidPath("300001"), body), 409, "Sale is void")
		want(t, c.post(t, voidPath("300001"), body, "Idempotency-Key", "void-2"), 409, "Sale is void")
		want(t, c.post(t, refundPath("300001"), map[string]any{"amount": "1.00"}), 409, "Sale is void")
		edit := corrSale("300001", 3, "20.00")
		delete(edit, "items")
		edit["invoice_note"] = "after the void"
		want(t, c.put(t, "/api/v1/sales/edit/300001", edit), 409, "Sale is void")
		if q := itemQty(t, c, "SOAP"); q != "10" {
			t.Errorf("stock %s after refused changes of a void sale", q)
		}
		g := c.get(t, "/api/v1/sales/300001")
		same(t, g, s, dataAs[corrSaleWire](t, g, "Sale found", "sales"))

		// Listed by payment_status=void, and only there.
		want(t, c.post(t, "/api/v1/sales/add", corrSale("300002", 1, "10.00")), 200, "")
		l := c.get(t, "/api/v1/sales?payment_status=void")
		list := dataAs[[]corrSaleWire](t, l, "Sales found: 1", "sales")
		if len(list) != 1 || list[0].InvoiceCode.String() != "300001" || list[0].PaymentStatus != "void" {
			t.Errorf("payment_status=void lists %+v", list)
		}
		for _, st := range []string{"paid", "partial", "draft"} {
			for _, x := range dataAs[[]corrSaleWire](t, c.get(t, "/api/v1/sales?payment_status="+st), "", "sales") {
				if x.InvoiceCode.String() == "300001" {
					t.Errorf("the void sale is listed with payment_status=%s", st)
				}
			}
		}

		// An unpaid sale is voided with no body at all; 404 for no sale.
		want(t, c.post(t, "/api/v1/sales/add", corrSale("300003", 4, "0")), 200, "")
		if q := itemQty(t, c, "SOAP"); q != "5" {
			t.Fatalf("stock %s", q)
		}
		r = c.post(t, voidPath("300003"), nil)
		if s := dataAs[corrSaleWire](t, r, "Sale voided", "sales"); s.PaymentStatus != "void" || s.VoidReason != nil || s.AmountRefunded != "0.00" {
			t.Errorf("void without a body: %+v", s)
		}
		if q := itemQty(t, c, "SOAP"); q != "9" {
			t.Errorf("stock %s after voiding a sale of 4, want 9", q)
		}
		// An empty body sent as JSON is no body.
		want(t, c.post(t, "/api/v1/sales/add", corrSale("300004", 1, "0")), 200, "")
		want(t, c.post(t, voidPath("300004"), ""), 200, "Sale voided")
		want(t, c.post(t, voidPath("999999"), nil), 404, "Sale not found")
		wantRefused(t, c.post(t, voidPath("300002"), map[string]any{"reason": "x", "colour": "red"}), "colour")
		wantRefused(t, c.post(t, voidPath("300002"), map[string]any{"reason": strings.Repeat("v", 501)}), "reason")
		want(t, c.post(t, voidPath("300002"), "{"), 400, "")
		checkLedger(t, c, "SOAP")
	})
}

func TestEditAfterReturn(t *testing.T) {
	t.Parallel()
	bothPaths(t, func(t *testing.T, c *client) {
		want(t, c.post(t, "/api/v1/sales/add", corrSale("300001", 3, "10.00")), 200, "")
		want(t, c.post(t, refundPath("300001"), map[string]any{"amount": "2.00", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "1"}}}), 200, "")
		// Changing the items after goods were returned is 400 naming items.
		b := corrSale("300001", 2, "10.00")
		wantRefused(t, c.put(t, "/api/v1/sales/edit/300001", b), "items")
		if q := itemQty(t, c, "SOAP"); q != "8" {
			t.Errorf("stock %s after a refused edit, want 8", q)
		}
		// An edit that leaves the items keeps what was returned.
		b = corrSale("300001", 3, "15.00")
		delete(b, "items")
		r := c.put(t, "/api/v1/sales/edit/300001", b)
		want(t, r, 200, "Sale updated successfully")
		if lines := dataAs[[]corrLineWire](t, r, "Sale updated successfully", "sales-item"); len(lines) != 2 || lines[0].QuantityReturned != "1" {
			t.Errorf("lines after an edit: %+v", lines)
		}
		if s := dataAs[corrSaleWire](t, r, "Sale updated successfully", "sales"); s.AmountRefunded != "2.00" || s.AmountPaid != "15.00" {
			t.Errorf("sale after an edit: %+v", s)
		}
		if n := len(dataAs[[]refundWire](t, r, "Sale updated successfully", "sales-refund")); n != 1 {
			t.Errorf("an edit's answer has %d refunds", n)
		}
		// The same items sent again are no change.
		r = c.put(t, "/api/v1/sales/edit/300001", corrSale("300001", 3, "15.00"))
		want(t, r, 200, "")
		if lines := dataAs[[]corrLineWire](t, r, "Sale updated successfully", "sales-item"); lines[0].QuantityReturned != "1" {
			t.Errorf("resending the same items lost quantity_returned: %+v", lines)
		}
		checkLedger(t, c, "SOAP")
	})
}
