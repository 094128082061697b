package webhook_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"
)

// shop is an account with a callback URL and due deliveries.
func shop(t *testing.T, st *store.Store, code, url string, n int) business.Account {
	t.Helper()
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop "+code, code)
	if err := st.SetWebhook(ctx, a.ID, business.Webhook{CallbackURL: url}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Add(-time.Second)
	for i := 0; i < n; i++ {
		tx := fmt.Sprintf("txn_%s_%02d", code, i)
		if _, err := st.CreateDelivery(ctx, business.Delivery{AccountID: a.ID, TransactionID: tx, WebhookID: "msg_" + tx,
			Payload: []byte(`{"amount":"1.00"}`), State: business.DeliveryPending, NextAt: now, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Wake(ctx, a.ID, now); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSlowMerchantDelaysNoOther: one merchant's endpoint hangs (until the
// test ends); another's deliveries all arrive meanwhile, since the slow one
// may use only its share of the attempts in flight while others wait, and at
// most MaxBeyondTurn when alone. (How fast is measured by
// make bench, not here.)
func TestSlowMerchantDelaysNoOther(t *testing.T) {
	st, _ := testdb.NewStore(t)
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	var slowCalls atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slowCalls.Add(1)
		<-release
	}))
	defer slow.Close()
	defer unblock() // runs before slow.Close, which waits for its handlers
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived[r.Header.Get(webhook.HeaderID)] = time.Now()
		mu.Unlock()
	}))
	defer fast.Close()
	shop(t, st, "SLOW", slow.URL, 3*webhook.MaxInFlightAccount)
	shop(t, st, "FAST", fast.URL, 10)
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Hour}, testdb.Quiet())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { svc.Dispatch(ctx, time.Now().Add(time.Minute), 50*time.Millisecond); close(done) }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		n := len(arrived)
		mu.Unlock()
		if n == 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 10 healthy deliveries arrived while the slow endpoint hangs", n)
		}
	}
	if n := slowCalls.Load(); n > int32(webhook.MaxBeyondTurn) {
		t.Fatalf("the slow merchant had %d attempts in flight, at most %d while alone", n, webhook.MaxBeyondTurn)
	}
	cancel()
	unblock()
	<-done
}

// TestCircuitBreaker: after BreakerThreshold consecutive failures a
// merchant's waiting deliveries are held (visible as held, none dropped) and
// not attempted until a probe; when the endpoint recovers, the probe closes
// the circuit and every held delivery is delivered.
func TestCircuitBreaker(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	var healthy atomic.Bool
	var calls atomic.Int32
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if !healthy.Load() {
			w.WriteHeader(503)
		}
	}))
	defer rc.Close()
	const n = 3 * webhook.BreakerThreshold
	a := shop(t, st, "DOWN", rc.URL, n)
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}, testdb.Quiet())
	svc.Probe = 8 * time.Second // longer than the passes below take, even on a loaded machine
	// Failures open the circuit; the next passes hold the rest.
	for i := 0; i < 4; i++ {
		if err := svc.DispatchOnce(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond)
	}
	before := calls.Load()
	if before > int32(webhook.BreakerThreshold+webhook.MaxInFlightAccount) {
		t.Fatalf("%d attempts before the circuit opened", before)
	}
	page, err := st.ListDeliveries(ctx, a.ID, business.DeliveryHeld, 100, "")
	if err != nil || len(page.Items) == 0 {
		t.Fatalf("no delivery is held after %d failures: %v", before, err)
	}
	for i := 0; i < 3; i++ {
		_ = svc.DispatchOnce(ctx)
	}
	if after := calls.Load(); after != before {
		t.Fatalf("%d attempts made while the circuit was open", after-before)
	}
	// The endpoint recovers; after the probe time everything is delivered.
	healthy.Store(true)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_ = svc.DispatchOnce(ctx)
		page, err := st.ListDeliveries(ctx, a.ID, business.DeliveryDelivered, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d delivered after the endpoint recovered", len(page.Items), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
