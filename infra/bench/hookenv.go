package main

// The webhook pipeline as the devserver runs it, on a table of its own,
// and what the webhook steps make and receive through it.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"bizdata/infra/streampoll"
	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/events"
)

// dispatchPoll is how often the local dispatcher looks for due deliveries,
// as in the devserver.
const dispatchPoll = 200 * time.Millisecond

// hookEnv is the webhook pipeline as the devserver runs it, on a table of
// its own: the stream poller feeding deliver-webhooks, and the dispatcher.
type hookEnv struct {
	b   *bench
	ctx context.Context
	st  *store.Store
	h   http.Handler
}

func (b *bench) hookEnv(ctx context.Context, suffix string) (*hookEnv, func(), error) {
	return b.hookEnvWith(ctx, suffix, 1, nil)
}

// hookEnvWith is hookEnv with n pipelines on the one table, as n devservers
// (or overlapping retry-webhooks runs) would be, whose stream batches go
// through watch (when not nil) before the deliver-webhooks handler. The
// table has a DynamoDB Local of its own (see ownTable), as each table has a
// stream of its own on AWS, so each row measures the pipeline, not what
// earlier rows left in the stream.
func (b *bench) hookEnvWith(ctx context.Context, suffix string, n int, watch func(events.DynamoDBEvent)) (*hookEnv, func(), error) {
	st, cfg, stop, err := b.ownTable(ctx, suffix)
	if err != nil {
		return nil, nil, err
	}
	streams, err := app.NewStreams(ctx, cfg.Endpoint)
	if err != nil {
		stop()
		return nil, nil, err
	}
	// The pipelines end before their DynamoDB Local does.
	ctx, cancel := context.WithCancel(ctx)
	cleanup := func() {
		cancel()
		stop()
	}
	for i := 0; i < n; i++ {
		svc := webhook.NewService(st, webhook.NewSender(true), business.DefaultRetrySchedule, b.quiet)
		handle := streampoll.Handler(svc.HandleStream)
		if watch != nil {
			handle = func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
				watch(ev)
				return svc.HandleStream(ctx, ev)
			}
		}
		go streampoll.PollMapping(ctx, st.Client(), streams, cfg.TableName, streampoll.DeliverWebhooks, webhook.Streamed, handle, b.quiet)
		go svc.Dispatch(ctx, time.Now().Add(time.Hour), dispatchPoll)
	}
	return &hookEnv{b: b, ctx: ctx, st: st, h: api.NewServer(st, b.quiet, time.Minute).Handler(api.Routes)}, cleanup, nil
}

// shopWithWebhook creates an account with a customer whose webhook goes to url.
func (e *hookEnv) shopWithWebhook(code, url, secret string) (string, error) {
	_, key, err := e.accountWithWebhook(code, url, secret)
	return key, err
}

// accountWithWebhook is shopWithWebhook, returning the account's id too.
func (e *hookEnv) accountWithWebhook(code, url, secret string) (string, string, error) {
	a, key, err := createAccount(e.ctx, e.st, "Shop "+code, code)
	if err != nil {
		return "", "", err
	}
	if err := e.st.SetWebhook(e.ctx, a.ID, business.Webhook{CallbackURL: url, CallbackSecret: secret}); err != nil {
		return "", "", err
	}
	_, err = e.post(key, "/api/v1/customers/add", `{"name":"Ama"}`)
	return a.ID, key, err
}

// neighbour creates accounts until one shares account's shard of the due
// index, and returns its key.
func (e *hookEnv) neighbour(account, code, url string) (string, error) {
	for i := 0; i < 400; i++ {
		id, key, err := e.accountWithWebhook(fmt.Sprintf("%s%03d", code, i), url, "")
		if err != nil || store.ShardOf(id) == store.ShardOf(account) {
			return key, err
		}
	}
	return "", fmt.Errorf("no account in the shard of %s", account)
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

// post serves a POST of body with key through the pipeline's API.
func (e *hookEnv) post(key, path, body string) ([]byte, error) {
	return e.request("POST", key, path, body)
}

// request serves one request of body with key through the pipeline's API.
func (e *hookEnv) request(method, key, path, body string) ([]byte, error) {
	rec := serveRequest(e.h, apiRequest(method, path, key, []byte(body)))
	if rec.Code != 200 {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, rec.Code, rec.Body.String())
	}
	return rec.Body.Bytes(), nil
}

// makeChange makes merchant key's change n: by turns a paid sale, a customer
// edit, an expense and a new customer.
func (e *hookEnv) makeChange(key string, n int) error {
	var err error
	switch n % 4 {
	case 0:
		_, err = e.pay(key)
	case 1:
		_, err = e.request("PUT", key, "/api/v1/customers/1", fmt.Sprintf(`{"phone":"020%07d"}`, n))
	case 2:
		_, err = e.request("POST", key, "/api/v1/expenses/add", `{"expense_type":"Fuel","expense_amount":"9.00","payment_method":"Cash","created_by":"Bench"}`)
	default:
		_, err = e.request("POST", key, "/api/v1/customers/add", fmt.Sprintf(`{"name":"Customer %d"}`, n))
	}
	return err
}

// arrivals is a receiver's log of when each webhook-id first arrived, and
// of arrivals whose webhook-id is not msg_<transaction_id of the body>.
type arrivals struct {
	mu      sync.Mutex
	at      map[string]time.Time
	repeats int
	foreign int
}

func (a *arrivals) record(r *http.Request) {
	var p webhook.Payload
	_ = json.NewDecoder(r.Body).Decode(&p)
	id := r.Header.Get(webhook.HeaderID)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.at == nil {
		a.at = map[string]time.Time{}
	}
	if id != "msg_"+p.TransactionID {
		a.foreign++
	}
	if _, seen := a.at[id]; seen {
		a.repeats++
		return
	}
	a.at[id] = time.Now()
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

// deliveryRate is the arrivals per second over their own span, first to
// last, and the last; from and to bound the span when there are none.
func (a *arrivals) deliveryRate(from, to time.Time) (rate float64, last time.Time, delivered int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	first, last := to, from
	for _, at := range a.at {
		if at.After(last) {
			last = at
		}
		if at.Before(first) {
			first = at
		}
	}
	return float64(len(a.at)) / last.Sub(first).Seconds(), last, len(a.at)
}

// paymentDelays makes n payments with key, one after another, each once the
// previous one arrived at got, and returns each one's delay from commit to
// receipt.
func (e *hookEnv) paymentDelays(key string, got *arrivals, n int, timeout time.Duration) ([]time.Duration, error) {
	var out []time.Duration
	for i := 0; i < n; i++ {
		tx, err := e.pay(key)
		if err != nil {
			return nil, err
		}
		committed := time.Now()
		for deadline := committed.Add(timeout); ; time.Sleep(2 * time.Millisecond) {
			if at, ok := got.get(tx); ok {
				out = append(out, at.Sub(committed))
				break
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("payment %d not received within %s", i, timeout)
			}
		}
	}
	return out, nil
}

// payFor makes payments with each key from its own client until window
// passes; it returns how many and when it began.
func payFor(e *hookEnv, keys []string, window time.Duration) (int, time.Time, error) {
	var paid atomic.Int64
	start := time.Now()
	err := untilDeadline(len(keys), start.Add(window), func(client int) error {
		if _, err := e.pay(keys[client]); err != nil {
			return err
		}
		paid.Add(1)
		return nil
	})
	if err != nil {
		return 0, start, err
	}
	return int(paid.Load()), start, nil
}
