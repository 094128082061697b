package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"bizdata/infra/streampoll"
	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/webhook"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// dispatchPoll is how often the local dispatcher looks for due deliveries,
// as in the devserver.
const dispatchPoll = 200 * time.Millisecond

// hookEnv is the webhook pipeline as the devserver runs it, on a table of
// its own: the stream poller feeding deliver-webhooks, and the dispatcher.
type hookEnv struct {
	b   *bench
	ctx context.Context
	st  interface {
		CreateAccount(context.Context, business.Account) (business.Account, string, error)
		SetWebhook(context.Context, string, business.Webhook) error
	}
	h http.Handler
}

func (b *bench) hookEnv(ctx context.Context, suffix string) (*hookEnv, func(), error) {
	cfg := b.cfg
	cfg.TableName += suffix
	st, err := app.NewStore(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := st.EnsureTable(ctx); err != nil {
		return nil, nil, err
	}
	svc := webhook.NewService(st, webhook.NewSender(true), business.DefaultRetrySchedule, b.quiet)
	streams, err := app.NewStreams(ctx, cfg.Endpoint)
	if err != nil {
		return nil, nil, err
	}
	go streampoll.Poll(ctx, st.Client(), streams, cfg.TableName, svc.HandleStream, b.quiet)
	go svc.Dispatch(ctx, time.Now().Add(time.Hour), dispatchPoll)
	cleanup := func() {
		_, _ = st.Client().DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &cfg.TableName})
	}
	return &hookEnv{b: b, ctx: ctx, st: st, h: api.NewServer(st, b.quiet, time.Minute).Handler(api.Routes)}, cleanup, nil
}

// shop creates an account with a customer whose webhook goes to url.
func (e *hookEnv) shop(code, url, secret string) (string, error) {
	a, _ := business.NewAccount("Shop "+code, code, "GHS", "")
	a, key, err := e.st.CreateAccount(e.ctx, a)
	if err != nil {
		return "", err
	}
	if err := e.st.SetWebhook(e.ctx, a.ID, business.Webhook{CallbackURL: url, CallbackSecret: secret}); err != nil {
		return "", err
	}
	_, err = e.post(key, "/api/v1/customers/add", `{"name":"Ama"}`)
	return key, err
}

// pay adds a paid sale and returns its payment's transaction id.
func (e *hookEnv) pay(key string) (string, error) {
	body, err := e.post(key, "/api/v1/sales/add", `{"customer_id":1,"sub_total_amount":"50.00","total_amount":"50.00","amount_paid":"50.00","payment_type":"Cash","invoice_type":"pos","due_date":"2026-12-31"}`)
	if err != nil {
		return "", err
	}
	var out struct {
		Data struct {
			Payments []struct {
				TransactionID string `json:"transaction_id"`
			} `json:"sales-payment"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil || len(out.Data.Payments) != 1 {
		return "", fmt.Errorf("sale without its payment: %s", body)
	}
	return out.Data.Payments[0].TransactionID, nil
}

func (e *hookEnv) post(key, path, body string) ([]byte, error) {
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		return nil, fmt.Errorf("%s: %d %s", path, rec.Code, rec.Body.String())
	}
	return rec.Body.Bytes(), nil
}

// arrivals is a receiver's log of when each webhook-id arrived.
type arrivals struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (a *arrivals) record(r *http.Request) {
	a.mu.Lock()
	if a.at == nil {
		a.at = map[string]time.Time{}
	}
	if _, seen := a.at[r.Header.Get(webhook.HeaderID)]; !seen {
		a.at[r.Header.Get(webhook.HeaderID)] = time.Now()
	}
	a.mu.Unlock()
}

func (a *arrivals) get(tx string) (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.at["msg_"+tx]
	return t, ok
}

func (a *arrivals) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.at)
}

// webhookLatency measures payment commit to receipt at a verifying receiver.
func (b *bench) webhookLatency() error {
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	e, cleanup, err := b.hookEnv(ctx, "wh")
	if err != nil {
		return err
	}
	defer cleanup()
	var got arrivals
	rc := httptest.NewServer(webhook.Verifier{Secret: "bench-secret-0123"}.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.record(r) })))
	defer rc.Close()
	key, err := e.shop("HOOK1", rc.URL, "bench-secret-0123")
	if err != nil {
		return err
	}
	var lat []time.Duration
	for i := 0; i < 50; i++ {
		tx, err := e.pay(key)
		if err != nil {
			return err
		}
		committed := time.Now()
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(2 * time.Millisecond) {
			if at, ok := got.get(tx); ok {
				lat = append(lat, at.Sub(committed))
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("payment %d not received within 15s", i)
			}
		}
	}
	b.printf("## Webhook latency\n\nPayment committed (add-sale response) to receipt at a verifying receiver on loopback, through the devserver's stream poller (50 ms poll), the deliver-webhooks handler (records the delivery) and the dispatcher (%s poll), 50 payments, measured before the load (see the note in infra/bench): median %s, p95 %s.\n\n",
		dispatchPoll, median(lat).Round(time.Millisecond/10), pct(lat, 0.95).Round(time.Millisecond/10))
	return nil
}

// webhookScale measures what one slow merchant does to the others, and
// whether delivery keeps pace with payments at the devserver's full rate.
func (b *bench) webhookScale() error {
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	e, cleanup, err := b.hookEnv(ctx, "scale")
	if err != nil {
		return err
	}
	defer cleanup()

	// 1. A merchant whose receiver takes 15 s to answer, 24 payments first;
	// then 10 payments of a healthy merchant, one after another.
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(15 * time.Second):
		}
	}))
	defer slow.Close()
	defer close(release)
	var healthy arrivals
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { healthy.record(r) }))
	defer fast.Close()
	slowKey, err := e.shop("SLOW1", slow.URL, "")
	if err != nil {
		return err
	}
	fastKey, err := e.shop("FAST1", fast.URL, "")
	if err != nil {
		return err
	}
	for i := 0; i < 24; i++ {
		if _, err := e.pay(slowKey); err != nil {
			return err
		}
	}
	commits := map[string]time.Time{}
	for i := 0; i < 10; i++ {
		tx, err := e.pay(fastKey)
		if err != nil {
			return err
		}
		commits[tx] = time.Now()
	}
	var delays []time.Duration
	over := 0
	for deadline := time.Now().Add(40 * time.Second); healthy.count() < 10 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	for tx, c := range commits {
		at, ok := healthy.get(tx)
		if !ok {
			return fmt.Errorf("healthy merchant's payment %s not delivered within 40s", tx)
		}
		d := at.Sub(c)
		delays = append(delays, d)
		if d > 2*time.Second {
			over++
		}
	}
	b.printf("## Webhooks at scale\n\nThe devserver's pipeline (stream poller, deliver-webhooks recording, dispatcher with %d attempts in flight and %d per merchant) on a table of its own, with receivers on loopback, measured before the load.\n\n", webhook.MaxInFlight, webhook.MaxInFlightAccount)
	b.printf("| figure | result | goal |\n|---|---|---|\n")
	b.printf("| a healthy merchant's webhook delay (payment committed to receipt) while another merchant's receiver takes 15 s to answer, 10 payments after 24 of the slow one's | median %s, max %s; %d of 10 over 2 s | at most 2 s, every one |\n",
		median(delays).Round(time.Millisecond), pct(delays, 1).Round(time.Millisecond), over)

	// 2. Eight merchants whose receivers answer in 300 ms; payments at full
	// rate from 8 clients for 8 s.
	var got arrivals
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		got.record(r)
	}))
	defer rc.Close()
	keys := make([]string, 8)
	for i := range keys {
		if keys[i], err = e.shop(fmt.Sprintf("RATE%d", i), rc.URL, ""); err != nil {
			return err
		}
	}
	const window = 8 * time.Second
	var paid atomic.Int64
	var first atomic.Value
	start := time.Now()
	var wg sync.WaitGroup
	for _, key := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(start) < window {
				if _, err := e.pay(key); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
				paid.Add(1)
			}
		}()
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	lastPayment := time.Now()
	payRate := float64(paid.Load()) / lastPayment.Sub(start).Seconds()
	for time.Since(lastPayment) < 10*time.Second && got.count() < int(paid.Load()) {
		time.Sleep(20 * time.Millisecond)
	}
	got.mu.Lock()
	lastDelivery := start
	for _, at := range got.at {
		if at.After(lastDelivery) {
			lastDelivery = at
		}
	}
	delivered := len(got.at)
	got.mu.Unlock()
	deliverRate := float64(delivered) / lastDelivery.Sub(start).Seconds()
	b.printf("| delivery rate ÷ payment rate, 8 merchants whose receivers answer in 300 ms, payments at full rate from 8 clients for %s | %.0f/s ÷ %.0f/s = %.2f; %d of %d not delivered 10 s after the last payment | at least 0.9; all delivered within 10 s |\n\n",
		window, deliverRate, payRate, deliverRate/payRate, int(paid.Load())-delivered, paid.Load())
	return nil
}
