package streampoll

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/streamimage"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"go.yaml.in/yaml/v3"
)

// retiredTwinThenLive writes, through the API, a paid sale with a test key,
// clears the test data (the test twin's account item is deleted; its
// payment, events and figures stay on the stream), then a paid sale of the
// live account, whose callback URL is url and which has an endpoint
// subscribed to every event. It returns the live account, the endpoint's
// queue and every record of the table's stream, oldest first: the retired
// twin's in front of the live ones.
func retiredTwinThenLive(t *testing.T, url string) (*store.Store, business.Account, string, []st.Record) {
	t.Helper()
	s, cfg := testdb.NewStreamStore(t)
	ctx := context.Background()
	a, liveKey := testdb.NewAccount(t, s, "Shop", "SHOPPOISON")
	if err := s.SetWebhook(ctx, a.ID, business.Webhook{CallbackURL: url}); err != nil {
		t.Fatal(err)
	}
	ep, err := s.CreateEndpoint(ctx, a.ID, business.Endpoint{URL: url, EnabledEvents: []string{"*"}}, business.NewEndpointSecret())
	if err != nil {
		t.Fatal(err)
	}
	_, testKey, err := s.CreateKey(ctx, a.ID, nil, business.APIKey{Name: "ci", Scopes: []string{business.ScopeAll}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewServer(s, testdb.Quiet(), 0).Handler(api.Routes))
	t.Cleanup(srv.Close)
	post := func(key, path, body string, want int) {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("%s: %d %s", path, res.StatusCode, b)
		}
	}
	const sale = `{"customer_id":1,"sub_total_amount":"10.00","total_amount":"10.00","amount_paid":"10.00","invoice_type":"pos","payment_type":"Cash","due_date":"2026-12-01"}`
	post(testKey, "/api/v1/customers/add", `{"name":"Ama"}`, 200)
	post(testKey, "/api/v1/sales/add", sale, 200)
	post(testKey, "/api/v1/test-data/clear", "", 200)
	post(liveKey, "/api/v1/customers/add", `{"name":"Kofi"}`, 200)
	post(liveKey, "/api/v1/sales/add", sale, 200)
	return s, a, store.EndpointQueue(a.ID, ep.ID), streamRecords(t, s, cfg)
}

// streamRecords reads every record of the table's stream, oldest first.
func streamRecords(t *testing.T, s *store.Store, cfg app.Config) []st.Record {
	t.Helper()
	ctx := context.Background()
	streams, err := app.NewStreams(ctx, cfg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := s.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(cfg.TableName)})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: desc.Table.LatestStreamArn})
	if err != nil {
		t.Fatal(err)
	}
	var out []st.Record
	for _, sh := range stream.StreamDescription.Shards {
		it, err := streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
			StreamArn: desc.Table.LatestStreamArn, ShardId: sh.ShardId, ShardIteratorType: st.ShardIteratorTypeTrimHorizon})
		if err != nil {
			t.Fatal(err)
		}
		for next := it.ShardIterator; next != nil; {
			page, err := streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: next})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, page.Records...)
			if len(page.Records) == 0 {
				break
			}
			next = page.NextShardIterator
		}
	}
	if len(stream.StreamDescription.Shards) != 1 {
		t.Fatalf("%d shards: the test needs the records of one shard, in order", len(stream.StreamDescription.Shards))
	}
	return out
}

// handOnce hands records to handle as one invocation of the event source
// mapping would (the same filter and conversion as Poll) and returns its
// answer.
func handOnce(t *testing.T, pass Filter, handle Handler, records []st.Record) events.DynamoDBEventResponse {
	t.Helper()
	var resp events.DynamoDBEventResponse
	calls := 0
	rest, whole := handleBatch(context.Background(), pass, func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		calls++
		var err error
		resp, err = handle(ctx, ev)
		return resp, err
	}, records, testdb.Quiet())
	if calls != 1 {
		t.Fatalf("%d invocations, want 1", calls)
	}
	if len(rest) > 0 || whole {
		t.Fatalf("the invocation failed from %s on (whole batch: %v); failures %+v", aws.ToString(rest[0].Dynamodb.SequenceNumber), whole, resp.BatchItemFailures)
	}
	return resp
}

// TestRetiredTwinHoldsNoWebhook: the deliver-webhooks handler, handed a
// retired test twin's payment (its account deleted by a clear) in front of a
// live merchant's payment and events, passes the twin's over and records
// the live ones in that same invocation: no batch item failure, which would
// have Lambda hand the shard again from the twin's record, holding every
// merchant's behind it.
func TestRetiredTwinHoldsNoWebhook(t *testing.T) {
	arrived := make(chan string, 16)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { arrived <- r.Header.Get(webhook.HeaderID) }))
	defer rc.Close()
	s, a, queue, records := retiredTwinThenLive(t, rc.URL)
	twin := business.TwinID(a.ID, 1)
	first := -1
	for i, r := range records {
		if img := r.Dynamodb.NewImage; img != nil && img["account_id"] != nil && img["account_id"].(*st.AttributeValueMemberS).Value == twin && r.EventName == st.OperationTypeInsert {
			if ty := img["type"].(*st.AttributeValueMemberS).Value; ty == "payment" && first < 0 {
				first = i
			}
		}
	}
	if first < 0 {
		t.Fatal("no payment of the retired twin on the stream")
	}
	var logs testdb.Buffer
	svc := webhook.NewService(s, webhook.NewSender(true), []time.Duration{time.Second}, slog.New(slog.NewJSONHandler(&logs, nil)))
	resp := handOnce(t, webhook.Streamed, svc.HandleStream, records[first:])
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %+v", resp.BatchItemFailures)
	}
	if !strings.Contains(logs.String(), "passed over") || !strings.Contains(logs.String(), twin) {
		t.Errorf("the twin's record was not logged as passed over:\n%s", logs.String())
	}
	ctx := context.Background()
	page, err := s.ListDeliveries(ctx, a.ID, "", 100, "")
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("the live payment has %d deliveries (%v), want 1", len(page.Items), err)
	}
	eps, err := s.ListDeliveries(ctx, queue, "", 100, "")
	if err != nil || len(eps.Items) < 3 { // customer.created, sale.created, payment.received at least
		t.Fatalf("the live endpoint has %d deliveries (%v), want its events'", len(eps.Items), err)
	}
	if err := svc.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook arrived")
	}
}

// TestRetiredTwinHoldsNoFigures: the apply-report-figures handler, handed a
// retired test twin's figures (its account deleted by a clear) in front of a
// live merchant's, passes the twin's over and applies the live ones in that
// same invocation.
func TestRetiredTwinHoldsNoFigures(t *testing.T) {
	s, a, _, records := retiredTwinThenLive(t, "http://127.0.0.1:9/")
	twin := business.TwinID(a.ID, 1)
	first := -1
	for i, r := range records {
		if img := r.Dynamodb.NewImage; r.EventName == st.OperationTypeInsert && img["type"] != nil && img["type"].(*st.AttributeValueMemberS).Value == store.FiguresType {
			if img["account_id"].(*st.AttributeValueMemberS).Value != twin {
				t.Fatalf("a live account's figures before the twin's: the test needs the twin's in front")
			}
			first = i
			break
		}
	}
	if first < 0 {
		t.Fatal("no figures of the retired twin on the stream")
	}
	if len(waitingFigures(t, s, a.ID)) == 0 {
		t.Fatal("the live account has no figures waiting")
	}
	var logs testdb.Buffer
	resp := handOnce(t, lambdas.IsFiguresInsert, lambdas.ApplyReportFigures(s, slog.New(slog.NewJSONHandler(&logs, nil))), records[first:])
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %+v", resp.BatchItemFailures)
	}
	if n := len(waitingFigures(t, s, a.ID)); n != 0 {
		t.Fatalf("%d of the live account's figures items still wait after the invocation", n)
	}
	if !strings.Contains(logs.String(), "passed over") || !strings.Contains(logs.String(), twin) {
		t.Errorf("the twin's figures were not logged as passed over:\n%s", logs.String())
	}
}

// TestPollerBisectsAndSkipsOnlyThePoison: a handler that fails its whole
// batch whenever it holds one record (a fault no code classifies) is handed
// that record in front of live ones; the poller bisects as
// BisectBatchOnFunctionError does until the record is alone, skips it after
// its retries, and every other record is handled, none skipped with it.
func TestPollerBisectsAndSkipsOnlyThePoison(t *testing.T) {
	s, cfg := testdb.NewStreamStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, key := testdb.NewAccount(t, s, "Shop", "SHOPBISECT")
	post := shopAPI(t, s, a.ID, key, "http://127.0.0.1:9/")
	for i := 0; i < 8; i++ {
		post("/api/v1/customers/add", `{"name":"Ama"}`)
	}
	var mu sync.Mutex
	var poison string
	handled := map[string]bool{}
	handle := func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		if poison == "" {
			poison = ev.Records[0].Change.SequenceNumber
		}
		for _, r := range ev.Records {
			if r.Change.SequenceNumber == poison {
				return events.DynamoDBEventResponse{}, fmt.Errorf("injected: a fault of one record fails its batch")
			}
		}
		for _, r := range ev.Records {
			handled[r.Change.SequenceNumber] = true
		}
		return events.DynamoDBEventResponse{}, nil
	}
	live := 0
	for _, r := range streamRecords(t, s, cfg) {
		if webhook.IsEventInsert(events.DynamoDBEventRecord{EventName: string(r.EventName), Change: events.DynamoDBStreamRecord{NewImage: streamimage.LambdaImage(r.Dynamodb.NewImage)}}) {
			live++
		}
	}
	live-- // the first is the poison
	streams, err := app.NewStreams(ctx, cfg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var logs testdb.Buffer
	go Poll(ctx, s.Client(), streams, cfg.TableName, webhook.IsEventInsert, handle, 2, slog.New(slog.NewJSONHandler(&logs, nil)))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		n := len(handled)
		mu.Unlock()
		if n == live && strings.Contains(logs.String(), "batch skipped after its last retry") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d live events handled; log:\n%s", n, live, logs.String())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if c := strings.Count(logs.String(), "batch skipped"); c != 1 || !strings.Contains(logs.String(), `"first_sequence_number":"`+poison+`","last_sequence_number":"`+poison+`"`) {
		t.Fatalf("want the poison record alone skipped, once:\n%s", logs.String())
	}
}

// TestPollerMatchesTheMappings: the devserver's poller batches, runs
// batches side by side, retries as often, and hands records as old, as the
// template's two stream mappings, each of which bisects a failing batch and
// sends what it skips to a failure queue.
func TestPollerMatchesTheMappings(t *testing.T) {
	raw, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Resources map[string]struct {
			Properties struct {
				Events map[string]struct {
					Properties map[string]any `yaml:"Properties"`
				} `yaml:"Events"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	for fn, ev := range map[string]string{"DeliverWebhooksFunction": "PaymentInserts", "ApplyReportFiguresFunction": "FiguresInserts"} {
		p := tpl.Resources[fn].Properties.Events[ev].Properties
		m := map[string]Mapping{"DeliverWebhooksFunction": DeliverWebhooks, "ApplyReportFiguresFunction": ApplyReportFigures}[fn]
		or := func(v any, absent int) any { // the template's value, or Lambda's default
			if v == nil {
				return absent
			}
			return v
		}
		if got := (Mapping{BatchSize: or(p["BatchSize"], 100).(int), ParallelizationFactor: or(p["ParallelizationFactor"], 1).(int),
			BatchingWindow: time.Duration(or(p["MaximumBatchingWindowInSeconds"], 0).(int)) * time.Second, MaxRetries: p["MaximumRetryAttempts"].(int)}); got != m {
			t.Errorf("%s: the template's mapping %+v, the poller's %+v", fn, got, m)
		}
		if p["MaximumRetryAttempts"] != MaximumRetryAttempts || p["MaximumRecordAgeInSeconds"] != int(MaximumRecordAge/time.Second) || p["BisectBatchOnFunctionError"] != true {
			t.Errorf("%s: retries %v, record age %v, bisect %v; the poller's: %d, %d, true", fn, p["MaximumRetryAttempts"], p["MaximumRecordAgeInSeconds"], p["BisectBatchOnFunctionError"], MaximumRetryAttempts, int(MaximumRecordAge/time.Second))
		}
		dest, _ := p["DestinationConfig"].(map[string]any)
		if onFailure, _ := dest["OnFailure"].(map[string]any); onFailure["Type"] != "SQS" {
			t.Errorf("%s: no failure queue: %v", fn, p["DestinationConfig"])
		}
	}
}
