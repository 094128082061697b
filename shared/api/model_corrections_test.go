package api_test

// Refunds and voids in the model: refunds with and without lines, voids,
// and an Idempotency-Key sent again for another record. Each answer is
// predicted by a function (predictRefund, predictVoid) that the serial
// steps and the concurrent ones (model_concurrent_test.go) share. The
// audit checks, for every sale, that refunds add up to amount_refunded
// (never above amount_paid), that no line returns more than it sold, and
// that a void sale reads as its void answered.

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/money"

	"github.com/shopspring/decimal"
	"pgregory.net/rapid"
)

// refundReq is a refund as the model sent it.
type refundReq struct {
	amount         money.Amount
	lines          []refundLineReq
	method, reason string
	bad            bool // refused for its form, whatever the sale
}

type refundLineReq struct {
	id  int
	qty decimal.Decimal
}

// drawRefund draws a refund of s (nil for a sale that does not exist):
// amounts around what it holds, lines within and beyond what it sold, and
// now and then a field of bad form.
func drawRefund(t *rapid.T, s *mSale) (map[string]any, refundReq) {
	held, nLines := money.Zero, 0
	if s != nil {
		held, nLines = s.held(), len(s.lines)
	}
	spoil := ""
	if rapid.IntRange(0, 4).Draw(t, "badForm") == 0 {
		spoil = rapid.SampledFrom([]string{"amount", "line", "method", "reason"}).Draw(t, "spoil")
	}
	var req refundReq
	amount := rapid.SampledFrom([]string{"held", "half", "cent", "held", "half", "over"}).Draw(t, "amount")
	if spoil == "amount" {
		amount = "zero"
	}
	switch amount {
	case "held":
		req.amount = held
	case "half":
		req.amount = money.MustAmount(decimal.RequireFromString(held.String()).Div(decimal.NewFromInt(2)).StringFixed(2))
	case "cent":
		req.amount = money.MustAmount("0.01")
	case "over":
		req.amount = held.Add(money.MustAmount("0.01"))
	case "zero":
		req.amount = money.Zero
	}
	req.bad = req.amount.IsZero()
	body := map[string]any{"amount": req.amount}
	lines := []any{}
	n := rapid.IntRange(0, 2).Draw(t, "refundLines")
	if spoil == "line" {
		n = max(n, 1)
	}
	for i := 0; i < n; i++ {
		id := rapid.IntRange(1, max(1, nLines)).Draw(t, "salesItemID")
		var stocked []int // lines of inventory items: their returns restock
		for j := 0; s != nil && j < nLines; j++ {
			if s.lines[j].itemCode != "" {
				stocked = append(stocked, j+1)
			}
		}
		if len(stocked) > 0 && rapid.Bool().Draw(t, "stockedLine") {
			id = rapid.SampledFrom(stocked).Draw(t, "stockedID")
		}
		if rapid.IntRange(0, 7).Draw(t, "noSuchLine") == 0 {
			id = nLines + 1
		}
		if spoil == "line" && i == 0 {
			id = rapid.SampledFrom([]int{0, business.MaxSaleLines + 1, id}).Draw(t, "badID")
		}
		left := decimal.NewFromInt(1)
		if id >= 1 && id <= nLines {
			left = decimalOf(s.lines[id-1].qty).Sub(s.lines[id-1].returned)
		}
		q := map[string]decimal.Decimal{"left": left, "one": decimal.NewFromInt(1), "half": decimal.RequireFromString("0.5"),
			"over": left.Add(decimal.NewFromInt(1))}[rapid.SampledFrom([]string{"left", "one", "half", "left", "over"}).Draw(t, "returnQty")]
		if spoil == "line" && i == 0 && id >= 1 && id <= business.MaxSaleLines {
			q = decimal.Zero
		}
		req.bad = req.bad || q.IsZero() || id < 1 || id > business.MaxSaleLines
		req.lines = append(req.lines, refundLineReq{id: id, qty: q})
		lines = append(lines, map[string]any{"sales_item_id": id, "quantity": q.String()})
	}
	if len(lines) > 0 || rapid.Bool().Draw(t, "emptyLines") {
		body["lines"] = lines
	}
	if req.method = rapid.SampledFrom([]string{"", "Mobile Money", "Card Payment"}).Draw(t, "refundMethod"); spoil == "method" {
		req.method = "Bitcoin"
	}
	if req.method != "" {
		body["refund_method"] = req.method
		req.bad = req.bad || req.method == "Bitcoin"
	}
	if req.reason = rapid.SampledFrom([]string{"", "Damaged", strings.Repeat("é", 500)}).Draw(t, "reason"); spoil == "reason" {
		req.reason = strings.Repeat("𝄞", 501)
	}
	if req.reason != "" {
		body["reason"] = req.reason
		req.bad = req.bad || strings.Count(req.reason, "𝄞") > 500
	}
	return body, req
}

// predictRefund is the status a refund of the sale code answers, and what
// it changes when it answers 200.
func (a *mAccount) predictRefund(code string, req refundReq) (int, func()) {
	s := a.sales[code]
	switch {
	case req.bad:
		return 400, nil
	case s == nil:
		return 404, nil
	case s.void:
		return http.StatusConflict, nil
	case s.paid.IsZero():
		return 400, nil
	}
	bad := req.amount.Cmp(s.held()) > 0
	returned := make([]decimal.Decimal, len(s.lines))
	for i, l := range s.lines {
		returned[i] = l.returned
	}
	give := stock{}
	for _, l := range req.lines {
		if l.id > len(s.lines) {
			bad = true
			continue
		}
		line := s.lines[l.id-1]
		if l.qty.GreaterThan(decimalOf(line.qty).Sub(returned[l.id-1])) {
			bad = true
			continue
		}
		returned[l.id-1] = returned[l.id-1].Add(l.qty)
		if line.itemCode != "" {
			give[line.itemCode] = give[line.itemCode].Add(l.qty)
		}
	}
	if bad || !a.fits(give) {
		return 400, nil
	}
	return 200, func() {
		a.book(mFact{at: a.clk.stamp(), refunded: cents(req.amount)})
		s.refunded = s.refunded.Add(req.amount)
		s.refunds++
		for i := range s.lines {
			s.lines[i].returned = returned[i]
		}
		a.moveStock(give, mMove{kind: "return", invoice: code, reason: req.reason})
	}
}

// checkRefundAnswer compares a refund's 200 answer with the model's sale
// eventsAfterID it (and its time with the clock's).
func checkRefundAnswer(s *mSale, req refundReq, r reply, clk *fakeClock) string {
	if msg := checkSale(s, r); msg != "" {
		return msg
	}
	refunds := r.list("sales-refund")
	last, _ := refunds[len(refunds)-1].(map[string]any)
	if want := clk.stampText(); last["refunded_at"] != want {
		return fmt.Sprintf("the new refund's refunded_at is %v, the store's clock %s", last["refunded_at"], want)
	}
	method := req.method
	if method == "" {
		method = s.payType // the sale's payment_type
	}
	lines, _ := last["lines"].([]any)
	if last["amount"] != req.amount.String() || last["refund_method"] != method || strOrEmpty(last["reason"]) != req.reason ||
		len(lines) != len(req.lines) || !strings.HasPrefix(strOrEmpty(last["refund_id"]), "ref_") {
		return fmt.Sprintf("the new refund is not the one asked for (%+v)", req)
	}
	for i, x := range lines {
		l, _ := x.(map[string]any)
		want := req.lines[i]
		if l["sales_item_id"] != float64(want.id) || !decEq(l["quantity"], want.qty) || strOrEmpty(l["item_code"]) != s.lines[want.id-1].itemCode {
			return fmt.Sprintf("refund line %d: %v, asked for %+v", i, l, want)
		}
	}
	return ""
}

// checkRefund checks a refund's answer against the model's prediction and
// applies it.
func (m *model) checkRefund(a *mAccount, code string, req refundReq, r reply) {
	want, commit := a.predictRefund(code, req)
	m.expect(r, want, fmt.Sprintf("refund %+v of sale %s", req, code))
	switch {
	case want == http.StatusConflict && r.errText() != "Sale is void":
		m.t.Fatalf("refund of a void sale: %s", r.raw)
	case want == 400 && r.body["fields"] == nil:
		m.t.Fatalf("refused refund names no field: %s", r.raw)
	case want != 200:
		return
	}
	commit()
	if msg := checkRefundAnswer(a.sales[code], req, r, a.clk); msg != "" {
		m.t.Fatalf("refund of sale %s: %s: %s", code, msg, r.raw)
	}
}

// pickSale picks a sale, three times in four one that ok accepts when
// there is one.
func pickSale(t *rapid.T, a *mAccount, ok func(*mSale) bool) (string, *mSale, bool) {
	some := map[string]*mSale{}
	for c, s := range a.sales {
		if ok(s) {
			some[c] = s
		}
	}
	if len(some) > 0 && rapid.IntRange(0, 3).Draw(t, "eligible") > 0 {
		return pick(t, some, "sale")
	}
	return pick(t, a.sales, "sale")
}

func refundable(s *mSale) bool { return !s.void && !s.held().IsZero() }

// missingSale is an invoice code no sale of the model has, unless one drew it.
const missingSale = "888888"

// refund refunds a sale (or one that does not exist), with or without
// lines, with an Idempotency-Key when drawn.
func (m *model) refund(t *rapid.T) {
	a := m.drawAccount(t)
	code, s, ok := pickSale(t, a, refundable)
	if !ok || rapid.IntRange(0, 9).Draw(t, "missingSale") == 0 {
		code, s = missingSale, a.sales[missingSale]
	}
	body, req := drawRefund(t, s)
	path := "/api/v1/sales/" + code + "/refunds"
	m.sendCorrection(t, a, path, body, code, func(code string, r reply) { m.checkRefund(a, code, req, r) })
}

// sendCorrection posts a correction of the record code, with an
// Idempotency-Key when drawn, and checks its answer with check; with the
// key's first answer it remembers check, to check the same request sent to
// another record (see keyElsewhere).
func (m *model) sendCorrection(t *rapid.T, a *mAccount, path string, body any, code string, check func(target string, r reply)) {
	r, key := m.createKeyed(t, a, path, body)
	if r.code == -1 {
		return
	}
	check(code, r)
	if prev := a.idem[path+" "+key]; key != "" && prev != nil && prev.redo == nil {
		prev.redo = check
	}
}

// predictVoid is the status a void of the sale code answers, and what it
// changes when it answers 200 (given the answer, which the sale keeps).
func (a *mAccount) predictVoid(code, reason string, bad bool) (int, func(reply)) {
	s := a.sales[code]
	switch {
	case bad:
		return 400, nil
	case s == nil:
		return 404, nil
	case s.void, !s.held().IsZero():
		return http.StatusConflict, nil
	}
	give := stock{}
	for _, l := range s.lines {
		if left := decimalOf(l.qty).Sub(l.returned); l.itemCode != "" && !left.IsZero() {
			give[l.itemCode] = give[l.itemCode].Add(left)
		}
	}
	if !a.fits(give) {
		return 400, nil
	}
	return 200, func(r reply) {
		a.book(mFact{at: parseStamp(s.created), count: -1, invoiced: -cents(s.total)})
		s.void, s.status, s.voidData = true, business.StatusVoid, canonical(r.data())
		a.moveStock(give, mMove{kind: "void", invoice: code, reason: reason})
	}
}

func checkVoidAnswer(s *mSale, reason string, r reply) string {
	if msg := checkSale(s, r); msg != "" {
		return msg
	}
	if strOrEmpty(r.obj("sales")["void_reason"]) != reason {
		return "void_reason is not the reason sent"
	}
	return ""
}

func (m *model) checkVoid(a *mAccount, code, reason string, bad bool, r reply) {
	want, commit := a.predictVoid(code, reason, bad)
	m.expect(r, want, "void of sale "+code)
	if want != 200 {
		if s := a.sales[code]; want == http.StatusConflict && s.void != (r.errText() == "Sale is void") {
			m.t.Fatalf("void of a sale (void %v): %s", s.void, r.raw)
		}
		return
	}
	commit(r)
	if msg := checkVoidAnswer(a.sales[code], reason, r); msg != "" {
		m.t.Fatalf("void of sale %s: %s: %s", code, msg, r.raw)
	}
}

// void voids a sale (or one that does not exist), with no body, an empty
// one, a reason or one too long.
func (m *model) void(t *rapid.T) {
	a := m.drawAccount(t)
	code, _, ok := pickSale(t, a, func(s *mSale) bool { return !s.void && s.held().IsZero() })
	if !ok || rapid.IntRange(0, 9).Draw(t, "missingSale") == 0 {
		code = missingSale
	}
	var body any = []byte(nil)
	reason, bad := "", false
	switch rapid.IntRange(0, 3).Draw(t, "voidBody") {
	case 1:
		body = map[string]any{}
	case 2:
		reason = "Wrong customer"
		body = map[string]any{"reason": reason}
	case 3:
		body, bad = map[string]any{"reason": strings.Repeat("𝄞", 501)}, true
	}
	path := "/api/v1/sales/" + code + "/void"
	m.sendCorrection(t, a, path, body, code, func(code string, r reply) { m.checkVoid(a, code, reason, bad, r) })
}

// keyElsewhere sends a correction's Idempotency-Key again, with the same
// body, for another sale or item of the same route. The key was given for
// another request: the answer is 409, or the request's own answer, never
// the first request's.
func (m *model) keyElsewhere(t *rapid.T) {
	a := m.drawAccount(t)
	var ks []string
	for k, prev := range a.idem {
		if prev.redo != nil {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		return
	}
	sort.Strings(ks)
	k := rapid.SampledFrom(ks).Draw(t, "idem")
	prev := a.idem[k]
	_, key, _ := strings.Cut(k, " ")
	seg := strings.Split(prev.path, "/")
	var target string
	if seg[3] == "sales" {
		target, _, _ = pick(t, a.sales, "otherSale")
		if target == "" || target == seg[4] {
			target = missingSale
		}
		seg[4] = target
	} else {
		target, _, _ = pick(t, a.items, "otherItem")
		if target == "" || target == seg[5] {
			target = missingItem
		}
		seg[5] = target
	}
	path := strings.Join(seg, "/")
	if path == prev.path || a.idem[path+" "+key] != nil {
		return
	}
	r := m.createWithKey(a, path, prev.body, key)
	if r.code == http.StatusConflict && strings.Contains(r.errText(), "Idempotency-Key") {
		return
	}
	prev.redo(target, r)
}
