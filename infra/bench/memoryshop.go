package main

// The memory step's plans of the functions no other step calls as it
// needs them: settings, reports and keys, the clear of test data, an
// endpoint's test and redelivery, and the dashboard's four functions.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/dashboard"
	"bizdata/shared/store"

	"github.com/aws/aws-lambda-go/events"
)

// gatewayRequest is one API Gateway HTTP API (v2) request to a function and
// the status its answer must carry: with a bearer key, or the dashboard's
// cookies and a form.
type gatewayRequest struct {
	method, path, query, body string
	key                       func() string   // the bearer key; nil for none
	cookies                   func() []string // the dashboard's cookies
	form                      bool            // body is a form, not JSON
	want                      int
}

// gatewayFunctionEvent is the function's event of r; function's afterCall reads a
// 200 answer (a rotated key).
func (b *bench) gatewayFunctionEvent(function string, r gatewayRequest) fnEvent {
	event := func() (any, error) {
		ev := gatewayEvent(r.method, r.path, r.query)
		ev.RequestContext.HTTP.SourceIP = "127.0.0.1"
		if r.key != nil {
			ev.Headers["authorization"] = "Bearer " + r.key()
		}
		if r.cookies != nil {
			ev.Cookies = r.cookies()
		}
		if r.body != "" {
			ev.Body = r.body
			ev.Headers["content-type"] = "application/json"
			if r.form {
				ev.Headers["content-type"] = "application/x-www-form-urlencoded"
			}
		}
		return ev, nil
	}
	check := func(answer []byte) error {
		var res events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(answer, &res); err != nil || res.StatusCode != r.want {
			return fmt.Errorf("%s %s?%s (body %d bytes): want %d, got %.300s", r.method, r.path, r.query, len(r.body), r.want, answer)
		}
		if after := afterCall[function]; after != nil && res.StatusCode == 200 {
			after(b, res.Body)
		}
		return nil
	}
	return fnEvent{event: event, check: check}
}

// gatewayPlan is the plan of an API Gateway function: cold, the ordinary
// requests (the latency and cost model's), then the extreme ones (there
// for the peak RSS).
func (b *bench) gatewayPlan(function string, deadline time.Duration, cold gatewayRequest, ordinary []gatewayRequest, extreme ...gatewayRequest) fnPlan {
	p := fnPlan{cold: b.gatewayFunctionEvent(function, cold), deadline: deadline}
	for _, r := range ordinary {
		p.sequence = append(p.sequence, asOrdinary(b.gatewayFunctionEvent(function, r)))
	}
	for _, r := range extreme {
		p.sequence = append(p.sequence, b.gatewayFunctionEvent(function, r))
	}
	return p
}

// memShop is an account of the memory step's own, for the requests the
// loaded account would refuse (a summary would first apply its thousands of
// waiting figures) or that would change it: a few records of each kind, a
// sale of 100 lines, a dashboard owner, an endpoint that sends to the step's
// receiver and a test key.
type memShop struct {
	acct, key, testKey string
	email, password    string
	bigSale            string // invoice code of the 100-line sale
	endpoint           string // sends to the step's receiver
	h                  http.Handler
}

var (
	memShopOnce sync.Once
	memShopOf   *memShop
	memShopErr  error
)

// memoryShop makes the memory step's own account once; hook is the receiver's URL.
func (b *bench) memoryShop(hook string) (*memShop, error) {
	memShopOnce.Do(func() { memShopOf, memShopErr = b.newMemShop(hook) })
	return memShopOf, memShopErr
}

func (b *bench) newMemShop(hook string) (*memShop, error) {
	acct, key, err := createAccount(b.ctx, b.store, "Memory Shop", fmt.Sprintf("MEMSHOP%d", time.Now().UnixNano()%1e6))
	if err != nil {
		return nil, err
	}
	// A handler whose key cache forgets at once: a clear gives the test
	// key a new twin, which a cached key would not know.
	s := &memShop{acct: acct.ID, key: key, email: fmt.Sprintf("owner-%s@memory.example.com", strings.ToLower(acct.ID)),
		password: "memory-step-password", h: api.NewServer(b.store, b.quiet, time.Nanosecond).Handler(api.Routes)}
	if err := b.store.CreateOwner(b.ctx, acct.ID, business.Owner{Email: s.email, PasswordHash: business.HashPassword(s.password)}); err != nil {
		return nil, err
	}
	err = addSmallShop(func(path string, body any) error {
		_, err := s.request(s.key, "POST", path, body)
		return err
	}, func(i int) map[string]any {
		return map[string]any{"item_name": fmt.Sprintf("Item %d", i), "category_id": 1, "item_price": "3.00", "quantity": "50"}
	}, "Memory", "2026-12-31")
	if err != nil {
		return nil, err
	}
	out, err := s.request(s.key, "POST", "/api/v1/sales/add", json.RawMessage(fillToLimits("add-sale", map[string]any{"customer_id": 1,
		"amount_paid": "0", "payment_type": "None", "invoice_type": "pos", "due_date": "2026-12-31"})))
	if err != nil {
		return nil, err
	}
	s.bigSale = fmt.Sprint(out["sales"].(map[string]any)["invoice_code"])
	e, err := b.store.CreateEndpoint(b.ctx, acct.ID, business.Endpoint{URL: hook, EnabledEvents: []string{"*"}, Description: "memory step"}, business.NewEndpointSecret())
	if err != nil {
		return nil, err
	}
	s.endpoint = e.ID
	out, err = s.request(s.key, "POST", "/api/v1/api-keys", map[string]any{"name": "Tests", "scopes": []string{"*"}, "mode": "test"})
	if err != nil {
		return nil, err
	}
	s.testKey, _ = out["api_key"].(map[string]any)["key"].(string)
	return s, nil
}

// request serves one request of the shop's with key and returns its data.
// A 503 is retried after a second, a few times, under the same
// Idempotency-Key (DynamoDB Local, after the load, can be busy).
func (s *memShop) request(key, method, path string, body any) (map[string]any, error) {
	idem, _ := business.NewToken()
	var rec *httptest.ResponseRecorder
	for try := 0; try < 5; try++ {
		if try > 0 {
			time.Sleep(time.Second)
		}
		req := apiRequest(method, path, key, jsonBody(body))
		if method != http.MethodGet {
			req.Header.Set("Idempotency-Key", idem)
		}
		if rec = serveRequest(s.h, req); rec.Code != http.StatusServiceUnavailable {
			break
		}
	}
	var out struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %d %.300s", method, path, rec.Code, rec.Body.String())
	}
	return out.Data, nil
}

// memoryOwnPlan is the plan of a function this file covers; ok is false for
// any other.
func (b *bench) memoryOwnPlan(name string, load *dispatchLoad) (p fnPlan, ok bool, err error) {
	switch name {
	case "apply-report-figures":
		// Batches of the loaded account's waiting figures items (a Query
		// of their partitions stands in for the stream's images).
		p = fnPlan{cold: b.figuresBatch(1), deadline: time.Minute}
		for range 4 {
			p.sequence = append(p.sequence, asOrdinary(b.figuresBatch(25)))
		}
		p.sequence = append(p.sequence, b.figuresBatch(1000)) // the template's BatchSize
		return p, true, nil
	case "drain-stream-failures":
		p = fnPlan{cold: b.streamFailure(1), deadline: time.Minute}
		for range 4 {
			p.sequence = append(p.sequence, asOrdinary(b.streamFailure(5)))
		}
		p.sequence = append(p.sequence, b.streamFailure(25))
		return p, true, nil
	case "send-notices":
		p, err = b.noticesPlan()
		return p, true, err
	case "get-settings", "update-settings", "report-summary", "report-receivables", "report-inventory",
		"list-api-keys", "create-api-key", "revoke-api-key", "clear-test-data",
		"test-webhook-endpoint", "redeliver-endpoint-delivery",
		dashboard.FunctionAssets, dashboard.FunctionAuth, dashboard.FunctionPages, dashboard.FunctionActions,
		"create-invoice-link", "revoke-invoice-link", "get-sale-pdf", "invoice-page", "invoice-pdf":
	default:
		return p, false, nil
	}
	s, err := b.memoryShop(load.url)
	if err != nil {
		return p, true, fmt.Errorf("the memory step's shop: %w", err)
	}
	shopKey, loadedKey := func() string { return s.key }, func() string { return b.key }
	req := func(method, path, query string, body any, want int) gatewayRequest {
		r := gatewayRequest{method: method, path: path, query: query, key: shopKey, want: want}
		if body != nil {
			j, _ := json.Marshal(body)
			r.body = string(j)
		}
		return r
	}
	// times is n requests, the ith from at(i).
	times := func(n int, at func(i int) gatewayRequest) []gatewayRequest {
		var rs []gatewayRequest
		for i := range n {
			rs = append(rs, at(i))
		}
		return rs
	}
	// tooLarge is r with a 2 MiB body: 413 where the route reads one.
	tooLarge := func(r gatewayRequest, want int) gatewayRequest {
		r.body, r.form, r.want = overLimit(), false, want
		return r
	}
	const deadline = 10 * time.Second // the template's Timeout
	switch name {
	case "get-settings", "list-api-keys":
		path := map[string]string{"get-settings": "/api/v1/user/settings", "list-api-keys": "/api/v1/api-keys"}[name]
		r := req("GET", path, "", nil, 200)
		return b.gatewayPlan(name, deadline, r, times(4, func(int) gatewayRequest { return r }), tooLarge(r, 200)), true, nil
	case "update-settings": // a change made while another waits to take effect follows it
		zone := func(i int) gatewayRequest {
			return req("PUT", "/api/v1/user/settings", "", map[string]any{"timezone": []string{"Africa/Nairobi", "Africa/Accra"}[i%2]}, 200)
		}
		largest := req("PUT", "/api/v1/user/settings", "", map[string]any{"business_name": strings.Repeat("é", 100), "timezone": "Africa/Accra"}, 200)
		return b.gatewayPlan(name, deadline, zone(0), times(4, func(i int) gatewayRequest { return zone(i + 1) }), largest, tooLarge(largest, 413)), true, nil
	case "report-summary": // the first applies the shop's figures
		queries := []string{"", "group_by=day", "group_by=week", "", "group_by=day"}
		at := func(i int) gatewayRequest { return req("GET", "/api/v1/reports/summary", queries[i], nil, 200) }
		return b.gatewayPlan(name, deadline, at(0), times(4, func(i int) gatewayRequest { return at(i + 1) }), tooLarge(at(0), 200)), true, nil
	case "report-receivables", "report-inventory":
		// Ordinary over the shop's few records; the largest over the
		// loaded account's (its open sales, its items).
		r := req("GET", "/api/v1/reports/"+strings.TrimPrefix(name, "report-"), "", nil, 200)
		loaded := r
		loaded.key = loadedKey
		return b.gatewayPlan(name, deadline, r, times(4, func(int) gatewayRequest { return r }), loaded, tooLarge(r, 200)), true, nil
	case "create-api-key":
		at := func(i int) gatewayRequest {
			return req("POST", "/api/v1/api-keys", "", map[string]any{"name": fmt.Sprintf("Till %d", i), "scopes": []string{"sales:write", "inventory:read"}}, 200)
		}
		largest := req("POST", "/api/v1/api-keys", "", map[string]any{"name": strings.Repeat("é", 100), "scopes": business.Scopes}, 200)
		return b.gatewayPlan(name, deadline, at(0), times(4, func(i int) gatewayRequest { return at(i + 1) }), largest, tooLarge(largest, 413)), true, nil
	case "revoke-api-key": // each of a key made for it
		ids := make([]string, 6)
		for i := range ids {
			out, err := s.request(s.key, "POST", "/api/v1/api-keys", map[string]any{"name": fmt.Sprintf("Revoked %d", i), "scopes": []string{"sales:read"}})
			if err != nil {
				return p, true, err
			}
			ids[i], _ = out["api_key"].(map[string]any)["id"].(string)
		}
		at := func(i int) gatewayRequest { return req("POST", "/api/v1/api-keys/"+ids[i]+"/revoke", "", nil, 200) }
		return b.gatewayPlan(name, deadline, at(0), times(4, func(i int) gatewayRequest { return at(i + 1) }), tooLarge(at(5), 413)), true, nil
	case "clear-test-data":
		// Each clear finds a test twin with records: one customer, and for
		// the largest 200 customers (a tenth of a clear's budget).
		clear := func(records int) gatewayRequest {
			r := req("POST", "/api/v1/test-data/clear", "", nil, 200)
			r.key = func() string {
				_ = parallel(records, func(i int) error {
					_, err := s.request(s.testKey, "POST", "/api/v1/customers/add", map[string]any{"name": fmt.Sprintf("Test customer %d", i)})
					return err
				})
				return s.testKey
			}
			return r
		}
		return b.gatewayPlan(name, deadline, clear(1), times(4, func(int) gatewayRequest { return clear(1) }), clear(200), tooLarge(clear(0), 413)), true, nil
	case "test-webhook-endpoint": // an endpoint that sends to the step's receiver; 5 a minute
		r := req("POST", "/api/v1/webhook-endpoints/"+s.endpoint+"/test", "", nil, 200)
		return b.gatewayPlan(name, 15*time.Second, r, times(4, func(int) gatewayRequest { return r }), tooLarge(r, 413)), true, nil
	case "redeliver-endpoint-delivery": // each of a delivered event of its own once: a queued one is 409
		ids := business.NewEventIDs(time.Now())
		var paths []string
		now := time.Now().UTC()
		for range memRuns {
			ev := ids.Next()
			if _, err := b.store.CreateDelivery(b.ctx, business.Delivery{AccountID: store.EndpointQueue(s.acct, s.endpoint), TransactionID: ev, WebhookID: ev,
				Payload: []byte(`{"type":"sale.created"}`), State: business.DeliveryDelivered, NextAt: now, CreatedAt: now}); err != nil {
				return p, true, err
			}
			paths = append(paths, "/api/v1/webhook-endpoints/"+s.endpoint+"/deliveries/"+ev+"/redeliver")
		}
		at := func(i int) gatewayRequest { return req("POST", paths[i], "", nil, 200) }
		return b.gatewayPlan(name, deadline, at(0), times(4, func(i int) gatewayRequest { return at(i + 1) }), tooLarge(at(6), 413)), true, nil
	}
	if p, ok, err := b.invoicePlan(name, s, deadline); ok || err != nil {
		return p, ok, err
	}
	return b.dashboardPlan(name, s, deadline)
}
