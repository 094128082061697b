package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/store"
)

// writeScaling compares sale adds per second with n clients all writing to
// ONE account against n clients spread over n accounts, through the
// devserver's HTTP handler on loopback, for 16 and 64 clients.
func (b *bench) writeScaling() error {
	srv := httptest.NewServer(b.srv.Handler(api.Routes))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
	const maxClients, window = 64, 5 * time.Second
	keys := make([]string, maxClients)
	for i := range keys {
		a, _ := business.NewAccount(fmt.Sprintf("Till shop %d", i), fmt.Sprintf("TILL%d", i), "GHS", "")
		_, key, err := b.store.CreateAccount(b.ctx, a)
		if err != nil {
			return err
		}
		keys[i] = key
		if err := post(client, srv.URL+"/api/v1/customers/add", key, map[string]any{"name": "Walk-in"}); err != nil {
			return err
		}
	}
	sale := map[string]any{"customer_id": 1, "sub_total_amount": "20.00", "total_amount": "20.00", "amount_paid": "5.00",
		"payment_type": "Cash", "invoice_type": "pos", "due_date": "2026-12-31"}
	// run has clients[i] post sales with keyOf(i) for the window; it returns
	// sales per second, the 503 answers and the p95 latency.
	run := func(clients int, keyOf func(int) string) (float64, int64, time.Duration, error) {
		var n, busy atomic.Int64
		var first atomic.Value
		var mu sync.Mutex
		var lat []time.Duration
		deadline := time.Now().Add(window)
		var wg sync.WaitGroup
		for i := 0; i < clients; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(deadline) {
					start := time.Now()
					err := post(client, srv.URL+"/api/v1/sales/add", keyOf(i), sale)
					if se, ok := err.(statusError); ok && se == 503 {
						busy.Add(1)
						continue
					} else if err != nil {
						first.CompareAndSwap(nil, err)
						return
					}
					mu.Lock()
					lat = append(lat, time.Since(start))
					mu.Unlock()
					n.Add(1)
				}
			}()
		}
		wg.Wait()
		if err, ok := first.Load().(error); ok {
			return 0, 0, 0, err
		}
		return float64(n.Load()) / window.Seconds(), busy.Load(), pct(lat, 0.95), nil
	}
	b.printf("## One busy account\n\nSale adds per second through the devserver's HTTP handler on loopback, each client posting sales back to back for %s: all clients on ONE account, then the same number of clients each on an account of its own. Ids come from an atomic counter drawn in parallel with the create's reads, so one account's creates do not take turns. Target: one ÷ spread at least 0.8, and no 503.\n\n| clients | one account (sales/s, 503s, p95) | spread over accounts (sales/s, 503s, p95) | one ÷ spread |\n|---|---|---|---|\n", window)
	for _, clients := range []int{16, 64} {
		one, oneBusy, oneP95, err := run(clients, func(int) string { return keys[0] })
		if err != nil {
			return err
		}
		spread, spreadBusy, spreadP95, err := run(clients, func(i int) string { return keys[i] })
		if err != nil {
			return err
		}
		b.printf("| %d | %.0f, %d, %s | %.0f, %d, %s | %.2f |\n", clients, one, oneBusy, oneP95.Round(time.Millisecond),
			spread, spreadBusy, spreadP95.Round(time.Millisecond), one/spread)
	}
	b.printf("\n")
	return nil
}

type statusError int

func (e statusError) Error() string { return fmt.Sprintf("status %d", int(e)) }

// post sends one JSON POST with key and returns a statusError for anything
// but 200.
func post(client *http.Client, url, key string, body any) error {
	j, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url, bytes.NewReader(j))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		return statusError(res.StatusCode)
	}
	return nil
}

// combinedFilters reports items read per item returned for the filter
// combinations merchants ask most, over the loaded 10,000 sales, and with
// limit=1 the cost of the first page relative to a plain one.
func (b *bench) combinedFilters() error {
	rows := []struct {
		name string
		f    store.SaleFilter
	}{
		{"customer_id=7&payment_status=paid (what a customer owes: settled)", store.SaleFilter{CustomerID: 7, PaymentStatus: "paid"}},
		{"customer_id=7&payment_status=partial (what a customer owes)", store.SaleFilter{CustomerID: 7, PaymentStatus: "partial"}},
		{"payment_status=partial&due_date=2026-03-31 (overdue)", store.SaleFilter{PaymentStatus: "partial", DueTo: "2026-03-31~"}},
		{"payment_status=draft&due_date=2026-03-31 (overdue)", store.SaleFilter{PaymentStatus: "draft", DueTo: "2026-03-31~"}},
		{"payment_status=partial&due_date=2001-01-01 (nothing overdue)", store.SaleFilter{PaymentStatus: "partial", DueTo: "2001-01-01~"}},
		{"customer_id=7&created_at=2020-01-01 (a customer's sales in a period)", store.SaleFilter{CustomerID: 7, CreatedFrom: "2020-01-01"}},
		{"payment_status=paid&invoice_type=pos (filtered within a key)", store.SaleFilter{PaymentStatus: "paid", InvoiceType: "pos"}},
	}
	b.printf("## Combined filters\n\nSales lists with two filters over the 10,000 loaded sales: up to 4 pages of 50 (items read per item returned; target at most 1.5 for the combinations with keys of their own), and a first page with limit=1 against a plain limit=1 page (DynamoDB items read; at most %d per request, the bound on a request's work).\n\n| filters | items read | returned | read per returned | limit=1: items read (plain page: 2) |\n|---|---|---|---|---|\n", store.MaxEvaluated)
	for _, r := range rows {
		read, returned, cursor := 0, 0, ""
		for p := 0; p < 4; p++ {
			page, err := b.store.ListSales(b.ctx, b.acct.ID, r.f, 50, cursor)
			if err != nil {
				return err
			}
			read, returned = read+page.Scanned, returned+len(page.Items)
			if cursor = page.Next; cursor == "" {
				break
			}
		}
		first, err := b.store.ListSales(b.ctx, b.acct.ID, r.f, 1, "")
		if err != nil {
			return err
		}
		ratio := "n/a (nothing matched)"
		if returned > 0 {
			ratio = fmt.Sprintf("%.3f", float64(read)/float64(returned))
		}
		b.printf("| `%s` | %d | %d | %s | %d |\n", r.name, read, returned, ratio, first.Scanned)
	}
	b.printf("\n")
	return nil
}
