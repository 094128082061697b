package api_test

// Contract tests of test mode, against DynamoDB Local, over HTTP and
// through the Lambda path: live/test isolation of every family of records,
// events, webhooks and reports; settings mirrored; clearing the test data.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"bizdata/infra/streampoll"
	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"

	"github.com/google/go-cmp/cmp"
)

// listRecords returns data.<key> of a 200 list answer.
func listRecords(t *testing.T, c kc, path, key string) []map[string]any {
	t.Helper()
	r := c.get(t, path)
	want(t, r, 200, "")
	raw, ok := r.data()[key].([]any)
	if !ok {
		t.Fatalf("%s: no list data.%s: %s", path, key, r.raw)
	}
	out := make([]map[string]any, len(raw))
	for i, x := range raw {
		out[i], _ = x.(map[string]any)
	}
	return out
}

// fieldValues returns field name of each record, as text.
func fieldValues(rs []map[string]any, name string) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprint(r[name])
	}
	return out
}

// sameList fails the test unless field name of the records at path is want.
func sameList(t *testing.T, c kc, path, key, name string, want ...string) {
	t.Helper()
	if got := fieldValues(listRecords(t, c, path, key), name); !slices.Equal(got, want) {
		t.Errorf("GET %s: %s %q, want %q", path, name, got, want)
	}
}

// reportOf returns data.report of a 200 report answer.
func reportOf(t *testing.T, c kc, path string) map[string]any {
	t.Helper()
	r := c.get(t, path)
	want(t, r, 200, "Report ready")
	rep, _ := r.data()["report"].(map[string]any)
	return rep
}

// TestTestModeIsolation: with a live and a test key of one account, the
// same requests make records of each mode that the other never sees: ids
// and invoice numbers start over in test mode; lists, gets, reports,
// events (each with its livemode), webhook settings and endpoints show
// their own mode's only; settings are the business's, the same in both.
func TestTestModeIsolation(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, c kc) {
		tk := mkKey(t, c, "test all", "test", "*")
		type mode struct {
			name   string
			c      kc
			live   bool
			tag    string
			soap   int    // units sold
			stock  string // units in stock at first
			total  string
			spent  string
			epURL  string
			hookTo string
		}
		modes := []mode{
			{"live", c, true, "Live", 2, "10", "15.00", "100.00", "https://hooks.example.com/live", "https://live.example.com/h"},
			{"test", c.as(tk.Key), false, "Test", 3, "50", "20.00", "7.00", "https://hooks.example.com/test", "https://test.example.com/h"},
		}
		for _, m := range modes {
			r := m.c.get(t, "/api/v1/user/authenticate")
			want(t, r, 200, "Authenticated")
			d := r.data()
			acct, _ := d["account"].(map[string]any)
			k, _ := d["api_key"].(map[string]any)
			if d["livemode"] != m.live || acct["id"] != e.acct.ID || acct["name"] != "Kofi Stores" || acct["business_code"] != "KOFI01" || k["mode"] != m.name {
				t.Errorf("%s key: %s", m.name, r.raw)
			}
		}
		eps := map[string]string{}
		for _, m := range modes {
			r := m.c.post(t, "/api/v1/customers/add", map[string]any{"name": m.tag + " Ama"})
			if got := dataAs[customerWire](t, r, "Customer added successfully", "customers"); got.ID != 1 {
				t.Errorf("%s: the first customer has id %d", m.name, got.ID)
			}
			r = m.c.post(t, "/api/v1/inventory/categories/add", map[string]any{"category_name": m.tag + " Shop"})
			if got := dataAs[categoryWire](t, r, "Category added successfully", "categories"); got.ID != 1 {
				t.Errorf("%s: the first category has id %d", m.name, got.ID)
			}
			r = m.c.post(t, "/api/v1/inventory/items/add", map[string]any{"item_code": "SOAP", "item_name": m.tag + " Soap", "category_id": 1, "item_price": "5.00", "quantity": m.stock})
			if got := dataAs[itemWire](t, r, "Item added successfully", "items"); got.ID != 1 {
				t.Errorf("%s: the first item has id %d", m.name, got.ID)
			}
			want(t, m.c.post(t, "/api/v1/inventory/items/SOAP/adjustments", map[string]any{"quantity": "-1", "reason": "damaged"}), 200, "")
			// The same invoice code and number in both modes: each its first.
			r = m.c.post(t, "/api/v1/sales/add", corrSale("100001", m.soap, "10.00"))
			if got := dataAs[saleWire](t, r, "Sale added successfully", "sales"); got.ID != 1 || got.InvoiceNumber != "INV-100001" || got.Total != m.total {
				t.Errorf("%s: the first sale: %s", m.name, r.raw)
			}
			want(t, m.c.post(t, refundPath("100001"), map[string]any{"amount": "5.00", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "1"}}}), 200, "")
			r = m.c.post(t, "/api/v1/expenses/add", map[string]any{"expense_type": m.tag + " Rent", "expense_amount": m.spent, "payment_method": "Cash", "created_by": "Ama"})
			if got := dataAs[expenseWire](t, r, "Expense added successfully", "expenses"); got.ID != 1 {
				t.Errorf("%s: the first expense has id %d", m.name, got.ID)
			}
			want(t, m.c.put(t, "/api/v1/user/webhook", map[string]any{"callback_url": m.hookTo}), 200, "")
			eps[m.name] = dataAs[createdEndpoint](t, m.c.post(t, endpointsPath, map[string]any{"url": m.epURL, "enabled_events": []string{"*"}}),
				"Webhook endpoint created", "webhook_endpoint").ID
		}
		evIDs := map[string][]string{}
		evTypes := map[string][]string{}
		keyEvents := map[string][]string{}
		for i, m := range modes {
			other := modes[1-i]
			sameList(t, m.c, "/api/v1/customers", "customers", "name", m.tag+" Ama")
			if r := m.c.get(t, "/api/v1/customers/1"); dataAs[customerWire](t, r, "Customer found", "customers").Name != m.tag+" Ama" {
				t.Errorf("%s: %s", m.name, r.raw)
			}
			sameList(t, m.c, "/api/v1/inventory/categories", "categories", "category_name", m.tag+" Shop")
			sameList(t, m.c, "/api/v1/inventory/items", "items", "item_name", m.tag+" Soap")
			left := thousandths(t, m.stock) - 1000 - int64(m.soap)*1000 + 1000
			if got := thousandths(t, dataAs[itemWire](t, m.c.get(t, "/api/v1/inventory/items/SOAP"), "Item found", "items").Quantity); got != left {
				t.Errorf("%s: SOAP quantity %d/1000, want %d/1000", m.name, got, left)
			}
			var sum int64
			for _, mv := range listRecords(t, m.c, "/api/v1/inventory/items/SOAP/movements?limit=200", "movements") {
				sum += thousandths(t, fmt.Sprint(mv["quantity"]))
			}
			if sum != left {
				t.Errorf("%s: SOAP's movements add up to %d/1000, its quantity is %d/1000", m.name, sum, left)
			}
			sameList(t, m.c, "/api/v1/sales", "sales", "total_amount", m.total)
			r := m.c.get(t, "/api/v1/sales/100001")
			want(t, r, 200, "Sale found")
			if s, _ := r.data()["sales"].(map[string]any); s["total_amount"] != m.total || s["amount_refunded"] != "5.00" ||
				len(r.data()["sales-payment"].([]any)) != 1 || len(r.data()["sales-refund"].([]any)) != 1 {
				t.Errorf("%s: %s", m.name, r.raw)
			}
			sameList(t, m.c, "/api/v1/expenses", "expenses", "expense_amount", m.spent)
			if wh, _ := m.c.get(t, "/api/v1/user/webhook").data()["webhook"].(map[string]any); wh["callback_url"] != m.hookTo {
				t.Errorf("%s: webhook settings %v", m.name, wh)
			}
			sameList(t, m.c, endpointsPath, "webhook_endpoints", "url", m.epURL)
			want(t, m.c.get(t, endpointsPath+"/"+eps[m.name]), 200, "Webhook endpoint found")
			want(t, m.c.get(t, endpointsPath+"/"+eps[other.name]), 404, "Webhook endpoint not found")

			sum1 := reportOf(t, m.c, "/api/v1/reports/summary")
			if tot, _ := sum1["totals"].(map[string]any); tot["sales_count"] != float64(1) || tot["invoiced"] != m.total || tot["refunded"] != "5.00" ||
				tot["expenses"] != m.spent || tot["collected"] != "10.00" {
				t.Errorf("%s: summary totals %v", m.name, tot)
			}
			rec := reportOf(t, m.c, "/api/v1/reports/receivables")
			if cs, _ := rec["customers"].([]any); len(cs) != 1 || cs[0].(map[string]any)["name"] != m.tag+" Ama" {
				t.Errorf("%s: receivables %v", m.name, rec)
			}
			if inv := reportOf(t, m.c, "/api/v1/reports/inventory"); inv["items_count"] != float64(1) {
				t.Errorf("%s: inventory report %v", m.name, inv)
			}

			evs := listRecords(t, m.c, "/api/v1/events?limit=100", "events")
			for _, ev := range evs {
				evIDs[m.name] = append(evIDs[m.name], fmt.Sprint(ev["id"]))
				res, _ := ev["resource"].(map[string]any)
				switch res["type"] {
				case business.ResourceAPIKey:
					// The key events of the key made for the test data: in
					// its feed alone.
					keyEvents[m.name] = append(keyEvents[m.name], fmt.Sprintf("%v %v", ev["type"], res["id"]))
				case business.ResourceEndpoint, business.ResourceSettings:
					// Endpoint ids are random; the settings' id is the mode's account.
					evTypes[m.name] = append(evTypes[m.name], fmt.Sprintf("%v %v", ev["type"], res["type"]))
				default:
					evTypes[m.name] = append(evTypes[m.name], fmt.Sprintf("%v %v/%v", ev["type"], res["type"], res["id"]))
				}
				if lm, ok := ev["livemode"].(bool); !ok || lm != m.live {
					t.Errorf("%s: event %v %v has livemode %v", m.name, ev["id"], ev["type"], ev["livemode"])
				}
				if ev["type"] == business.EventCustomerCreated {
					d, _ := ev["data"].(map[string]any)
					if cu, _ := d["customers"].(map[string]any); cu["name"] != m.tag+" Ama" {
						t.Errorf("%s: customer.created event of another mode's customer: %v", m.name, d)
					}
				}
			}
			if len(evs) == 0 {
				t.Fatalf("%s: no events", m.name)
			}
			r = m.c.get(t, "/api/v1/events/"+evIDs[m.name][0])
			if ev, _ := r.data()["event"].(map[string]any); r.code != 200 || ev["livemode"] != m.live {
				t.Errorf("%s: %s", m.name, r.raw)
			}
		}
		for i, m := range modes {
			for _, id := range evIDs[modes[1-i].name] {
				if slices.Contains(evIDs[m.name], id) {
					t.Errorf("event %s is in both feeds", id)
				}
				want(t, m.c.get(t, "/api/v1/events/"+id), 404, "Event not found")
			}
		}
		same(t, resp{method: "GET", path: "/api/v1/events (live -want, test +got)"}, evTypes["live"], evTypes["test"])
		same(t, resp{method: "GET", path: "/api/v1/events (the api_key events by mode)"},
			map[string][]string{"test": {"api_key.created " + tk.ID}}, keyEvents)

		// Settings are the business's: the same in both modes.
		settings := func(c kc) any {
			r := c.get(t, "/api/v1/user/settings")
			want(t, r, 200, "Settings found")
			return r.data()["settings"]
		}
		same(t, resp{method: "GET", path: "/api/v1/user/settings (live -want, test +got)"}, settings(modes[0].c), settings(modes[1].c))
	})
}

// TestTestModeSettingsMirrored: update-settings takes a live key (a test
// key is 403 and changes nothing); what the live key changes, test mode
// shows at once, in its settings and in what authenticate answers.
func TestTestModeSettingsMirrored(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, c kc) {
		tc := c.as(mkKey(t, c, "test all", "test", "*").Key)
		want(t, tc.get(t, "/api/v1/user/authenticate"), 200, "")
		wantExact(t, tc.put(t, "/api/v1/user/settings", map[string]any{"business_name": "Test Name"}), 403, msgLiveOnly)
		r := c.put(t, "/api/v1/user/settings", map[string]any{"business_name": "Kofi Stores Ltd", "timezone": "Africa/Nairobi"})
		want(t, r, 200, "Settings updated")
		for _, p := range []kc{c, tc} {
			r := p.get(t, "/api/v1/user/settings")
			want(t, r, 200, "Settings found")
			s, _ := r.data()["settings"].(map[string]any)
			if s["business_name"] != "Kofi Stores Ltd" || fmt.Sprint(s["timezone_history"]) == "[]" {
				t.Errorf("%s", r.raw)
			}
			r = p.get(t, "/api/v1/user/authenticate")
			if acct, _ := r.data()["account"].(map[string]any); acct["name"] != "Kofi Stores Ltd" || acct["id"] != e.acct.ID {
				t.Errorf("authenticate after the settings change: %s", r.raw)
			}
		}
		live, test := c.get(t, "/api/v1/user/settings"), tc.get(t, "/api/v1/user/settings")
		same(t, test, live.data()["settings"], test.data()["settings"])
	})
}

// clearAll clears the test data with c (a test "*" key), calling again
// while the purge continues, and returns the first answer.
func clearAll(t *testing.T, c kc) resp {
	t.Helper()
	var first resp
	for call := 1; ; call++ {
		r := c.post(t, "/api/v1/test-data/clear", nil)
		if call == 1 {
			first = r
		}
		switch {
		case r.code == 200:
			if r.body["message"] != "Test data cleared" || r.data()["purge_complete"] != true {
				t.Fatalf("%s", r.raw)
			}
			return first
		case r.code == 202:
			if r.body["message"] != "Test data cleared; deleting the old records continues" || r.data()["purge_complete"] != false {
				t.Fatalf("%s", r.raw)
			}
		default:
			t.Fatalf("clear %d: %d %s", call, r.code, r.raw)
		}
		if call > 20 {
			t.Fatal("the purge is not complete after 20 calls")
		}
	}
}

// TestTestModeClear: clearing takes a test "*" key (a live key, or a test
// key without "*", is 403); the test records are gone at once, the test
// keys keep working on an empty test mode whose ids start over, the live
// data is untouched, and no item of the retired test data remains.
func TestTestModeClear(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, c kc) {
		tk := mkKey(t, c, "test all", "test", "*")
		tc := c.as(tk.Key)
		tsales := c.as(mkKey(t, c, "test sales", "test", "sales:write").Key)
		wantExact(t, c.post(t, "/api/v1/test-data/clear", nil), 403, msgTestOnly)
		wantExact(t, tsales.post(t, "/api/v1/test-data/clear", nil), 403, msgLacksScope("*"))

		var ep string
		for _, p := range []kc{c, tc} {
			for _, r := range []resp{
				p.post(t, "/api/v1/customers/add", map[string]any{"name": "Ama"}),
				p.post(t, "/api/v1/inventory/categories/add", map[string]any{"category_name": "Shop"}),
				p.post(t, "/api/v1/inventory/items/add", map[string]any{"item_code": "SOAP", "item_name": "Soap", "category_id": 1, "item_price": "5.00", "quantity": "10"}),
				p.post(t, "/api/v1/inventory/items/SOAP/adjustments", map[string]any{"quantity": "-1", "reason": "damaged"}),
				p.post(t, "/api/v1/sales/add", corrSale("100001", 2, "10.00")),
				p.post(t, refundPath("100001"), map[string]any{"amount": "5.00", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "1"}}}),
				p.post(t, "/api/v1/expenses/add", map[string]any{"expense_type": "Rent", "expense_amount": "100.00", "payment_method": "Cash", "created_by": "Ama"}),
				p.put(t, "/api/v1/user/webhook", map[string]any{"callback_url": "https://shop.example.com/h", "callback_secret": "merchant-secret-0123456789"}),
			} {
				want(t, r, 200, "")
			}
			ep = dataAs[createdEndpoint](t, p.post(t, endpointsPath, map[string]any{"url": "https://hooks.example.com/h", "enabled_events": []string{"*"}}),
				"Webhook endpoint created", "webhook_endpoint").ID
			want(t, p.post(t, endpointsPath+"/"+ep+"/replay", recentSince()), 200, "")
			want(t, p.get(t, "/api/v1/reports/summary"), 200, "")
		}
		testEvent := listRecords(t, tc, "/api/v1/events?limit=1", "events")[0]["id"].(string)
		lists := []struct{ path, key string }{
			{"/api/v1/customers", "customers"}, {"/api/v1/inventory/categories", "categories"}, {"/api/v1/inventory/items", "items"},
			{"/api/v1/sales", "sales"}, {"/api/v1/expenses", "expenses"}, {endpointsPath, "webhook_endpoints"}, {"/api/v1/events?limit=100", "events"},
		}
		liveViews := func() map[string]string {
			out := map[string]string{}
			for _, l := range lists {
				out[l.path] = string(c.get(t, l.path).raw)
			}
			for _, p := range []string{"/api/v1/sales/100001", "/api/v1/customers/1", "/api/v1/user/webhook", "/api/v1/inventory/items/SOAP/movements", endpointsPath + "/" + ep} {
				out[p] = string(c.get(t, p).raw)
			}
			rep := reportOf(t, c, "/api/v1/reports/summary")
			b, _ := json.Marshal(rep["totals"])
			out["summary totals"] = string(b)
			return out
		}
		live := business.LiveID(e.acct.ID)
		retired := business.TwinID(live, 1)
		liveItems := func() map[string]string {
			return tableState(t, e.store, func(pk, sk string) bool { return ownedBy(pk, live) && sk != "ACCOUNT" })
		}
		viewsBefore, itemsBefore := liveViews(), liveItems()
		if n := len(tableState(t, e.store, func(pk, _ string) bool { return ownedBy(pk, retired) })); n < 20 {
			t.Fatalf("the test data holds only %d items", n)
		}

		r := tc.post(t, "/api/v1/test-data/clear", nil)
		if r.code != 200 && r.code != 202 {
			t.Fatalf("%s", r.raw)
		}
		// At once: test mode is empty; its keys work.
		for _, l := range lists {
			sameList(t, tc, l.path, l.key, "id")
		}
		for _, p := range []struct{ path, msg string }{
			{"/api/v1/customers/1", "Customer not found"}, {"/api/v1/sales/100001", "Sale not found"}, {"/api/v1/expenses/1", "Expense not found"},
			{"/api/v1/inventory/items/SOAP", "Item not found"}, {endpointsPath + "/" + ep, "Webhook endpoint not found"}, {"/api/v1/events/" + testEvent, "Event not found"},
		} {
			want(t, tc.get(t, p.path), 404, p.msg)
		}
		if wh, _ := tc.get(t, "/api/v1/user/webhook").data()["webhook"].(map[string]any); wh["callback_url"] != nil || wh["signed"] != false {
			t.Errorf("test webhook settings after the clear: %v", wh)
		}
		if tot, _ := reportOf(t, tc, "/api/v1/reports/summary")["totals"].(map[string]any); tot["sales_count"] != float64(0) || tot["invoiced"] != "0.00" {
			t.Errorf("test summary after the clear: %v", tot)
		}
		want(t, tsales.get(t, "/api/v1/sales"), 200, "Sales found: 0")
		if r := tc.get(t, "/api/v1/user/authenticate"); r.code != 200 || r.data()["livemode"] != false {
			t.Fatalf("%s", r.raw)
		}
		if r.code == 202 {
			clearAll(t, tc)
		}
		// Nothing of the retired test data is left; live data is as it was.
		if left := tableState(t, e.store, func(pk, _ string) bool { return ownedBy(pk, retired) }); len(left) != 0 {
			keys := slices.Sorted(func(yield func(string) bool) {
				for k := range left {
					if !yield(k) {
						return
					}
				}
			})
			t.Errorf("%d items of the retired test data %s are left after the purge completed: %v", len(left), retired, keys)
		}
		if d := cmp.Diff(viewsBefore, liveViews()); d != "" {
			t.Errorf("clearing the test data changed what the live key reads (-before +after):\n%s", d)
		}
		if d := cmp.Diff(itemsBefore, liveItems()); d != "" {
			t.Errorf("clearing the test data changed live items (-before +after):\n%s", d)
		}
		// Ids start over; the new test data clears as well.
		if got := dataAs[customerWire](t, tc.post(t, "/api/v1/customers/add", map[string]any{"name": "Kojo"}), "Customer added successfully", "customers"); got.ID != 1 {
			t.Errorf("the first customer after a clear has id %d", got.ID)
		}
		// A test key rotated, or made, after the clear acts on the fresh test
		// data too.
		r = tc.post(t, "/api/v1/user/api-key/rotate", nil)
		want(t, r, 200, "API key rotated")
		tc = c.as(r.data()["api_key"].(string))
		sameList(t, tc, "/api/v1/customers", "customers", "name", "Kojo")
		sameList(t, c.as(mkKey(t, c, "after the clear", "test", "customers:read").Key), "/api/v1/customers", "customers", "name", "Kojo")
		sameList(t, tsales.as(mkKey(t, tc, "made by a test key", "test", "customers:read").Key), "/api/v1/customers", "customers", "name", "Kojo")
		clearAll(t, tc)
		sameList(t, tc, "/api/v1/customers", "customers", "id")
		if left := tableState(t, e.store, func(pk, _ string) bool { return ownedBy(pk, business.TwinID(live, 2)) }); len(left) != 0 {
			t.Errorf("%d items of the second retired test data are left", len(left))
		}
		if d := cmp.Diff(viewsBefore, liveViews()); d != "" {
			t.Errorf("the second clear changed what the live key reads (-before +after):\n%s", d)
		}
	})
}

// TestTestModeClearOtherProcess: a test key warm on another process acts
// on the fresh test data within the key cache's 5 s of a clear: it sees
// what was made there since.
func TestTestModeClearOtherProcess(t *testing.T) {
	keyPaths(t, api.DefaultKeyCacheTTL, func(t *testing.T, e *env, a kc) {
		b := anotherProcess(t, e, a, api.DefaultKeyCacheTTL)
		tk := mkKey(t, a, "test all", "test", "*")
		want(t, a.as(tk.Key).post(t, "/api/v1/customers/add", map[string]any{"name": "Ama"}), 200, "")
		sameList(t, b.as(tk.Key), "/api/v1/customers", "customers", "name", "Ama")
		clearAll(t, a.as(tk.Key))
		cleared := time.Now()
		want(t, a.as(tk.Key).post(t, "/api/v1/customers/add", map[string]any{"name": "Fresh"}), 200, "")
		var names []string
		for {
			names = fieldValues(listRecords(t, b.as(tk.Key), "/api/v1/customers", "customers"), "name")
			if slices.Equal(names, []string{"Fresh"}) || time.Since(cleared) > 5500*time.Millisecond {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if took := time.Since(cleared); !slices.Equal(names, []string{"Fresh"}) {
			t.Fatalf("%v after the clear, another warm process's test key still lists %q, not the fresh test data's customer", took, names)
		}
		t.Logf("the other process saw the fresh test data %v after the clear", time.Since(cleared).Round(100*time.Millisecond))
	})
}

// keyInbox is a receiver that records the bodies it gets.
type keyInbox struct {
	*httptest.Server
	mu  sync.Mutex
	got [][]byte
}

func newKeyInbox(t *testing.T) *keyInbox {
	in := &keyInbox{}
	in.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		in.mu.Lock()
		in.got = append(in.got, b)
		in.mu.Unlock()
		w.WriteHeader(200)
	}))
	t.Cleanup(in.Close)
	return in
}

func (in *keyInbox) bodies() [][]byte {
	in.mu.Lock()
	defer in.mu.Unlock()
	return slices.Clone(in.got)
}

// TestTestModeWebhooks: with the table's stream fed to the webhook service
// and its dispatcher running (as in the webhook package's tests), an
// endpoint set up with a test key receives the test mode's events only,
// each with livemode false, and the live endpoint the live events only,
// with livemode true; the payment callback set in test mode gets the test
// payment with "livemode": false, the live one the live payment with true.
func TestTestModeWebhooks(t *testing.T) {
	// Not parallel: the stream poller and dispatcher need DynamoDB Local's
	// stream reads, which the package's parallel tests slow past any
	// reasonable wait on a 2-core machine.
	st, cfg := testdb.NewStreamStore(t)
	acct, key := testdb.NewAccount(t, st, "Hook Shop", "HOOK01")
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Hour}, testdb.Quiet())
	ctx, cancel := context.WithCancel(context.Background())
	streams, err := app.NewStreams(ctx, cfg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		streampoll.Poll(ctx, st.Client(), streams, cfg.TableName, webhook.Streamed, svc.HandleStream, streampoll.MaximumRetryAttempts, testdb.Quiet())
	}()
	go func() { defer wg.Done(); svc.Dispatch(ctx, time.Now().Add(time.Hour), 50*time.Millisecond) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	srv := httptest.NewServer(api.NewServer(st, testdb.Quiet(), 0).AllowPrivateWebhooks(true).Handler(api.Routes))
	t.Cleanup(srv.Close)

	lc := kc{srv: srv, key: key}
	tc := lc.as(mkKey(t, lc, "test all", "test", "*").Key)
	type mode struct {
		name          string
		c             kc
		live          bool
		endpoint, cb  *keyInbox
		customer, pay string
	}
	modes := []mode{
		{"live", lc, true, newKeyInbox(t), newKeyInbox(t), "Live Ama", "10.00"},
		{"test", tc, false, newKeyInbox(t), newKeyInbox(t), "Test Ama", "7.00"},
	}
	for _, m := range modes {
		want(t, m.c.post(t, endpointsPath, map[string]any{"url": m.endpoint.URL, "enabled_events": []string{"*"}}), 200, "")
		want(t, m.c.put(t, "/api/v1/user/webhook", map[string]any{"callback_url": m.cb.URL}), 200, "")
	}
	for _, m := range modes {
		want(t, m.c.post(t, "/api/v1/customers/add", map[string]any{"name": m.customer}), 200, "")
		want(t, m.c.post(t, "/api/v1/sales/add", map[string]any{"customer_id": 1, "sub_total_amount": "10.00", "total_amount": "10.00",
			"amount_paid": m.pay, "invoice_type": "pos", "payment_type": "Cash", "due_date": "2026-12-01"}), 200, "")
	}
	// feeds are each mode's events, owed holds those its endpoint must get:
	// the test key's api_key.created is in the test feed from before any
	// endpoint, so the endpoint gets it only if the stream's fan-out read
	// the endpoints after it was made.
	feeds, owed := map[string][]string{}, map[string][]string{}
	for _, m := range modes {
		for _, ev := range listRecords(t, m.c, "/api/v1/events?limit=100", "events") {
			feeds[m.name] = append(feeds[m.name], ev["id"].(string))
			if ev["type"] != "api_key.created" {
				owed[m.name] = append(owed[m.name], ev["id"].(string))
			}
		}
	}
	type head struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Livemode *bool  `json:"livemode"`
	}
	for _, m := range modes {
		deadline := time.Now().Add(90 * time.Second)
		for {
			var got []string
			for _, b := range m.endpoint.bodies() {
				var h head
				_ = json.Unmarshal(b, &h)
				got = append(got, h.ID)
			}
			all := true
			for _, id := range owed[m.name] {
				all = all && slices.Contains(got, id)
			}
			if all && len(m.cb.bodies()) >= 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: after 90 s the endpoint got %d of the %d events (%v), the callback %d bodies", m.name, len(got), len(owed[m.name]), got, len(m.cb.bodies()))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	time.Sleep(500 * time.Millisecond) // what else would arrive, has
	for i, m := range modes {
		other := modes[1-i]
		for _, b := range m.endpoint.bodies() {
			var h head
			if err := json.Unmarshal(b, &h); err != nil {
				t.Fatalf("%s endpoint got %s", m.name, b)
			}
			if h.Livemode == nil || *h.Livemode != m.live {
				t.Errorf("%s endpoint got event %s %s with livemode %v: %s", m.name, h.ID, h.Type, h.Livemode, b)
			}
			if !slices.Contains(feeds[m.name], h.ID) || slices.Contains(feeds[other.name], h.ID) {
				t.Errorf("%s endpoint got event %s %s, which is not its mode's", m.name, h.ID, h.Type)
			}
			if strings.Contains(string(b), other.customer) {
				t.Errorf("%s endpoint got the other mode's record: %s", m.name, b)
			}
		}
		cbs := m.cb.bodies()
		var p webhook.Payload
		if len(cbs) != 1 || json.Unmarshal(cbs[0], &p) != nil || p.Message != "Payment received" || p.Amount != m.pay || p.Livemode != m.live ||
			p.BusinessCode != acct.BusinessCode || !strings.Contains(string(cbs[0]), fmt.Sprintf(`"livemode":%v`, m.live)) {
			t.Errorf("%s callback got %d bodies: %q", m.name, len(cbs), cbs)
		}
	}
}
