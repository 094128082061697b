package api_test

// Stock adjustments and the stock ledger, by outcome, over HTTP
// and through the Lambda path (see bothPaths).

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAdjustments(t *testing.T) {
	t.Parallel()
	bothPaths(t, func(t *testing.T, c *client) {
		adjust := func(body any, headers ...string) resp {
			return c.post(t, "/api/v1/inventory/items/SOAP/adjustments", body, headers...)
		}
		r := adjust(map[string]any{"quantity": "-2", "reason": "damaged", "note": "crushed box"})
		item := dataAs[itemWire](t, r, "Stock adjusted", "items")
		m := dataAs[movementWire](t, r, "Stock adjusted", "movement")
		if item.ItemCode != "SOAP" || item.Quantity != "8" || item.Status != "in-stock" {
			t.Errorf("item after -2: %+v", item)
		}
		if !stampRE.MatchString(m.CreatedAt) {
			t.Errorf("movement created_at %q", m.CreatedAt)
		}
		same(t, r, movementWire{ID: m.ID, Kind: "adjustment", Quantity: "-2", QuantityAfter: "8", Reason: ptr("damaged"), Note: ptr("crushed box"),
			CreatedAt: m.CreatedAt}, m)
		if got := dataAs[itemWire](t, c.get(t, "/api/v1/inventory/items/SOAP"), "Item found", "items"); got.Quantity != "8" {
			t.Errorf("GET item after -2: %s", got.Quantity)
		}
		if moves := ledger(t, c, "SOAP", 50); len(moves) == 0 || !cmp.Equal(moves[0], m) {
			t.Errorf("the adjustment's movement is not the ledger's newest: %+v vs %+v", m, moves)
		}

		r = adjust(map[string]any{"quantity": "10", "reason": "received"}, "Idempotency-Key", "adj-1")
		if m2 := dataAs[movementWire](t, r, "Stock adjusted", "movement"); m2.Quantity != "10" || m2.QuantityAfter != "18" || m2.ID <= m.ID || m2.Note != nil {
			t.Errorf("movement of +10: %+v", m2)
		}
		again := adjust(map[string]any{"quantity": "10", "reason": "received"}, "Idempotency-Key", "adj-1")
		want(t, again, 200, "Stock adjusted")
		if !bytes.Equal(r.raw, again.raw) || itemQty(t, c, "SOAP") != "18" {
			t.Errorf("a replayed adjustment: %s (stock %s)", again.raw, itemQty(t, c, "SOAP"))
		}
		r = adjust(map[string]any{"quantity": "+1.5", "reason": "count"})
		if m3 := dataAs[movementWire](t, r, "Stock adjusted", "movement"); m3.Quantity != "1.5" || m3.QuantityAfter != "19.5" {
			t.Errorf("movement of +1.5: %+v", m3)
		}

		_, keyB := c.e.newAccount("B", "BBB")
		before := tableCount(t, c.e)
		wantField(t, adjust(map[string]any{"quantity": "-19.501", "reason": "lost"}), "quantity", "19.5")
		wantRefused(t, adjust(map[string]any{"quantity": "-100", "reason": "theft"}), "quantity")
		wantRefused(t, adjust(map[string]any{"quantity": "0", "reason": "count"}), "quantity")
		wantRefused(t, adjust(map[string]any{"quantity": "-0", "reason": "count"}), "quantity")
		wantRefused(t, adjust(map[string]any{"reason": "count"}), "quantity")
		wantRefused(t, adjust(map[string]any{"quantity": "1.0001", "reason": "count"}), "quantity")
		wantRefused(t, adjust(map[string]any{"quantity": "abc", "reason": "count"}), "quantity")
		wantField(t, adjust(map[string]any{"quantity": "1", "reason": "stolen"}), "reason", "theft")
		wantRefused(t, adjust(map[string]any{"quantity": "1"}), "reason")
		wantRefused(t, adjust(map[string]any{"quantity": "1", "reason": "other", "colour": "red"}), "colour")
		wantRefused(t, adjust(map[string]any{"quantity": "1", "reason": "other", "note": strings.Repeat("n", 1001)}), "note")
		want(t, c.post(t, "/api/v1/inventory/items/NOPE/adjustments", map[string]any{"quantity": "1", "reason": "received"}), 404, "Item not found")
		want(t, c.e.req("POST", "/api/v1/inventory/items/SOAP/adjustments", keyB, map[string]any{"quantity": "1", "reason": "received"}), 404, "Item not found")
		if after := tableCount(t, c.e); after != before {
			t.Errorf("refused adjustments wrote %d items", after-before)
		}
		if q := itemQty(t, c, "SOAP"); q != "19.5" {
			t.Errorf("stock %s after refused adjustments", q)
		}

		// Down to exactly zero is allowed: out of stock.
		r = adjust(map[string]any{"quantity": "-19.5", "reason": "lost"})
		if item := dataAs[itemWire](t, r, "Stock adjusted", "items"); item.Quantity != "0" || item.Status != "out-of-stock" {
			t.Errorf("item at zero: %+v", item)
		}
		// Quantities may be JSON numbers too.
		r = adjust(map[string]any{"quantity": 3, "reason": "received"})
		if m := dataAs[movementWire](t, r, "Stock adjusted", "movement"); m.Quantity != "3" || m.QuantityAfter != "3" {
			t.Errorf("movement of 3: %+v", m)
		}
		r = adjust(map[string]any{"quantity": -1, "reason": "other", "note": "sample"})
		if m := dataAs[movementWire](t, r, "Stock adjusted", "movement"); m.Quantity != "-1" || m.QuantityAfter != "2" || m.Note == nil || *m.Note != "sample" {
			t.Errorf("movement of -1: %+v", m)
		}
		checkLedger(t, c, "SOAP")
	})
}

func TestMovements(t *testing.T) {
	t.Parallel()
	bothPaths(t, func(t *testing.T, c *client) {
		// A partial sale of 3 (sale), its line raised to 4 (sale_edit), one
		// returned (return), the rest given back by a void (void), an
		// adjustment, and an item edit that sets the quantity (adjustment,
		// reason count).
		want(t, c.post(t, "/api/v1/sales/add", corrSale("300001", 3, "5.00")), 200, "")
		want(t, c.put(t, "/api/v1/sales/edit/300001", corrSale("300001", 4, "5.00")), 200, "Sale updated successfully")
		want(t, c.post(t, refundPath("300001"), map[string]any{"amount": "5.00", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "1"}}}), 200, "")
		want(t, c.post(t, voidPath("300001"), nil), 200, "Sale voided")
		want(t, c.post(t, "/api/v1/inventory/items/SOAP/adjustments", map[string]any{"quantity": "-2", "reason": "damaged"}), 200, "")
		r := c.put(t, "/api/v1/inventory/items/SOAP", map[string]any{"quantity": "20"})
		if item := dataAs[itemWire](t, r, "Item updated successfully", "items"); item.Quantity != "20" {
			t.Fatalf("item edit: %+v", item)
		}
		// Edits that leave the quantity record nothing.
		want(t, c.put(t, "/api/v1/inventory/items/SOAP", map[string]any{"item_price": "6.00"}), 200, "")
		want(t, c.put(t, "/api/v1/inventory/items/SOAP", map[string]any{"quantity": "20", "item_price": "6.50"}), 200, "")

		moves := checkLedger(t, c, "SOAP")
		type row struct{ kind, qty, after, reason, invoice string }
		var got []row
		for _, m := range moves {
			x := row{kind: m.Kind, qty: m.Quantity, after: m.QuantityAfter}
			if m.Reason != nil {
				x.reason = *m.Reason
			}
			if m.InvoiceCode != nil {
				x.invoice = *m.InvoiceCode
			}
			got = append(got, x)
			if !stampRE.MatchString(m.CreatedAt) || m.Note != nil {
				t.Errorf("movement %d: created_at %q note %v", m.ID, m.CreatedAt, m.Note)
			}
		}
		same(t, r, []row{
			{"adjustment", "12", "20", "count", ""},
			{"adjustment", "-2", "8", "damaged", ""},
			{"void", "3", "10", "", "300001"},
			{"return", "1", "7", "", "300001"},
			{"sale_edit", "-1", "6", "", "300001"},
			{"sale", "-3", "7", "", "300001"},
			{"initial", "10", "10", "", ""},
		}, got, cmp.AllowUnexported(row{}))

		// Pages of every size see each movement once, in order.
		for _, limit := range []int{1, 2, 3, 6, 7, 8} {
			paged := ledger(t, c, "SOAP", limit)
			if len(paged) != len(moves) {
				t.Errorf("limit %d: %d movements across pages, want %d", limit, len(paged), len(moves))
				continue
			}
			seen := map[int64]bool{}
			for i, m := range paged {
				if seen[m.ID] {
					t.Errorf("limit %d: movement %d seen twice", limit, m.ID)
				}
				seen[m.ID] = true
				if !cmp.Equal(m, moves[i]) {
					t.Errorf("limit %d: movement %d is %+v, want %+v", limit, i, m, moves[i])
				}
			}
		}
		// A page of 2 has a cursor; the last page has none.
		p := c.get(t, "/api/v1/inventory/items/SOAP/movements?limit=2")
		wantList[movementWire](t, p, "Movements found: %d", "movements", 2)
		if p.data()["next_cursor"] == nil {
			t.Errorf("no next_cursor on a first page of 2 of 7: %s", p.raw)
		}
		p = c.get(t, "/api/v1/inventory/items/SOAP/movements?limit=7")
		wantList[movementWire](t, p, "Movements found: %d", "movements", 7)
		if p.data()["next_cursor"] != nil {
			t.Errorf("a next_cursor after the whole ledger: %s", p.raw)
		}

		// An edit of the quantity with a stale If-Match is 412 and records
		// nothing.
		etag := c.get(t, "/api/v1/inventory/items/SOAP").header.Get("ETag")
		want(t, c.post(t, "/api/v1/inventory/items/SOAP/adjustments", map[string]any{"quantity": "1", "reason": "received"}), 200, "")
		want(t, c.put(t, "/api/v1/inventory/items/SOAP", map[string]any{"quantity": "5"}, "If-Match", etag), 412, "")
		if after := checkLedger(t, c, "SOAP"); len(after) != len(moves)+1 || itemQty(t, c, "SOAP") != "21" {
			t.Errorf("a refused edit changed the ledger: %d movements, stock %s", len(after), itemQty(t, c, "SOAP"))
		}

		// An item created without stock has an empty ledger; 404 for none.
		want(t, c.post(t, "/api/v1/inventory/items/add", map[string]any{"item_code": "EMPTY", "item_name": "Empty", "category_id": 1, "item_price": 1}), 200, "")
		wantList[movementWire](t, c.get(t, "/api/v1/inventory/items/EMPTY/movements"), "Movements found: %d", "movements", 0)
		want(t, c.get(t, "/api/v1/inventory/items/NOPE/movements"), 404, "Item not found")
		_, keyB := c.e.newAccount("B", "BBB")
		want(t, c.e.req("GET", "/api/v1/inventory/items/SOAP/movements", keyB, nil), 404, "Item not found")
		wantRefused(t, c.get(t, "/api/v1/inventory/items/SOAP/movements?limit=0"), "limit")
		wantRefused(t, c.get(t, "/api/v1/inventory/items/SOAP/movements?kind=sale"), "kind")
		want(t, c.get(t, "/api/v1/inventory/items/SOAP/movements?cursor=nonsense"), 400, "")
		// A cursor of one item's ledger is no cursor of another's.
		next, _ := c.get(t, "/api/v1/inventory/items/SOAP/movements?limit=1").data()["next_cursor"].(string)
		want(t, c.get(t, "/api/v1/inventory/items/EMPTY/movements?limit=1&cursor="+next), 400, "")
	})
}
