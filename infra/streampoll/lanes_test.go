package streampoll

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"bizdata/shared/app"
	"bizdata/shared/testdb"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// TestPollerHandsAShardInLanes: two partition keys of one shard, in lanes
// of their own, the first key's records written first. While the handler
// holds the first key's batch (a merchant's burst, or a slow batch), every
// record of the second key is handled; once it lets go, the first key's are
// too. As the deliver-webhooks mapping hands them: batches of at most its
// BatchSize, each key's records in order, one batch of a key at a time.
func TestPollerHandsAShardInLanes(t *testing.T) {
	s, cfg := testdb.NewStreamStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := DeliverWebhooks
	sh := &shard{key: "PK"}
	laneOf := func(pk string) int {
		return sh.laneOf(st.Record{Dynamodb: &st.StreamRecord{Keys: map[string]st.AttributeValue{"PK": &st.AttributeValueMemberS{Value: pk}}}}, m.ParallelizationFactor)
	}
	held := "LANES#HELD"
	other := ""
	for i := 0; other == ""; i++ {
		if pk := fmt.Sprintf("LANES#%d", i); laneOf(pk) != laneOf(held) {
			other = pk
		}
	}
	each := 2*m.BatchSize + 10
	for _, pk := range []string{held, other} {
		for i := 0; i < each; i++ {
			if _, err := s.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(cfg.TableName), Item: map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: fmt.Sprintf("N#%03d", i)},
				"n": &types.AttributeValueMemberN{Value: strconv.Itoa(i)},
			}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	mine := func(r events.DynamoDBEventRecord) bool {
		pk := r.Change.NewImage["PK"].String()
		return r.EventName == "INSERT" && (pk == held || pk == other)
	}
	release := make(chan struct{})
	var mu sync.Mutex
	handled := map[string][]int{} // key -> its records' n, in the order handed
	inFlight := map[string]int{}
	var problems []string
	handle := func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		keys := map[string]bool{}
		for _, r := range ev.Records {
			keys[r.Change.NewImage["PK"].String()] = true
		}
		mu.Lock()
		if len(ev.Records) > m.BatchSize {
			problems = append(problems, fmt.Sprintf("a batch of %d records, more than the BatchSize %d", len(ev.Records), m.BatchSize))
		}
		for k := range keys {
			if inFlight[k]++; inFlight[k] > 1 {
				problems = append(problems, "two batches of "+k+" at once")
			}
		}
		mu.Unlock()
		if keys[held] {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for k := range keys {
			inFlight[k]--
		}
		for _, r := range ev.Records {
			n, _ := strconv.Atoi(r.Change.NewImage["n"].Number())
			pk := r.Change.NewImage["PK"].String()
			handled[pk] = append(handled[pk], n)
		}
		return events.DynamoDBEventResponse{}, nil
	}
	streams, err := app.NewStreams(ctx, cfg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	go Poll(ctx, s.Client(), streams, cfg.TableName, mine, handle, MaximumRetryAttempts, testdb.Quiet())
	count := func(pk string) int {
		mu.Lock()
		defer mu.Unlock()
		return len(handled[pk])
	}
	for deadline := time.Now().Add(30 * time.Second); count(other) < each; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d records of %s handled while a batch of %s was held: the held batch holds the whole shard", count(other), each, other, held)
		}
	}
	if n := count(held); n != 0 {
		t.Fatalf("%d records of the held key handled while its first batch was held", n)
	}
	close(release)
	for deadline := time.Now().Add(30 * time.Second); count(held) < each; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d records of %s handled after its batch was let go", count(held), each, held)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, pk := range []string{held, other} {
		for i, n := range handled[pk] {
			if n != i {
				t.Fatalf("%s handed out of order or twice: %v", pk, handled[pk])
			}
		}
	}
	if len(problems) > 0 {
		t.Fatal(problems)
	}
}
