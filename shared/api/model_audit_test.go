package api_test

// The audit: every record read back and checked against the model and the
// invariants, and every record rebuilt from the events feed.

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/money"

	"github.com/shopspring/decimal"
	"pgregory.net/rapid"
)

// audit reads every record back and checks it against the model and the
// invariants: payments sum to amount_paid; refunds sum to amount_refunded,
// at most amount_paid; a line's returns (as its refunds list them) are its
// quantity_returned, at most its quantity; a void sale reads as its void
// answered; stock is what the model says, never negative, and the sum of
// the item's ledger.
func (m *model) audit(t *rapid.T) {
	page := rapid.SampledFrom([]int{2, 200}).Draw(t, "ledgerPage")
	for _, a := range m.accts {
		a.key = a.full.secret
		for code, s := range a.sales {
			r := m.send("GET", "/api/v1/sales/"+code, a.key, nil, nil)
			m.expect(r, 200, "get sale "+code)
			got := r.obj("sales")
			sum := money.Zero
			for _, p := range r.list("sales-payment") {
				sum = sum.Add(money.MustAmount(p.(map[string]any)["amount_paid"].(string)))
			}
			if sum.String() != got["amount_paid"] || got["amount_paid"] != s.paid.String() || len(r.list("sales-payment")) != s.payments {
				m.t.Fatalf("sale %s: payments sum %s, amount_paid %v, model %s with %d payments: %s", code, sum, got["amount_paid"], s.paid, s.payments, r.raw)
			}
			if got["payment_status"] != s.status || got["invoice_number"] != s.number || got["customer_id"] != fmt.Sprint(s.customer) {
				m.t.Fatalf("sale %s: %s, model %+v", code, r.raw, s)
			}
			refunded, returned := money.Zero, map[int]decimal.Decimal{}
			for _, x := range r.list("sales-refund") {
				f := x.(map[string]any)
				refunded = refunded.Add(money.MustAmount(f["amount"].(string)))
				for _, l := range f["lines"].([]any) {
					l := l.(map[string]any)
					id := int(l["sales_item_id"].(float64))
					returned[id] = returned[id].Add(decimal.RequireFromString(l["quantity"].(string)))
				}
			}
			if refunded.String() != got["amount_refunded"] || refunded.Cmp(sum) > 0 {
				m.t.Fatalf("sale %s: refunds sum %s, amount_refunded %v, amount_paid %s: %s", code, refunded, got["amount_refunded"], sum, r.raw)
			}
			for i, x := range r.list("sales-item") {
				l := x.(map[string]any)
				if !decEq(l["quantity_returned"], returned[i+1]) || returned[i+1].GreaterThan(decimal.RequireFromString(l["quantity"].(string))) {
					m.t.Fatalf("sale %s line %d: refunds return %s: %s", code, i+1, returned[i+1], r.raw)
				}
			}
			if msg := checkSale(s, r); msg != "" {
				m.t.Fatalf("sale %s: %s: %s", code, msg, r.raw)
			}
			if s.void && canonical(r.data()) != s.voidData {
				m.t.Fatalf("void sale %s changed:\n%s\nvoid answered\n%s", code, canonical(r.data()), s.voidData)
			}
		}
		for code, x := range a.items {
			r := m.send("GET", "/api/v1/inventory/items/"+code, a.key, nil, nil)
			m.expect(r, 200, "get item "+code)
			q, _ := r.obj("items")["quantity"].(string)
			if got := decimal.RequireFromString(q); !got.Equal(x.qty) || got.IsNegative() {
				m.t.Fatalf("item %s: stock %v, model %s", code, q, x.qty)
			}
			if msg := ledgerDiff(x, m.ledger(a, code, page)); msg != "" {
				m.t.Fatalf("item %s: %s", code, msg)
			}
		}
		for id, c := range a.customers {
			r := m.send("GET", fmt.Sprintf("/api/v1/customers/%d", id), a.key, nil, nil)
			m.expect(r, 200, "get customer")
			if got := r.obj("customers"); got["name"] != c.name || got["phone"] != c.phone || got["email"] != c.email {
				m.t.Fatalf("customer %d: %s, model %+v", id, r.raw, c)
			}
		}
		for id, x := range a.expenses {
			r := m.send("GET", fmt.Sprintf("/api/v1/expenses/%d", id), a.key, nil, nil)
			m.expect(r, 200, "get expense")
			if got := r.obj("expense"); got["expense_type"] != x.typ || got["expense_amount"] != money.MustAmount(x.amount).String() {
				m.t.Fatalf("expense %d: %s, model %+v", id, r.raw, x)
			}
		}
		// The books: every day with a fact, settings, receivables today and
		// the inventory.
		m.checkToday(a)
		m.checkSettings(a, m.send("GET", "/api/v1/user/settings", a.key, nil, nil), "Settings found")
		m.checkHook(a, m.send("GET", "/api/v1/user/webhook", a.key, nil, nil), "Webhook settings found")
		m.checkReceivables(a, "")
		m.checkInventory(a)
	}
}

// feedRebuilds replays a book's events feed from its start (each event's
// livemode the book's), keeps each record's latest version, and checks that
// this rebuilds every record the model knows exactly as its GET answers it,
// and nothing else: no event for a change that was refused, none missing for
// one that was made (nor one of the other mode's book). Events of
// one record never disagree about one version.
func (m *model) feedRebuilds(a *mAccount) {
	type latest struct {
		version   int64
		data      string
		truncated bool // the record was too large for an event: its sale only
		sale      string
	}
	rebuilt := map[string]latest{} // "<type>/<id>"
	var notices []map[string]any   // sale.reminder_sent and sale.overdue
	since := business.EventIDAt(time.Now().Add(-24 * time.Hour))
	cursor := ""
	for {
		q := "/api/v1/events?limit=200&since=" + since
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		r := m.send("GET", q, a.key, nil, nil)
		m.expect(r, 200, "catch up on events")
		for _, x := range r.list("events") {
			ev := x.(map[string]any)
			if ev["livemode"] != a.live { // every event of a test twin says so, and none of a live book
				m.t.Fatalf("an event of a book with livemode %v: %s", a.live, canonical(ev))
			}
			if ev["type"] == business.EventSaleReminderSent || ev["type"] == business.EventSaleOverdue {
				notices = append(notices, ev)
			}
			res := ev["resource"].(map[string]any)
			switch res["type"] {
			case business.ResourceEndpoint, business.ResourceAPIKey, business.ResourceSettings:
				// Events of the set-up, not of the books: they rebuild no
				// record (TestConfigChangesAreEvents checks them).
				continue
			}
			k := fmt.Sprint(res["type"], "/", res["id"])
			v := int64(res["version"].(float64))
			data := canonical(ev["data"])
			truncated, _ := ev["data_truncated"].(bool)
			sale := ""
			if d, ok := ev["data"].(map[string]any); ok {
				sale = canonical(d["sales"])
			}
			switch cur, ok := rebuilt[k]; {
			case ok && cur.version == v && cur.data != data:
				m.t.Fatalf("%s: two events of version %d disagree:\n%s\n%s", k, v, cur.data, data)
			case !ok || v > cur.version:
				rebuilt[k] = latest{v, data, truncated, sale}
			}
		}
		next, _ := r.data()["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	m.checkNoticeEvents(a, notices)
	check := func(k, path string) {
		got, ok := rebuilt[k]
		delete(rebuilt, k)
		r := m.send("GET", path, a.key, nil, nil)
		m.expect(r, 200, "get "+k)
		if !ok {
			m.t.Fatalf("%s: no event in the feed: %s", k, r.raw)
		}
		want := canonical(r.data())
		if got.truncated { // a sale too large for an event: the sale itself must match
			got.data, want = got.sale, canonical(r.data()["sales"])
		}
		if got.data != want {
			m.t.Fatalf("%s: the feed rebuilds version %d (truncated %v) as\n%.2000s\nGET answers\n%.2000s", k, got.version, got.truncated, got.data, want)
		}
	}
	for code := range a.sales {
		check("sale/"+code, "/api/v1/sales/"+code)
	}
	for code := range a.items {
		check("item/"+code, "/api/v1/inventory/items/"+code)
	}
	for id := range a.customers {
		check(fmt.Sprintf("customer/%d", id), fmt.Sprintf("/api/v1/customers/%d", id))
	}
	for id := range a.expenses {
		check(fmt.Sprintf("expense/%d", id), fmt.Sprintf("/api/v1/expenses/%d", id))
	}
	for id := range a.categories {
		k := fmt.Sprintf("category/%d", id)
		got, ok := rebuilt[k]
		delete(rebuilt, k)
		if !ok || !strings.Contains(got.data, fmt.Sprintf(`"id":%d,`, id)) {
			m.t.Fatalf("%s: the feed has no event of it (%+v)", k, got)
		}
	}
	if len(rebuilt) > 0 {
		m.t.Fatalf("the feed has events of records the model does not know (a refused change made one?): %v", slices.Collect(maps.Keys(rebuilt)))
	}
}

// jsonDiff is where got (decoded JSON) first differs from want, "" when
// they are the same JSON.
func jsonDiff(path string, got, want any) string {
	var w any
	if err := json.Unmarshal([]byte(canonical(want)), &w); err != nil {
		panic(err)
	}
	switch wv := w.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s is %s, want %s", path, canonical(got), canonical(w))
		}
		for _, k := range slices.Sorted(maps.Keys(g)) {
			if _, ok := wv[k]; !ok {
				return fmt.Sprintf("%s.%s is %s, want no such field", path, k, canonical(g[k]))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(wv)) {
			if _, ok := g[k]; !ok {
				return fmt.Sprintf("%s has no %s, want %s", path, k, canonical(wv[k]))
			}
			if d := jsonDiff(path+"."+k, g[k], wv[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(wv) {
			return fmt.Sprintf("%s is %.3000s, want %.3000s", path, canonical(got), canonical(w))
		}
		for i := range wv {
			if d := jsonDiff(fmt.Sprintf("%s[%d]", path, i), g[i], wv[i]); d != "" {
				return fmt.Sprintf("%s\n  %s[%d] is %s\n  want %s", d, path, i, canonical(g[i]), canonical(wv[i]))
			}
		}
		return ""
	}
	if canonical(got) != canonical(w) {
		return fmt.Sprintf("%s is %s, want %s", path, canonical(got), canonical(w))
	}
	return ""
}
