package main

// The fanout step: 8 merchants' changes fanned out to their endpoints, one
// of which hangs.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/webhook"
)

// The events fan-out: every event is delivered to each of its
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

// newFanMerchant makes an account with a customer and an endpoint for each
// of subs, each its own receiver (added to servers) answering 2xx after
// answer; given hang, the last endpoint's receiver holds each request until
// hang is closed.
func (e *hookEnv) newFanMerchant(name, code string, subs [][]string, answer time.Duration, hang <-chan struct{}, servers *[]*httptest.Server) (fanMerchant, error) {
	a, key, err := createAccount(e.ctx, e.st, name, code)
	if err != nil {
		return fanMerchant{}, err
	}
	m := fanMerchant{id: a.ID, key: key}
	if _, err := e.post(key, "/api/v1/customers/add", `{"name":"Ama"}`); err != nil {
		return m, err
	}
	for j, enabled := range subs {
		got := &receipts{at: map[string]time.Time{}}
		var hangs <-chan struct{}
		if j == len(subs)-1 {
			hangs = hang
		}
		srv := httptest.NewServer(got.handler(answer, hangs))
		*servers = append(*servers, srv)
		ep, err := e.st.CreateEndpoint(e.ctx, m.id, business.Endpoint{URL: srv.URL, EnabledEvents: enabled,
			Description: fmt.Sprintf("endpoint %d", j+1)}, business.NewEndpointSecret())
		if err != nil {
			return m, err
		}
		m.eps = append(m.eps, fanEndpoint{ep: ep, got: got, hangs: hangs != nil})
	}
	return m, nil
}

// eventHead is what the fan-out reads of an event.
type eventHead struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// eventsSince returns the account's events from start on, settled or not,
// from its feed.
func (e *hookEnv) eventsSince(account string, start time.Time) ([]eventHead, error) {
	from := business.EventIDAt(start)
	from = from[:len(from)-1] // every id of start's millisecond sorts after it
	var heads []eventHead
	for cursor := ""; ; {
		p, err := e.st.ListEvents(e.ctx, account, store.EventFilter{After: from, Unsettled: true}, 100, cursor)
		if err != nil {
			return nil, err
		}
		for _, body := range p.Items {
			var head eventHead
			if err := json.Unmarshal(body, &head); err != nil {
				return nil, err
			}
			heads = append(heads, head)
		}
		if cursor = p.Next; cursor == "" {
			return heads, nil
		}
	}
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
		var hang <-chan struct{} // merchant 1's last endpoint hangs
		if i == 0 {
			hang = release
		}
		if ms[i], err = e.newFanMerchant(fmt.Sprintf("Fan-out shop %d", i+1), fmt.Sprintf("FAN%d", i+1), fanSubscriptions, fanAnswer, hang, &servers); err != nil {
			return err
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
				if err := e.makeChange(ms[i].key, n); err != nil {
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
	for i, m := range ms {
		heads, err := e.eventsSince(m.id, start)
		if err != nil {
			return err
		}
		for _, head := range heads {
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
		median(sibling).Round(time.Millisecond), percentile(sibling, 0.95).Round(time.Millisecond), percentile(sibling, 1).Round(time.Millisecond), overSibling, len(sibling))
	b.printf("| delay at every healthy endpoint (%d) | p50 %s, p95 %s, max %s; %d of %d over 2 s | at most 2 s |\n",
		fanMerchants*len(fanSubscriptions)-1, median(all).Round(time.Millisecond), percentile(all, 0.95).Round(time.Millisecond), percentile(all, 1).Round(time.Millisecond), overAll, len(all))
	b.printf("| of which event to deliver-webhooks (the stream poller's share of every delay) | p50 %s, p95 %s, max %s; %d of %d events handed | |\n",
		median(streamLag).Round(time.Millisecond), percentile(streamLag, 0.95).Round(time.Millisecond), percentile(streamLag, 1).Round(time.Millisecond), len(streamLag), len(window))
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
