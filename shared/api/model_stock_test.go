package api_test

// Stock in the model: what sales, returns, voids, adjustments and edits of
// an item's quantity move, and the ledger that explains every quantity.
// The audit checks, for every item, that its stock is never negative and
// is the sum of its movements.

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/money"

	"github.com/shopspring/decimal"
	"pgregory.net/rapid"
)

// maxQty is the most stock an item may hold.
var maxQty = decimal.RequireFromString("999999999.999")

// stock is a change of stock per item code: positive adds to it.
type stock map[string]decimal.Decimal

// lineStock is the stock lines hold: their quantities per item code.
func lineStock(lines []mLine) stock {
	s := stock{}
	for _, l := range lines {
		if l.itemCode != "" {
			s[l.itemCode] = s[l.itemCode].Add(decimalOf(l.qty))
		}
	}
	return s
}

// sub returns s-o.
func (s stock) sub(o stock) stock {
	out := stock{}
	for c, q := range s {
		out[c] = out[c].Add(q)
	}
	for c, q := range o {
		out[c] = out[c].Sub(q)
	}
	return out
}

func (s stock) neg() stock { return stock{}.sub(s) }

// fits reports whether every item stays between 0 and maxQty after d.
func (a *mAccount) fits(d stock) bool {
	for c, q := range d {
		if n := a.items[c].qty.Add(q); !q.IsZero() && (n.IsNegative() || n.GreaterThan(maxQty)) {
			return false
		}
	}
	return true
}

// moveStock moves stock by d, each item's change with its movement mv.
func (a *mAccount) moveStock(d stock, mv mMove) {
	for c, q := range d {
		if q.IsZero() {
			continue
		}
		x := a.items[c]
		x.qty = x.qty.Add(q)
		mv.change = q
		x.moves = append(x.moves, mv)
	}
}

// setQuantity is an item edit's new quantity: an adjustment (reason count)
// of the difference.
func (a *mAccount) setQuantity(x *mItem, q decimal.Decimal) {
	if !q.Equal(x.qty) {
		x.moves = append(x.moves, mMove{kind: "adjustment", reason: "count", change: q.Sub(x.qty)})
		x.qty = q
	}
}

// adjustReq is a stock adjustment as the model sent it.
type adjustReq struct {
	change       decimal.Decimal
	reason, note string
	bad          bool
}

// predictAdjust is the status an adjustment of the item code answers, and
// what it changes when it answers 200.
func (a *mAccount) predictAdjust(code string, req adjustReq) (int, func()) {
	switch {
	case req.bad:
		return 400, nil
	case a.items[code] == nil:
		return 404, nil
	case !a.fits(stock{code: req.change}):
		return 400, nil
	}
	return 200, func() {
		a.moveStock(stock{code: req.change}, mMove{kind: "adjustment", reason: req.reason, note: req.note})
	}
}

func checkAdjustAnswer(x *mItem, req adjustReq, r reply) string {
	mv, _ := r.data()["movement"].(map[string]any)
	switch {
	case !decEq(r.obj("items")["quantity"], x.qty):
		return fmt.Sprintf("model: stock %s", x.qty)
	case mv["kind"] != "adjustment" || !decEq(mv["quantity"], req.change) || !decEq(mv["quantity_after"], x.qty) ||
		strOrEmpty(mv["reason"]) != req.reason || strOrEmpty(mv["note"]) != req.note || mv["invoice_code"] != nil:
		return fmt.Sprintf("movement is not the adjustment asked for (%+v)", req)
	}
	return ""
}

func (m *model) checkAdjust(a *mAccount, code string, req adjustReq, r reply) {
	want, commit := a.predictAdjust(code, req)
	m.expect(r, want, fmt.Sprintf("adjustment %+v of item %s", req, code))
	if want == 400 && r.body["fields"] == nil {
		m.t.Fatalf("refused adjustment names no field: %s", r.raw)
	}
	if want != 200 {
		return
	}
	commit()
	if msg := checkAdjustAnswer(a.items[code], req, r); msg != "" {
		m.t.Fatalf("adjustment of item %s: %s: %s", code, msg, r.raw)
	}
}

// missingItem is an item code (of valid form) no item of the model has.
const missingItem = "NO-SUCH-ITEM"

// adjust adjusts an item's stock (or one that does not exist) by signed
// quantities around zero and the largest quantity, with reasons and notes
// valid and not.
func (m *model) adjust(t *rapid.T) {
	a := m.drawAccount(t)
	code, _, ok := pick(t, a.items, "item")
	if !ok || rapid.IntRange(0, 9).Draw(t, "missingItem") == 0 {
		code = missingItem
	}
	spoil := ""
	if rapid.IntRange(0, 4).Draw(t, "badForm") == 0 {
		spoil = rapid.SampledFrom([]string{"quantity", "reason", "note"}).Draw(t, "spoil")
	}
	q := rapid.SampledFrom([]string{"10", "-2", "+1.5", "-0.001", "3", "999999999.999", "-999999999.999"}).Draw(t, "change")
	if spoil == "quantity" {
		q = rapid.SampledFrom([]string{"0", "-0", "1.0001", "ten", "1000000000"}).Draw(t, "badChange")
	}
	var req adjustReq
	d, err := money.ParseDelta(q)
	if req.bad = err != nil || d.IsZero(); !req.bad {
		req.change = decimal.RequireFromString(d.String())
	}
	body := map[string]any{"quantity": q}
	if req.reason = rapid.SampledFrom(business.AdjustmentReasons).Draw(t, "adjustReason"); spoil == "reason" {
		req.reason = rapid.SampledFrom([]string{"stolen", ""}).Draw(t, "badReason")
	}
	if req.reason != "" {
		body["reason"] = req.reason
	}
	req.bad = req.bad || !business.ValidAdjustmentReason(req.reason)
	if req.note = rapid.SampledFrom([]string{"", "Shelf 3", strings.Repeat("é", 1000)}).Draw(t, "note"); spoil == "note" {
		req.note = strings.Repeat("é", 1001)
	}
	if req.note != "" {
		body["note"] = req.note
		req.bad = req.bad || len([]rune(req.note)) > 1000
	}
	path := "/api/v1/inventory/items/" + code + "/adjustments"
	m.sendCorrection(t, a, path, body, code, func(code string, r reply) { m.checkAdjust(a, code, req, r) })
}

// movements lists an item's ledger (or a missing item's: 404) with a
// random page size, and checks it against the model's.
func (m *model) movements(t *rapid.T) {
	a := m.drawAccount(t)
	code, x, ok := pick(t, a.items, "item")
	if !ok || rapid.IntRange(0, 9).Draw(t, "missingItem") == 0 {
		r := m.send("GET", "/api/v1/inventory/items/"+missingItem+"/movements", a.key, nil, nil)
		m.expect(r, 404, "movements of a missing item")
		return
	}
	got := m.ledger(a, code, rapid.SampledFrom([]int{1, 2, 3, 50, 200}).Draw(t, "limit"))
	if msg := ledgerDiff(x, got); msg != "" {
		m.t.Fatalf("item %s: %s", code, msg)
	}
}

// ledger reads all of an item's movements, page by page, oldest first.
func (m *model) ledger(a *mAccount, code string, limit int) []map[string]any {
	var got []map[string]any
	cursor := ""
	for pages := 0; ; pages++ {
		q := url.Values{"limit": {strconv.Itoa(limit)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		r := m.send("GET", "/api/v1/inventory/items/"+code+"/movements?"+q.Encode(), a.key, nil, nil)
		m.expect(r, 200, "movements of "+code)
		page := r.list("movements")
		if len(page) > limit {
			m.t.Fatalf("page of %d movements with limit %d", len(page), limit)
		}
		if want := fmt.Sprintf("Movements found: %d", len(page)); r.body["message"] != want {
			m.t.Fatalf("movements: message %v, want %q", r.body["message"], want)
		}
		for _, x := range page {
			got = append(got, x.(map[string]any))
		}
		next, _ := r.data()["next_cursor"].(string)
		if next == "" {
			break
		}
		if pages > 1000 {
			m.t.Fatalf("movements do not end")
		}
		cursor = next
	}
	slices.Reverse(got)
	return got
}

// ledgerDiff compares an item's ledger, oldest first, with the model's: ids
// increase, each quantity_after is the sum of the changes up to it (never
// negative), the changes add up to the item's quantity, and each movement
// is the one the model recorded. "" when they agree.
func ledgerDiff(x *mItem, got []map[string]any) string {
	sum, last := decimal.Zero, int64(0)
	for i, mv := range got {
		id, _ := mv["id"].(float64)
		change, err := decimal.NewFromString(strOrEmpty(mv["quantity"]))
		switch {
		case int64(id) <= last:
			return fmt.Sprintf("movement ids do not increase: %v", got)
		case err != nil:
			return fmt.Sprintf("movement quantity %v", mv["quantity"])
		}
		last, sum = int64(id), sum.Add(change)
		if !decEq(mv["quantity_after"], sum) || sum.IsNegative() {
			return fmt.Sprintf("movement %d: quantity_after %v, but the changes up to it add up to %s", int64(id), mv["quantity_after"], sum)
		}
		if i >= len(x.moves) {
			continue
		}
		if want := x.moves[i]; mv["kind"] != want.kind || !change.Equal(want.change) || strOrEmpty(mv["invoice_code"]) != want.invoice ||
			strOrEmpty(mv["reason"]) != want.reason || strOrEmpty(mv["note"]) != want.note {
			return fmt.Sprintf("movement %d is %v, model %+v", i, mv, want)
		}
	}
	switch {
	case len(got) != len(x.moves):
		return fmt.Sprintf("%d movements, model %d (%+v): %v", len(got), len(x.moves), x.moves, got)
	case !sum.Equal(x.qty):
		return fmt.Sprintf("movements add up to %s, model stock %s", sum, x.qty)
	}
	return ""
}
