package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/events"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// TestHandleStreamFixture feeds a real DynamoDB Streams event to the
// deliver-webhooks handler: the payment insert is delivered once, the sale
// update is ignored, the payment of an unknown account is passed over
// (logged, not reported: no retry can record it), and the event insert is
// delivered, as it is, to the account's endpoint that subscribes to it.
func TestHandleStreamFixture(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "SHOP1")
	var got atomic.Int32
	var body atomic.Value
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body.Store(b)
		got.Add(1)
	}))
	defer rc.Close()
	if err := st.SetWebhook(ctx, a.ID, business.Webhook{CallbackURL: rc.URL}); err != nil {
		t.Fatal(err)
	}
	var epGot atomic.Int32
	var epID, epBody atomic.Value
	erc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		epBody.Store(b)
		epID.Store(r.Header.Get(webhook.HeaderID))
		epGot.Add(1)
	}))
	defer erc.Close()
	if _, err := st.CreateEndpoint(ctx, a.ID, business.Endpoint{URL: erc.URL, EnabledEvents: []string{"customer.*"}}, business.NewEndpointSecret()); err != nil {
		t.Fatal(err)
	}
	ev := fixtureBatch(t, a.ID)
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Second}, testdb.Quiet())
	resp, err := svc.HandleStream(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %+v: the payment of an unknown account is passed over, never reported (it would hold the shard)", resp.BatchItemFailures)
	}
	if got.Load() != 0 || epGot.Load() != 0 {
		t.Fatalf("recording a delivery sent it (%d, %d): the stream must never wait on a receiver", got.Load(), epGot.Load())
	}
	if err := svc.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got.Load() != 1 {
		t.Fatalf("%d deliveries, want 1", got.Load())
	}
	var p webhook.Payload
	_ = json.Unmarshal(body.Load().([]byte), &p)
	if p.Amount != "50.00" || p.TransactionID != "txn_fixture0001" || p.BusinessCode != "SHOP1" || p.Currency != "GHS" {
		t.Fatalf("payload %+v", p)
	}
	const evt = "evt_019c1a2b3c4d012345678901"
	want := ev.Records[3].Change.NewImage["body"].String()
	if epGot.Load() != 1 || epID.Load() != evt || string(epBody.Load().([]byte)) != want {
		t.Fatalf("the endpoint got %d deliveries, the last %v: %s; want %s", epGot.Load(), epID.Load(), epBody.Load(), want)
	}
	// The same batch again (Lambda retrying it): no second delivery.
	if _, err := svc.HandleStream(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if err := svc.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got.Load() != 1 || epGot.Load() != 1 {
		t.Fatalf("%d and %d deliveries after a replayed batch, want 1 each", got.Load(), epGot.Load())
	}
	d, err := st.FindDelivery(ctx, a.ID, "txn_fixture0001")
	if err != nil || d.State != business.DeliveryDelivered || len(d.Attempts) != 1 {
		t.Fatalf("delivery %+v %v", d, err)
	}
}

// TestConcurrentRetryRunsDeliverOnce runs several retry runs at once over
// one due delivery: exactly one of them makes the attempt.
func TestConcurrentRetryRunsDeliverOnce(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "SHOP1")
	var got atomic.Int32
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond)
		got.Add(1)
	}))
	defer rc.Close()
	_ = st.SetWebhook(ctx, a.ID, business.Webhook{CallbackURL: rc.URL})
	now := time.Now().UTC().Add(-time.Second)
	if _, err := st.CreateDelivery(ctx, business.Delivery{AccountID: a.ID, TransactionID: "txn_r", WebhookID: "msg_txn_r",
		Payload: []byte(`{}`), State: business.DeliveryPending, NextAt: now, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.Wake(ctx, a.ID, now); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 6)
	for i := 0; i < 6; i++ { // six runners, as six processes
		svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Hour}, testdb.Quiet())
		go func() { done <- svc.DispatchOnce(ctx) }()
	}
	for i := 0; i < 6; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if got.Load() != 1 {
		t.Fatalf("%d attempts from 6 concurrent runs, want 1", got.Load())
	}
}

// TestFailedDeliveryMetric: a delivery that uses its last attempt logs one
// line in CloudWatch embedded metric format, the metric the
// WebhooksFailedAlarm watches.
func TestFailedDeliveryMetric(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "SHOP1")
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	defer rc.Close()
	if err := st.SetWebhook(ctx, a.ID, business.Webhook{CallbackURL: rc.URL}); err != nil {
		t.Fatal(err)
	}
	ev := fixtureBatch(t, a.ID)
	var logs strings.Builder
	var mu sync.Mutex
	svc := webhook.NewService(st, webhook.NewSender(true), nil, slog.New(slog.NewJSONHandler(lockedWriter{&mu, &logs}, nil)))
	if _, err := svc.HandleStream(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if err := svc.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	metrics := 0
	for _, line := range strings.Split(logs.String(), "\n") {
		var m struct {
			AWS struct {
				CloudWatchMetrics []struct {
					Namespace string
					Metrics   []struct{ Name string }
				}
			} `json:"_aws"`
			Failed int `json:"DeliveriesFailed"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || len(m.AWS.CloudWatchMetrics) == 0 {
			continue
		}
		cw := m.AWS.CloudWatchMetrics[0]
		if cw.Namespace != webhook.MetricNamespace || len(cw.Metrics) != 1 || cw.Metrics[0].Name != webhook.MetricDeliveriesFailed || m.Failed != 1 {
			t.Fatalf("metric line %s", line)
		}
		metrics++
	}
	if metrics != 1 {
		t.Fatalf("%d metric lines, want 1:\n%s", metrics, logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// fixtureBatch is the stream batch of testdata/stream-batch.json, its
// payments made by account.
func fixtureBatch(t *testing.T, account string) events.DynamoDBEvent {
	t.Helper()
	raw, err := os.ReadFile("testdata/stream-batch.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev events.DynamoDBEvent
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(raw), "{{ACCOUNT}}", account)), &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}
