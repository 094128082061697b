package store

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// An account's fan-out jobs. The stream handler records an event's delivery
// to each subscribed webhook endpoint itself when the account's events of a
// stream batch owe few deliveries; when they owe many (a burst of changes at
// a merchant with many endpoints), it records one job instead: the events'
// ids, in one item, in the account's fan-out partition (A#<acct>#FANOUT),
// and wakes the account's fan-out queue, whose queue item lives in the same
// partition. The dispatcher expands each job into the deliveries in the
// background, then deletes it. So the stream's work per batch is bounded
// whatever one merchant's burst × endpoints, and the merchants whose records
// follow on the shard are not held up behind the burst's thousands of writes.

const fanoutJobPrefix = "JOB#"

// FanoutQueue names the queue whose ready entry says that account has
// fan-out jobs to expand.
func FanoutQueue(account string) string { return account + fanoutQueueSuffix }

const fanoutQueueSuffix = "#FANOUT"

// IsFanoutQueue reports whether a queue name is an account's fan-out queue.
func IsFanoutQueue(queue string) bool {
	account, ok := strings.CutSuffix(queue, fanoutQueueSuffix)
	return ok && account != ""
}

// FanoutAccount returns the account of a fan-out queue's name.
func FanoutAccount(queue string) string { return strings.TrimSuffix(queue, fanoutQueueSuffix) }

// FanoutJob is the events of one stream batch of an account whose
// deliveries to its webhook endpoints are still to be recorded.
type FanoutJob struct {
	Account  string
	EventIDs []string
	sk       string
}

// AddFanout records a fan-out job of the account's events (by id, in the
// order the stream handed them) and wakes its fan-out queue. The job is
// named by its first event and a hash of all its ids: a batch handed again
// writes the same item, and a batch handed again with other records (after
// a failure, or bisected) writes another, never overwriting one a
// dispatcher may be expanding (whose delete would then take ids it never
// read). Expanding a second job of the same events finds their deliveries
// recorded and does nothing.
func (s *Store) AddFanout(ctx context.Context, account string, eventIDs []string, now time.Time) error {
	if len(eventIDs) == 0 {
		return nil
	}
	ids := make([]types.AttributeValue, len(eventIDs))
	for i, id := range eventIDs {
		ids[i] = str(id)
	}
	h := fnv.New64a()
	for _, id := range eventIDs {
		h.Write([]byte(id))
		h.Write([]byte{0})
	}
	it := key(acctPK(FanoutQueue(account)), fmt.Sprintf("%s%s#%016x", fanoutJobPrefix, eventIDs[0], h.Sum64()))
	it["type"] = str("fanout_job")
	it["account_id"] = str(account)
	it["events"] = &types.AttributeValueMemberL{Value: ids}
	it["created_at"] = str(fmtTime(now))
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: it}); err != nil {
		return fmt.Errorf("put fan-out job: %w", err)
	}
	return s.Wake(ctx, FanoutQueue(account), now)
}

// FanoutJobs returns up to limit of the account's fan-out jobs, oldest
// event first, read consistently: a job written before the queue's wake is
// always found by the pass the wake calls.
func (s *Store) FanoutJobs(ctx context.Context, account string, limit int) ([]FanoutJob, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		ConsistentRead:            aws.Bool(true),
		KeyConditionExpression:    aws.String("PK = :pk AND begins_with(SK, :job)"),
		ExpressionAttributeValues: attrs{":pk": str(acctPK(FanoutQueue(account))), ":job": str(fanoutJobPrefix)},
		Limit:                     aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, fmt.Errorf("query fan-out jobs: %w", err)
	}
	jobs := make([]FanoutJob, len(out.Items))
	for i, it := range out.Items {
		jobs[i] = FanoutJob{Account: account, sk: getS(it, "SK")}
		if l, ok := it["events"].(*types.AttributeValueMemberL); ok {
			for _, v := range l.Value {
				if id, ok := v.(*types.AttributeValueMemberS); ok {
					jobs[i].EventIDs = append(jobs[i].EventIDs, id.Value)
				}
			}
		}
	}
	return jobs, nil
}

// FanoutEvent is an event a fan-out job names: its body as the feed shows
// it, and its type. Found is false when the event is gone (expired, or its
// account's test data cleared).
type FanoutEvent struct {
	ID    string
	Type  string
	Body  json.RawMessage
	Found bool
}

// FanoutEvents reads the events of a job, in its order, with one
// BatchGetItem per 100.
func (s *Store) FanoutEvents(ctx context.Context, job FanoutJob) ([]FanoutEvent, error) {
	keys := make([]attrs, len(job.EventIDs))
	for i, id := range job.EventIDs {
		keys[i] = eventKey(job.Account, id)
	}
	its, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	evs := make([]FanoutEvent, len(job.EventIDs))
	for i, id := range job.EventIDs {
		evs[i].ID = id
		if i < len(its) && its[i] != nil {
			evs[i].Body, evs[i].Found = decodeEventBody(its[i])
			evs[i].Type = typeOfEvent(its[i])
		}
	}
	return evs, nil
}

// DoneFanout deletes a job whose deliveries are all recorded.
func (s *Store) DoneFanout(ctx context.Context, job FanoutJob) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table), Key: key(acctPK(FanoutQueue(job.Account)), job.sk),
	})
	if err != nil {
		return fmt.Errorf("delete fan-out job: %w", err)
	}
	return nil
}
