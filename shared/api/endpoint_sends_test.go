package api_test

// Contract tests of an endpoint's test send and of redelivering one of its
// deliveries, against DynamoDB Local and real receivers.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/webhook"
	"bizdata/shared/wire"
)

// hookReceiver is a receiver answering status, keeping each request's
// headers and body.
type hookReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	status  int
	headers []http.Header
	bodies  [][]byte
}

func newHookReceiver(t *testing.T, status int) *hookReceiver {
	t.Helper()
	h := &hookReceiver{status: status}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.headers, h.bodies = append(h.headers, r.Header.Clone()), append(h.bodies, b)
		st := h.status
		h.mu.Unlock()
		w.WriteHeader(st)
	}))
	t.Cleanup(h.Close)
	return h
}

// count is how many requests the receiver got.
func (h *hookReceiver) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.bodies)
}

// last is the receiver's last request.
func (h *hookReceiver) last(t *testing.T) (http.Header, []byte) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.bodies) == 0 {
		t.Fatal("the receiver got nothing")
	}
	return h.headers[len(h.headers)-1], h.bodies[len(h.bodies)-1]
}

// TestEndpointTestSend: the test event reaches the endpoint alone, signed
// with its secret the Standard Webhooks way, whatever it subscribes to; it
// is recorded among the endpoint's deliveries with its attempt, is not in
// the events feed, and can be redelivered once it has ended.
func TestEndpointTestSend(t *testing.T) {
	t.Parallel()
	e := privateWebhooks(t, newEnv(t))
	c := &client{e: e}
	hooks, other := newHookReceiver(t, http.StatusAccepted), newHookReceiver(t, http.StatusOK)
	ep := addEndpoint(t, c, hooks.URL+"/events", "sale.created")
	addEndpoint(t, c, other.URL+"/all", "*")
	base := endpointsPath + "/" + ep.ID

	r := e.post(base+"/test", nil)
	d := dataAs[wire.EndpointDelivery](t, r, "Test event sent", "delivery")
	if !business.ValidEventID(d.EventID) || d.WebhookID != d.EventID || d.EventType != business.EventEndpointTest ||
		d.State != business.DeliveryDelivered || d.NextAttemptAt != nil || len(d.Attempts) != 1 ||
		d.Attempts[0].StatusCode == nil || *d.Attempts[0].StatusCode != http.StatusAccepted || d.Attempts[0].Error != nil {
		t.Fatalf("the test's delivery: %s", r.raw)
	}
	if n := other.count(); n != 0 {
		t.Errorf("another endpoint got %d requests", n)
	}
	h, body := hooks.last(t)
	if err := (webhook.Verifier{Secret: ep.Secret}).Verify(h, body); err != nil {
		t.Errorf("the test event does not verify with the endpoint's secret: %v", err)
	}
	if h.Get("webhook-id") != d.EventID {
		t.Errorf("webhook-id %q, want the event id %s", h.Get("webhook-id"), d.EventID)
	}
	for _, part := range []string{`"type":"webhook_endpoint.test"`, `"id":"` + d.EventID + `"`, `"livemode":true`,
		`"resource":{"type":"webhook_endpoint","id":"` + ep.ID + `"`, `"url":"` + hooks.URL + `/events"`} {
		if !strings.Contains(string(body), part) {
			t.Errorf("the test event has no %s: %s", part, body)
		}
	}

	// Listed with its attempt; not an event of the feed.
	r = e.get(base + "/deliveries")
	list := dataAs[[]wire.EndpointDelivery](t, r, "Deliveries found: 1", "deliveries")
	if list[0].EventID != d.EventID || len(list[0].Attempts) != 1 || list[0].State != business.DeliveryDelivered {
		t.Fatalf("the deliveries: %s", r.raw)
	}
	if r = e.get("/api/v1/events"); strings.Contains(string(r.raw), d.EventID) {
		t.Fatalf("the feed lists the test event: %s", r.raw)
	}

	// Redelivered: a new round, the same id; a second request is 409
	// while it waits.
	redeliver := base + "/deliveries/" + d.EventID + "/redeliver"
	r = e.post(redeliver, nil)
	if got := dataAs[wire.EndpointDelivery](t, r, "Delivery queued", "delivery"); got.State != business.DeliveryPending || got.EventID != d.EventID || got.NextAttemptAt == nil {
		t.Fatalf("the redelivery: %s", r.raw)
	}
	want(t, e.post(redeliver, nil), 409, "")
}

// TestEndpointTestSendFails: a receiver answering 500 makes the test's
// delivery failed, with the attempt's status and no retry; a disabled
// endpoint is tested all the same.
func TestEndpointTestSendFails(t *testing.T) {
	t.Parallel()
	e := privateWebhooks(t, newEnv(t))
	c := &client{e: e}
	hooks := newHookReceiver(t, http.StatusInternalServerError)
	ep := addEndpoint(t, c, hooks.URL, "*")
	want(t, e.put(endpointsPath+"/"+ep.ID, map[string]any{"status": "disabled"}), 200, "")
	r := e.post(endpointsPath+"/"+ep.ID+"/test", nil)
	d := dataAs[wire.EndpointDelivery](t, r, "Test event sent", "delivery")
	if d.State != business.DeliveryFailed || d.NextAttemptAt != nil || len(d.Attempts) != 1 ||
		d.Attempts[0].StatusCode == nil || *d.Attempts[0].StatusCode != http.StatusInternalServerError {
		t.Fatalf("%s", r.raw)
	}
	if n := hooks.count(); n != 1 {
		t.Fatalf("the disabled endpoint's receiver got %d tests, want 1", n)
	}
}

// TestEndpointSendsRefused: what cannot be sent is refused with a message,
// records nothing, reaches no receiver, and uses none of the minute's test
// sends.
func TestEndpointSendsRefused(t *testing.T) {
	t.Parallel()
	e := privateWebhooks(t, newEnv(t))
	c := &client{e: e}
	hooks := newHookReceiver(t, http.StatusOK)
	ep := addEndpoint(t, c, hooks.URL, "*")
	base := endpointsPath + "/" + ep.ID
	_, otherKey := e.newAccount("Other Shop", "OTHER8")
	// The limit counts in fixed one-minute windows: refuse, then send, in one.
	if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < 8*time.Second {
		time.Sleep(left + 100*time.Millisecond)
	}
	before := tableCount(t, e)
	for _, tc := range []struct {
		name, key, path string
		body            any
		code            int
		msg             string
	}{
		{"unknown endpoint", e.key, endpointsPath + "/ep_aaaaaaaaaaaaaaaaaaaa/test", nil, 404, "Webhook endpoint not found"},
		{"not an endpoint id", e.key, endpointsPath + "/nope/test", nil, 404, "Webhook endpoint not found"},
		{"another account's endpoint", otherKey, base + "/test", nil, 404, "Webhook endpoint not found"},
		{"a body", e.key, base + "/test", map[string]any{"url": "https://example.com"}, 400, ""},
		{"unknown delivery", e.key, base + "/deliveries/evt_000000000000000000000001/redeliver", nil, 404, "Delivery not found"},
		{"not an event id", e.key, base + "/deliveries/txn_1/redeliver", nil, 404, "Delivery not found"},
		{"redeliver on another account", otherKey, base + "/deliveries/evt_000000000000000000000001/redeliver", nil, 404, "Webhook endpoint not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want(t, e.req("POST", tc.path, tc.key, tc.body), tc.code, tc.msg)
		})
	}
	if after := tableCount(t, e); after != before {
		t.Fatalf("refused sends wrote %d records", after-before)
	}
	if n := hooks.count(); n != 0 {
		t.Fatalf("refused sends reached the receiver %d times", n)
	}
	for i := range api.TestSendsPerMinute {
		if r := e.post(base+"/test", nil); r.code != 200 {
			t.Fatalf("test send %d after the refusals: %d %s", i+1, r.code, r.raw)
		}
	}
}

// TestEndpointTestSendLimit: an endpoint's test sends count against the
// account's api.TestSendsPerMinute with the payment webhook's: past it,
// either is 429 with Retry-After and reaches no receiver.
func TestEndpointTestSendLimit(t *testing.T) {
	t.Parallel()
	e := privateWebhooks(t, newEnv(t))
	c := &client{e: e}
	hooks := newHookReceiver(t, http.StatusOK)
	ep := addEndpoint(t, c, hooks.URL, "*")
	want(t, e.put("/api/v1/user/webhook", map[string]any{"callback_url": hooks.URL + "/pay"}), 200, "")
	// The limit counts in fixed one-minute windows: send them all in one.
	if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < 5*time.Second {
		time.Sleep(left + 100*time.Millisecond)
	}
	for range api.TestSendsPerMinute - 1 {
		want(t, e.post(endpointsPath+"/"+ep.ID+"/test", nil), 200, "Test event sent")
	}
	want(t, e.post("/api/v1/user/webhook/test", nil), 200, "Test notification sent")
	for _, path := range []string{endpointsPath + "/" + ep.ID + "/test", "/api/v1/user/webhook/test"} {
		r := e.post(path, nil)
		want(t, r, 429, "")
		if r.header.Get("Retry-After") == "" {
			t.Errorf("%s: 429 without Retry-After", path)
		}
	}
	if n := hooks.count(); n != api.TestSendsPerMinute {
		t.Fatalf("the receiver got %d tests, want %d", n, api.TestSendsPerMinute)
	}
	r := e.get(endpointsPath + "/" + ep.ID + "/deliveries")
	wantList[wire.EndpointDelivery](t, r, "Deliveries found: %d", "deliveries", api.TestSendsPerMinute-1)
}
