package main

import (
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

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/events"
)

// The events fan-out (issue 22): every event is delivered to each of its
// account's webhook endpoints that subscribes to it, each endpoint with a
// queue of its own. Does delivery keep pace with a steady stream of
// changes, and does an endpoint that hangs hold up its merchant's others?
const (
	fanMerchants = 8
	fanAnswer    = 300 * time.Millisecond // the healthy receivers' time to answer
	fanWindow    = 10 * time.Second       // how long the merchants make changes
	fanWait      = 20 * time.Second       // how long deliveries may trail the last change
)

// fanInterval is each merchant's time between changes (-fanout-interval).
var fanInterval = 500 * time.Millisecond

// fanSubscriptions are the enabled_events of each merchant's 3 endpoints.
var fanSubscriptions = [][]string{{"*"}, {"sale.*", "payment.*"}, {"*"}}

// receipts is a receiver's log: when each webhook-id was first answered
// 2xx, how many requests came, and how many came again after a 2xx.
type receipts struct {
	mu       sync.Mutex
	at       map[string]time.Time
	requests int
	repeats  int
}

// handler answers 2xx after answer, or, given hang, holds each request
// until hang is closed or the sender gives up.
func (r *receipts) handler(answer time.Duration, hang <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		id := req.Header.Get(webhook.HeaderID)
		r.mu.Lock()
		r.requests++
		r.mu.Unlock()
		if hang != nil {
			select {
			case <-hang:
			case <-req.Context().Done():
			}
			return
		}
		time.Sleep(answer)
		now := time.Now()
		r.mu.Lock()
		defer r.mu.Unlock()
		if _, seen := r.at[id]; seen {
			r.repeats++
			return
		}
		r.at[id] = now
	})
}

func (r *receipts) get(id string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.at[id]
	return t, ok
}

// fanEndpoint is one endpoint of the bench and its receiver.
type fanEndpoint struct {
	ep    business.Endpoint
	got   *receipts
	hangs bool
}

// fanMerchant is one merchant of the bench: its account, key and endpoints.
type fanMerchant struct {
	id, key string
	eps     []fanEndpoint
}

// eventsFanout drives the devserver's pipeline with 8 merchants of 3
// endpoints each, every receiver answering in 300 ms but the third of the
// first merchant, which hangs; each merchant makes a change every
// fanInterval for fanWindow. It reports delivery rate against the rate of
// deliveries owed, and the delay of the healthy endpoints.
func (b *bench) eventsFanout() error {
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	// When each event reached deliver-webhooks: the stream's share of the
	// delay.
	var handedMu sync.Mutex
	handed := map[string]time.Time{}
	watch := func(ev events.DynamoDBEvent) {
		now := time.Now()
		handedMu.Lock()
		defer handedMu.Unlock()
		for _, r := range ev.Records {
			if id := r.Change.NewImage["SK"]; webhook.IsEventInsert(r) && id.DataType() == events.DataTypeString {
				if _, seen := handed[id.String()]; !seen {
					handed[id.String()] = now
				}
			}
		}
	}
	e, cleanup, err := b.hookEnvWith(ctx, "fan", 1, watch)
	if err != nil {
		return err
	}
	defer cleanup()
	release := make(chan struct{})
	var servers []*httptest.Server
	defer func() {
		close(release)
		for _, s := range servers {
			s.Close()
		}
	}()
	ms := make([]fanMerchant, fanMerchants)
	for i := range ms {
		m := &ms[i]
		a, _ := business.NewAccount(fmt.Sprintf("Fan-out shop %d", i+1), fmt.Sprintf("FAN%d", i+1), "GHS", "")
		a, key, err := e.st.CreateAccount(ctx, a)
		if err != nil {
			return err
		}
		m.id, m.key = a.ID, key
		if _, err := e.post(key, "/api/v1/customers/add", `{"name":"Ama"}`); err != nil {
			return err
		}
		for j, subs := range fanSubscriptions {
			got := &receipts{at: map[string]time.Time{}}
			var hang <-chan struct{}
			if i == 0 && j == len(fanSubscriptions)-1 {
				hang = release
			}
			srv := httptest.NewServer(got.handler(fanAnswer, hang))
			servers = append(servers, srv)
			ep, err := e.st.CreateEndpoint(ctx, m.id, business.Endpoint{URL: srv.URL, EnabledEvents: subs,
				Description: fmt.Sprintf("endpoint %d", j+1)}, business.NewEndpointSecret())
			if err != nil {
				return err
			}
			m.eps = append(m.eps, fanEndpoint{ep: ep, got: got, hangs: hang != nil})
		}
	}
	time.Sleep(time.Second) // the setup's events are out of the way

	// A steady stream: each merchant a change every fanInterval, the
	// merchants staggered across it.
	start := time.Now()
	var changes atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for i := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(fanInterval * time.Duration(i) / fanMerchants)
			tick := time.NewTicker(fanInterval)
			defer tick.Stop()
			for n := 0; time.Since(start) < fanWindow; n++ {
				if err := e.change(ms[i].key, n); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
				changes.Add(1)
				<-tick.C
			}
		}()
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	lastChange := time.Now()

	// The events of the window, from each merchant's feed, and the
	// deliveries they owe: one to each healthy endpoint that subscribes.
	type owed struct {
		merchant int
		got      *receipts
		id       string
	}
	var due, hung []owed
	var window []string // the events' ids
	firstEvent, lastEvent := lastChange, start
	from := business.EventIDAt(start)
	from = from[:len(from)-1] // every id of start's millisecond sorts after it
	for i, m := range ms {
		cursor := ""
		for {
			p, err := e.st.ListEvents(ctx, m.id, store.EventFilter{After: from, Unsettled: true}, 100, cursor)
			if err != nil {
				return err
			}
			for _, body := range p.Items {
				var head struct {
					ID   string `json:"id"`
					Type string `json:"type"`
				}
				if err := json.Unmarshal(body, &head); err != nil {
					return err
				}
				window = append(window, head.ID)
				at := business.EventTime(head.ID)
				if at.Before(firstEvent) {
					firstEvent = at
				}
				if at.After(lastEvent) {
					lastEvent = at
				}
				for _, ep := range m.eps {
					switch {
					case !ep.ep.Wants(head.Type):
					case ep.hangs:
						hung = append(hung, owed{i, ep.got, head.ID})
					default:
						due = append(due, owed{i, ep.got, head.ID})
					}
				}
			}
			if cursor = p.Next; cursor == "" {
				break
			}
		}
	}
	if len(due) == 0 {
		return fmt.Errorf("no event of the window found in the merchants' feeds")
	}
	delivered := func() int {
		n := 0
		for _, d := range due {
			if _, ok := d.got.get(d.id); ok {
				n++
			}
		}
		return n
	}
	for time.Since(lastChange) < fanWait && delivered() < len(due) {
		time.Sleep(50 * time.Millisecond)
	}

	var streamLag []time.Duration
	handedMu.Lock()
	for _, id := range window {
		if h, ok := handed[id]; ok {
			streamLag = append(streamLag, h.Sub(business.EventTime(id)))
		}
	}
	handedMu.Unlock()
	var all, sibling []time.Duration
	firstReceipt, lastReceipt := lastChange.Add(fanWait), start
	overAll, overSibling := 0, 0
	for _, d := range due {
		at, ok := d.got.get(d.id)
		if !ok {
			continue
		}
		if at.Before(firstReceipt) {
			firstReceipt = at
		}
		if at.After(lastReceipt) {
			lastReceipt = at
		}
		delay := at.Sub(business.EventTime(d.id))
		all = append(all, delay)
		if delay > 2*time.Second {
			overAll++
		}
		if d.merchant == 0 {
			sibling = append(sibling, delay)
			if delay > 2*time.Second {
				overSibling++
			}
		}
	}
	got := len(all)
	repeats, hungRequests := 0, 0
	for _, m := range ms {
		for _, ep := range m.eps {
			ep.got.mu.Lock()
			repeats += ep.got.repeats
			if ep.hangs {
				hungRequests = ep.got.requests
			}
			ep.got.mu.Unlock()
		}
	}
	if len(streamLag) == 0 {
		return fmt.Errorf("no event of the window reached deliver-webhooks")
	}
	if len(sibling) == 0 {
		return fmt.Errorf("merchant 1's healthy endpoints received nothing")
	}
	eventSpan, receiptSpan := lastEvent.Sub(firstEvent).Seconds(), lastReceipt.Sub(firstReceipt).Seconds()
	owedRate, deliverRate := float64(len(due))/eventSpan, float64(got)/receiptSpan

	b.printf("## Events fan-out to webhook endpoints\n\nThe devserver's pipeline (stream poller, deliver-webhooks fanning each event out to a delivery per subscribed endpoint, each endpoint a queue of its own; dispatcher polling every %s, %d attempts in flight, a share of at most %d per queue while others wait) on a table of its own, measured before the load. %d merchants with 3 webhook endpoints each (subscribed to `*`; `sale.*` and `payment.*`; `*`), every endpoint its own receiver on loopback answering 2xx in %s, except merchant 1's third, which never answers (each attempt held until the sender's %s timeout). Each merchant makes a change every %s for %s, the merchants staggered (by turns a paid sale: sale.created and payment.received; a customer edit; an expense; a new customer): %d changes, %d events, %.1f events/s, %d deliveries owed to the healthy endpoints (%d more to the hanging one). Delay: the event's time (its id's millisecond, taken just before its transaction) to the receiver's 2xx answer.\n\n",
		dispatchPoll, webhook.MaxInFlight, webhook.MaxInFlightAccount, fanMerchants, fanAnswer, webhook.Timeout, fanInterval, fanWindow,
		changes.Load(), len(window), float64(len(window))/eventSpan, len(due), len(hung))
	b.printf("| figure | result | goal |\n|---|---|---|\n")
	b.printf("| delivery rate ÷ rate of deliveries owed (events × their healthy subscribed endpoints), each over its own span, first to last | %.1f/s ÷ %.1f/s = %.2f; %d of %d not delivered %s after the last change; %d sent again after a 2xx | at least 0.9 |\n",
		deliverRate, owedRate, deliverRate/owedRate, len(due)-got, len(due), fanWait, repeats)
	b.printf("| delay at merchant 1's 2 healthy endpoints while its third hangs | p50 %s, p95 %s, max %s; %d of %d over 2 s | at most 2 s |\n",
		median(sibling).Round(time.Millisecond), pct(sibling, 0.95).Round(time.Millisecond), pct(sibling, 1).Round(time.Millisecond), overSibling, len(sibling))
	b.printf("| delay at every healthy endpoint (%d) | p50 %s, p95 %s, max %s; %d of %d over 2 s | at most 2 s |\n",
		fanMerchants*len(fanSubscriptions)-1, median(all).Round(time.Millisecond), pct(all, 0.95).Round(time.Millisecond), pct(all, 1).Round(time.Millisecond), overAll, len(all))
	b.printf("| of which event to deliver-webhooks (the stream poller's share of every delay) | p50 %s, p95 %s, max %s; %d of %d events handed | |\n",
		median(streamLag).Round(time.Millisecond), pct(streamLag, 0.95).Round(time.Millisecond), pct(streamLag, 1).Round(time.Millisecond), len(streamLag), len(window))
	b.printf("| the hanging endpoint | %d requests for its %d deliveries (attempts held %s each, then retried on the schedule) | none delivered; the others unaffected |\n\n",
		hungRequests, len(hung), webhook.Timeout)
	return nil
}

// change makes merchant key's change n: by turns a paid sale, a customer
// edit, an expense and a new customer.
func (e *hookEnv) change(key string, n int) error {
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

// request is post with any method.
func (e *hookEnv) request(method, key, path, body string) ([]byte, error) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, rec.Code, rec.Body.String())
	}
	return rec.Body.Bytes(), nil
}
