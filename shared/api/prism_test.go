package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestOpenAPIConformance sends success and error answers of every route
// through Prism, a third party's validating proxy, against
// docs/openapi.yaml: any response Prism finds at odds with the document (a
// status it does not list, a body that breaks its schema) fails the test.
// Requests that break the document on purpose (bad input) are expected;
// only response violations count.
func TestOpenAPIConformance(t *testing.T) {
	t.Parallel()
	prism := "../../infra/conformance/node_modules/.bin/prism"
	if _, err := os.Stat(prism); err != nil {
		t.Fatalf("Prism is not installed: run make deps (%v)", err)
	}
	e := newSaleEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	var out testdb.Buffer
	cmd := exec.Command(prism, "proxy", "../../docs/openapi.yaml", e.srv.URL, "-p", port, "-h", "127.0.0.1")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	for deadline := time.Now().Add(90 * time.Second); !strings.Contains(out.String(), "Prism is listening"); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Prism did not start:\n%s", out.String())
		}
	}
	p := &env{t: t, store: e.store, srv: &httptest.Server{URL: "http://" + addr}, key: e.key, acct: e.acct}

	big := `{"name":"` + strings.Repeat("x", 1<<20) + `"}`
	sale := saleBody(map[string]any{"invoice_code": "555555", "invoice_number": "500005"})
	edit := saleBody(map[string]any{"invoice_code": "555555", "invoice_number": "500005", "amount_paid": "20.00", "items": nil})
	type step struct {
		method, path string
		body         any
		headers      []string
		code         int
	}
	steps := []step{
		{"GET", "/api/v1/user/authenticate", nil, nil, 200},
		{"GET", "/api/v1/user/authenticate", nil, []string{"Authorization", ""}, 401},
		{"POST", "/api/v1/customers/add", map[string]any{"name": "Yaw"}, []string{"Idempotency-Key", "p-1"}, 200},
		{"POST", "/api/v1/customers/add", map[string]any{"name": "Other"}, []string{"Idempotency-Key", "p-1"}, 409},
		{"POST", "/api/v1/customers/add", map[string]any{"name": ""}, nil, 400},
		{"POST", "/api/v1/customers/add", "name=Yaw", []string{"Content-Type", "text/plain"}, 415},
		{"POST", "/api/v1/customers/add", big, nil, 413},
		{"GET", "/api/v1/customers/1", nil, nil, 200},
		{"GET", "/api/v1/customers/999", nil, nil, 404},
		{"GET", "/api/v1/customers", nil, nil, 200},
		{"GET", "/api/v1/customers?limit=0", nil, nil, 400},
		{"GET", "/api/v1/customers", nil, []string{"Authorization", "Bearer bk_live_unknown"}, 401},
		{"PUT", "/api/v1/customers/1", map[string]any{"phone": "0200000000"}, nil, 200},
		{"PUT", "/api/v1/customers/1", map[string]any{"phone": "1"}, []string{"If-Match", `"v1"`}, 412},
		{"PUT", "/api/v1/customers/999", map[string]any{"phone": "1"}, nil, 404},
		{"PUT", "/api/v1/customers/1", map[string]any{"nickname": "x"}, nil, 400},
		{"POST", "/api/v1/inventory/categories/add", map[string]any{"category_name": "Grains"}, nil, 200},
		{"POST", "/api/v1/inventory/categories/add", map[string]any{"category_name": "grains"}, nil, 409},
		{"GET", "/api/v1/inventory/categories?category_name=grains", nil, nil, 200},
		{"PUT", "/api/v1/inventory/categories/1", map[string]any{"description": "Rice"}, nil, 200},
		{"PUT", "/api/v1/inventory/categories/99", map[string]any{"description": "Rice"}, nil, 404},
		{"POST", "/api/v1/inventory/items/add", map[string]any{"item_code": "RICE-1", "item_name": "Rice", "category_id": 1, "item_price": 5, "quantity": 9}, nil, 200},
		{"POST", "/api/v1/inventory/items/add", map[string]any{"item_name": "Rice", "category_id": 99, "item_price": 5}, nil, 400},
		{"GET", "/api/v1/inventory/items/RICE-1", nil, nil, 200},
		{"GET", "/api/v1/inventory/items/NOPE", nil, nil, 404},
		{"GET", "/api/v1/inventory/items?category_id=1", nil, nil, 200},
		{"PUT", "/api/v1/inventory/items/RICE-1", map[string]any{"item_price": 6}, nil, 200},
		{"PUT", "/api/v1/inventory/items/RICE-1", map[string]any{"online": 5}, nil, 400},
		{"POST", "/api/v1/expenses/add", map[string]any{"expense_type": "Rent", "expense_amount": "10", "payment_method": "Cash", "created_by": "Ama"}, nil, 200},
		{"GET", "/api/v1/expenses/1", nil, nil, 200},
		{"GET", "/api/v1/expenses/9", nil, nil, 404},
		{"GET", "/api/v1/expenses?expense_type=rent", nil, nil, 200},
		{"PUT", "/api/v1/expenses/1", map[string]any{"expense_type": "Rent", "expense_amount": "12", "payment_method": "Cash", "created_by": "Ama"}, nil, 200},
		{"PUT", "/api/v1/expenses/1", map[string]any{"expense_type": "Rent"}, nil, 400},
		{"POST", "/api/v1/sales/add", sale, nil, 200},
		{"POST", "/api/v1/sales/add", sale, nil, 409},
		{"POST", "/api/v1/sales/add", saleBody(map[string]any{"total_amount": "1.00"}), nil, 400},
		{"GET", "/api/v1/sales/555555", nil, nil, 200},
		{"GET", "/api/v1/sales/123456", nil, nil, 404},
		{"GET", "/api/v1/sales?payment_status=partial&customer_id=1", nil, nil, 200},
		{"GET", "/api/v1/sales?payment_status=owing", nil, nil, 400},
		{"GET", "/api/v1/sales", nil, []string{"Authorization", ""}, 401},
		{"PUT", "/api/v1/sales/edit/555555", edit, nil, 200},
		{"PUT", "/api/v1/sales/edit/555555", edit, []string{"If-Match", `"v1"`}, 412},
		{"PUT", "/api/v1/sales/edit/123456", saleBody(map[string]any{"invoice_code": "123456", "invoice_number": "100001", "items": nil}), nil, 404},
		{"POST", "/api/v1/sales/555555/refunds", map[string]any{"amount": "5.00", "reason": "torn bag", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "1"}}}, []string{"Idempotency-Key", "p-r1"}, 200},
		{"POST", "/api/v1/sales/555555/refunds", map[string]any{"amount": "5.00", "reason": "torn bag", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "1"}}}, []string{"Idempotency-Key", "p-r1"}, 200},
		{"POST", "/api/v1/sales/555555/refunds", map[string]any{"amount": "99.00"}, nil, 400},
		{"POST", "/api/v1/sales/123456/refunds", map[string]any{"amount": "1.00"}, nil, 404},
		{"POST", "/api/v1/sales/555555/void", nil, nil, 409},
		{"POST", "/api/v1/sales/add", saleBody(map[string]any{"invoice_code": "666666", "amount_paid": "0", "payment_type": "None",
			"items": []any{map[string]any{"item_code": "RICE-1", "item_name": "Rice", "unit_price": "12.50", "quantity": "2"}}, "sub_total_amount": "25.00", "total_amount": "24.50"}), nil, 200},
		{"POST", "/api/v1/sales/666666/void", map[string]any{"reason": "order cancelled"}, nil, 200},
		{"POST", "/api/v1/sales/666666/void", nil, nil, 409},
		{"POST", "/api/v1/sales/123456/void", nil, nil, 404},
		{"GET", "/api/v1/sales?payment_status=void", nil, nil, 200},
		{"POST", "/api/v1/inventory/items/RICE-1/adjustments", map[string]any{"quantity": "-1", "reason": "damaged", "note": "torn"}, nil, 200},
		{"POST", "/api/v1/inventory/items/RICE-1/adjustments", map[string]any{"quantity": "-100", "reason": "lost"}, nil, 400},
		{"POST", "/api/v1/inventory/items/NOPE/adjustments", map[string]any{"quantity": "1", "reason": "received"}, nil, 404},
		{"GET", "/api/v1/inventory/items/RICE-1/movements?limit=2", nil, nil, 200},
		{"GET", "/api/v1/inventory/items/NOPE/movements", nil, nil, 404},
		{"GET", "/api/v1/events", nil, nil, 200},
		{"GET", "/api/v1/events?type=sale.*&limit=3", nil, nil, 200},
		{"GET", "/api/v1/events?resource_type=item&resource_id=RICE-1", nil, nil, 200},
		{"GET", "/api/v1/events?since=" + url.QueryEscape(time.Now().UTC().Add(-time.Hour).Format("2006-01-02 15:04:05")), nil, nil, 200},
		{"GET", "/api/v1/events?type=sale.deleted", nil, nil, 400},
		{"GET", "/api/v1/events/evt_000000000000000000000000", nil, nil, 404},
		{"GET", "/api/v1/user/webhook", nil, nil, 200},
		{"POST", "/api/v1/user/webhook/test", nil, nil, 400},
		{"PUT", "/api/v1/user/webhook", map[string]any{"callback_url": "http://insecure.example.com/h"}, nil, 400},
		{"PUT", "/api/v1/user/webhook", map[string]any{"callback_url": "https://hooks.example.com/h", "callback_secret": "prism-secret-0123456789"}, nil, 200},
	}
	// Webhook endpoints: 15 made beforehand (one disabled by the
	// dispatcher, its event replayed), so the second create is the 17th.
	ctx := context.Background()
	var ep business.Endpoint
	for i := range business.MaxEndpoints - 1 {
		made, err := e.store.CreateEndpoint(ctx, e.acct.ID, business.Endpoint{URL: fmt.Sprintf("https://hooks.example.com/%d", i), EnabledEvents: []string{"*"}}, business.NewEndpointSecret())
		if err != nil {
			t.Fatal(err)
		}
		ep = made
	}
	if _, err := e.store.DisableEndpoint(ctx, e.acct.ID, ep.ID, "failing for 5 days", time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	disabled, err := e.store.ListEvents(ctx, e.acct.ID, store.EventFilter{Type: business.EventEndpointDisabled}, 1, "")
	if err != nil || len(disabled.Items) != 1 {
		t.Fatalf("the disabled endpoint's event: %d, %v", len(disabled.Items), err)
	}
	var disabledEvent business.Event
	if err := json.Unmarshal(disabled.Items[0], &disabledEvent); err != nil {
		t.Fatal(err)
	}
	one := "/api/v1/webhook-endpoints/" + ep.ID
	steps = append(steps, []step{
		{"GET", "/api/v1/events/" + disabledEvent.ID, nil, nil, 200},
		{"POST", "/api/v1/webhook-endpoints", map[string]any{"url": "https://hooks.example.com/p", "enabled_events": []string{"payment.received", "sale.*"}, "description": "Prism"}, nil, 200},
		{"POST", "/api/v1/webhook-endpoints", map[string]any{"url": "https://hooks.example.com/q", "enabled_events": []string{"*"}}, nil, 409},
		{"POST", "/api/v1/webhook-endpoints", map[string]any{"url": "http://insecure.example.com/h", "enabled_events": []string{"*"}}, nil, 400},
		{"GET", "/api/v1/webhook-endpoints", nil, nil, 200},
		{"GET", "/api/v1/webhook-endpoints", nil, []string{"Authorization", ""}, 401},
		{"GET", one, nil, nil, 200},
		{"GET", "/api/v1/webhook-endpoints/" + business.NewEndpointID(), nil, nil, 404},
		{"PUT", one, map[string]any{"status": "enabled"}, nil, 200},
		{"PUT", one, map[string]any{"description": "x"}, []string{"If-Match", `"v1"`}, 412},
		{"PUT", one, map[string]any{"status": "paused"}, nil, 400},
		{"POST", one + "/rotate-secret", nil, nil, 200},
		{"POST", one + "/rotate-secret", map[string]any{"overlap_hours": 0}, nil, 200},
		{"POST", one + "/rotate-secret", map[string]any{"overlap_hours": 48}, nil, 400},
		{"POST", one + "/replay", map[string]any{"since": time.Now().UTC().Add(-time.Minute).Format(business.TimeFormat)}, nil, 200},
		{"POST", one + "/replay", map[string]any{"since": "yesterday"}, nil, 400},
		{"GET", one + "/deliveries", nil, nil, 200},
		{"GET", one + "/deliveries?state=lost", nil, nil, 400},
		{"DELETE", one, nil, nil, 200},
		{"DELETE", one, nil, nil, 404},
	}...)
	// Settings and reports. The summaries count what the steps above
	// changed (no stream runs here: each report counts what waits). Then
	// 1,001 changes wait before the step at backlog, more than the 1,000 a
	// report counts at once (the stream's consumer stopped): the summary is
	// 503 with Retry-After, and the retry, which counts the last one, 200.
	steps = append(steps, []step{
		{"GET", "/api/v1/user/settings", nil, nil, 200},
		{"GET", "/api/v1/user/settings", nil, []string{"Authorization", ""}, 401},
		{"PUT", "/api/v1/user/settings", map[string]any{"timezone": "Africa/Nairobi", "business_name": "Kofi Stores Ltd", "currency": "GHS"}, nil, 200},
		{"PUT", "/api/v1/user/settings", map[string]any{"timezone": "Mars/Olympus_Mons"}, nil, 400},
		{"PUT", "/api/v1/user/settings", map[string]any{"currency": "USD"}, nil, 400},
		{"PUT", "/api/v1/user/settings", map[string]any{"business_name": nil}, nil, 400},
		{"GET", "/api/v1/user/settings", nil, nil, 200}, // with timezone_effective_at and two zones
		{"GET", "/api/v1/user/authenticate", nil, nil, 200},
		{"GET", "/api/v1/reports/summary", nil, nil, 200},
		{"GET", "/api/v1/reports/summary?group_by=day", nil, nil, 200},
		{"GET", "/api/v1/reports/summary?group_by=week&from=2025-06-01&to=2026-12-31", nil, nil, 200},
		{"GET", "/api/v1/reports/summary?group_by=year", nil, nil, 400},
		{"GET", "/api/v1/reports/summary?group_by=day&from=2024-01-01&to=2026-01-01", nil, nil, 400},
		{"GET", "/api/v1/reports/summary", nil, []string{"Authorization", ""}, 401},
		{"GET", "/api/v1/reports/receivables", nil, nil, 200},
		{"GET", "/api/v1/reports/receivables?as_of=2099-03-01", nil, nil, 200},
		{"GET", "/api/v1/reports/receivables?as_of=next-week", nil, nil, 400},
		{"POST", "/api/v1/inventory/items/add", map[string]any{"item_code": "SALT-1", "item_name": "Salt", "category_id": 1, "item_price": 2, "unit_cost": 1.5, "quantity": 0}, nil, 200},
		{"POST", "/api/v1/inventory/items/add", map[string]any{"item_code": "OIL-1", "item_name": "Oil", "category_id": 1, "item_price": 30, "quantity": "2", "minimum_qty_alert": "5"}, nil, 200},
		{"GET", "/api/v1/reports/inventory", nil, nil, 200},
		{"GET", "/api/v1/reports/inventory?limit=5", nil, nil, 400},
	}...)
	backlog := len(steps)
	steps = append(steps, []step{
		{"GET", "/api/v1/reports/summary?group_by=day", nil, nil, 503},
		{"GET", "/api/v1/reports/summary?group_by=day", nil, nil, 200},
	}...)
	// Test notifications up to the limit, then one over it (429 with
	// Retry-After), all in one fixed minute.
	limited := len(steps)
	for range api.TestSendsPerMinute {
		steps = append(steps, step{"POST", "/api/v1/user/webhook/test", nil, nil, 200})
	}
	steps = append(steps, step{"POST", "/api/v1/user/webhook/test", nil, nil, 429})
	// API keys, scopes and test mode. Keys made beforehand: a till's (no
	// customers:read, no keys:write), one with keys:write alone, and a test
	// key with "*". Before the step at full, keys are made up to the 20 an
	// account may have; before the step at junk, the test twin gets more
	// items than one clear deletes, so that clear is 202 and the next 200.
	keyOf := func(name string, scopes []string, mode string) (business.APIKey, string) {
		t.Helper()
		spec, err := business.NewKeySpec(name, scopes, mode)
		if err != nil {
			t.Fatal(err)
		}
		k, secret, err := e.store.CreateKey(ctx, e.acct.ID, nil, spec)
		if err != nil {
			t.Fatal(err)
		}
		return k, secret
	}
	till, tillKey := keyOf("Prism till", []string{"sales:write", "inventory:read"}, "live")
	keysOnly, keysOnlyKey := keyOf("Prism key maker", []string{business.ScopeKeyWrite}, "live")
	_, testKey := keyOf("Prism sandbox", []string{business.ScopeAll}, "test")
	keys, err := e.store.ListKeys(ctx, e.acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	own := keys[slices.IndexFunc(keys, func(k business.APIKey) bool { return k.Hash == business.HashAPIKey(e.key) })]
	as := func(key string) []string { return []string{"Authorization", "Bearer " + key} }
	revoke := func(id string) string { return "/api/v1/api-keys/" + id + "/revoke" }
	steps = append(steps, []step{
		{"GET", "/api/v1/api-keys", nil, nil, 200},
		{"GET", "/api/v1/api-keys?limit=5", nil, nil, 400},
		{"POST", "/api/v1/api-keys", map[string]any{"name": "Till 1", "scopes": []string{"sales:write", "inventory:read"}}, nil, 200},
		{"POST", "/api/v1/api-keys", map[string]any{"name": "Till 2", "scopes": []string{"sales:delete"}}, nil, 400},
		{"POST", "/api/v1/api-keys", map[string]any{"name": "", "scopes": []string{}, "mode": "sandbox"}, nil, 400},
		{"GET", "/api/v1/inventory/items", nil, as(tillKey), 200},
		{"GET", "/api/v1/customers", nil, as(tillKey), 403},
		{"POST", "/api/v1/api-keys", map[string]any{"name": "Till 3", "scopes": []string{"sales:write"}}, as(tillKey), 403},
		{"GET", "/api/v1/user/authenticate", nil, as(tillKey), 200},
		{"POST", "/api/v1/api-keys", map[string]any{"name": "Till 4", "scopes": []string{"sales:write"}}, as(keysOnlyKey), 403},
		{"GET", "/api/v1/user/authenticate", nil, as(testKey), 200}, // livemode false
		{"POST", "/api/v1/customers/add", map[string]any{"name": "Test customer"}, as(testKey), 200},
		{"GET", "/api/v1/events", nil, as(testKey), 200}, // livemode false
		{"PUT", "/api/v1/user/settings", map[string]any{"business_name": "Sandbox"}, as(testKey), 403},
		{"POST", "/api/v1/api-keys", map[string]any{"name": "Test till", "scopes": []string{"sales:write"}, "mode": "test"}, as(testKey), 200},
		{"POST", "/api/v1/api-keys", map[string]any{"name": "Live from test", "scopes": []string{"sales:read"}}, as(testKey), 403},
		{"GET", "/api/v1/api-keys", nil, as(testKey), 200},
		{"POST", revoke(till.ID), nil, as(testKey), 404},
		{"POST", "/api/v1/test-data/clear", nil, nil, 403},
	}...)
	full := len(steps)
	steps = append(steps, []step{
		{"POST", "/api/v1/api-keys", map[string]any{"name": "Till 21", "scopes": []string{"sales:read"}}, nil, 409},
		{"POST", revoke(keysOnly.ID), nil, nil, 200},
		{"POST", revoke(keysOnly.ID), nil, nil, 404},
		{"POST", revoke("nope"), nil, nil, 404},
		{"POST", revoke(own.ID), map[string]any{}, nil, 409},
		{"POST", revoke(till.ID), map[string]any{"reason": "lost"}, nil, 400},
	}...)
	junk := len(steps)
	steps = append(steps, []step{
		{"POST", "/api/v1/test-data/clear", nil, as(testKey), 202},
		{"POST", "/api/v1/test-data/clear", nil, as(testKey), 200},
		{"GET", "/api/v1/customers", nil, as(testKey), 200}, // none: the test data starts afresh
		{"POST", "/api/v1/user/api-key/rotate", nil, as(testKey), 200},
	}...)
	steps = append(steps, []step{
		{"GET", "/api/v1/user/webhook/deliveries?state=failed", nil, nil, 200},
		{"GET", "/api/v1/user/webhook/deliveries?state=lost", nil, nil, 400},
		{"POST", "/api/v1/user/webhook/deliveries/txn_none/redeliver", nil, nil, 404},
		{"POST", "/api/v1/user/api-key/rotate", map[string]any{"x": 1}, nil, 400},
		{"POST", "/api/v1/user/api-key/rotate", nil, []string{"Authorization", ""}, 401},
		{"POST", "/api/v1/user/api-key/rotate", nil, nil, 200}, // last: the key changes
	}...)
	violations := 0
	for i, s := range steps {
		if i == backlog {
			backlogFigures(t, e.store, e.acct.ID, 1001)
		}
		if i == full {
			ks, err := e.store.ListKeys(ctx, e.acct.ID)
			if err != nil {
				t.Fatal(err)
			}
			for n := len(ks); n < business.MaxAPIKeys; n++ {
				keyOf(fmt.Sprint("Filler ", n), []string{"sales:read"}, "live")
			}
		}
		if i == junk {
			putJunk(t, e.store, business.TwinID(e.acct.ID, 1), 2001)
		}
		if i == limited { // the minute must not end before the 429
			if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < 5*time.Second {
				time.Sleep(left + 100*time.Millisecond)
			}
		}
		r := p.req(s.method, s.path, p.key, s.body, s.headers...)
		// A clear stops at its time bound too (on a machine busy with other
		// tests it may, before its budget): a client clears again until the
		// old records are gone.
		for try := 0; s.path == "/api/v1/test-data/clear" && s.code == 200 && r.code == 202 && try < 5; try++ {
			r = p.req(s.method, s.path, p.key, s.body, s.headers...)
		}
		if r.code != s.code {
			t.Errorf("%s %s: %d, want %d: %.300s", s.method, s.path, r.code, s.code, r.raw)
		}
		var vs []struct {
			Location []string `json:"location"`
			Severity string   `json:"severity"`
			Message  string   `json:"message"`
		}
		if h := r.header.Get("sl-violations"); h != "" {
			if err := json.Unmarshal([]byte(h), &vs); err != nil {
				t.Fatalf("sl-violations %q: %v", h, err)
			}
		}
		for _, v := range vs {
			if len(v.Location) > 0 && v.Location[0] == "response" {
				violations++
				t.Errorf("%s %s -> %d: %s %s %s", s.method, s.path, r.code, v.Severity, strings.Join(v.Location, "."), v.Message)
			}
		}
	}
	t.Logf("Prism checked %d responses of %d routes: %d violations", len(steps), len(api.Routes), violations)
}

// putJunk writes n items into the account partition of account (a test
// twin's), where a purge of the twin deletes them: more than one clear's
// budget makes its answer 202.
func putJunk(t *testing.T, st *store.Store, account string, n int) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < n; i += 25 {
		var reqs []types.WriteRequest
		for j := i; j < min(i+25, n); j++ {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: "A#" + account},
				"SK": &types.AttributeValueMemberS{Value: fmt.Sprintf("JUNK#%05d", j)},
			}}})
		}
		for len(reqs) > 0 {
			out, err := st.Client().BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{st.Table(): reqs}})
			if err != nil {
				t.Fatal(err)
			}
			reqs = out.UnprocessedItems[st.Table()]
		}
	}
}

// backlogFigures makes n changes wait to be counted in account's reports,
// as n expenses of 1.00 made now would (their figures items, put 25 to a
// call).
func backlogFigures(t *testing.T, st *store.Store, account string, n int) {
	t.Helper()
	now := time.Now().Unix()
	var puts []types.WriteRequest
	flush := func() {
		if len(puts) == 0 {
			return
		}
		in := &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{st.Table(): puts}}
		for len(in.RequestItems) > 0 {
			out, err := st.Client().BatchWriteItem(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			in.RequestItems = out.UnprocessedItems
		}
		puts = nil
	}
	for i := range n {
		puts = append(puts, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
			"PK":         &types.AttributeValueMemberS{Value: fmt.Sprintf("A#%s#REPORT#PEND%d", account, i%4)},
			"SK":         &types.AttributeValueMemberS{Value: fmt.Sprintf("PEND#evt_backlog%06d", i)},
			"type":       &types.AttributeValueMemberS{Value: store.FiguresType},
			"account_id": &types.AttributeValueMemberS{Value: account},
			"changes":    &types.AttributeValueMemberS{Value: fmt.Sprintf(`[{"at":%d,"expenses":100,"by_type":{"Fuel":100}}]`, now)},
		}}})
		if len(puts) == 25 {
			flush()
		}
	}
	flush()
}
