package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"
)

// TestRetryAfterHeader: both forms of Retry-After are read, seconds and an
// HTTP-date (in each of the three formats HTTP allows); anything else, and
// a date already past, reads as no ask at all.
func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	later := now.Add(90 * time.Second)
	for v, want := range map[string]time.Duration{
		"120":                         120 * time.Second,
		" 120 ":                       120 * time.Second,
		"0":                           0,
		later.Format(http.TimeFormat): 90 * time.Second,
		later.Format(time.RFC850):     90 * time.Second,
		later.Format(time.ANSIC):      90 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat): 0, // past
		"": 0, "soon": 0, "-5": 0, "+5": 0, "1.5": 0, "12 s": 0, "0x10": 0,
		"Fri, 27 Nov 2026 12:01:30": 0, // no zone
	} {
		if got := webhook.RetryAfter(v, now); got != want {
			t.Errorf("Retry-After %q read as %s, want %s", v, got, want)
		}
	}
	// A number of seconds too large for a Duration reads as a very long
	// wait (the retry schedule bounds it), never as a negative one.
	if got := webhook.RetryAfter(strings.Repeat("9", 40), now); got < 365*24*time.Hour {
		t.Errorf("a huge Retry-After read as %s", got)
	}
}

// signalShop is an account, a receiver answering status with the headers
// header sets, and a dispatcher with schedule.
type signalShop struct {
	st      *store.Store
	account business.Account
	svc     *webhook.Service
	calls   *atomic.Int32
	status  *atomic.Int32
}

func newSignalShop(t *testing.T, code string, schedule []time.Duration, status int, header func(http.Header)) (*signalShop, string) {
	t.Helper()
	st, _ := testdb.NewStore(t)
	a, _ := testdb.NewAccount(t, st, "Shop", code)
	s := &signalShop{st: st, account: a, calls: &atomic.Int32{}, status: &atomic.Int32{},
		svc: webhook.NewService(st, webhook.NewSender(true), schedule, testdb.Quiet())}
	s.status.Store(int32(status))
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		st := int(s.status.Load())
		if header != nil && st != 200 {
			header(w.Header())
		}
		w.WriteHeader(st)
	}))
	t.Cleanup(rc.Close)
	return s, rc.URL
}

// due records deliveries of queue due now, as the stream handler does, and
// wakes the queue.
func (s *signalShop) due(t *testing.T, queue string, n int) []string {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	var ids []string
	ev := business.NewEventIDs(now)
	for i := 0; i < n; i++ {
		id := ev.Next()
		if _, err := s.st.CreateDelivery(ctx, business.Delivery{AccountID: queue, TransactionID: id, WebhookID: id,
			Payload: []byte(`{}`), State: business.DeliveryPending, NextAt: now, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := s.st.Wake(ctx, queue, now); err != nil {
		t.Fatal(err)
	}
	return ids
}

func (s *signalShop) dispatch(t *testing.T) {
	t.Helper()
	if err := s.svc.DispatchOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func (s *signalShop) delivery(t *testing.T, queue, id string) business.Delivery {
	t.Helper()
	d, err := s.st.FindDelivery(context.Background(), queue, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// retryWait is how long after its last attempt d's next one is due (both
// are stored to the second).
func retryWait(t *testing.T, d business.Delivery) time.Duration {
	t.Helper()
	if d.State != business.DeliveryPending || len(d.Attempts) == 0 {
		t.Fatalf("delivery %+v: want pending after an attempt", d)
	}
	return d.NextAt.Sub(d.Attempts[len(d.Attempts)-1].At)
}

// TestRetryAfterSeconds: a callback URL answering 429 with Retry-After: 120
// has its delivery's next attempt 120 s later, not at the schedule's 1 s;
// the attempt's log says what the receiver asked.
func TestRetryAfterSeconds(t *testing.T) {
	s, url := newSignalShop(t, "SIG429", []time.Duration{time.Second, 10 * time.Minute}, 429,
		func(h http.Header) { h.Set("Retry-After", "120") })
	if err := s.st.SetWebhook(context.Background(), s.account.ID, business.Webhook{CallbackURL: url}); err != nil {
		t.Fatal(err)
	}
	id := s.due(t, s.account.ID, 1)[0]
	s.dispatch(t)
	d := s.delivery(t, s.account.ID, id)
	if wait := retryWait(t, d); wait < 119*time.Second || wait > 122*time.Second {
		t.Fatalf("next attempt %s after a 429 with Retry-After: 120 (schedule: 1 s)", wait)
	}
	if a := d.Attempts[0]; a.Status != 429 || !strings.Contains(a.Error, "asked to retry after 2m0s") {
		t.Errorf("attempt %+v", a)
	}
	s.dispatch(t) // not due yet
	if n := s.calls.Load(); n != 1 {
		t.Fatalf("%d attempts, want 1", n)
	}
}

// TestRetryAfterDate: an endpoint answering 503 with Retry-After as an
// HTTP-date 90 s ahead has its delivery's next attempt then; one asking for
// more than the schedule's longest wait gets that wait.
func TestRetryAfterDate(t *testing.T) {
	var ask atomic.Value
	ask.Store(90 * time.Second)
	s, url := newSignalShop(t, "SIG503", []time.Duration{time.Second, 5 * time.Minute}, 503, func(h http.Header) {
		h.Set("Retry-After", time.Now().Add(ask.Load().(time.Duration)).UTC().Format(http.TimeFormat))
	})
	ep, err := s.st.CreateEndpoint(context.Background(), s.account.ID, business.Endpoint{URL: url, EnabledEvents: []string{"*"}}, business.NewEndpointSecret())
	if err != nil {
		t.Fatal(err)
	}
	queue := store.EndpointQueue(s.account.ID, ep.ID)
	id := s.due(t, queue, 1)[0]
	s.dispatch(t)
	if wait := retryWait(t, s.delivery(t, queue, id)); wait < 88*time.Second || wait > 92*time.Second {
		t.Fatalf("next attempt %s after a 503 with Retry-After 90 s ahead (schedule: 1 s)", wait)
	}

	ask.Store(3 * time.Hour) // beyond the schedule's longest wait, 5 minutes
	id = s.due(t, queue, 1)[0]
	s.dispatch(t)
	if wait := retryWait(t, s.delivery(t, queue, id)); wait < 299*time.Second || wait > 301*time.Second {
		t.Fatalf("next attempt %s after a 503 asking for 3 h, want the schedule's longest, 5m0s", wait)
	}
}

// TestGoneDisablesEndpoint: an endpoint answering 410 Gone is disabled at
// once, with a reason and one webhook_endpoint.disabled event however many
// attempts met the 410, and its queue is parked. Its deliveries are not lost,
// not even one at its last attempt: they wait, and once the endpoint is
// enabled again (its receiver back) they are delivered.
func TestGoneDisablesEndpoint(t *testing.T) {
	// No retries: any other failure would end the delivery failed.
	s, url := newSignalShop(t, "SIG410", []time.Duration{}, 410, nil)
	ctx := context.Background()
	ep, err := s.st.CreateEndpoint(ctx, s.account.ID, business.Endpoint{URL: url, EnabledEvents: []string{"*"}}, business.NewEndpointSecret())
	if err != nil {
		t.Fatal(err)
	}
	queue := store.EndpointQueue(s.account.ID, ep.ID)
	ids := s.due(t, queue, 3)
	s.dispatch(t)
	if n := s.calls.Load(); n == 0 {
		t.Fatal("the endpoint was never attempted")
	}
	e, err := s.st.FindEndpoint(ctx, s.account.ID, ep.ID)
	if err != nil || e.Status != business.EndpointDisabled || !strings.Contains(e.DisabledReason, "410") || e.DisabledAt.IsZero() {
		t.Fatalf("endpoint after a 410: %+v (%v)", e, err)
	}
	disabled := allEvents(t, s.st, s.account.ID, store.EventFilter{Type: business.EventEndpointDisabled})
	if len(disabled) != 1 || disabled[0].Resource.ID != ep.ID {
		t.Fatalf("webhook_endpoint.disabled events %+v, want one of %s", disabled, ep.ID)
	}
	for _, id := range ids {
		if d := s.delivery(t, queue, id); !d.Waiting() {
			t.Fatalf("delivery %s %s after its endpoint answered 410", id, d.State)
		}
	}
	attempts := s.calls.Load()
	s.dispatch(t) // parks the queue
	s.dispatch(t)
	if n := s.calls.Load(); n != attempts {
		t.Fatalf("%d attempts made to the disabled endpoint", n-attempts)
	}
	if q, err := s.st.FindQueue(ctx, queue); err != nil || !q.ReadyAt.IsZero() {
		t.Fatalf("disabled endpoint's queue %+v (%v), want parked", q, err)
	}

	s.status.Store(200)
	if _, err := s.st.UpdateEndpoint(ctx, s.account.ID, ep.ID, func(e *business.Endpoint) error {
		e.Status = business.EndpointEnabled
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.dispatch(t)
	for _, id := range ids {
		if d := s.delivery(t, queue, id); d.State != business.DeliveryDelivered {
			t.Errorf("delivery %s %s after the endpoint was enabled again", id, d.State)
		}
	}
}

// TestGoneAtCallbackURL: the account's callback URL answering 410 disables
// nothing: the URL stays set, no event is written, and its delivery keeps
// the schedule, failing after its last retry as on any other failure.
func TestGoneAtCallbackURL(t *testing.T) {
	s, url := newSignalShop(t, "SIG410C", []time.Duration{time.Second}, 410, nil)
	ctx := context.Background()
	if err := s.st.SetWebhook(ctx, s.account.ID, business.Webhook{CallbackURL: url}); err != nil {
		t.Fatal(err)
	}
	before := len(allEvents(t, s.st, s.account.ID, store.EventFilter{}))
	id := s.due(t, s.account.ID, 1)[0]
	s.dispatch(t)
	if wait := retryWait(t, s.delivery(t, s.account.ID, id)); wait > 2*time.Second {
		t.Fatalf("next attempt %s after a 410 at the callback URL, want the schedule's 1 s", wait)
	}
	if _, wh, err := s.st.FindAccount(ctx, s.account.ID); err != nil || wh.CallbackURL != url {
		t.Fatalf("callback URL after a 410: %q (%v)", wh.CallbackURL, err)
	}
	if evs := allEvents(t, s.st, s.account.ID, store.EventFilter{}); len(evs) != before {
		t.Fatalf("events after a 410 at the callback URL: %+v, %d before", evs, before)
	}
	waitFor(t, "the retry was made and the delivery failed", func() bool {
		s.dispatch(t)
		return s.delivery(t, s.account.ID, id).State == business.DeliveryFailed
	})
	if n := s.calls.Load(); n != 2 {
		t.Fatalf("%d attempts, want the first and its one retry", n)
	}
}
