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
// 2xx, when its first request arrived, how many requests came, and how many
// came again after a 2xx.
type receipts struct {
	mu       sync.Mutex
	at       map[string]time.Time
	arrived  map[string]time.Time
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
		if r.arrived == nil {
			r.arrived = map[string]time.Time{}
		}
		if _, seen := r.arrived[id]; !seen {
			r.arrived[id] = time.Now()
		}
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

// firstRequest returns when id's first request arrived.
func (r *receipts) firstRequest(id string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.arrived[id]
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
	handed := &handedLog{at: map[string]time.Time{}}
	e, cleanup, err := b.hookEnvWith(ctx, "fan", 1, handed.watch)
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
	for _, id := range window {
		if h, ok := handed.get(id); ok {
			streamLag = append(streamLag, h.Sub(business.EventTime(id)))
		}
	}
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

	b.printf("## Events fan-out to webhook endpoints\n\nThe devserver's pipeline (stream poller, deliver-webhooks fanning each event out to a delivery per subscribed endpoint, or recording a fan-out job the dispatcher expands when an account's events of a batch owe more than %d, each endpoint a queue of its own; dispatcher polling every %s, %d attempts in flight, a share of at most %d per merchant, over all its endpoints, while others wait) on a table of its own, measured before the load. %d merchants with 3 webhook endpoints each (subscribed to `*`; `sale.*` and `payment.*`; `*`), every endpoint its own receiver on loopback answering 2xx in %s, except merchant 1's third, which never answers (each attempt held until the sender's %s timeout). Each merchant makes a change every %s for %s, the merchants staggered (by turns a paid sale: sale.created and payment.received; a customer edit; an expense; a new customer): %d changes, %d events, %.1f events/s, %d deliveries owed to the healthy endpoints (%d more to the hanging one). Delay: the event's time (its id's millisecond, taken just before its transaction) to the receiver's 2xx answer.\n\n",
		webhook.InlineFanout, dispatchPoll, webhook.MaxInFlight, webhook.MaxInFlightAccount, fanMerchants, fanAnswer, webhook.Timeout, fanInterval, fanWindow,
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

	// Where the healthy deliveries' delay went.
	var hops []hop
	records := map[string]map[string]business.Delivery{} // queue -> webhook-id -> delivery
	for _, d := range due {
		m := ms[d.merchant]
		for _, ep := range m.eps {
			if ep.got != d.got {
				continue
			}
			q := store.EndpointQueue(m.id, ep.ep.ID)
			if records[q] == nil {
				if records[q], err = deliveryRecords(ctx, e, q); err != nil {
					return err
				}
			}
			if h, ok := hopOf(d.id, handed, d.got, records[q][d.id]); ok {
				hops = append(hops, h)
			}
		}
	}
	b.printSplit(fmt.Sprintf("the %d healthy deliveries above", len(hops)), hops)
	return b.fanoutFairness(ctx)
}

// The fan-out beside a burst: one merchant with business.MaxEndpoints
// endpoints at slow receivers makes a burst of changes while another, with
// one endpoint, makes a few. Does the burst's fan-out (its changes × 16
// deliveries) delay the other merchant's events?
const (
	fairBurst    = 200             // the busy merchant's changes
	fairClients  = 4               // made from this many clients at once
	fairAnswer   = 2 * time.Second // the busy merchant's receivers' time to answer
	fairChanges  = 10              // the other merchant's changes, spread over the burst
	fairWaitMost = 120 * time.Second
)

// fanoutFairness drives the devserver's pipeline with a busy merchant of 16
// endpoints, each its own receiver answering 2xx after fairAnswer, making
// fairBurst changes as fast as the API takes them, and a merchant of one
// endpoint (answering at once) making fairChanges changes one after
// another while the burst is made, the i-th once the burst is i/fairChanges
// through. It reports the second merchant's delays, the stream's share of
// them, and how many of the busy merchant's deliveries were made by the
// end.
func (b *bench) fanoutFairness(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	handed := &handedLog{at: map[string]time.Time{}}
	e, cleanup, err := b.hookEnvWith(ctx, "fanfair", 1, handed.watch)
	if err != nil {
		return err
	}
	defer cleanup()
	var servers []*httptest.Server
	defer func() {
		for _, s := range servers {
			s.Close()
		}
	}()
	merchant := func(name, code string, n int, answer time.Duration) (fanMerchant, error) {
		a, _ := business.NewAccount(name, code, "GHS", "")
		a, key, err := e.st.CreateAccount(ctx, a)
		if err != nil {
			return fanMerchant{}, err
		}
		m := fanMerchant{id: a.ID, key: key}
		if _, err := e.post(key, "/api/v1/customers/add", `{"name":"Ama"}`); err != nil {
			return m, err
		}
		for j := 0; j < n; j++ {
			got := &receipts{at: map[string]time.Time{}}
			srv := httptest.NewServer(got.handler(answer, nil))
			servers = append(servers, srv)
			ep, err := e.st.CreateEndpoint(ctx, m.id, business.Endpoint{URL: srv.URL, EnabledEvents: []string{"*"},
				Description: fmt.Sprintf("endpoint %d", j+1)}, business.NewEndpointSecret())
			if err != nil {
				return m, err
			}
			m.eps = append(m.eps, fanEndpoint{ep: ep, got: got})
		}
		return m, nil
	}
	busy, err := merchant("Busy fan-out shop", "FANBUSY", business.MaxEndpoints, fairAnswer)
	if err != nil {
		return err
	}
	other, err := merchant("Quiet fan-out shop", "FANQUIET", 1, 0)
	if err != nil {
		return err
	}
	time.Sleep(time.Second) // the setup's events are out of the way

	start := time.Now()
	var made, next atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for c := 0; c < fairClients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := next.Add(1) - 1; n < fairBurst; n = next.Add(1) - 1 {
				if err := e.change(busy.key, int(n)); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
				made.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < fairChanges; i++ {
			for made.Load() < int64(i*fairBurst/fairChanges) && first.Load() == nil {
				time.Sleep(5 * time.Millisecond)
			}
			if err := e.change(other.key, i); err != nil {
				first.CompareAndSwap(nil, err)
				return
			}
		}
	}()
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	lastChange := time.Now()

	// Each merchant's events of the burst, from its feed.
	feed := func(m fanMerchant) ([]string, error) {
		var ids []string
		from := business.EventIDAt(start)
		from = from[:len(from)-1]
		for cursor := ""; ; {
			p, err := e.st.ListEvents(ctx, m.id, store.EventFilter{After: from, Unsettled: true}, 100, cursor)
			if err != nil {
				return nil, err
			}
			for _, body := range p.Items {
				var head struct {
					ID string `json:"id"`
				}
				if err := json.Unmarshal(body, &head); err != nil {
					return nil, err
				}
				ids = append(ids, head.ID)
			}
			if cursor = p.Next; cursor == "" {
				return ids, nil
			}
		}
	}
	busyEvents, err := feed(busy)
	if err != nil {
		return err
	}
	otherEvents, err := feed(other)
	if err != nil {
		return err
	}
	if len(otherEvents) == 0 || len(busyEvents) == 0 {
		return fmt.Errorf("no event of the burst found in the merchants' feeds")
	}
	quiet := other.eps[0].got
	arrived := func() int {
		n := 0
		for _, id := range otherEvents {
			if _, ok := quiet.get(id); ok {
				n++
			}
		}
		return n
	}
	for time.Since(lastChange) < fairWaitMost && (arrived() < len(otherEvents) || time.Since(lastChange) < fanWait) {
		time.Sleep(50 * time.Millisecond)
	}
	end := time.Since(lastChange)
	busyDelivered := 0
	for _, id := range busyEvents {
		for _, ep := range busy.eps {
			if _, ok := ep.got.get(id); ok {
				busyDelivered++
			}
		}
	}

	var delays, streamLag []time.Duration
	over := 0
	for _, id := range otherEvents {
		if h, ok := handed.get(id); ok {
			streamLag = append(streamLag, h.Sub(business.EventTime(id)))
		}
		at, ok := quiet.get(id)
		if !ok {
			continue
		}
		d := at.Sub(business.EventTime(id))
		delays = append(delays, d)
		if d > 2*time.Second {
			over++
		}
	}
	if len(delays) == 0 || len(streamLag) == 0 {
		return fmt.Errorf("none of the quiet merchant's %d events reached its endpoint (%d handed to deliver-webhooks)", len(otherEvents), len(streamLag))
	}
	records, err := deliveryRecords(ctx, e, store.EndpointQueue(other.id, other.eps[0].ep.ID))
	if err != nil {
		return err
	}
	var hops []hop
	for _, id := range otherEvents {
		if h, ok := hopOf(id, handed, quiet, records[id]); ok {
			hops = append(hops, h)
		}
	}
	burst := lastChange.Sub(start)
	b.printf("Beside a burst: the same pipeline on a table of its own. A merchant with %d webhook endpoints (each subscribed to `*`, each its own receiver answering 2xx in %s) makes %d changes as fast as the API takes them from %d clients (%s, %d events, %d deliveries owed), while a merchant with one endpoint (subscribed to `*`, answering at once) makes %d changes one after another, the i-th once the burst is i/%d through (%d events). Delay: the event's time to the receiver's 2xx answer.\n\n",
		business.MaxEndpoints, fairAnswer, fairBurst, fairClients, burst.Round(100*time.Millisecond), len(busyEvents), len(busyEvents)*business.MaxEndpoints,
		fairChanges, fairChanges, len(otherEvents))
	b.printf("| figure | result | goal |\n|---|---|---|\n")
	b.printf("| the one-endpoint merchant's delay beside a %d-endpoint merchant's %d-change burst at %s receivers | p50 %s, max %s; %d of %d over 2 s; %d not delivered %s after the last change | at most 2 s, every one |\n",
		business.MaxEndpoints, fairBurst, fairAnswer, median(delays).Round(time.Millisecond), pct(delays, 1).Round(time.Millisecond), over, len(delays),
		len(otherEvents)-len(delays), end.Round(time.Second))
	b.printf("| of which event to deliver-webhooks (the stream's share) | p50 %s, max %s; %d of %d events handed | |\n",
		median(streamLag).Round(time.Millisecond), pct(streamLag, 1).Round(time.Millisecond), len(streamLag), len(otherEvents))
	b.printf("| the burst's deliveries made by then (%s after the last change) | %d of %d | |\n\n",
		end.Round(time.Second), busyDelivered, len(busyEvents)*business.MaxEndpoints)
	b.printSplit("the one-endpoint merchant's deliveries", hops)
	return nil
}

// handedLog notes when each event's stream record reached deliver-webhooks:
// the stream's share of the delay.
type handedLog struct {
	mu sync.Mutex
	at map[string]time.Time
}

// watch is hookEnvWith's view of each stream batch.
func (h *handedLog) watch(ev events.DynamoDBEvent) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range ev.Records {
		if id := r.Change.NewImage["SK"]; webhook.IsEventInsert(r) && id.DataType() == events.DataTypeString {
			if _, seen := h.at[id.String()]; !seen {
				h.at[id.String()] = now
			}
		}
	}
}

func (h *handedLog) get(id string) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.at[id]
	return t, ok
}

// hop is one delivery's way from its event to the receiver's 2xx: the
// times the bench saw, to the millisecond, and those the delivery's record
// keeps, in whole seconds (the store writes created_at and each attempt's at
// as business.TimeFormat).
type hop struct {
	event, handed, request, receipt time.Time
	recorded, attempted             time.Time
}

// hopOf returns the hop of the delivery of event id received by got, whose
// record is d; false unless every time of it is known and its first attempt
// is in the record's log.
func hopOf(id string, handed *handedLog, got *receipts, d business.Delivery) (hop, bool) {
	h := hop{event: business.EventTime(id), recorded: d.CreatedAt}
	var ok1, ok2, ok3 bool
	h.handed, ok1 = handed.get(id)
	h.request, ok2 = got.firstRequest(id)
	h.receipt, ok3 = got.get(id)
	if !ok1 || !ok2 || !ok3 || d.CreatedAt.IsZero() || len(d.Attempts) == 0 || d.Attempt > len(d.Attempts) {
		return hop{}, false
	}
	h.attempted = d.Attempts[0].At
	return h, true
}

// deliveryRecords returns the deliveries of queue by webhook-id, read as
// list-endpoint-deliveries reads them.
func deliveryRecords(ctx context.Context, e *hookEnv, queue string) (map[string]business.Delivery, error) {
	st, ok := e.st.(interface {
		ListDeliveries(context.Context, string, string, int, string) (store.Page[business.Delivery], error)
	})
	if !ok {
		return nil, fmt.Errorf("the bench's store lists no deliveries")
	}
	out := map[string]business.Delivery{}
	for cursor := ""; ; {
		p, err := st.ListDeliveries(ctx, queue, "", 100, cursor)
		if err != nil {
			return nil, err
		}
		for _, d := range p.Items {
			out[d.WebhookID] = d
		}
		if cursor = p.Next; cursor == "" {
			return out, nil
		}
	}
}

// printSplit prints where the delay of the deliveries of hops went, part by
// part: the bench's own times to the millisecond; the records' in whole
// seconds, so a part between two of them, or between one of them and one of
// the bench's cut to its second, is whole seconds, each off by up to 1 s.
func (b *bench) printSplit(what string, hops []hop) {
	if len(hops) == 0 {
		b.printf("Where the delay of %s went: no delivery with all its times.\n\n", what)
		return
	}
	sec := func(t time.Time) time.Time { return t.Truncate(time.Second) }
	parts := []struct {
		name string
		of   func(h hop) time.Duration
	}{
		{"event → handed to deliver-webhooks (the stream's hand-over; ms)", func(h hop) time.Duration { return h.handed.Sub(h.event) }},
		{"handed → delivery recorded (its created_at; whole seconds)", func(h hop) time.Duration { return h.recorded.Sub(sec(h.handed)) }},
		{"recorded → first attempt started (its attempt's at; whole seconds)", func(h hop) time.Duration { return h.attempted.Sub(h.recorded) }},
		{"first attempt started → request at the receiver (whole seconds)", func(h hop) time.Duration { return sec(h.request).Sub(h.attempted) }},
		{"handed → request at the receiver (the three above; ms)", func(h hop) time.Duration { return h.request.Sub(h.handed) }},
		{"request at the receiver → its 2xx answer (the receiver's own time; ms)", func(h hop) time.Duration { return h.receipt.Sub(h.request) }},
		{"event → 2xx answer (the whole delay; ms)", func(h hop) time.Duration { return h.receipt.Sub(h.event) }},
	}
	b.printf("Where the delay of %s went, part by part (times the bench took, to the millisecond; times from the delivery's record, read as list-endpoint-deliveries reads it, in whole seconds, as the store keeps them, so a part that starts or ends at one of them is whole seconds, each off by up to 1 s):\n\n", what)
	b.printf("| part | p50 | p95 | max |\n|---|---|---|---|\n")
	for _, p := range parts {
		ds := make([]time.Duration, len(hops))
		for i, h := range hops {
			ds[i] = p.of(h)
		}
		b.printf("| %s | %s | %s | %s |\n", p.name, median(ds).Round(time.Millisecond), pct(ds, 0.95).Round(time.Millisecond), pct(ds, 1).Round(time.Millisecond))
	}
	b.printf("\n")
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
