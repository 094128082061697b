package main

// The handler-overhead and throughput steps: the API's time against the
// DynamoDB calls it makes, made bare.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"bizdata/shared/api"
)

// handlerOverhead compares each read endpoint's latency through the Lambda adapter
// with the latency of the very DynamoDB calls it made, made bare, interleaved.
func (b *bench) handlerOverhead() error {
	b.printf("## Handler overhead\n\nEach read endpoint through its Lambda function (event -> httpadapter -> handler -> response) versus the same DynamoDB calls replayed bare on the same client, interleaved, 300 runs each after 30 warm-ups; medians. Target: at most 1.15.\n\n| function | request | median via Lambda adapter | median bare DynamoDB | ratio |\n|---|---|---|---|---|\n")
	reads := []call{
		{"get-sale", "GET", "/api/v1/sales/100042", "", nil},
		{"get-customer", "GET", "/api/v1/customers/3", "", nil},
		{"get-expense", "GET", "/api/v1/expenses/7", "", nil},
		{"get-item", "GET", "/api/v1/inventory/items/ITEM-00007", "", nil},
		{"list-sales", "GET", "/api/v1/sales", "limit=50", nil},
		{"list-sales", "GET", "/api/v1/sales", "payment_status=paid&created_at=2020-01-01%2000:00:00", nil},
		{"list-expenses", "GET", "/api/v1/expenses", "expense_type=Rent", nil},
		{"list-items", "GET", "/api/v1/inventory/items", "category_id=3", nil},
		{"list-categories", "GET", "/api/v1/inventory/categories", "", nil},
		{"list-customers", "GET", "/api/v1/customers", "", nil},
	}
	for _, c := range reads {
		var viaAdapter, bare []time.Duration
		for i := 0; i < 330; i++ {
			inputs, d1, err := b.captureCalls(func() error { return b.invokeCall(c, i) })
			if err != nil {
				return err
			}
			start := time.Now()
			if err := b.replay(inputs); err != nil {
				return err
			}
			d2 := time.Since(start)
			if i >= 30 {
				viaAdapter, bare = append(viaAdapter, d1), append(bare, d2)
			}
		}
		m1, m2 := median(viaAdapter), median(bare)
		req := c.path
		if c.query != "" {
			req += "?" + c.query
		}
		b.printf("| %s | `%s` | %s | %s | %.3f |\n", c.function, req, m1.Round(time.Microsecond), m2.Round(time.Microsecond), float64(m1)/float64(m2))
	}
	b.printf("\n")
	return nil
}

// throughput compares get-sale requests per second through the devserver's
// HTTP handler, 32 clients, with bare Query calls per second.
func (b *bench) throughput() error {
	srv := httptest.NewServer(b.srv.Handler(api.Routes))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	const clients, window = 32, 5 * time.Second
	// perSecond is how many times a second clients goroutines do fn, back
	// to back, for the window.
	perSecond := func(fn func() error) (float64, error) {
		var n atomic.Int64
		err := untilDeadline(clients, time.Now().Add(window), func(int) error {
			if err := fn(); err != nil {
				return err
			}
			n.Add(1)
			return nil
		})
		if err != nil {
			return 0, err
		}
		return float64(n.Load()) / window.Seconds(), nil
	}
	inputs, _, err := b.captureCalls(func() error { return b.invokeCall(call{"get-sale", "GET", "/api/v1/sales/100042", "", nil}, 0) })
	if err != nil {
		return err
	}
	if len(inputs) != 1 {
		return fmt.Errorf("get-sale made %d DynamoDB calls, want 1", len(inputs))
	}
	bareBefore, err := perSecond(func() error { return b.replay(inputs) })
	if err != nil {
		return err
	}
	viaHTTP, err := perSecond(func() error { return sendOverHTTP(client, "GET", srv.URL+"/api/v1/sales/100042", b.key, nil) })
	if err != nil {
		return err
	}
	bareAfter, err := perSecond(func() error { return b.replay(inputs) })
	if err != nil {
		return err
	}
	bare := (bareBefore + bareAfter) / 2
	b.printf("## Throughput\n\n`GET /api/v1/sales/{invoice_code}` through the devserver's HTTP handler on loopback, %d concurrent clients for %s, against the same DynamoDB Query made bare by %d goroutines for %s before and after it (their mean is the baseline).\n\n| path | requests per second | ratio to bare |\n|---|---|---|\n", clients, window, clients, window)
	b.printf("| bare DynamoDB Query (before, after) | %.0f, %.0f | 1.000 |\n| get-sale via HTTP | %.0f | %.3f |\n\n", bareBefore, bareAfter, viaHTTP, viaHTTP/bare)
	return nil
}
