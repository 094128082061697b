package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/dashboard"
	"bizdata/shared/store"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// The memory step's plans of the functions no other step calls as it
// needs them: settings, reports and keys, the clear of test data, an
// endpoint's test and redelivery, the dashboard's four functions, and the
// two consumers besides deliver-webhooks (apply-report-figures, fed by the
// stream, and drain-stream-failures, by the deliver-webhooks mapping's
// failure queue).

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

// gatewayEvent is the function's event of r; function's afterCall reads a
// 200 answer (a rotated key).
func (b *bench) gatewayEvent(function string, r gatewayRequest) fnEvent {
	event := func() (any, error) {
		ev := events.APIGatewayV2HTTPRequest{
			Version: "2.0", RawPath: r.path, RawQueryString: r.query, Headers: map[string]string{},
			RequestContext: events.APIGatewayV2HTTPRequestContext{
				DomainName: "bench.execute-api.local", Stage: "$default",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: r.method, Path: r.path, SourceIP: "127.0.0.1"},
			},
		}
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
	p := fnPlan{cold: b.gatewayEvent(function, cold), deadline: deadline}
	for _, r := range ordinary {
		p.sequence = append(p.sequence, asOrdinary(b.gatewayEvent(function, r)))
	}
	for _, r := range extreme {
		p.sequence = append(p.sequence, b.gatewayEvent(function, r))
	}
	return p
}

// memShop is an account of the memory step's own, for the functions whose
// requests would be refused on the loaded account or change it: a summary
// there would first apply the load's thousands of waiting figures items
// (past 100 it is EBUSY), and settings, keys, a clear of its test data and
// a dashboard owner are kept off it. It holds a few records of each kind,
// one sale of 100 lines (the largest page), a dashboard owner, an endpoint
// that sends to the step's receiver and a test key.
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

// shop makes the memory step's own account once; hook is the receiver's URL.
func (b *bench) shop(hook string) (*memShop, error) {
	memShopOnce.Do(func() { memShopOf, memShopErr = b.newMemShop(hook) })
	return memShopOf, memShopErr
}

func (b *bench) newMemShop(hook string) (*memShop, error) {
	a, _ := business.NewAccount("Memory Shop", fmt.Sprintf("MEMSHOP%d", time.Now().UnixNano()%1e6), "GHS", "")
	acct, key, err := b.store.CreateAccount(b.ctx, a)
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
	for i := range 3 {
		if _, err := s.do(s.key, "POST", "/api/v1/customers/add", map[string]any{"name": fmt.Sprintf("Customer %d", i)}); err != nil {
			return nil, err
		}
		if _, err := s.do(s.key, "POST", "/api/v1/expenses/add", map[string]any{"expense_type": "Fuel", "expense_amount": "9.00", "payment_method": "Cash", "created_by": "Memory"}); err != nil {
			return nil, err
		}
	}
	if _, err := s.do(s.key, "POST", "/api/v1/inventory/categories/add", map[string]any{"category_name": "Goods"}); err != nil {
		return nil, err
	}
	for i := range 3 {
		if _, err := s.do(s.key, "POST", "/api/v1/inventory/items/add", map[string]any{"item_name": fmt.Sprintf("Item %d", i), "category_id": 1, "item_price": "3.00", "quantity": "50"}); err != nil {
			return nil, err
		}
	}
	for i := range 6 { // unpaid, in part, in full
		if _, err := s.do(s.key, "POST", "/api/v1/sales/add", map[string]any{"customer_id": i%3 + 1, "sub_total_amount": "20.00", "total_amount": "20.00",
			"amount_paid": []string{"0", "5.00", "20.00"}[i%3], "payment_type": []string{"None", "Cash", "Cash"}[i%3], "invoice_type": "pos", "due_date": "2026-12-31"}); err != nil {
			return nil, err
		}
	}
	out, err := s.do(s.key, "POST", "/api/v1/sales/add", json.RawMessage(fillToLimits("add-sale", map[string]any{"customer_id": 1,
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
	out, err = s.do(s.key, "POST", "/api/v1/api-keys", map[string]any{"name": "Tests", "scopes": []string{"*"}, "mode": "test"})
	if err != nil {
		return nil, err
	}
	s.testKey, _ = out["api_key"].(map[string]any)["key"].(string)
	return s, nil
}

// do serves one request of the shop's with key and returns its data. A 503
// is retried after a second, a few times, under the same Idempotency-Key
// (DynamoDB Local, after the load, can be busy).
func (s *memShop) do(key, method, path string, body any) (map[string]any, error) {
	var j []byte
	if body != nil {
		j, _ = json.Marshal(body)
	}
	idem, _ := business.NewToken()
	var rec *httptest.ResponseRecorder
	for try := 0; try < 5; try++ {
		if try > 0 {
			time.Sleep(time.Second)
		}
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(j)
		}
		req := httptest.NewRequest(method, path, rd)
		req.Header.Set("Authorization", "Bearer "+key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if method != http.MethodGet {
			req.Header.Set("Idempotency-Key", idem)
		}
		rec = httptest.NewRecorder()
		s.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusServiceUnavailable {
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
	case "get-settings", "update-settings", "report-summary", "report-receivables", "report-inventory",
		"list-api-keys", "create-api-key", "revoke-api-key", "clear-test-data",
		"test-webhook-endpoint", "redeliver-endpoint-delivery",
		dashboard.FunctionAssets, dashboard.FunctionAuth, dashboard.FunctionPages, dashboard.FunctionActions:
	default:
		return p, false, nil
	}
	s, err := b.shop(load.url)
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
			out, err := s.do(s.key, "POST", "/api/v1/api-keys", map[string]any{"name": fmt.Sprintf("Revoked %d", i), "scopes": []string{"sales:read"}})
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
					_, err := s.do(s.testKey, "POST", "/api/v1/customers/add", map[string]any{"name": fmt.Sprintf("Test customer %d", i)})
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
	return b.dashboardPlan(name, s, deadline)
}

// dashboardPlan is the plan of one of the dashboard's functions, over the
// shop's owner: the assets; the sign-in page, then sign-ins (an argon2id
// hash each); the pages of a session (overview, lists, the 100-line sale);
// forms that add a customer. A 2 MiB form is refused before it is read.
func (b *bench) dashboardPlan(name string, s *memShop, deadline time.Duration) (fnPlan, bool, error) {
	page := func(path string, cookies func() []string) gatewayRequest {
		return gatewayRequest{method: "GET", path: path, cookies: cookies, want: 200}
	}
	form := func(path string, values url.Values, cookies func() []string, want int) gatewayRequest {
		return gatewayRequest{method: "POST", path: path, body: values.Encode(), form: true, cookies: cookies, want: want}
	}
	huge := func(r gatewayRequest, want int) gatewayRequest {
		r.body, r.want = "name="+strings.Repeat("x", 2<<20), want
		return r
	}
	switch name {
	case dashboard.FunctionAssets:
		files := []string{"app.css", "logo.svg"}
		var ordinary []gatewayRequest
		for i := range 4 {
			ordinary = append(ordinary, page("/dashboard/assets/"+files[i%2], nil))
		}
		return b.gatewayPlan(name, deadline, page("/dashboard/assets/app.css", nil), ordinary, huge(page("/dashboard/assets/app.css", nil), 200)), true, nil
	case dashboard.FunctionAuth:
		token, _ := business.NewToken()
		cookies := func() []string { return []string{"__Host-form=" + token} }
		signIn := form("/dashboard/sign-in", url.Values{"csrf": {token}, "email": {s.email}, "password": {s.password}, "next": {"/dashboard"}}, cookies, http.StatusSeeOther)
		var ordinary []gatewayRequest
		for range 4 {
			ordinary = append(ordinary, signIn)
		}
		return b.gatewayPlan(name, deadline, page("/dashboard/sign-in", cookies), ordinary, huge(signIn, http.StatusBadRequest)), true, nil
	}
	session, _, err := b.store.CreateSession(b.ctx, s.email)
	if err != nil {
		return fnPlan{}, true, err
	}
	cookies := func() []string { return []string{"__Host-session=" + session} }
	switch name {
	case dashboard.FunctionPages:
		var ordinary []gatewayRequest
		for _, path := range []string{"/dashboard/sales", "/dashboard/customers", "/dashboard/developers", "/dashboard"} {
			ordinary = append(ordinary, page(path, cookies))
		}
		return b.gatewayPlan(name, deadline, page("/dashboard", cookies), ordinary, page("/dashboard/sales/"+s.bigSale, cookies), huge(page("/dashboard", cookies), 200)), true, nil
	case dashboard.FunctionActions:
		add := func(i int) gatewayRequest {
			return form("/dashboard/customers", url.Values{"csrf": {business.CSRFToken(session)}, "name": {fmt.Sprintf("Dashboard customer %d", i)}}, cookies, http.StatusSeeOther)
		}
		var ordinary []gatewayRequest
		for i := range 4 {
			ordinary = append(ordinary, add(i+1))
		}
		return b.gatewayPlan(name, deadline, add(0), ordinary, huge(add(5), http.StatusBadRequest)), true, nil
	}
	return fnPlan{}, false, nil
}

// figuresBatch is an apply-report-figures event of n of the loaded
// account's waiting figures items, as the stream's inserts carry them,
// which it must apply without a failure.
func (b *bench) figuresBatch(n int) fnEvent {
	return fnEvent{
		event: func() (any, error) {
			items, err := b.waitingFigures(n)
			if err != nil {
				return nil, err
			}
			var ev events.DynamoDBEvent
			for i, it := range items {
				ev.Records = append(ev.Records, events.DynamoDBEventRecord{EventName: "INSERT", EventSource: "aws:dynamodb",
					Change: events.DynamoDBStreamRecord{SequenceNumber: fmt.Sprint(i + 1), Keys: streamImage(map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}),
						NewImage: streamImage(it), StreamViewType: "NEW_AND_OLD_IMAGES"}})
			}
			return ev, nil
		},
		check: func(answer []byte) error {
			var res events.DynamoDBEventResponse
			if err := json.Unmarshal(answer, &res); err != nil || len(res.BatchItemFailures) > 0 {
				return fmt.Errorf("figures batch answered %.300s", answer)
			}
			return nil
		},
	}
}

var (
	figuresMu      sync.Mutex
	figuresWaiting []map[string]types.AttributeValue
	figuresRead    bool
)

// waitingFigures hands out n of the loaded account's waiting figures items,
// read once, each once.
func (b *bench) waitingFigures(n int) ([]map[string]types.AttributeValue, error) {
	figuresMu.Lock()
	defer figuresMu.Unlock()
	if !figuresRead {
		items, err := b.store.WaitingFigures(b.ctx, b.acct.ID)
		if err != nil {
			return nil, err
		}
		figuresWaiting, figuresRead = items, true
	}
	if len(figuresWaiting) < n {
		return nil, fmt.Errorf("%d waiting figures items left, %d wanted", len(figuresWaiting), n)
	}
	out := figuresWaiting[:n]
	figuresWaiting = figuresWaiting[n:]
	return out, nil
}

// streamImage is an item as a stream record's image carries it, the
// inverse of webhook.FromStreamImage.
func streamImage(it map[string]types.AttributeValue) map[string]events.DynamoDBAttributeValue {
	img := map[string]events.DynamoDBAttributeValue{}
	for k, v := range it {
		if a, ok := streamValue(v); ok {
			img[k] = a
		}
	}
	return img
}

func streamValue(v types.AttributeValue) (events.DynamoDBAttributeValue, bool) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value), true
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value), true
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value), true
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value), true
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value), true
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value), true
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value), true
	case *types.AttributeValueMemberNULL:
		return events.NewNullAttribute(), true
	case *types.AttributeValueMemberL:
		var l []events.DynamoDBAttributeValue
		for _, e := range v.Value {
			if a, ok := streamValue(e); ok {
				l = append(l, a)
			}
		}
		return events.NewListAttribute(l), true
	case *types.AttributeValueMemberM:
		return events.NewMapAttribute(streamImage(v.Value)), true
	}
	return events.DynamoDBAttributeValue{}, false
}

// streamFailure is a drain-stream-failures event: the failure queue's
// message for a skipped batch of the table's stream, the records of n paid
// sales just made (their payments' and events' deliveries are recorded
// again, which finds them recorded or records them), which it must drain
// without a failure.
func (b *bench) streamFailure(sales int) fnEvent {
	return fnEvent{
		event: func() (any, error) {
			info, err := b.streamRange(sales)
			if err != nil {
				return nil, err
			}
			msg, _ := json.Marshal(map[string]any{
				"requestContext":     map[string]any{"condition": "RetryAttemptsExhausted", "approximateInvokeCount": 21},
				"timestamp":          time.Now().UTC().Format(time.RFC3339),
				"DDBStreamBatchInfo": info,
			})
			return events.SQSEvent{Records: []events.SQSMessage{{MessageId: fmt.Sprintf("msg-%d", time.Now().UnixNano()), Body: string(msg), EventSource: "aws:sqs"}}}, nil
		},
		check: func(answer []byte) error {
			var res events.SQSEventResponse
			if err := json.Unmarshal(answer, &res); err != nil || len(res.BatchItemFailures) > 0 {
				return fmt.Errorf("stream failure answered %.300s", answer)
			}
			return nil
		},
	}
}

// streamRange makes n paid sales and returns the range of the table's
// stream that holds their records, as a failure message names it: from the
// first record after the shards' ends as they were to the last one read.
func (b *bench) streamRange(n int) (app.StreamBatchInfo, error) {
	var info app.StreamBatchInfo
	streams, err := app.NewStreams(b.ctx, b.cfg.Endpoint)
	if err != nil {
		return info, err
	}
	desc, err := b.db.DescribeTable(b.ctx, &dynamodb.DescribeTableInput{TableName: aws.String(b.cfg.TableName)})
	if err != nil || desc.Table.LatestStreamArn == nil {
		return info, fmt.Errorf("the table's stream: %v", err)
	}
	arn := desc.Table.LatestStreamArn
	latest := map[string]*string{} // open shard: an iterator at its end
	var after *string
	for {
		stream, err := streams.DescribeStream(b.ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn, ExclusiveStartShardId: after})
		if err != nil {
			return info, err
		}
		for _, sh := range stream.StreamDescription.Shards {
			if sh.SequenceNumberRange != nil && sh.SequenceNumberRange.EndingSequenceNumber != nil {
				continue
			}
			it, err := streams.GetShardIterator(b.ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn, ShardId: sh.ShardId, ShardIteratorType: st.ShardIteratorTypeLatest})
			if err != nil {
				return info, err
			}
			latest[aws.ToString(sh.ShardId)] = it.ShardIterator
		}
		if after = stream.StreamDescription.LastEvaluatedShardId; after == nil {
			break
		}
	}
	if _, err := b.payments(n); err != nil {
		return info, err
	}
	for shard, next := range latest {
		var first, last string
		count := 0
		for empty := 0; next != nil && empty < 3; {
			page, err := streams.GetRecords(b.ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: next})
			if err != nil {
				return info, err
			}
			if len(page.Records) == 0 {
				empty++
			}
			for _, r := range page.Records {
				if first == "" {
					first = aws.ToString(r.Dynamodb.SequenceNumber)
				}
				last = aws.ToString(r.Dynamodb.SequenceNumber)
				count++
			}
			next = page.NextShardIterator
		}
		if count > 0 {
			return app.StreamBatchInfo{ShardID: shard, StartSequenceNumber: first, EndSequenceNumber: last, StreamArn: aws.ToString(arn), BatchSize: count,
				ApproximateArrivalOfFirstRecord: time.Now().UTC().Format(time.RFC3339), ApproximateArrivalOfLastRecord: time.Now().UTC().Format(time.RFC3339)}, nil
		}
	}
	return info, errors.New("no stream records of the sales just made")
}
