package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
	"bizdata/shared/business"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

var settingsRoutes = []struct{ method, path string }{
	{"GET", "/api/v1/user/webhook"},
	{"PUT", "/api/v1/user/webhook"},
	{"POST", "/api/v1/user/webhook/test"},
	{"GET", "/api/v1/user/webhook/deliveries"},
	{"POST", "/api/v1/user/webhook/deliveries/txn_1/redeliver"},
	{"POST", "/api/v1/user/api-key/rotate"},
}

func TestSettingsAuth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, r := range settingsRoutes {
		want(t, e.req(r.method, r.path, "", nil), 401, "Unauthorized: Missing Bearer Token")
		want(t, e.req(r.method, r.path, "bk_live_unknown", nil), 401, "Unauthorized: Invalid API Key")
	}
}

func TestWebhookSettings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.get("/api/v1/user/webhook")
	want(t, r, 200, "Webhook settings found")
	wh := r.data()["webhook"].(map[string]any)
	if wh["callback_url"] != nil || wh["signed"] != false || wh["business_code"] != "KOFI01" || wh["currency"] != "GHS" {
		t.Fatalf("%s", r.raw)
	}
	// Bad values: 400 naming the field, nothing changed.
	for body, name := range map[string]string{
		`{"callback_url":"http://shop.example.com/h"}`:                            "callback_url",
		`{"callback_url":"https://10.0.0.7/h"}`:                                   "callback_url",
		`{"callback_url":"https://localhost/h"}`:                                  "callback_url",
		`{"callback_url":"/relative"}`:                                            "callback_url",
		`{"callback_url":"https://shop.example.com/h","callback_secret":"short"}`: "callback_secret",
		`{"callback_secret":"has spaces in it, 16+ chars"}`:                       "callback_secret",
		`{"callback_url":"https://shop.example.com/h","secret":"x"}`:              "secret",
		`{"callback_url":5}`:                                                      "callback_url",
	} {
		wantRefused(t, e.put("/api/v1/user/webhook", body), name)
	}
	if r := e.get("/api/v1/user/webhook"); r.data()["webhook"].(map[string]any)["callback_url"] != nil {
		t.Fatalf("a refused PUT changed the settings: %s", r.raw)
	}
	secret := "merchant-secret-0123456789"
	r = e.put("/api/v1/user/webhook", map[string]any{"callback_url": "https://shop.example.com/h", "callback_secret": secret})
	want(t, r, 200, "Webhook settings updated")
	if wh := r.data()["webhook"].(map[string]any); wh["callback_url"] != "https://shop.example.com/h" || wh["signed"] != true || wh["updated_at"] == nil {
		t.Fatalf("%s", r.raw)
	}
	if strings.Contains(string(e.get("/api/v1/user/webhook").raw), secret) {
		t.Fatal("the secret was returned")
	}
	// Absent keeps the secret; null removes it; a null URL stops notifications.
	r = e.put("/api/v1/user/webhook", map[string]any{"callback_url": "https://shop.example.com/other"})
	if wh := r.data()["webhook"].(map[string]any); wh["signed"] != true {
		t.Fatalf("absent secret not kept: %s", r.raw)
	}
	r = e.put("/api/v1/user/webhook", map[string]any{"callback_secret": nil, "callback_url": nil})
	if wh := r.data()["webhook"].(map[string]any); wh["signed"] != false || wh["callback_url"] != nil {
		t.Fatalf("null did not clear: %s", r.raw)
	}
	r = e.post("/api/v1/user/webhook/test", nil)
	want(t, r, 400, "")
	if !strings.Contains(r.body["error"].(string), "no callback URL") {
		t.Fatalf("%s", r.raw)
	}
}

// TestDeliveriesIsolation: an account lists and redelivers only its own
// deliveries; another account's is 404 exactly like a missing one.
func TestDeliveriesIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other, otherKey := e.newAccount("Other", "OTHER1")
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	for _, d := range []business.Delivery{
		{AccountID: e.acct.ID, TransactionID: "txn_a1", WebhookID: "msg_txn_a1", Payload: []byte(`{"amount":"10.00","invoice_code":"123456"}`), State: business.DeliveryDelivered, CreatedAt: now},
		{AccountID: e.acct.ID, TransactionID: "txn_a2", WebhookID: "msg_txn_a2", Payload: []byte(`{"amount":"5.00"}`), State: business.DeliveryPending, NextAt: now, CreatedAt: now.Add(time.Second)},
		{AccountID: other.ID, TransactionID: "txn_b1", WebhookID: "msg_txn_b1", Payload: []byte(`{"amount":"7.00"}`), State: business.DeliveryFailed, CreatedAt: now},
	} {
		if _, err := e.store.CreateDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	r := e.get("/api/v1/user/webhook/deliveries")
	want(t, r, 200, "Deliveries found: 2")
	list := r.data()["deliveries"].([]any)
	if first := list[0].(map[string]any); first["transaction_id"] != "txn_a2" || first["next_attempt_at"] == nil {
		t.Fatalf("newest first, pending with its next attempt: %s", r.raw)
	}
	if d := list[1].(map[string]any); d["invoice_code"] != "123456" || d["amount"] != "10.00" || d["state"] != "delivered" {
		t.Fatalf("%s", r.raw)
	}
	want(t, e.get("/api/v1/user/webhook/deliveries?state=failed"), 200, "Deliveries found: 0")
	want(t, e.get("/api/v1/user/webhook/deliveries?state=lost"), 400, "")
	want(t, e.req("GET", "/api/v1/user/webhook/deliveries?state=failed", otherKey, nil), 200, "Deliveries found: 1")

	want(t, e.post("/api/v1/user/webhook/deliveries/txn_b1/redeliver", nil), 404, "Delivery not found")
	want(t, e.post("/api/v1/user/webhook/deliveries/txn_none/redeliver", nil), 404, "Delivery not found")
	want(t, e.post("/api/v1/user/webhook/deliveries/txn_a2/redeliver", nil), 409, "")
	want(t, e.post("/api/v1/user/webhook/deliveries/txn_a1/redeliver", map[string]any{"now": true}), 400, "")
	r = e.post("/api/v1/user/webhook/deliveries/txn_a1/redeliver", "{}")
	want(t, r, 200, "Delivery queued")
	if d := r.data()["delivery"].(map[string]any); d["state"] != "pending" || d["webhook_id"] != "msg_txn_a1" {
		t.Fatalf("%s", r.raw)
	}
	want(t, e.post("/api/v1/user/webhook/deliveries/txn_a1/redeliver", nil), 409, "")
	if d, _ := e.store.FindDelivery(ctx, other.ID, "txn_b1"); d.State != business.DeliveryFailed {
		t.Fatalf("another account's delivery changed: %+v", d)
	}
}

// TestTestNotification sends a signed test notification to a real receiver;
// no payment record is written.
func TestTestNotification(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var got http.Header
	var body []byte
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		body, _ = io.ReadAll(r.Body)
		w.WriteHeader(204)
	}))
	defer rc.Close()
	srv := httptest.NewServer(api.NewServer(e.store, testdb.Quiet(), 0).AllowPrivateWebhooks(true).Handler(api.Routes))
	defer srv.Close()
	p := &env{t: t, store: e.store, srv: srv, key: e.key, acct: e.acct}
	want(t, p.put("/api/v1/user/webhook", map[string]any{"callback_url": rc.URL, "callback_secret": "test-secret-0123456789"}), 200, "")
	before := tableCount(t, e)
	r := p.post("/api/v1/user/webhook/test", nil)
	want(t, r, 200, "Test notification sent")
	d := r.data()["delivery"].(map[string]any)
	if d["delivered"] != true || d["status_code"] != float64(204) || !strings.HasPrefix(d["webhook_id"].(string), "msg_test_") {
		t.Fatalf("%s", r.raw)
	}
	if !strings.Contains(string(body), `"message":"Test notification"`) || !strings.Contains(string(body), `"amount":"0.00"`) || got.Get("signature") == "" {
		t.Fatalf("receiver got %s %v", body, got)
	}
	if after := tableCount(t, e); after != before {
		t.Fatalf("a test notification wrote %d records", after-before)
	}
}

// TestRotateKey: the new key works at once; the old one stops at once on
// this process, even with a warm key cache.
func TestRotateKey(t *testing.T) {
	t.Parallel()
	e := newEnvTTL(t, time.Minute)
	want(t, e.get("/api/v1/user/authenticate"), 200, "") // the old key is cached now
	want(t, e.post("/api/v1/user/api-key/rotate", map[string]any{"keep": true}), 400, "")
	r := e.post("/api/v1/user/api-key/rotate", nil)
	want(t, r, 200, "API key rotated")
	newKey := r.data()["api_key"].(string)
	if !strings.HasPrefix(newKey, "bk_live_") || newKey == e.key {
		t.Fatalf("%s", r.raw)
	}
	want(t, e.req("GET", "/api/v1/user/authenticate", newKey, nil), 200, "Authenticated")
	want(t, e.get("/api/v1/user/authenticate"), 401, "Unauthorized: Invalid API Key")
}

// privateWebhooks is e served by an API that lets callback URLs reach local
// receivers, as the devserver does.
func privateWebhooks(t *testing.T, e *env) *env {
	t.Helper()
	srv := httptest.NewServer(api.NewServer(e.store, testdb.Quiet(), 0).AllowPrivateWebhooks(true).Handler(api.Routes))
	t.Cleanup(srv.Close)
	return &env{t: t, store: e.store, srv: srv, key: e.key, acct: e.acct}
}

// TestTestNotificationTimesOut: a receiver that never answers is given up
// after webhook.TestTimeout (5 s, not the 10 s of a payment's attempt), and
// the API answers its own envelope saying so, well within the function's
// time budget.
func TestTestNotificationTimesOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	release := make(chan struct{})
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // hang until the sender gives up, or the test ends
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer rc.Close()
	defer close(release)
	p := privateWebhooks(t, e)
	want(t, p.put("/api/v1/user/webhook", map[string]any{"callback_url": rc.URL + "/hook"}), 200, "")
	r := p.post("/api/v1/user/webhook/test", nil)
	want(t, r, 200, "Test notification sent")
	d := r.data()["delivery"].(map[string]any)
	if d["delivered"] != false || d["status_code"] != nil || d["error"] != "timed out after 5s" {
		t.Fatalf("%s", r.raw)
	}
}

// TestTestNotificationLimit: an account sends at most
// api.TestSendsPerMinute test notifications a minute; the next is 429 with
// Retry-After and never reaches the receiver. Another account is not
// limited by it.
func TestTestNotificationLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var received atomic.Int64
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		w.WriteHeader(204)
	}))
	defer rc.Close()
	p := privateWebhooks(t, e)
	_, otherKey := e.newAccount("Other Shop", "OTHER7")
	for _, key := range []string{e.key, otherKey} {
		want(t, p.req("PUT", "/api/v1/user/webhook", key, map[string]any{"callback_url": rc.URL}), 200, "")
	}
	// The limit counts in fixed one-minute windows: send all six in one.
	if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < 5*time.Second {
		time.Sleep(left + 100*time.Millisecond)
	}
	for i := 0; i < 5; i++ {
		want(t, p.post("/api/v1/user/webhook/test", nil), 200, "Test notification sent")
	}
	r := p.post("/api/v1/user/webhook/test", nil)
	want(t, r, 429, "")
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || secs < 1 || secs > 60 {
		t.Fatalf("Retry-After %q: %s", r.header.Get("Retry-After"), r.raw)
	}
	msg := fmt.Sprintf("Too many test notifications: at most 5 per minute; try again in %d second", secs)
	if got := r.body["error"].(string); !strings.HasPrefix(got, msg) {
		t.Fatalf("error %q, want %q", got, msg)
	}
	if n := received.Load(); n != 5 {
		t.Fatalf("the receiver got %d test notifications, want 5", n)
	}
	want(t, p.req("POST", "/api/v1/user/webhook/test", otherKey, nil), 200, "Test notification sent")
	if n := received.Load(); n != 6 {
		t.Fatalf("another account's test notification was not sent: the receiver got %d", n)
	}
}

// stall makes every DynamoDB call of operation op hang until its context
// ends, as a database that stopped answering would.
func stall(op string) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("Stall",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					if middleware.GetOperationName(ctx) == op {
						<-ctx.Done()
						return middleware.InitializeOutput{}, middleware.Metadata{}, ctx.Err()
					}
					return next.HandleInitialize(ctx, in)
				}), middleware.Before)
		})
	}
}

// TestTestNotificationKeepsItsDeadline: on Lambda, when DynamoDB stalls
// before a test send, its calls are cut short so that the send's
// TestTimeout still fits before the function's deadline: the function
// answers 503 with Retry-After in time, and API Gateway never answers for it.
func TestTestNotificationKeepsItsDeadline(t *testing.T) {
	t.Parallel()
	base, cfg := testdb.NewStore(t)
	a, key := testdb.NewAccount(t, base, "Slow Shop", "SLOW01")
	if err := base.SetWebhook(context.Background(), a.ID, business.Webhook{CallbackURL: "https://hooks.example.com/h"}); err != nil {
		t.Fatal(err)
	}
	st, err := app.NewStore(context.Background(), cfg, stall("BatchGetItem"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := lambdas.FunctionHandler(api.NewServer(st, testdb.Quiet(), 0), "test-webhook")
	if err != nil {
		t.Fatal(err)
	}
	// The function's deadline, as the Lambda runtime sets it on the context.
	ctx, cancel := context.WithTimeout(context.Background(), webhook.TestTimeout+time.Second)
	defer cancel()
	path := "/api/v1/user/webhook/test"
	res, err := app.LambdaHandler(h)(ctx, events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "$default", RawPath: path, Headers: map[string]string{"authorization": "Bearer " + key},
		RequestContext: events.APIGatewayV2HTTPRequestContext{Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: path}},
	})
	if ctx.Err() != nil {
		t.Fatalf("answered after the function's deadline: %d %s", res.StatusCode, res.Body)
	}
	if err != nil || res.StatusCode != 503 || res.Headers["Retry-After"] == "" || !strings.Contains(res.Body, `"status":503`) {
		t.Fatalf("%v: %d %v %s", err, res.StatusCode, res.Headers, res.Body)
	}
}
