package lambdas_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
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

// drainShop is an account with a callback URL and an endpoint subscribed to
// every event, whose customer and paid sale (a payment, events) were written
// through the API while nothing consumed the stream, as if the
// deliver-webhooks mapping had given up on their batch: its store, the
// account, the endpoint's queue, a streams client and the table's stream's
// ARN, shard and records, oldest first.
type drainShop struct {
	st       *store.Store
	account  business.Account
	queue    string
	streams  *dynamodbstreams.Client
	arn      string
	shard    string
	records  []st.Record
	streamed []st.Record // those the mapping's filter passes
}

// newDrainShop makes a drainShop; extra, when not nil, writes what else the
// test needs before the sale.
func newDrainShop(t *testing.T, extra func(*store.Store, business.Account), optFns ...func(*dynamodb.Options)) drainShop {
	t.Helper()
	s, cfg := testdb.NewStreamStore(t, optFns...)
	ctx := context.Background()
	a, key := testdb.NewAccount(t, s, "Drain Shop", "DRAIN1")
	if err := s.SetWebhook(ctx, a.ID, business.Webhook{CallbackURL: "https://hooks.example.com/pay", CallbackSecret: "drain-secret-123456"}); err != nil {
		t.Fatal(err)
	}
	ep, err := s.CreateEndpoint(ctx, a.ID, business.Endpoint{URL: "https://hooks.example.com/events", EnabledEvents: []string{"*"}}, business.NewEndpointSecret())
	if err != nil {
		t.Fatal(err)
	}
	if extra != nil {
		extra(s, a)
	}
	h := api.NewServer(s, testdb.Quiet(), 0).Handler(api.Routes)
	for _, c := range []struct{ path, body string }{
		{"/api/v1/customers/add", `{"name":"Ama"}`},
		{"/api/v1/sales/add", `{"customer_id":1,"sub_total_amount":"10.00","total_amount":"10.00","amount_paid":"10.00","invoice_type":"pos","payment_type":"Cash","due_date":"2026-12-01"}`},
	} {
		r := httptest.NewRequest("POST", c.path, strings.NewReader(c.body))
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", c.path, w.Code, w.Body)
		}
	}
	d := drainShop{st: s, account: a, queue: store.EndpointQueue(a.ID, ep.ID)}
	if d.streams, err = app.NewStreams(ctx, cfg.Endpoint); err != nil {
		t.Fatal(err)
	}
	desc, err := s.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(cfg.TableName)})
	if err != nil {
		t.Fatal(err)
	}
	d.arn = aws.ToString(desc.Table.LatestStreamArn)
	stream, err := d.streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: desc.Table.LatestStreamArn})
	if err != nil {
		t.Fatal(err)
	}
	if len(stream.StreamDescription.Shards) != 1 {
		t.Fatalf("%d shards: the test needs the records of one shard, in order", len(stream.StreamDescription.Shards))
	}
	d.shard = aws.ToString(stream.StreamDescription.Shards[0].ShardId)
	it, err := d.streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
		StreamArn: desc.Table.LatestStreamArn, ShardId: aws.String(d.shard), ShardIteratorType: st.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatal(err)
	}
	for next := it.ShardIterator; next != nil; {
		page, err := d.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: next})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Records) == 0 {
			break
		}
		d.records = append(d.records, page.Records...)
		next = page.NextShardIterator
	}
	for _, r := range d.records {
		if webhook.Streamed(streamimage.LambdaRecord(r)) {
			d.streamed = append(d.streamed, r)
		}
	}
	return d
}

// message is the SQS message Lambda sends to the on-failure destination for
// a batch from first to last (an invocation record of a DynamoDB stream),
// as the queue's event source hands it to the function.
func (d drainShop) message(id, shard string, first, last st.Record, size int) events.SQSMessage {
	at := func(r st.Record) string {
		return aws.ToTime(r.Dynamodb.ApproximateCreationDateTime).UTC().Format(time.RFC3339)
	}
	body := fmt.Sprintf(`{
    "requestContext": {
        "requestId": "316aa6d0-8154-4b2a-9af7-85d5f4a6bc81",
        "functionArn": "arn:aws:lambda:eu-west-1:123456789012:function:bizdata-DeliverWebhooksFunction",
        "condition": "RetryAttemptsExhausted",
        "approximateInvokeCount": 6
    },
    "responseContext": {
        "statusCode": 200,
        "executedVersion": "$LATEST",
        "functionError": "Unhandled"
    },
    "version": "1.0",
    "timestamp": %q,
    "DDBStreamBatchInfo": {
        "shardId": %q,
        "startSequenceNumber": %q,
        "endSequenceNumber": %q,
        "approximateArrivalOfFirstRecord": %q,
        "approximateArrivalOfLastRecord": %q,
        "batchSize": %d,
        "streamArn": %q
    }
}`, time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), shard, aws.ToString(first.Dynamodb.SequenceNumber), aws.ToString(last.Dynamodb.SequenceNumber),
		at(first), at(last), size, d.arn)
	return events.SQSMessage{MessageId: id, ReceiptHandle: "rh-" + id, Body: body, EventSource: "aws:sqs",
		EventSourceARN: "arn:aws:sqs:eu-west-1:123456789012:bizdata-WebhookStreamFailures", AWSRegion: "eu-west-1"}
}

// deliveries counts the payment deliveries of the account and the
// deliveries of its endpoint.
func (d drainShop) deliveries(t *testing.T) (payments, endpoint int) {
	t.Helper()
	ctx := context.Background()
	p, err := d.st.ListDeliveries(ctx, d.account.ID, "", 100, "")
	if err != nil {
		t.Fatal(err)
	}
	e, err := d.st.ListDeliveries(ctx, d.queue, "", 100, "")
	if err != nil {
		t.Fatal(err)
	}
	return len(p.Items), len(e.Items)
}

// TestDrainStreamFailuresDeliversSkippedBatch: a batch the deliver-webhooks
// mapping gave up on reaches the failure queue as its range alone; the
// drain reads the range again from the stream and records the deliveries
// of its payment (to the callback URL) and of its events (to the endpoint),
// and draining the same message again changes nothing.
func TestDrainStreamFailuresDeliversSkippedBatch(t *testing.T) {
	d := newDrainShop(t, nil)
	ctx := context.Background()
	events := 0
	payments := 0
	for _, r := range d.streamed {
		switch rec := streamimage.LambdaRecord(r); {
		case webhook.IsEventInsert(rec):
			events++
		case webhook.IsPaymentInsert(rec):
			payments++
		}
	}
	if payments != 1 || events == 0 || len(d.records) <= len(d.streamed) {
		t.Fatalf("the stream holds %d records, %d streamed: %d payments, %d events; want a payment, events and records the filter drops", len(d.records), len(d.streamed), payments, events)
	}
	if p, e := d.deliveries(t); p != 0 || e != 0 {
		t.Fatalf("before the drain: %d payment and %d endpoint deliveries", p, e)
	}
	svc := webhook.NewService(d.st, webhook.NewSender(true), []time.Duration{time.Second}, testdb.Quiet())
	var logs testdb.Buffer
	drain := lambdas.DrainStreamFailures(d.streams, webhook.Streamed, svc.HandleStream, slog.New(slog.NewJSONHandler(&logs, nil)))
	// The batch as Lambda names it: from its first record the filter passed
	// to its last (what lies between and the filter drops is read and left).
	msg := d.message("m-1", d.shard, d.streamed[0], d.streamed[len(d.streamed)-1], len(d.streamed))
	for round := range 2 {
		resp, err := drain(ctx, eventsOf(msg))
		if err != nil || len(resp.BatchItemFailures) > 0 {
			t.Fatalf("round %d: %+v %v\n%s", round+1, resp, err, logs.String())
		}
		if p, e := d.deliveries(t); p != payments || e != events {
			t.Fatalf("round %d: %d payment and %d endpoint deliveries, want %d and %d\n%s", round+1, p, e, payments, events, logs.String())
		}
	}
	// The events reach the endpoint under their own ids: the webhook-id a
	// receiver deduplicates by is the event's, whichever way it came.
	var want, got []string
	for _, r := range d.streamed {
		if rec := streamimage.LambdaRecord(r); webhook.IsEventInsert(rec) {
			want = append(want, rec.Change.NewImage["SK"].String()) // an event's sort key is its id
		}
	}
	page, err := d.st.ListDeliveries(ctx, d.queue, "", 100, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, dl := range page.Items {
		got = append(got, dl.WebhookID)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) || len(got) == 0 {
		t.Fatalf("the endpoint's deliveries are of %v, want the skipped events %v", got, want)
	}
	if !strings.Contains(logs.String(), `"msg":"stream failure drained"`) || !strings.Contains(logs.String(), fmt.Sprintf(`"records_handed":%d`, len(d.streamed))) {
		t.Errorf("no drained line with its records: %s", logs.String())
	}
}

func eventsOf(ms ...events.SQSMessage) events.SQSEvent { return events.SQSEvent{Records: ms} }

// TestDrainStreamFailuresDropsWhatNoRetryChanges: a message that is no
// stream batch's invocation record, and one whose records are gone from the
// stream (its shard removed after the retention), are
// dropped with an error logged: the queue would hand them again to the same
// end, and only fill the dead-letter queue. A batch whose deliveries could
// not be recorded is failed, so the queue hands it again, and drained then.
func TestDrainStreamFailuresDropsWhatNoRetryChanges(t *testing.T) {
	d := newDrainShop(t, nil)
	ctx := context.Background()
	first, last := d.streamed[0], d.streamed[len(d.streamed)-1]
	svc := webhook.NewService(d.st, webhook.NewSender(true), []time.Duration{time.Second}, testdb.Quiet())
	var logs testdb.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	drain := lambdas.DrainStreamFailures(d.streams, webhook.Streamed, svc.HandleStream, log)

	valid := d.message("x", d.shard, first, last, len(d.streamed)).Body
	short := func(r st.Record) st.Record { // no sequence number the Streams API takes
		r.Dynamodb = &st.StreamRecord{SequenceNumber: aws.String("1"), ApproximateCreationDateTime: r.Dynamodb.ApproximateCreationDateTime}
		return r
	}
	dropped := []events.SQSMessage{
		{MessageId: "not-json", Body: "not json"},
		{MessageId: "no-batch", Body: `{"requestContext":{"condition":"RetryAttemptsExhausted"},"version":"1.0"}`},
		{MessageId: "no-range", Body: strings.Replace(valid, `"startSequenceNumber": "`, `"startSequenceNumber": "x`, 1)},
		{MessageId: "reversed", Body: d.message("reversed", d.shard, last, first, 2).Body},
		d.message("too-short", d.shard, short(first), short(first), 1),
		// A shard is removed 24 h after it closed, and with it every record
		// it held: the Streams API no longer knows it.
		d.message("shard-gone", "shardId-00000001573689847184-864758bb", first, last, len(d.streamed)),
	}
	resp, err := drain(ctx, eventsOf(dropped...))
	if err != nil || len(resp.BatchItemFailures) > 0 {
		t.Fatalf("%+v %v\n%s", resp, err, logs.String())
	}
	for _, m := range dropped {
		line := logLine(t, logs.String(), m.MessageId)
		if line["level"] != "ERROR" || !strings.HasPrefix(fmt.Sprint(line["msg"]), "stream failure dropped") {
			t.Errorf("%s: logged %v, want an error saying it was dropped", m.MessageId, line)
		}
	}
	if p, e := d.deliveries(t); p != 0 || e != 0 {
		t.Fatalf("the dropped messages recorded %d payment and %d endpoint deliveries", p, e)
	}

	// The deliveries of the first record cannot be recorded this time: the
	// message is failed, and the next receive drains it.
	fail := true
	flaky := func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		if fail {
			fail = false
			return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: ev.Records[0].Change.SequenceNumber}}}, nil
		}
		return svc.HandleStream(ctx, ev)
	}
	drain = lambdas.DrainStreamFailures(d.streams, webhook.Streamed, flaky, log)
	msg := d.message("retried", d.shard, first, last, len(d.streamed))
	resp, err = drain(ctx, eventsOf(msg))
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "retried" {
		t.Fatalf("a batch not recorded: %+v %v; want the message failed", resp, err)
	}
	if line := logLine(t, logs.String(), "retried"); line["level"] != "ERROR" || line["msg"] != "stream failure not drained; the message is received again" {
		t.Errorf("logged %v", line)
	}
	if resp, err = drain(ctx, eventsOf(msg)); err != nil || len(resp.BatchItemFailures) > 0 {
		t.Fatalf("the message received again: %+v %v", resp, err)
	}
	if p, e := d.deliveries(t); p != 1 || e == 0 {
		t.Fatalf("after the retry: %d payment and %d endpoint deliveries", p, e)
	}
}

// logLine returns the first JSON log line of message id.
func logLine(t *testing.T, logs, id string) map[string]any {
	t.Helper()
	for _, l := range strings.Split(logs, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["message_id"] == id {
			return m
		}
	}
	t.Errorf("no log line of message %s in:\n%s", id, logs)
	return nil
}

// TestDrainStreamFailuresTemplate: the failure queue of the deliver-webhooks
// mapping feeds drain-stream-failures one message at a time, with partial
// failures; a message comes back only after the function's run could have
// ended (the visibility timeout is at least 6 times the function's Timeout,
// as Lambda advises for an SQS event source), moves to the dead-letter queue
// after a few receives, and the alarm watches that queue (the drain empties
// the other). The function may read the table's stream, and nothing else of
// it than what deliver-webhooks may.
func TestDrainStreamFailuresTemplate(t *testing.T) {
	b, err := os.ReadFile("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	at := func(keys ...string) string {
		n := doc.Content[0]
		for _, k := range keys {
			var next *yaml.Node
			for i := 0; n != nil && n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					next = n.Content[i+1]
				}
			}
			if next == nil {
				return ""
			}
			n = next
		}
		return nodeText(n)
	}
	fn := []string{"Resources", "DrainStreamFailuresFunction", "Properties"}
	ev := append(fn, "Events", "StreamFailures")
	for _, c := range []struct {
		keys []string
		want string
	}{
		{append(ev, "Type"), "SQS"},
		{append(ev, "Properties", "Queue"), "!GetAtt WebhookStreamFailures.Arn"},
		{append(ev, "Properties", "BatchSize"), "1"},
		{append(ev, "Properties", "FunctionResponseTypes"), "[ReportBatchItemFailures]"},
		{[]string{"Resources", "DeliverWebhooksFunction", "Properties", "Events", "PaymentInserts", "Properties", "DestinationConfig", "OnFailure", "Destination"}, "!GetAtt WebhookStreamFailures.Arn"},
		{[]string{"Resources", "WebhookStreamFailures", "Properties", "RedrivePolicy", "deadLetterTargetArn"}, "!GetAtt WebhookStreamFailuresDeadLetters.Arn"},
		{[]string{"Resources", "StreamFailuresAlarm", "Properties", "Dimensions"}, "[{Name: QueueName, Value: !GetAtt WebhookStreamFailuresDeadLetters.QueueName}]"},
		{[]string{"Resources", "WebhookStreamFailuresDeadLetters", "Type"}, "AWS::SQS::Queue"},
	} {
		if got := at(c.keys...); got != c.want {
			t.Errorf("%s: %q, want %q", strings.Join(c.keys, "."), got, c.want)
		}
	}
	timeout, err1 := strconv.Atoi(at(append(fn, "Timeout")...))
	visibility, err2 := strconv.Atoi(at("Resources", "WebhookStreamFailures", "Properties", "VisibilityTimeout"))
	if err1 != nil || err2 != nil || visibility < 6*timeout {
		t.Errorf("WebhookStreamFailures: VisibilityTimeout %q, want at least 6 times the drain's Timeout %q", at("Resources", "WebhookStreamFailures", "Properties", "VisibilityTimeout"), at(append(fn, "Timeout")...))
	}
	if n, err := strconv.Atoi(at("Resources", "WebhookStreamFailures", "Properties", "RedrivePolicy", "maxReceiveCount")); err != nil || n < 2 || n > 10 {
		t.Errorf("WebhookStreamFailures: maxReceiveCount %v, want a few receives (2 to 10)", at("Resources", "WebhookStreamFailures", "Properties", "RedrivePolicy", "maxReceiveCount"))
	}
	// The stream's records, read by the Streams API: on the table's stream
	// only.
	stmts := functionStatements(t)["DrainStreamFailuresFunction"]
	for _, action := range []string{"dynamodb:GetShardIterator", "dynamodb:GetRecords"} {
		found := false
		for _, s := range stmts {
			if s.Effect == "Allow" && slices.Contains(s.Actions, action) {
				found = true
				if fmt.Sprint(s.Resources) != "[Table.StreamArn]" {
					t.Errorf("%s on %v, want the table's stream alone", action, s.Resources)
				}
			}
		}
		if !found {
			t.Errorf("DrainStreamFailuresFunction may not %s", action)
		}
	}
}
