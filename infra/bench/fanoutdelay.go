package main

// Where a fan-out delivery's delay goes: what the receivers and the
// stream's hand-over saw, and the delivery records' own times.

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/events"
)

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
	out := map[string]business.Delivery{}
	for cursor := ""; ; {
		p, err := e.st.ListDeliveries(ctx, queue, "", 100, cursor)
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
		b.printf("| %s | %s | %s | %s |\n", p.name, median(ds).Round(time.Millisecond), percentile(ds, 0.95).Round(time.Millisecond), percentile(ds, 1).Round(time.Millisecond))
	}
	b.printf("\n")
}
