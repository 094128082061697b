package api_test

// Corrections under concurrency: many goroutines against the real HTTP
// server, then the invariants read back.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConcurrentRefunds sends 16 refunds of one sale at once: only what was
// paid is refunded, amount_refunded is the sum of the refunds, and a line's
// returns never pass what it sold, with the stock and ledger to match.
func TestConcurrentRefunds(t *testing.T) {
	t.Parallel()
	e := stockEnv(t, "10")
	c := &client{e: e}
	want(t, e.post("/api/v1/sales/add", corrSale("300001", 3, "20.00")), 200, "")

	// 16 refunds of 3.00 of a sale that holds 20.00: 6 fit.
	answers := concurrently(e, 16, func(int) (string, any) { return refundPath("300001"), map[string]any{"amount": "3.00"} })
	ok, busy := countFits(t, answers, "amount", "refund")
	g := e.get("/api/v1/sales/300001")
	s := dataAs[corrSaleWire](t, g, "Sale found", "sales")
	refunds := dataAs[[]refundWire](t, g, "Sale found", "sales-refund")
	var sum int64
	ids := map[string]bool{}
	for _, r := range refunds {
		sum += thousandths(t, r.Amount)
		ids[r.RefundID] = true
	}
	if sum > thousandths(t, s.AmountPaid) || thousandths(t, s.AmountRefunded) != sum || len(refunds) != ok || len(ids) != ok || sum != int64(ok)*3000 {
		t.Errorf("%d refunds answered 200; the sale has %d refunds (%d ids) adding up to %d/1000, amount_refunded %s, amount_paid %s",
			ok, len(refunds), len(ids), sum, s.AmountRefunded, s.AmountPaid)
	}
	if busy == 0 && ok != 6 {
		t.Errorf("%d of 16 refunds of 3.00 fit in 20.00, want 6", ok)
	}

	// 8 returns of 1 of a line that sold 3 (with 0.50 each, which fits):
	// 3 fit.
	want(t, e.post("/api/v1/sales/add", corrSale("300002", 3, "20.00")), 200, "")
	answers = concurrently(e, 8, func(int) (string, any) {
		return refundPath("300002"), map[string]any{"amount": "0.50", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "1"}}}
	})
	ok, busy = countFits(t, answers, "lines[0].quantity", "return")
	g = e.get("/api/v1/sales/300002")
	s = dataAs[corrSaleWire](t, g, "Sale found", "sales")
	lines := dataAs[[]corrLineWire](t, g, "Sale found", "sales-item")
	if n := len(dataAs[[]refundWire](t, g, "Sale found", "sales-refund")); n != ok || thousandths(t, s.AmountRefunded) != int64(ok)*500 ||
		thousandths(t, lines[0].QuantityReturned) != int64(ok)*1000 || ok > 3 {
		t.Errorf("%d returns answered 200; %d refunds, amount_refunded %s, quantity_returned %s", ok, n, s.AmountRefunded, lines[0].QuantityReturned)
	}
	if busy == 0 && ok != 3 {
		t.Errorf("%d of 8 returns of 1 fit a line of 3, want 3", ok)
	}
	// Stock: 10 - 3 - 3 + what was returned.
	if q := itemQty(t, c, "SOAP"); thousandths(t, q) != int64(4+ok)*1000 {
		t.Errorf("stock %s after %d returns, want %d", q, ok, 4+ok)
	}
	checkLedger(t, c, "SOAP")

	// 8 identical refunds with one Idempotency-Key at once: one refund, one
	// answer.
	want(t, e.post("/api/v1/sales/add", corrSale("300003", 1, "10.00")), 200, "")
	answers = concurrentlyWith(e, 8, []string{"Idempotency-Key", "same-refund"}, func(int) (string, any) {
		return refundPath("300003"), map[string]any{"amount": "2.00", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "1"}}}
	})
	for i, a := range answers {
		if a.code != 200 || !bytes.Equal(a.raw, answers[0].raw) {
			t.Errorf("identical refund %d: %d %s (first: %s)", i, a.code, a.raw, answers[0].raw)
		}
	}
	g = e.get("/api/v1/sales/300003")
	if n := len(dataAs[[]refundWire](t, g, "Sale found", "sales-refund")); n != 1 || dataAs[corrSaleWire](t, g, "Sale found", "sales").AmountRefunded != "2.00" {
		t.Errorf("8 identical refunds with one key made %d refunds: %s", n, g.raw)
	}
	if q := itemQty(t, c, "SOAP"); thousandths(t, q) != int64(4+ok)*1000 {
		t.Errorf("stock %s after one return of the last soap sold, want %d", q, 4+ok)
	}
	checkLedger(t, c, "SOAP")
}

// TestConcurrentSaleAndItemEdit races sales of an item against edits of its
// quantity: an edit either applies (200) or answers 409, never re-applied over
// a sale it did not see; the ledger adds up to the quantity, and every count
// recorded is a quantity an edit sent and was told it set.
func TestConcurrentSaleAndItemEdit(t *testing.T) {
	t.Parallel()
	e := stockEnv(t, "100")
	c := &client{e: e}
	sold, counted, conflicts := 0, map[string]bool{}, 0
	for round := 0; round < 6; round++ {
		set := fmt.Sprintf("%d", 60+round)
		answers := concurrently(e, 4, func(i int) (string, any) {
			if i == 0 {
				return "PUT /api/v1/inventory/items/SOAP", map[string]any{"quantity": set}
			}
			return "/api/v1/sales/add", corrSale(fmt.Sprintf("4%02d%03d", round, i), 1, "0")
		})
		for i, a := range answers {
			switch {
			case i == 0 && a.code == 200:
				items, _ := a.body["data"].(map[string]any)["items"].(map[string]any)
				if items["quantity"] != set {
					t.Errorf("round %d: edit to %s answered quantity %v", round, set, items["quantity"])
				}
				counted[set] = true
			case i == 0 && a.code == 409:
				conflicts++
			case i > 0 && a.code == 200:
				sold++
			case a.code == 503:
			default:
				t.Errorf("round %d request %d: %d %s", round, i, a.code, a.raw)
			}
		}
	}
	moves := checkLedger(t, c, "SOAP")
	sales, counts := 0, 0
	for _, m := range moves {
		switch m.Kind {
		case "sale":
			sales++
		case "adjustment":
			counts++
			if m.Reason == nil || *m.Reason != "count" || !counted[m.QuantityAfter] {
				t.Errorf("adjustment %+v is no count an edit was told it set (%v)", m, counted)
			}
		}
	}
	if sales != sold || counts != len(counted) {
		t.Errorf("ledger has %d sales and %d counts; %d sales and %d edits answered 200", sales, counts, sold, len(counted))
	}
	t.Logf("%d sales, %d edits applied, %d edits answered 409", sold, len(counted), conflicts)
}

// countFits counts the answers of a burst that applied (200) and those the
// store gave up on for contention (503); any other answer but a 400 naming
// field fails the test.
func countFits(t *testing.T, answers []answer, field, what string) (ok, busy int) {
	t.Helper()
	for i, a := range answers {
		switch {
		case a.code == 200:
			ok++
		case a.code == 400 && fieldOf(a.body, field) != "":
		case a.code == 503:
			busy++
		default:
			t.Errorf("%s %d: %d %s", what, i, a.code, a.raw)
		}
	}
	return ok, busy
}

// answer is a response read by a goroutine.
type answer struct {
	code int
	raw  []byte
	body map[string]any
}

func fieldOf(body map[string]any, name string) string {
	f, _ := body["fields"].(map[string]any)
	s, _ := f[name].(string)
	return s
}

// concurrently sends n requests to e's HTTP server at once, request i's
// target and body given by req (a target is a path for a POST, or "METHOD
// path"), and returns the answers in order.
func concurrently(e *env, n int, req func(i int) (string, any)) []answer {
	return concurrentlyWith(e, n, nil, req)
}

// concurrentlyWith is concurrently with headers (name, value pairs) on
// every request.
func concurrentlyWith(e *env, n int, headers []string, req func(i int) (string, any)) []answer {
	out := make([]answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		target, body := req(i)
		method, path, found := strings.Cut(target, " ")
		if !found {
			method, path = "POST", target
		}
		var rd io.Reader = http.NoBody
		if body != nil {
			j, _ := json.Marshal(body)
			rd = bytes.NewReader(j)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r, _ := http.NewRequest(method, e.srv.URL+path, rd)
			r.Header.Set("Authorization", "Bearer "+e.key)
			if body != nil {
				r.Header.Set("Content-Type", "application/json")
			}
			for h := 0; h+1 < len(headers); h += 2 {
				r.Header.Set(headers[h], headers[h+1])
			}
			res, err := http.DefaultClient.Do(r)
			if err != nil {
				out[i] = answer{raw: []byte(err.Error())}
				return
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			out[i] = answer{code: res.StatusCode, raw: raw}
			_ = json.Unmarshal(raw, &out[i].body)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// TestConcurrentVoids voids one sale from 8 goroutines at once: one void
// applies (200) and gives the stock back once; the others answer 409 Sale
// is void.
func TestConcurrentVoids(t *testing.T) {
	t.Parallel()
	e := stockEnv(t, "10")
	c := &client{e: e}
	want(t, e.post("/api/v1/sales/add", corrSale("300001", 4, "0")), 200, "")
	answers := concurrently(e, 8, func(i int) (string, any) {
		return voidPath("300001"), map[string]any{"reason": fmt.Sprintf("void %d", i)}
	})
	voided := 0
	for i, a := range answers {
		switch {
		case a.code == 200:
			voided++
		case a.code == 409 && a.body["error"] == "Sale is void":
		default:
			t.Errorf("void %d: %d %s", i, a.code, a.raw)
		}
	}
	if voided != 1 {
		t.Errorf("%d voids of one sale answered 200, want 1", voided)
	}
	if q := itemQty(t, c, "SOAP"); q != "10" {
		t.Errorf("stock %s after voiding a sale of 4 of 10, want 10", q)
	}
	voids := 0
	for _, m := range checkLedger(t, c, "SOAP") {
		if m.Kind == "void" {
			voids++
		}
	}
	if voids != 1 {
		t.Errorf("%d void movements, want 1", voids)
	}
}

// TestConcurrentStockWriters moves one item's stock from sales, refunds
// with returns, voids and adjustments at once: what answered 200 is in the
// ledger once, the stock never goes below zero, and the movements add up
// to the quantity.
func TestConcurrentStockWriters(t *testing.T) {
	t.Parallel()
	e := stockEnv(t, "12")
	c := &client{e: e}
	// Two paid sales to return from, and two unpaid ones to void.
	for _, s := range []struct{ code, paid string }{{"300001", "15.00"}, {"300002", "15.00"}, {"300003", "0"}, {"300004", "0"}} {
		want(t, e.post("/api/v1/sales/add", corrSale(s.code, 2, s.paid)), 200, "")
	}
	type op struct {
		kind   string
		target string
		body   any
	}
	var ops []op
	for i := 0; i < 6; i++ {
		ops = append(ops, op{"sale", "/api/v1/sales/add", corrSale(fmt.Sprintf("31000%d", i), 1, "10.00")})
	}
	for i := 0; i < 5; i++ {
		ops = append(ops, op{"adjustment", "/api/v1/inventory/items/SOAP/adjustments", map[string]any{"quantity": "-1", "reason": "damaged"}})
	}
	for _, code := range []string{"300001", "300002"} {
		ops = append(ops, op{"return", refundPath(code), map[string]any{"amount": "5.00", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "2"}}}})
	}
	for _, code := range []string{"300003", "300004"} {
		ops = append(ops, op{"void", voidPath(code), nil})
	}
	answers := concurrently(e, len(ops), func(i int) (string, any) { return ops[i].target, ops[i].body })
	applied := map[string]int{}
	for i, a := range answers {
		switch {
		case a.code == 200:
			applied[ops[i].kind]++
		case a.code == 400 && (ops[i].kind == "sale" && strings.Contains(fmt.Sprint(a.body["error"]), "insufficient stock") ||
			ops[i].kind == "adjustment" && fieldOf(a.body, "quantity") != ""):
		case a.code == 503:
		default:
			t.Errorf("%s %d: %d %s", ops[i].kind, i, a.code, a.raw)
		}
	}
	moves := checkLedger(t, c, "SOAP")
	inLedger := map[string]int{}
	for _, m := range moves {
		inLedger[m.Kind]++
	}
	// Before: initial, and 4 sales of 2.
	want := map[string]int{"initial": 1, "sale": 4 + applied["sale"], "adjustment": applied["adjustment"], "return": applied["return"], "void": applied["void"]}
	maps.DeleteFunc(want, func(_ string, n int) bool { return n == 0 }) // every one of a kind may be 503 under contention
	if d := cmp.Diff(want, inLedger); d != "" {
		t.Errorf("movements by kind (-answered 200 +in the ledger):\n%s", d)
	}
	t.Logf("applied %v", applied)
}
