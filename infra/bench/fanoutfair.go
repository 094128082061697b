package main

// The fanout step's second part: a merchant's deliveries beside another's
// burst to many slow endpoints.

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
)

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

// fanoutFairness has a merchant of 16 slow endpoints make a burst of
// changes while a merchant of one endpoint makes a few, and reports the
// second's delays, the stream's share of them, and how many of the burst's
// deliveries were made by the end.
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
	everything := make([][]string, business.MaxEndpoints)
	for i := range everything {
		everything[i] = []string{"*"}
	}
	busy, err := e.newFanMerchant("Busy fan-out shop", "FANBUSY", everything, fairAnswer, nil, &servers)
	if err != nil {
		return err
	}
	other, err := e.newFanMerchant("Quiet fan-out shop", "FANQUIET", everything[:1], 0, nil, &servers)
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
				if err := e.makeChange(busy.key, int(n)); err != nil {
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
			if err := e.makeChange(other.key, i); err != nil {
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
	var busyEvents, otherEvents []string
	for _, m := range []struct {
		merchant fanMerchant
		ids      *[]string
	}{{busy, &busyEvents}, {other, &otherEvents}} {
		heads, err := e.eventsSince(m.merchant.id, start)
		if err != nil {
			return err
		}
		for _, h := range heads {
			*m.ids = append(*m.ids, h.ID)
		}
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
		business.MaxEndpoints, fairBurst, fairAnswer, median(delays).Round(time.Millisecond), percentile(delays, 1).Round(time.Millisecond), over, len(delays),
		len(otherEvents)-len(delays), end.Round(time.Second))
	b.printf("| of which event to deliver-webhooks (the stream's share) | p50 %s, max %s; %d of %d events handed | |\n",
		median(streamLag).Round(time.Millisecond), percentile(streamLag, 1).Round(time.Millisecond), len(streamLag), len(otherEvents))
	b.printf("| the burst's deliveries made by then (%s after the last change) | %d of %d | |\n\n",
		end.Round(time.Second), busyDelivered, len(busyEvents)*business.MaxEndpoints)
	b.printSplit("the one-endpoint merchant's deliveries", hops)
	return nil
}
