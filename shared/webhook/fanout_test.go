package webhook_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestBurstFanOutIsAJob: a stream batch whose events owe an account's
// endpoints more than InlineFanout deliveries is recorded as one fan-out job
// (no delivery written by the stream handler), which the dispatcher expands
// into every delivery, each sent once; the same batch handed again sends
// nothing twice; a batch that owes few is recorded by the handler itself.
func TestBurstFanOutIsAJob(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, key := testdb.NewAccount(t, st, "Shop", "FANJOB1")
	every, customers := newInbox(t), newInbox(t)
	var queues []string
	for _, ep := range []struct {
		url    string
		events []string
	}{{every.URL, []string{"*"}}, {customers.URL, []string{"customer.*"}}} {
		e, err := st.CreateEndpoint(ctx, a.ID, business.Endpoint{URL: ep.url, EnabledEvents: ep.events}, business.NewEndpointSecret())
		if err != nil {
			t.Fatal(err)
		}
		queues = append(queues, store.EndpointQueue(a.ID, e.ID))
	}
	srv := httptest.NewServer(api.NewServer(st, testdb.Quiet(), 0).Handler(api.Routes))
	t.Cleanup(srv.Close)
	const n = webhook.InlineFanout/2 + 1 // × 2 endpoints: just over the bound
	for i := range n + 1 {
		postJSON(t, srv.URL, key, "/api/v1/customers/add", fmt.Sprintf(`{"name":"Customer %d"}`, i))
	}
	inserts := eventInserts(t, st, a.ID, business.EventCustomerCreated)
	if len(inserts) != n+1 {
		t.Fatalf("%d customer.created events, want %d", len(inserts), n+1)
	}
	burst, single := events.DynamoDBEvent{Records: inserts[:n]}, events.DynamoDBEvent{Records: inserts[n:]}
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Hour}, testdb.Quiet())

	if resp, err := svc.HandleStream(ctx, burst); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("burst: %v, failures %+v", err, resp.BatchItemFailures)
	}
	jobs, err := st.FanoutJobs(ctx, a.ID, 10)
	if err != nil || len(jobs) != 1 || len(jobs[0].EventIDs) != n {
		t.Fatalf("fan-out jobs %+v (%v), want one of %d events", jobs, err, n)
	}
	for _, q := range queues {
		if _, err := st.FindDelivery(ctx, q, jobs[0].EventIDs[0]); business.ErrorCode(err) != business.ENOTFOUND {
			t.Fatalf("the stream handler recorded a delivery of a burst itself (%v), want a job only", err)
		}
	}
	dispatchUntil(t, svc, func() bool { return len(every.all()) == n && len(customers.all()) == n })
	if jobs, err := st.FanoutJobs(ctx, a.ID, 10); err != nil || len(jobs) != 0 {
		t.Fatalf("fan-out jobs left after the expansion: %+v (%v)", jobs, err)
	}
	if q, err := st.FindQueue(ctx, store.FanoutQueue(a.ID)); err != nil || !q.ReadyAt.IsZero() {
		t.Fatalf("the fan-out queue after its jobs: %+v (%v), want it out of the due index", q, err)
	}

	// Handed again (Lambda retries a batch): a job again, expanded to the
	// deliveries already there, nothing sent twice.
	if resp, err := svc.HandleStream(ctx, burst); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("burst again: %v, failures %+v", err, resp.BatchItemFailures)
	}
	dispatchUntil(t, svc, func() bool {
		jobs, err := st.FanoutJobs(ctx, a.ID, 10)
		return err == nil && len(jobs) == 0
	})
	if err := svc.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if len(every.all()) != n || len(customers.all()) != n {
		t.Fatalf("after the batch was handed again the endpoints got %d and %d, want %d each", len(every.all()), len(customers.all()), n)
	}

	// One event owes 2 deliveries: the handler records them itself.
	if resp, err := svc.HandleStream(ctx, single); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("single: %v, failures %+v", err, resp.BatchItemFailures)
	}
	id := single.Records[0].Change.NewImage["SK"].String()
	for _, q := range queues {
		if d, err := st.FindDelivery(ctx, q, id); err != nil || d.State != business.DeliveryPending {
			t.Fatalf("the single event's delivery: %+v (%v), want it recorded by the handler", d, err)
		}
	}
}

// dispatchUntil runs dispatcher passes until cond holds (at most 20 s).
func dispatchUntil(t *testing.T, svc *webhook.Service, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the dispatcher did not finish within 20 s")
		}
		if err := svc.DispatchOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// postJSON posts body to the API at base with key, and fails the test on
// anything but 200.
func postJSON(t *testing.T, base, key, path, body string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("%s: %d %s", path, res.StatusCode, b)
	}
}

// eventInserts reads the account's events of eventType from the table and
// returns them as the stream's insert records, oldest first.
func eventInserts(t *testing.T, st *store.Store, account, eventType string) []events.DynamoDBEventRecord {
	t.Helper()
	var recs []events.DynamoDBEventRecord
	for shard := range store.EventShards {
		out, err := st.Client().Query(context.Background(), &dynamodb.QueryInput{
			TableName: aws.String(st.Table()), ConsistentRead: aws.Bool(true),
			KeyConditionExpression:    aws.String("PK = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "A#" + account + "#EVENT#" + strconv.Itoa(shard)}},
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Items {
			img := toStreamImage(it)
			if v, ok := it["v"].(*types.AttributeValueMemberM); !ok || v.Value["event_type"] == nil ||
				v.Value["event_type"].(*types.AttributeValueMemberS).Value != eventType {
				continue
			}
			recs = append(recs, events.DynamoDBEventRecord{EventName: "INSERT", Change: events.DynamoDBStreamRecord{NewImage: img}})
		}
	}
	sortBySK(recs)
	for i := range recs {
		recs[i].Change.SequenceNumber = strconv.Itoa(i + 1)
	}
	return recs
}

// toStreamImage converts an item as the SDK reads it into a stream record's
// image, as Lambda's event source hands it.
func toStreamImage(it map[string]types.AttributeValue) map[string]events.DynamoDBAttributeValue {
	out := make(map[string]events.DynamoDBAttributeValue, len(it))
	for k, v := range it {
		out[k] = toStream(v)
	}
	return out
}

func toStream(v types.AttributeValue) events.DynamoDBAttributeValue {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value)
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value)
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value)
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value)
	case *types.AttributeValueMemberM:
		return events.NewMapAttribute(toStreamImage(v.Value))
	case *types.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = toStream(e)
		}
		return events.NewListAttribute(l)
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value)
	}
	return events.NewNullAttribute()
}

// sortBySK orders event records by their sort key, the event's id: the
// order they were written in.
func sortBySK(recs []events.DynamoDBEventRecord) {
	sort.Slice(recs, func(i, j int) bool {
		return recs[i].Change.NewImage["SK"].String() < recs[j].Change.NewImage["SK"].String()
	})
}
