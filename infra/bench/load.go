package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// send serves one request through h with the bench's key.
func (b *bench) send(h http.Handler, method, target string, body any) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, target, rd)
	req.Header.Set("Authorization", "Bearer "+b.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// do serves one request through the devserver's handler (all routes).
func (b *bench) do(method, path string, body any) (int, map[string]any, error) {
	rec := b.send(b.all(), method, path, body)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		return rec.Code, nil, fmt.Errorf("%s %s: %s", method, path, rec.Body.String())
	}
	if rec.Code != 200 {
		return rec.Code, out, fmt.Errorf("%s %s: %d %s", method, path, rec.Code, rec.Body.String())
	}
	return rec.Code, out, nil
}

var (
	allOnce sync.Once
	allH    http.Handler
)

func (b *bench) all() http.Handler {
	allOnce.Do(func() { allH = b.srv.Handler(api.Routes) })
	return allH
}

// invoke serves one request through the Lambda function of the route, as API
// Gateway would deliver it: an HTTP API v2 event through httpadapter.
func (b *bench) invoke(function, method, rawPath, rawQuery string, body any) (events.APIGatewayV2HTTPResponse, error) {
	return b.invokeWith(function, method, rawPath, rawQuery, body, nil)
}

// invokeWith is invoke with further request headers.
func (b *bench) invokeWith(function, method, rawPath, rawQuery string, body any, headers map[string]string) (events.APIGatewayV2HTTPResponse, error) {
	h, err := app.FunctionHandler(b.srv, function)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RawPath: rawPath, RawQueryString: rawQuery,
		Headers: map[string]string{"authorization": "Bearer " + b.key},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			DomainName: "bench.execute-api.local", Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: rawPath},
		},
	}
	for k, v := range headers {
		ev.Headers[k] = v
	}
	for k, v := range headers {
		ev.Headers[k] = v
	}
	if body != nil {
		j, _ := json.Marshal(body)
		ev.Body = string(j)
		ev.Headers["content-type"] = "application/json"
	}
	res, err := adapters.get(function, h).ProxyWithContext(context.Background(), ev)
	if err == nil && res.StatusCode != 200 {
		err = fmt.Errorf("%s %s?%s: %d %s", method, rawPath, rawQuery, res.StatusCode, res.Body)
	}
	return res, err
}

// adapterCache builds each function's adapter once, as a warm Lambda would.
type adapterCache struct {
	mu sync.Mutex
	m  map[string]*httpadapter.HandlerAdapterV2
}

var adapters = adapterCache{m: map[string]*httpadapter.HandlerAdapterV2{}}

func (c *adapterCache) get(name string, h http.Handler) *httpadapter.HandlerAdapterV2 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.m[name]; ok {
		return a
	}
	a := httpadapter.NewV2(h)
	c.m[name] = a
	return a
}

// parallel runs fn(0..n-1) on 8 goroutines and returns the first error.
func parallel(n int, fn func(i int) error) error {
	var next atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || first.Load() != nil {
					return
				}
				if err := fn(i); err != nil {
					first.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	return nil
}

var (
	invoiceTypes = []string{"main", "pos", "order"}
	expenseTypes = []string{"Rent", "Fuel", "Salaries", "Transport", "Utilities"}
)

// load fills the account: 20 customers, 10 categories, then items, expenses
// and sales spread over the filters' values.
func (b *bench) load(sales, expenses, items int) error {
	if err := parallel(20, func(i int) error {
		_, _, err := b.do("POST", "/api/v1/customers/add", map[string]any{"name": fmt.Sprintf("Customer %d", i)})
		return err
	}); err != nil {
		return err
	}
	if err := parallel(10, func(i int) error {
		_, _, err := b.do("POST", "/api/v1/inventory/categories/add", map[string]any{"category_name": fmt.Sprintf("Category %d", i)})
		return err
	}); err != nil {
		return err
	}
	if err := parallel(items, func(i int) error {
		_, _, err := b.do("POST", "/api/v1/inventory/items/add", map[string]any{"item_code": fmt.Sprintf("ITEM-%05d", i),
			"item_name": fmt.Sprintf("Item %d", i), "category_id": i%10 + 1, "item_price": "12.50", "quantity": "1000000"})
		return err
	}); err != nil {
		return err
	}
	if err := parallel(expenses, func(i int) error {
		_, _, err := b.do("POST", "/api/v1/expenses/add", map[string]any{"expense_type": expenseTypes[i%len(expenseTypes)],
			"expense_amount": "40.00", "payment_method": "Cash", "created_by": "Bench"})
		return err
	}); err != nil {
		return err
	}
	// A delivered webhook for the redeliver-webhook request to queue again.
	now := time.Now().UTC()
	if _, err := b.store.CreateDelivery(b.ctx, business.Delivery{AccountID: b.acct.ID, TransactionID: "txn_bench", WebhookID: "msg_txn_bench",
		Payload: []byte(`{"amount":"1.00"}`), State: business.DeliveryDelivered, NextAt: now, CreatedAt: now}); err != nil {
		return err
	}
	return parallel(sales, func(i int) error {
		paid, pt := []string{"0", "10.00", "50.00"}[i%3], []string{"None", "Cash", "Mobile Money"}[i%3]
		body := map[string]any{
			"invoice_code": fmt.Sprint(100000 + i), "invoice_number": fmt.Sprint(100000 + i), "customer_id": i%20 + 1,
			"sub_total_amount": "50.00", "total_amount": "50.00", "amount_paid": paid, "payment_type": pt,
			"invoice_type": invoiceTypes[(i/3)%3], "due_date": fmt.Sprintf("2026-%02d-15", i%12+1),
			"items": []any{map[string]any{"item_name": "Goods", "unit_price": "25.00", "quantity": "2"}},
		}
		if paid != "0" {
			body["payment_date"] = fmt.Sprintf("2026-10-%02d", i%28+1)
		}
		_, _, err := b.do("POST", "/api/v1/sales/add", body)
		return err
	})
}

// lastCreatedAt returns the created_at of the newest record of a list.
func (b *bench) lastCreatedAt(path, key string) (string, error) {
	_, out, err := b.do("GET", path+"?limit=1", nil)
	if err != nil {
		return "", err
	}
	list, _ := out["data"].(map[string]any)[key].([]any)
	if len(list) == 0 {
		return "", fmt.Errorf("%s: empty", path)
	}
	return strings.TrimSpace(list[0].(map[string]any)["created_at"].(string)), nil
}
