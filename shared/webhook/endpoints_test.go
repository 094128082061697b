package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/infra/streampoll"
	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"
)

// endpointShop is an account whose changes (made through the API) write
// events, with the table's stream fed to a webhook Service's HandleStream by
// the devserver's poller, as Lambda would, and its dispatcher running.
type endpointShop struct {
	st      *store.Store
	account business.Account
	svc     *webhook.Service
	post    func(path, body string) string
}

// newEndpointShop starts the shop; adjust, when not nil, sets up the
// Service before it runs. Everything stops when the test ends.
func newEndpointShop(t *testing.T, schedule []time.Duration, adjust func(*webhook.Service)) *endpointShop {
	t.Helper()
	st, cfg := testdb.NewStreamStore(t)
	a, key := testdb.NewAccount(t, st, "Shop", "SHOPEP")
	svc := webhook.NewService(st, webhook.NewSender(true), schedule, testdb.Quiet())
	if adjust != nil {
		adjust(svc)
	}
	ctx, cancel := context.WithCancel(context.Background())
	streams, err := app.NewStreams(ctx, cfg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		streampoll.Poll(ctx, st.Client(), streams, cfg.TableName, webhook.Streamed, svc.HandleStream, streampoll.MaximumRetryAttempts, testdb.Quiet())
	}()
	go func() { defer wg.Done(); svc.Dispatch(ctx, time.Now().Add(time.Hour), 50*time.Millisecond) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	srv := httptest.NewServer(api.NewServer(st, testdb.Quiet(), 0).Handler(api.Routes))
	t.Cleanup(srv.Close)
	post := func(path, body string) string {
		t.Helper()
		// A 503 (DynamoDB Local busy on a loaded machine) is retried, as
		// its Retry-After asks a client to.
		for try := 1; ; try++ {
			req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			switch {
			case res.StatusCode == http.StatusServiceUnavailable && try < 5:
				time.Sleep(time.Duration(try) * 200 * time.Millisecond)
				continue
			case res.StatusCode != 200:
				t.Fatalf("%s: %d %s", path, res.StatusCode, b)
			}
			return string(b)
		}
	}
	return &endpointShop{st: st, account: a, svc: svc, post: post}
}

// endpoint creates an endpoint of the shop subscribed to events, with a
// fresh secret, and returns it and the secret.
func (s *endpointShop) endpoint(t *testing.T, url string, events ...string) (business.Endpoint, string) {
	t.Helper()
	secret := business.NewEndpointSecret()
	e, err := s.st.CreateEndpoint(context.Background(), s.account.ID, business.Endpoint{URL: url, EnabledEvents: events}, secret)
	if err != nil {
		t.Fatal(err)
	}
	return e, secret
}

// received is one request a receiver got.
type received struct {
	header http.Header
	body   []byte
}

// inbox is a receiver that records what it gets, answering status (an
// atomic, so a test can change it).
type inbox struct {
	*httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	got    []received
}

func newInbox(t *testing.T) *inbox {
	in := &inbox{}
	in.status.Store(200)
	in.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		in.mu.Lock()
		in.got = append(in.got, received{r.Header.Clone(), b})
		in.mu.Unlock()
		w.WriteHeader(int(in.status.Load()))
	}))
	t.Cleanup(in.Close)
	return in
}

func (in *inbox) all() []received {
	in.mu.Lock()
	defer in.mu.Unlock()
	return slices.Clone(in.got)
}

// ids returns the webhook-ids received, each once, in order of arrival.
func (in *inbox) ids() []string {
	var out []string
	for _, r := range in.all() {
		if id := r.header.Get(webhook.HeaderID); !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// eventHead is what a test reads of an event.
type eventHead struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Resource struct {
		ID string `json:"id"`
	} `json:"resource"`
}

func head(t *testing.T, body []byte) eventHead {
	t.Helper()
	var h eventHead
	if err := json.Unmarshal(body, &h); err != nil {
		t.Fatalf("not an event: %s", body)
	}
	return h
}

// allEvents returns the account's events, oldest first.
func allEvents(t *testing.T, st *store.Store, account string, f store.EventFilter) []eventHead {
	t.Helper()
	p, err := st.ListEvents(context.Background(), account, f, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []eventHead
	for _, b := range p.Items {
		out = append([]eventHead{head(t, b)}, out...)
	}
	return out
}

// waitFor polls cond every 50 ms until it holds, failing the test with what
// after 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %s", what)
		}
	}
}

// verifyStandard checks a delivery with the Standard Webhooks reference
// library (infra/conformance/verify-standard.mjs) keyed by secret, and
// returns the error it reports, if any.
func verifyStandard(t *testing.T, r received, secret, wantID string) error {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"body": string(r.body), "headers": map[string]string{
		"webhook-id": r.header.Get(webhook.HeaderID), "webhook-timestamp": r.header.Get(webhook.HeaderTimestamp),
		"webhook-signature": r.header.Get(webhook.HeaderStandardSignature),
	}})
	cmd := exec.Command("node", "../../infra/conformance/verify-standard.mjs", secret)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return &verifyError{string(out)}
	}
	if got := strings.TrimSpace(string(out)); got != wantID {
		return &verifyError{"verified payload id " + got + ", want " + wantID}
	}
	return nil
}

type verifyError struct{ msg string }

func (e *verifyError) Error() string { return e.msg }

const saleBody = `{"customer_id":1,"sub_total_amount":"10.00","total_amount":"10.00","amount_paid":"10.00","invoice_type":"pos","payment_type":"Cash","due_date":"2026-12-01"}`

// TestEndpointEventsFanOut: each endpoint gets the events it subscribes to
// and no other ("sale.*" gets the sale's event, not the customer's nor the
// payment's), each exactly as the events feed shows it, its webhook-id the
// event's id, signed the Standard Webhooks way only. An endpoint whose
// secret was rotated with an overlap carries both signatures, and the
// reference library verifies each delivery with either secret. The
// account's callback URL still gets the payment's notification, as before,
// and nothing else.
func TestEndpointEventsFanOut(t *testing.T) {
	if _, err := os.Stat("../../infra/conformance/node_modules/standardwebhooks"); err != nil {
		t.Fatalf("standardwebhooks is not installed: run make deps (%v)", err)
	}
	s := newEndpointShop(t, []time.Duration{time.Hour}, nil)
	ctx := context.Background()
	callback, sales, customers, every := newInbox(t), newInbox(t), newInbox(t), newInbox(t)
	const callbackSecret = "callback-secret-123456"
	if err := s.st.SetWebhook(ctx, s.account.ID, business.Webhook{CallbackURL: callback.URL, CallbackSecret: callbackSecret}); err != nil {
		t.Fatal(err)
	}
	salesEP, oldSecret := s.endpoint(t, sales.URL, "sale.*")
	_, customersSecret := s.endpoint(t, customers.URL, "customer.*")
	everyEP, everySecret := s.endpoint(t, every.URL, "*")
	newSecret := business.NewEndpointSecret()
	if err := s.st.RotateEndpointSecret(ctx, s.account.ID, salesEP.ID, newSecret, time.Hour, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}

	s.post("/api/v1/customers/add", `{"name":"Ama"}`)
	s.post("/api/v1/sales/add", saleBody)
	evs := allEvents(t, s.st, s.account.ID, store.EventFilter{})
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	if !slices.Contains(types, business.EventCustomerCreated) || !slices.Contains(types, business.EventSaleCreated) ||
		!slices.Contains(types, business.EventPaymentReceived) {
		t.Fatalf("events %v: want a customer's, a sale's and a payment's", types)
	}
	// The "*" endpoint gets every event from its own webhook_endpoint.created
	// on: once it has, the stream records of all of them were handled. (The
	// set-up's events before it reach it only when the stream is read after
	// it was made.)
	var since []string
	for i, e := range evs {
		if e.Type == business.EventEndpointCreated && e.Resource.ID == everyEP.ID {
			for _, later := range evs[i:] {
				since = append(since, later.ID)
			}
		}
	}
	waitFor(t, "the \"*\" endpoint got every event", func() bool {
		got := every.ids()
		return len(since) > 0 && !slices.ContainsFunc(since, func(id string) bool { return !slices.Contains(got, id) })
	})
	waitFor(t, "the sale's event arrived", func() bool { return len(sales.ids()) >= 1 })
	waitFor(t, "the customer's event arrived", func() bool { return len(customers.ids()) >= 1 })
	waitFor(t, "the payment's notification arrived", func() bool { return len(callback.ids()) >= 1 })

	check := func(name string, in *inbox, family string, secrets ...string) {
		t.Helper()
		got := in.all()
		for _, r := range got {
			h := head(t, r.body)
			if family != "" && business.EventFamily(h.Type) != family {
				t.Errorf("%s got a %s event", name, h.Type)
			}
			if r.header.Get(webhook.HeaderID) != h.ID {
				t.Errorf("%s: webhook-id %q for event %s", name, r.header.Get(webhook.HeaderID), h.ID)
			}
			want, err := s.st.FindEvent(ctx, s.account.ID, h.ID)
			if err != nil || string(want) != string(r.body) {
				t.Errorf("%s: body %s, the event is %s (%v)", name, r.body, want, err)
			}
			if r.header.Get(webhook.HeaderSignature) != "" {
				t.Errorf("%s: an endpoint's delivery carries the callback URL's signature header", name)
			}
			if sigs := strings.Fields(r.header.Get(webhook.HeaderStandardSignature)); len(sigs) != len(secrets) {
				t.Errorf("%s: webhook-signature %q, want %d signatures", name, r.header.Get(webhook.HeaderStandardSignature), len(secrets))
			}
			for i, secret := range secrets {
				if err := verifyStandard(t, r, secret, h.ID); err != nil {
					t.Errorf("%s: standardwebhooks with secret %d of %d rejected event %s: %v", name, i+1, len(secrets), h.ID, err)
				}
			}
		}
	}
	check("sale.*", sales, "sale", newSecret, oldSecret)
	check("customer.*", customers, "customer", customersSecret)
	check("*", every, "", everySecret)
	if got := sales.ids(); len(got) != 1 || head(t, sales.all()[0].body).Type != business.EventSaleCreated {
		t.Errorf("sale.* got %v, want the sale.created event only", got)
	}
	if got := customers.ids(); len(got) != 1 || head(t, customers.all()[0].body).Type != business.EventCustomerCreated {
		t.Errorf("customer.* got %v, want the customer.created event only", got)
	}
	// The callback URL: the payment's notification only, as before.
	got := callback.all()
	var p webhook.Payload
	if len(got) != 1 || json.Unmarshal(got[0].body, &p) != nil || p.Message != "Payment received" || p.Amount != "10.00" {
		t.Fatalf("callback URL got %d requests, the first %s", len(got), got[0].body)
	}
	if got[0].header.Get(webhook.HeaderID) != "msg_"+p.TransactionID || got[0].header.Get(webhook.HeaderSignature) != webhook.Sign(got[0].body, callbackSecret) {
		t.Errorf("callback headers %v", got[0].header)
	}
	if err := (webhook.Verifier{Secret: callbackSecret}).Verify(got[0].header, got[0].body); err != nil {
		t.Errorf("callback delivery: %v", err)
	}
}

// TestHangingEndpointHoldsNoOther: two endpoints of one merchant get the
// same events; one hangs (until the test ends), with a backlog deeper than
// all the slots a lone queue may take, and the other gets every event while
// the hanging one still holds (none of its deliveries went through), each
// endpoint having its own queue, share and circuit. (How fast is measured
// by make bench, not here.)
func TestHangingEndpointHoldsNoOther(t *testing.T) {
	release := make(chan struct{})
	var hangCalls atomic.Int32
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hangCalls.Add(1)
		<-release
	}))
	t.Cleanup(hanging.Close)
	t.Cleanup(func() { close(release) }) // before Close, which waits for the handlers
	// Started after the receiver, so stopped before it: the attempts
	// still hanging end with the dispatcher.
	s := newEndpointShop(t, []time.Duration{time.Hour}, nil)
	ctx := context.Background()
	healthy := newInbox(t)
	hang, _ := s.endpoint(t, hanging.URL, "customer.*")
	good, _ := s.endpoint(t, healthy.URL, "customer.*")
	queue := store.EndpointQueue(s.account.ID, hang.ID)
	now := time.Now().UTC()
	for i := 0; i < webhook.MaxBeyondTurn+webhook.MaxInFlightAccount; i++ {
		id := business.NewEventIDs(now).Next()
		if _, err := s.st.CreateDelivery(ctx, business.Delivery{AccountID: queue, TransactionID: id, WebhookID: id,
			Payload: []byte(`{}`), State: business.DeliveryPending, NextAt: now, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.st.Wake(ctx, queue, now); err != nil {
		t.Fatal(err)
	}
	const n = 2 * webhook.MaxInFlightAccount
	for i := 0; i < n; i++ {
		s.post("/api/v1/customers/add", `{"name":"Ama"}`)
	}
	for deadline := time.Now().Add(30 * time.Second); len(healthy.ids()) < n; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s the healthy endpoint got %d of %d events (%d recorded), the hanging one %d attempts",
				len(healthy.ids()), n, len(s.deliveries(t, store.EndpointQueue(s.account.ID, good.ID))), hangCalls.Load())
		}
	}
	if hangCalls.Load() == 0 {
		t.Fatal("the hanging endpoint was never attempted")
	}
	for _, d := range s.deliveries(t, queue) {
		if d.State == business.DeliveryDelivered {
			t.Fatalf("a delivery of the hanging endpoint went through: %+v", d)
		}
	}
}

// TestEndpointDisabledAfterFailing: an endpoint whose every attempt fails
// (its circuit's probes included) for DisableAfter is disabled, with a
// reason and the webhook_endpoint.disabled event, and its queue parked.
// Events meanwhile get their deliveries recorded, not attempted; enabled
// again, the endpoint gets them all, the disabled event included.
func TestEndpointDisabledAfterFailing(t *testing.T) {
	schedule := make([]time.Duration, 60)
	for i := range schedule {
		schedule[i] = 200 * time.Millisecond
	}
	s := newEndpointShop(t, schedule, func(svc *webhook.Service) {
		svc.DisableAfter = 3 * time.Second
		svc.Probe = 400 * time.Millisecond
	})
	ctx := context.Background()
	rc := newInbox(t)
	rc.status.Store(503)
	ep, _ := s.endpoint(t, rc.URL, "*")
	queue := store.EndpointQueue(s.account.ID, ep.ID)
	s.post("/api/v1/customers/add", `{"name":"Ama"}`)
	waitFor(t, "the failing endpoint was disabled", func() bool {
		e, err := s.st.FindEndpoint(ctx, s.account.ID, ep.ID)
		return err == nil && e.Status == business.EndpointDisabled
	})
	e, _ := s.st.FindEndpoint(ctx, s.account.ID, ep.ID)
	if e.DisabledReason == "" || e.DisabledAt.IsZero() {
		t.Errorf("disabled endpoint %+v: want a reason and a time", e)
	}
	disabled := allEvents(t, s.st, s.account.ID, store.EventFilter{Type: business.EventEndpointDisabled})
	if len(disabled) != 1 || disabled[0].Resource.ID != ep.ID {
		t.Fatalf("webhook_endpoint.disabled events %+v", disabled)
	}
	waitFor(t, "the disabled endpoint's queue was parked", func() bool {
		q, err := s.st.FindQueue(ctx, queue)
		return err == nil && q.ReadyAt.IsZero() && !q.Open() && q.FailingSince.IsZero()
	})

	// Disabled: new events get their deliveries, not attempted.
	before := len(rc.all())
	s.post("/api/v1/customers/add", `{"name":"Kofi"}`)
	s.post("/api/v1/customers/add", `{"name":"Esi"}`)
	want := allEvents(t, s.st, s.account.ID, store.EventFilter{})
	if len(want) != 5 { // the endpoint's creation, three customers and its disabling
		t.Fatalf("%d events, want 5", len(want))
	}
	waitFor(t, "every event has its delivery", func() bool {
		p, err := s.st.ListDeliveries(ctx, queue, "", 100, "")
		return err == nil && len(p.Items) == len(want)
	})
	for _, d := range s.deliveries(t, queue) {
		if d.State != business.DeliveryPending {
			t.Errorf("delivery %s %s while the endpoint is disabled", d.TransactionID, d.State)
		}
	}
	time.Sleep(time.Second) // the dispatcher polls every 50 ms meanwhile
	if after := len(rc.all()); after != before {
		t.Fatalf("%d attempts made to the disabled endpoint", after-before)
	}
	for _, d := range s.deliveries(t, queue) {
		// Ids sort by time: the events before the disabling were attempted.
		if d.TransactionID > disabled[0].ID && d.Attempt != 0 {
			t.Errorf("delivery %s of the disabled endpoint attempted %d times", d.TransactionID, d.Attempt)
		}
	}

	// Enabled again (its receiver answering now): everything arrives.
	rc.status.Store(200)
	if _, err := s.st.UpdateEndpoint(ctx, s.account.ID, ep.ID, func(e *business.Endpoint) error {
		e.Status = business.EndpointEnabled
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want = allEvents(t, s.st, s.account.ID, store.EventFilter{}) // and the enabling
	waitFor(t, "every delivery was delivered after the endpoint was enabled", func() bool {
		p, err := s.st.ListDeliveries(ctx, queue, business.DeliveryDelivered, 100, "")
		return err == nil && len(p.Items) == len(want)
	})
	var got []string
	for _, r := range rc.all() {
		if r.header.Get(webhook.HeaderID) != "" && !slices.Contains(got, head(t, r.body).Type) {
			got = append(got, head(t, r.body).Type)
		}
	}
	if !slices.Contains(got, business.EventEndpointDisabled) || !slices.Contains(got, business.EventCustomerCreated) {
		t.Errorf("the endpoint got events of types %v", got)
	}
	if e, _ := s.st.FindEndpoint(ctx, s.account.ID, ep.ID); e.Status != business.EndpointEnabled {
		t.Errorf("endpoint %s after it delivered again", e.Status)
	}
}

// TestProbeKeepsTheStreak: while an endpoint's circuit is open its probes
// are its only attempts. A probe that finds nothing due closes the circuit
// but does not end the streak of failures (no attempt succeeded); a failed
// probe extends it, and disables the endpoint once it has lasted
// DisableAfter; the disabled endpoint's queue is then parked, its circuit
// closed and its streak ended.
func TestProbeKeepsTheStreak(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "SHOPPR")
	rc := newInbox(t)
	rc.status.Store(503)
	ep, err := st.CreateEndpoint(ctx, a.ID, business.Endpoint{URL: rc.URL, EnabledEvents: []string{"*"}}, business.NewEndpointSecret())
	if err != nil {
		t.Fatal(err)
	}
	queue := store.EndpointQueue(a.ID, ep.ID)
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Hour}, testdb.Quiet())
	svc.DisableAfter = 30 * time.Minute
	svc.Probe = time.Millisecond // a failed probe holds the circuit until the next pass
	// Failures an hour ago opened the circuit; its probe is long due.
	start := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	fail := func() {
		t.Helper()
		for i := 0; i < webhook.BreakerThreshold; i++ {
			if _, _, _, err := st.AttemptFailed(ctx, queue, start, webhook.BreakerThreshold, time.Second, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	fail()
	if q, err := st.FindQueue(ctx, queue); err != nil || !q.Open() || !q.FailingSince.Equal(start) {
		t.Fatalf("queue after %d failures: %+v (%v)", webhook.BreakerThreshold, q, err)
	}
	if err := svc.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if q, err := st.FindQueue(ctx, queue); err != nil || q.Open() || !q.FailingSince.Equal(start) {
		t.Fatalf("queue after a probe with nothing due: %+v (%v), want closed, failing since %v", q, err, start)
	}
	// Open again, with a delivery due: the probe is attempted and fails.
	fail()
	now := time.Now().UTC()
	id := business.NewEventIDs(now).Next()
	if _, err := st.CreateDelivery(ctx, business.Delivery{AccountID: queue, TransactionID: id, WebhookID: id,
		Payload: []byte(`{}`), State: business.DeliveryPending, NextAt: now, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.Wake(ctx, queue, now); err != nil {
		t.Fatal(err)
	}
	if err := svc.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(rc.all()); n != 1 {
		t.Fatalf("%d attempts, want the probe's", n)
	}
	if e, err := st.FindEndpoint(ctx, a.ID, ep.ID); err != nil || e.Status != business.EndpointDisabled {
		t.Fatalf("endpoint after its probe failed an hour into the streak: %+v (%v)", e, err)
	}
	if evs := allEvents(t, st, a.ID, store.EventFilter{Type: business.EventEndpointDisabled}); len(evs) != 1 || evs[0].Resource.ID != ep.ID {
		t.Fatalf("webhook_endpoint.disabled events %+v", evs)
	}
	time.Sleep(time.Second) // the failed probe held the circuit to the next second
	if err := svc.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if q, err := st.FindQueue(ctx, queue); err != nil || !q.ReadyAt.IsZero() || q.Open() || !q.FailingSince.IsZero() {
		t.Fatalf("disabled endpoint's queue %+v (%v), want parked, closed and its streak ended", q, err)
	}
	if n := len(rc.all()); n != 1 {
		t.Fatalf("%d attempts, the disabled endpoint's included", n)
	}
}

// deliveries returns every delivery of a queue.
func (s *endpointShop) deliveries(t *testing.T, queue string) []business.Delivery {
	t.Helper()
	p, err := s.st.ListDeliveries(context.Background(), queue, "", 100, "")
	if err != nil {
		t.Fatal(err)
	}
	return p.Items
}
