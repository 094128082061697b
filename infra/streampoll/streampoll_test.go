package streampoll

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// shopAPI gives account a's webhook to url and serves the API over st; it
// returns a client that posts with a's key and fails the test on anything
// but 200.
func shopAPI(t *testing.T, st *store.Store, accountID, key, url string) func(path, body string) string {
	t.Helper()
	if err := st.SetWebhook(context.Background(), accountID, business.Webhook{CallbackURL: url}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewServer(st, testdb.Quiet(), 0).Handler(api.Routes))
	t.Cleanup(srv.Close)
	return func(path, body string) string {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("%s: %v %v", path, res, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return string(b)
	}
}

// TestPollerNeverSkipsAFailedRecord: the handler fails whole batches and
// single records for a while (as when DynamoDB fails mid-batch), fewer times
// than MaximumRetryAttempts; the poller hands them again, as Lambda does with
// ReportBatchItemFailures, until every payment has its delivery.
func TestPollerNeverSkipsAFailedRecord(t *testing.T) {
	st, cfg := testdb.NewStreamStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	quiet := testdb.Quiet()
	a, key := testdb.NewAccount(t, st, "Shop", "SHOP1")
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer rc.Close()
	post := shopAPI(t, st, a.ID, key, rc.URL)
	post("/api/v1/customers/add", `{"name":"Ama"}`)
	const payments = 12
	for i := 0; i < payments; i++ {
		post("/api/v1/sales/add", `{"customer_id":1,"sub_total_amount":"10.00","total_amount":"10.00","amount_paid":"4.00","invoice_type":"pos","payment_type":"Cash","due_date":"2026-12-01"}`)
	}
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Second}, quiet)
	var calls atomic.Int32
	var mu sync.Mutex
	failedOnce := map[string]bool{}
	flaky := func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		switch n := calls.Add(1); {
		case n <= 2:
			return events.DynamoDBEventResponse{}, fmt.Errorf("injected: the whole batch fails")
		case n <= 4:
			// One record in the middle fails, as a DynamoDB error would.
			var resp events.DynamoDBEventResponse
			mu.Lock()
			for _, r := range ev.Records[len(ev.Records)/2:] {
				if !failedOnce[r.Change.SequenceNumber] {
					failedOnce[r.Change.SequenceNumber] = true
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
					break
				}
			}
			mu.Unlock()
			// The records before the failed one are handled.
			var handled events.DynamoDBEvent
			for _, r := range ev.Records {
				if len(resp.BatchItemFailures) > 0 && r.Change.SequenceNumber == resp.BatchItemFailures[0].ItemIdentifier {
					break
				}
				handled.Records = append(handled.Records, r)
			}
			if _, err := svc.HandleStream(ctx, handled); err != nil {
				return resp, err
			}
			return resp, nil
		}
		return svc.HandleStream(ctx, ev)
	}
	streams, err := app.NewStreams(ctx, cfg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	go Poll(ctx, st.Client(), streams, cfg.TableName, webhook.Streamed, flaky, MaximumRetryAttempts, quiet)
	deadline := time.Now().Add(30 * time.Second)
	for {
		page, err := st.ListDeliveries(ctx, a.ID, "", 100, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) == payments {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d payments have a delivery after %d handler calls", len(page.Items), payments, calls.Load())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if calls.Load() <= 4 {
		t.Fatalf("the failures were not exercised: %d calls", calls.Load())
	}
}

// TestSkippedBatchDeliveredBySweep: the stream consumer fails a whole batch on
// every try, until the poller skips it as Lambda does after its last retry:
// no payment has a delivery. The dispatcher's sweep finds the payments and
// records their deliveries, with the webhook-ids the stream would have given,
// and every webhook arrives once; a second sweep finds nothing to do.
func TestSkippedBatchDeliveredBySweep(t *testing.T) {
	st, cfg := testdb.NewStreamStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	quiet := testdb.Quiet()
	a, key := testdb.NewAccount(t, st, "Shop", "SHOP1")
	var mu sync.Mutex
	got := map[string]int{} // webhook-id -> arrivals
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.Header.Get(webhook.HeaderID)]++
		mu.Unlock()
	}))
	defer rc.Close()
	post := shopAPI(t, st, a.ID, key, rc.URL)
	post("/api/v1/customers/add", `{"name":"Ama"}`)
	const payments = 6
	for i := 0; i < payments; i++ {
		post("/api/v1/sales/add", `{"customer_id":1,"sub_total_amount":"10.00","total_amount":"10.00","amount_paid":"4.00","invoice_type":"pos","payment_type":"Cash","due_date":"2026-12-01"}`)
	}
	var calls atomic.Int32
	failing := func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		calls.Add(1)
		return events.DynamoDBEventResponse{}, fmt.Errorf("injected: the consumer fails every try")
	}
	streams, err := app.NewStreams(ctx, cfg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	const retries = 2
	var logs testdb.Buffer
	go Poll(ctx, st.Client(), streams, cfg.TableName, webhook.Streamed, failing, retries, slog.New(slog.NewJSONHandler(&logs, nil)))
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(logs.String(), "batch skipped after its last retry"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the poller did not skip the failing batch: %d handler calls", calls.Load())
		}
	}
	if n := calls.Load(); n < retries+1 {
		t.Fatalf("%d handler calls before the skip, want %d", n, retries+1)
	}
	page, err := st.ListDeliveries(ctx, a.ID, "", 100, "")
	if err != nil || len(page.Items) != 0 {
		t.Fatalf("%d deliveries after the skipped batch (%v): the consumer never recorded one", len(page.Items), err)
	}

	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Second}, quiet)
	if n, err := svc.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("sweep of payments younger than SweepDelay recorded %d (%v), want 0", n, err)
	}
	svc = webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Second}, quiet)
	svc.SweepDelay = -time.Second // the payments are old enough
	if n, err := svc.Sweep(ctx); err != nil || n != payments {
		t.Fatalf("the sweep recorded %d deliveries (%v), want %d", n, err, payments)
	}
	if err := svc.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	page, err = st.ListDeliveries(ctx, a.ID, "", 100, "")
	if err != nil || len(page.Items) != payments {
		t.Fatalf("%d deliveries (%v), want %d", len(page.Items), err, payments)
	}
	mu.Lock()
	for _, d := range page.Items {
		if d.State != business.DeliveryDelivered || got[d.WebhookID] != 1 || d.WebhookID != "msg_"+d.TransactionID {
			t.Errorf("delivery %s: %s, webhook-id %s arrived %d times", d.TransactionID, d.State, d.WebhookID, got[d.WebhookID])
		}
	}
	mu.Unlock()
	// Sweeping the same payments again, from scratch, records nothing.
	if _, err := st.Client().DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(st.Table()), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "SWEEP"}, "SK": &types.AttributeValueMemberS{Value: "PAYMENTS"}}}); err != nil {
		t.Fatal(err)
	}
	if n, err := svc.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("a second sweep recorded %d (%v), want 0", n, err)
	}
	if err := svc.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, d := range page.Items {
		if got[d.WebhookID] != 1 {
			t.Errorf("after a second sweep %s arrived %d times", d.WebhookID, got[d.WebhookID])
		}
	}
}
