package api_test

// Bursts in the model: requests sent at once, whose answers must be those of
// some serial order of them, which the model then takes.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"bizdata/shared/business"
	"bizdata/shared/money"

	"github.com/shopspring/decimal"
	"pgregory.net/rapid"
)

// cop is one request of a concurrent step.
type cop struct {
	method, path string
	body         any
	sig          string // method, path and body: identical requests have the same
	r            reply
	// apply applies the request to a as if it were sent alone at this
	// point: changed when the model changed, ok when r is the answer the
	// model predicts.
	apply func(a *mAccount, r reply) (changed, ok bool)
	item  string // the item an edit of quantity sets ("" for other requests)
}

// shortened is s cut to a length a failure message can show.
func shortened(s string) string {
	if len(s) > 700 {
		return s[:700] + "…"
	}
	return s
}

func newCop(method, path string, body any, apply func(*mAccount, reply) (bool, bool)) *cop {
	raw, ok := body.([]byte)
	if !ok {
		raw, _ = json.Marshal(body)
	}
	return &cop{method: method, path: path, body: body, sig: method + " " + path + " " + string(raw), apply: apply}
}

// concurrently sends ops at once (and side, a report, beside them when
// given), then reads back the sales and items they may change and checks
// that some serial order of them answers each as it was answered and
// leaves everything as read; the model takes that order's state, and its
// books must then be the reports'.
func (m *model) concurrently(a *mAccount, ops []*cop, sales, items []string, side func()) {
	var wg sync.WaitGroup
	for _, op := range ops {
		wg.Add(1)
		go func() { defer wg.Done(); op.r = m.sendAllowing(op.method, op.path, a.key, op.body, nil, true) }()
	}
	if side != nil {
		wg.Add(1)
		go func() { defer wg.Done(); side() }()
	}
	wg.Wait()
	// A request the store gave up on after retrying changed nothing: the
	// serial order is looked for among the others.
	answered := ops[:0]
	for _, op := range ops {
		if op.r.code != http.StatusServiceUnavailable {
			answered = append(answered, op)
		}
	}
	ops = answered
	for _, op := range ops {
		if op.path == "/api/v1/sales/add" && op.r.code == 200 {
			sales = append(sales, fmt.Sprint(op.r.obj("sales")["invoice_code"]))
		}
	}
	gotSales := map[string]reply{}
	for _, code := range sales {
		r := m.send("GET", "/api/v1/sales/"+code, a.key, nil, nil)
		m.expect(r, 200, "get sale "+code)
		gotSales[code] = r
	}
	gotQty, gotLedger := map[string]any{}, map[string][]map[string]any{}
	for _, code := range items {
		r := m.send("GET", "/api/v1/inventory/items/"+code, a.key, nil, nil)
		m.expect(r, 200, "get item "+code)
		gotQty[code], gotLedger[code] = r.obj("items")["quantity"], m.ledger(a, code, 200)
	}
	final := func(b *mAccount) string {
		for code, r := range gotSales {
			s := b.sales[code]
			if s == nil {
				return "sale " + code + " is not in the model"
			}
			if msg := checkSale(s, r); msg != "" {
				return "sale " + code + ": " + msg
			}
			if s.void && canonical(r.data()) != s.voidData {
				return "void sale " + code + " is not as its void answered"
			}
		}
		for code, q := range gotQty {
			if x := b.items[code]; !decEq(q, x.qty) {
				return fmt.Sprintf("item %s: stock %v, model %s", code, q, x.qty)
			}
			if msg := ledgerDiff(b.items[code], gotLedger[code]); msg != "" {
				return "item " + code + ": " + msg
			}
		}
		return ""
	}
	b, why := serialOrder(a, ops, final)
	if b == nil {
		var out strings.Builder
		for _, op := range ops {
			fmt.Fprintf(&out, "\n%s\n  -> %d %s", shortened(op.sig), op.r.code, shortened(string(op.r.raw)))
		}
		m.t.Fatalf("no serial order of these concurrent requests gives their answers and leaves what was read back (%s):%s", why, out.String())
	}
	for _, op := range ops {
		if op.item != "" && op.r.code == http.StatusConflict && len(b.items[op.item].moves) == len(a.items[op.item].moves) {
			m.t.Fatalf("an edit of item %s's quantity answered 409, but no other request moved its stock: %s", op.item, op.r.raw)
		}
	}
	*a = *b
	m.checkToday(a)
}

// serialOrder searches for a serial order of ops that answers each as it was
// answered and whose end state passes final. It returns the model as that
// order leaves it, or nil and why the last order tried failed.
func serialOrder(a *mAccount, ops []*cop, final func(*mAccount) string) (*mAccount, string) {
	why, budget := "no order answers every request as it was answered", 100000
	var try func(b *mAccount, left []int, lastNoop int) *mAccount
	try = func(b *mAccount, left []int, lastNoop int) *mAccount {
		if len(left) == 0 {
			if msg := final(b); msg != "" {
				why = msg
				return nil
			}
			return b
		}
		tried := map[string]bool{} // identical requests answered alike are one choice
		for j, i := range left {
			op := ops[i]
			if k := op.sig + " " + string(op.r.raw); tried[k] || budget <= 0 {
				continue
			} else {
				tried[k] = true
			}
			budget--
			c := b.clone()
			changed, ok := op.apply(c, op.r)
			// Requests that change nothing commute: they are tried in one
			// order only.
			if !ok || (!changed && i < lastNoop) {
				continue
			}
			next := i
			if changed {
				next = -1
			}
			if got := try(c, append(slices.Clone(left[:j]), left[j+1:]...), next); got != nil {
				return got
			}
		}
		return nil
	}
	left := make([]int, len(ops))
	for i := range left {
		left[i] = i
	}
	if budget <= 0 {
		why = "too many orders to try"
	}
	return try(a, left, -1), why
}

func refundCop(code string, body map[string]any, req refundReq) *cop {
	return newCop("POST", "/api/v1/sales/"+code+"/refunds", body, func(b *mAccount, r reply) (bool, bool) {
		want, commit := b.predictRefund(code, req)
		if r.code != want || want != 200 {
			return false, r.code == want
		}
		commit()
		return true, checkRefundAnswer(b.sales[code], req, r, b.clk) == ""
	})
}

// concurrentRefunds sends 2 to 16 identical refunds of one sale at once,
// with or without a line: their sum never passes what was paid, nor their
// returns what was sold. With one Idempotency-Key for all, one refund is
// made and every answer is its answer.
func (m *model) concurrentRefunds(t *rapid.T) {
	a := m.drawAccount(t)
	code, s, ok := pickSale(t, a, refundable)
	if !ok {
		return
	}
	n := rapid.IntRange(2, 16).Draw(t, "n")
	req := refundReq{amount: money.MustAmount("0.01")}
	held := decimal.RequireFromString(s.held().String())
	switch rapid.SampledFrom([]string{"cent", "share", "held"}).Draw(t, "amountKind") {
	case "share": // about half of them fit
		if share := held.Div(decimal.NewFromInt(int64(max(1, n/2)))).Truncate(2); share.IsPositive() {
			req.amount = money.MustAmount(share.StringFixed(2))
		}
	case "held":
		if held.IsPositive() {
			req.amount = s.held()
		}
	}
	body := map[string]any{"amount": req.amount}
	if i := slices.IndexFunc(s.lines, func(l mLine) bool { return l.itemCode != "" }); i >= 0 && rapid.Bool().Draw(t, "withLine") {
		q := decimal.RequireFromString(rapid.SampledFrom([]string{"1", "0.5"}).Draw(t, "returnQty"))
		req.lines = []refundLineReq{{id: i + 1, qty: q}}
		body["lines"] = []any{map[string]any{"sales_item_id": i + 1, "quantity": q.String()}}
	}
	path := "/api/v1/sales/" + code + "/refunds"
	items := slices.Sorted(maps.Keys(lineStock(s.lines)))
	if rapid.IntRange(0, 3).Draw(t, "oneKey") > 0 {
		ops := make([]*cop, n)
		for i := range ops {
			ops[i] = refundCop(code, body, req)
		}
		m.concurrently(a, ops, []string{code}, items, m.sideReport(t, a))
		return
	}
	key := fmt.Sprintf("race-%d", rapid.IntRange(0, 1<<30).Draw(t, "key"))
	if a.idem[path+" "+key] != nil {
		return
	}
	raw, _ := json.Marshal(body)
	replies := make([]reply, n)
	var wg sync.WaitGroup
	for i := range replies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = m.send("POST", path, a.key, raw, map[string]string{"Idempotency-Key": key})
		}()
	}
	wg.Wait()
	for _, r := range replies {
		m.checkRefund(a.clone(), code, req, r)
		if r.code == 200 && !bytes.Equal(r.raw, replies[0].raw) {
			m.t.Fatalf("concurrent refunds with one key answered differently:\n%s\n%s", replies[0].raw, r.raw)
		}
	}
	m.checkRefund(a, code, req, replies[0])
	if replies[0].code == 200 {
		a.idem[path+" "+key] = &mIdem{path: path, body: raw, resp: replies[0].raw,
			redo: func(code string, r reply) { m.checkRefund(a, code, req, r) }}
	}
	m.checkToday(a)
}

// concurrentCorrections sends two to four corrections of one sale and an
// item it sells (or any item) at once: refunds, a void, a payment, a stock
// adjustment, an edit of the item's quantity, a new sale of the item.
func (m *model) concurrentCorrections(t *rapid.T) {
	a := m.drawAccount(t)
	code, s, ok := pickSale(t, a, func(s *mSale) bool { return !s.void })
	if !ok {
		return
	}
	item := ""
	if i := slices.IndexFunc(s.lines, func(l mLine) bool { return l.itemCode != "" }); i >= 0 {
		item = s.lines[i].itemCode
	} else if c, _, ok := pick(t, a.items, "item"); ok {
		item = c
	}
	kinds := []string{"refundHeld", "refundLine", "void", "pay"}
	if item != "" {
		kinds = append(kinds, "adjust", "editQuantity", "sellItem")
	}
	var ops []*cop
	for i := rapid.IntRange(2, 4).Draw(t, "n"); i > 0; i-- {
		switch rapid.SampledFrom(kinds).Draw(t, "kind") {
		case "refundHeld":
			req := refundReq{amount: s.held()}
			if req.amount.IsZero() {
				req.amount = money.MustAmount("0.01")
			}
			ops = append(ops, refundCop(code, map[string]any{"amount": req.amount}, req))
		case "refundLine":
			if len(s.lines) == 0 {
				continue
			}
			id := max(1, slices.IndexFunc(s.lines, func(l mLine) bool { return l.itemCode != "" })+1)
			req := refundReq{amount: money.MustAmount("0.01"), lines: []refundLineReq{{id: id, qty: decimal.NewFromInt(1)}}}
			ops = append(ops, refundCop(code, map[string]any{"amount": "0.01", "lines": []any{map[string]any{"sales_item_id": id, "quantity": "1"}}}, req))
		case "void":
			ops = append(ops, newCop("POST", "/api/v1/sales/"+code+"/void", []byte(nil), func(b *mAccount, r reply) (bool, bool) {
				want, commit := b.predictVoid(code, "", false)
				if r.code != want || want != 200 {
					return false, r.code == want
				}
				commit(r)
				return true, checkVoidAnswer(b.sales[code], "", r) == ""
			}))
		case "pay":
			body := map[string]any{"invoice_code": code, "invoice_number": s.number, "customer_id": s.customer,
				"sub_total_amount": s.sub, "total_amount": s.total, "amount_paid": s.total}
			ops = append(ops, newCop("PUT", "/api/v1/sales/edit/"+code, body, func(b *mAccount, r reply) (bool, bool) {
				x := b.sales[code]
				if x.void || r.code != 200 {
					return false, x.void && r.code == http.StatusConflict
				}
				if x.total.Cmp(x.paid) > 0 {
					x.payments++
					b.bookPayment(x.total.Sub(x.paid), x.payType)
				}
				x.paid, x.status = x.total, business.DeriveStatus(x.total, x.total)
				return true, checkSale(x, r) == ""
			}))
		case "adjust":
			q := rapid.SampledFrom([]string{"-1", "5"}).Draw(t, "change")
			req := adjustReq{change: decimal.RequireFromString(q), reason: "damaged"}
			ops = append(ops, newCop("POST", "/api/v1/inventory/items/"+item+"/adjustments", map[string]any{"quantity": q, "reason": "damaged"},
				func(b *mAccount, r reply) (bool, bool) {
					want, commit := b.predictAdjust(item, req)
					if r.code != want || want != 200 {
						return false, r.code == want
					}
					commit()
					return true, checkAdjustAnswer(b.items[item], req, r) == ""
				}))
		case "editQuantity":
			q := rapid.SampledFrom([]string{"0", "10"}).Draw(t, "qty")
			op := newCop("PUT", "/api/v1/inventory/items/"+item, map[string]any{"quantity": q}, func(b *mAccount, r reply) (bool, bool) {
				if r.code == http.StatusConflict { // stock moved between its read and its write
					return false, true
				}
				b.setQuantity(b.items[item], decimal.RequireFromString(q))
				return true, r.code == 200 && decEq(r.obj("items")["quantity"], b.items[item].qty)
			})
			op.item = item
			ops = append(ops, op)
		case "sellItem":
			cust, _, ok := pick(t, a.customers, "customer")
			if !ok {
				continue
			}
			one, price := money.MustQuantity("1"), money.MustAmount("1.00")
			sent := []any{map[string]any{"item_name": "Line", "item_code": item, "unit_price": price, "quantity": one, "tax": "0.10"}}
			body := map[string]any{"customer_id": cust, "sub_total_amount": "1.00", "total_amount": "1.10", "amount_paid": "0",
				"invoice_type": "pos", "payment_type": "Cash", "due_date": "2026-12-31", "items": sent}
			before := a.lastID["sale"]
			ops = append(ops, newCop("POST", "/api/v1/sales/add", body, func(b *mAccount, r reply) (bool, bool) {
				take := stock{item: decimal.NewFromInt(-1)}
				if !b.fits(take) || r.code != 200 {
					return false, !b.fits(take) && r.code == 400
				}
				got := r.obj("sales")
				c, id := fmt.Sprint(got["invoice_code"]), int64(got["id"].(float64))
				if b.sales[c] != nil || id <= before {
					return false, false
				}
				ms := &mSale{code: c, number: got["invoice_number"].(string), invoiceType: "pos", status: business.StatusDraft,
					dueDate: "2026-12-31", created: got["created_at"].(string), customer: cust, id: id,
					sub: price, total: money.MustAmount("1.10"), lines: []mLine{{itemCode: item, qty: one}}, sent: sent, payType: "Cash"}
				b.sales[c], b.numbers[ms.number], b.lastID["sale"] = ms, true, max(id, b.lastID["sale"])
				b.moveStock(take, mMove{kind: "sale", invoice: c})
				b.bookNewSale(ms)
				return true, checkSale(ms, r) == "" && ms.created == b.clk.stampText()
			}))
		}
	}
	items := lineStock(s.lines)
	if item != "" {
		items[item] = decimal.Zero
	}
	m.concurrently(a, ops, []string{code}, slices.Sorted(maps.Keys(items)), m.sideReport(t, a))
}

// inParallel sends n requests, send(i) the i-th, four at a time, and
// returns their answers by i.
func inParallel(n int, send func(i int) reply) []reply {
	out := make([]reply, n)
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				out[i] = send(int(i))
			}
		}()
	}
	wg.Wait()
	return out
}

// sortByID checks that every answer is 200 and orders them by the id of the
// record in their data under key.
func (m *model) sortByID(rs []reply, key, what string) {
	for _, r := range rs {
		m.expect(r, 200, what)
	}
	slices.SortFunc(rs, func(x, y reply) int {
		return int(x.obj(key)["id"].(float64) - y.obj(key)["id"].(float64))
	})
}
