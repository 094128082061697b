package streampoll

import (
	"context"
	"fmt"
	"io"
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
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/events"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// TestPollerNeverSkipsAFailedRecord: the handler fails whole batches and
// single records for a while (as when DynamoDB fails mid-batch); the poller
// hands them again, as Lambda does with ReportBatchItemFailures, until every
// payment has its delivery.
func TestPollerNeverSkipsAFailedRecord(t *testing.T) {
	st, cfg := testdb.NewStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	quiet := testdb.Quiet()
	a, key := testdb.NewAccount(t, st, "Shop", "SHOP1")
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer rc.Close()
	if err := st.SetWebhook(ctx, a.ID, business.Webhook{CallbackURL: rc.URL}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewServer(st, quiet, 0).Handler(api.Routes))
	defer srv.Close()
	post := func(path, body string) string {
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
	go Poll(ctx, st.Client(), streams, cfg.TableName, flaky, quiet)
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
