package lambdas_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"testing"
	"time"

	"bizdata/shared/app/lambdas"
	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/go-cmp/cmp"
)

// drainFunction is the function that drains the deliver-webhooks mapping's
// failure queue; drainFlow its IAM flow's name in the store's coverage.
const (
	drainFunction = "drain-stream-failures"
	drainFlow     = "stream failures drained"
)

// TestIAMDrainsStreamFailures runs drain-stream-failures under its identity
// over a skipped batch that holds what the deliver-webhooks function meets
// on the stream (a payment of an account with a callback URL, a payment of
// an account that is gone, events for an enabled and a disabled endpoint,
// records the filter drops) and fails when a call it makes, the Streams
// API's included, is one its policy in template.yaml does not grant, or
// grants one it never makes, or when the policy's conditions refuse a call
// (the IAM model of policy_test.go).
func TestIAMDrainsStreamFailures(t *testing.T) {
	rec := &iamRecorder{used: map[string]map[string]bool{}, requests: map[string]map[string]ddbRequest{}}
	ctx := context.Background()
	var busyID string
	d := newDrainShop(t, func(s *store.Store, a business.Account) {
		off, err := s.CreateEndpoint(ctx, a.ID, business.Endpoint{URL: "https://hooks.example.com/off", EnabledEvents: []string{"*"}}, business.NewEndpointSecret())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.DisableEndpoint(ctx, a.ID, off.ID, "failing", time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		// A merchant with many endpoints: its events of the batch owe more
		// deliveries than the handler records itself, so it records a
		// fan-out job (what the dispatcher expands is retry-webhooks's).
		busy, _ := testdb.NewAccount(t, s, "Busy Shop", "DRAINBUSY1")
		busyID = busy.ID
		for i := range webhook.InlineFanout / 2 {
			url := fmt.Sprintf("https://hooks.example.com/busy%d", i)
			if _, err := s.CreateEndpoint(ctx, busy.ID, business.Endpoint{URL: url, EnabledEvents: []string{"*"}}, business.NewEndpointSecret()); err != nil {
				t.Fatal(err)
			}
		}
		gone := business.NewAccountID() // a retired test twin's payment, still on the stream
		str := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
		_, err = s.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.Table()), Item: map[string]types.AttributeValue{
			"PK": str("A#" + gone + "#SALE#100002"), "SK": str("PAY#0001"), "type": str("payment"), "account_id": str(gone),
			"transaction_id": str("txn_gone0001"), "invoice_code": str("100002"), "amount_paid": &types.AttributeValueMemberN{Value: "5"}}})
		if err != nil {
			t.Fatal(err)
		}
	}, rec.option)
	// The Streams API's calls are judged as the table's are: an action of
	// the dynamodb: namespace on the stream.
	streams := dynamodbstreams.New(d.streams.Options(), func(o *dynamodbstreams.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("RecordIAM",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					rec.mu.Lock()
					if rec.current != "" {
						if rec.used[rec.current] == nil {
							rec.used[rec.current] = map[string]bool{}
							rec.requests[rec.current] = map[string]ddbRequest{}
						}
						rec.used[rec.current]["dynamodb:"+middleware.GetOperationName(ctx)] = true
					}
					rec.mu.Unlock()
					return next.HandleInitialize(ctx, in)
				}), middleware.After)
		})
	})

	svc := webhook.NewService(d.st, webhook.NewSender(true), []time.Duration{time.Second}, testdb.Quiet())
	drain := lambdas.DrainStreamFailures(streams, webhook.Streamed, svc.HandleStream, testdb.Quiet())
	msg := d.message("m-iam", d.shard, d.streamed[0], d.streamed[len(d.streamed)-1], len(d.streamed))
	rec.as(drainFunction)
	resp, err := drain(ctx, eventsOf(msg))
	rec.as("")
	if err != nil || len(resp.BatchItemFailures) > 0 {
		t.Fatalf("%+v %v", resp, err)
	}
	if p, e := d.deliveries(t); p != 1 || e == 0 {
		t.Fatalf("the drain recorded %d payment and %d endpoint deliveries", p, e)
	}
	if jobs, err := d.st.FanoutJobs(ctx, busyID, 10); err != nil || len(jobs) != 1 {
		t.Fatalf("the busy merchant's fan-out jobs: %+v (%v), want one", jobs, err)
	}

	granted := templatePolicies(t)[drainFunction]
	used := slices.Sorted(maps.Keys(rec.used[drainFunction]))
	sort.Strings(granted)
	if diff := cmp.Diff(granted, used); diff != "" {
		t.Errorf("%s: template.yaml's policy and the calls the code makes differ (-granted +used):\n%s", drainFunction, diff)
	}
	statements := functionStatements(t)[logicalID(drainFunction)]
	reqs := rec.requests[drainFunction]
	for _, k := range slices.Sorted(maps.Keys(reqs)) {
		if ok, why := permitted(t, statements, reqs[k]); !ok {
			t.Errorf("%s: template.yaml refuses %s: %s", drainFunction, reqs[k], why)
		}
	}
	if slices.Contains(iamFlows, drainFlow) {
		storeCoverage.flowDone(t, drainFlow)
	} else {
		t.Logf("the store's coverage does not count this flow yet: iamFlows lacks %q", drainFlow)
	}
}
