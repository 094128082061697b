package webhook_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"
)

// TestRotateAndDisableApplyToTheNextAttempt: events flow to two
// endpoints, each recorded as the stream's fan-out records it and delivered
// by the dispatcher to a real receiver, one pass after another. Between two
// passes, one endpoint's secret is rotated with an overlap and the other
// endpoint is disabled: the very next attempt to the first carries both
// signatures (the new secret's first), and nothing more reaches the second,
// whose deliveries wait, unattempted, in its parked queue.
func TestRotateAndDisableApplyToTheNextAttempt(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "SHOPST")
	rotated, disabled := newInbox(t), newInbox(t)
	oldSecret := business.NewEndpointSecret()
	epR, err := st.CreateEndpoint(ctx, a.ID, business.Endpoint{URL: rotated.URL, EnabledEvents: []string{"*"}}, oldSecret)
	if err != nil {
		t.Fatal(err)
	}
	epD, err := st.CreateEndpoint(ctx, a.ID, business.Endpoint{URL: disabled.URL, EnabledEvents: []string{"*"}}, business.NewEndpointSecret())
	if err != nil {
		t.Fatal(err)
	}
	queueR, queueD := store.EndpointQueue(a.ID, epR.ID), store.EndpointQueue(a.ID, epD.ID)
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Hour}, testdb.Quiet())
	// step records event n's delivery to both endpoints and wakes their
	// queues (a disabled endpoint's is not woken, as in the fan-out), then
	// makes one dispatcher pass and waits for its attempts.
	enabledD := true
	step := func(n int) string {
		t.Helper()
		id := fmt.Sprintf("evt_flow%04d", n)
		now := time.Now().UTC()
		for _, q := range []string{queueR, queueD} {
			d := business.Delivery{AccountID: q, TransactionID: id, WebhookID: id,
				Payload: []byte(`{"id":"` + id + `","type":"customer.created"}`), State: business.DeliveryPending, NextAt: now, CreatedAt: now}
			if _, err := st.CreateDelivery(ctx, d); err != nil {
				t.Fatal(err)
			}
			if q == queueD && !enabledD {
				continue
			}
			if err := st.Wake(ctx, q, now); err != nil {
				t.Fatal(err)
			}
		}
		if err := svc.DispatchOnce(ctx); err != nil {
			t.Fatal(err)
		}
		return id
	}
	first := step(0)
	if !slices.Contains(rotated.ids(), first) || !slices.Contains(disabled.ids(), first) {
		t.Fatalf("the first event reached %v and %v, want both endpoints", rotated.ids(), disabled.ids())
	}

	newSecret := business.NewEndpointSecret()
	if err := st.RotateEndpointSecret(ctx, a.ID, epR.ID, newSecret, time.Hour, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateEndpoint(ctx, a.ID, epD.ID, func(e *business.Endpoint) error {
		e.Status = business.EndpointDisabled
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	enabledD = false
	var after []string
	for n := 1; n <= 3; n++ {
		after = append(after, step(n))
	}

	for _, id := range after {
		var r *received
		for _, got := range rotated.all() {
			if got.header.Get(webhook.HeaderID) == id {
				r = &got
			}
		}
		if r == nil {
			t.Errorf("%s, recorded after the rotation's answer, did not reach the rotated endpoint", id)
			continue
		}
		ts, _ := strconv.ParseInt(r.header.Get(webhook.HeaderTimestamp), 10, 64)
		want := webhook.SignStandard(id, ts, r.body, newSecret) + " " + webhook.SignStandard(id, ts, r.body, oldSecret)
		if sig := r.header.Get(webhook.HeaderStandardSignature); sig != want {
			t.Errorf("%s, recorded after the rotation's answer: webhook-signature %q, want the new and the old secret's %q", id, sig, want)
		}
	}

	if got := disabled.ids(); !slices.Equal(got, []string{first}) {
		t.Errorf("the disabled endpoint got %v, want %s only (nothing after the disable's answer)", got, first)
	}
	for _, id := range after {
		d, err := st.FindDelivery(ctx, queueD, id)
		if err != nil || d.Attempt != 0 || d.State != business.DeliveryPending {
			t.Errorf("delivery of %s to the disabled endpoint: %s after %d attempts (%v), want pending and unattempted", id, d.State, d.Attempt, err)
		}
	}
	if q, err := st.FindQueue(ctx, queueD); err != nil || !q.ReadyAt.IsZero() {
		t.Errorf("the disabled endpoint's queue is ready at %v (%v), want it parked", q.ReadyAt, err)
	}
}
