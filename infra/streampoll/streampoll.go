// Package streampoll plays the part of Lambda's DynamoDB Streams event source
// on a machine without Lambda: the devserver and the benchmarks use it to
// feed the deliver-webhooks and apply-report-figures handlers from DynamoDB
// Local, one poller per function as each has its own event source mapping.
package streampoll

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// Handler handles one batch of stream records, as the deliver-webhooks
// function does (webhook.Service.HandleStream).
type Handler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// Filter says whether a record passes an event source mapping's filter
// (webhook.Streamed, app.IsFiguresInsert).
type Filter func(events.DynamoDBEventRecord) bool

// MaximumRetryAttempts is how many times a failed batch is handed again
// before it is skipped, as the template's event source mapping says: after
// that Lambda moves on and sends only the records' sequence range to the
// on-failure queue. The webhook sweep gives the skipped payments their
// deliveries.
const MaximumRetryAttempts = 20

// Poll plays the part of Lambda's stream event source locally: it reads
// every shard of the table's stream (following new shards as they appear),
// keeps the records the template's filter would pass (pass: for the
// deliver-webhooks function, payment, refund and event inserts,
// webhook.Streamed), and hands them to handle as an events.DynamoDBEvent. Starting at the trim horizon is safe:
// a payment or event seen twice keeps its deliveries, one per target.
//
// Like Lambda with ReportBatchItemFailures, it does not move past a record it
// failed to handle: a batch with failures is handed again from its lowest
// failed record, with backoff, before the shard is read further; after
// maxRetries such retries (MaximumRetryAttempts in the devserver) the rest of
// the batch is skipped, logged by its sequence range.
func Poll(ctx context.Context, db *dynamodb.Client, streams *dynamodbstreams.Client, table string, pass Filter, handle Handler, maxRetries int, log *slog.Logger) {
	arn := streamARN(ctx, db, table, log)
	if arn == nil {
		return
	}
	iterators := map[string]*string{} // open shards -> next iterator
	done := map[string]bool{}         // closed shards already read to the end
	retry := map[string]*pending{}    // shards with records that failed, to hand again first
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	lastDescribe := time.Time{}
	for {
		if time.Since(lastDescribe) > 2*time.Second {
			lastDescribe = time.Now()
			out, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn})
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				log.Warn("stream: describe failed", "error", err.Error())
			} else {
				for _, sh := range out.StreamDescription.Shards {
					id := aws.ToString(sh.ShardId)
					if _, open := iterators[id]; open || done[id] {
						continue
					}
					it, err := streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
						StreamArn: arn, ShardId: sh.ShardId, ShardIteratorType: st.ShardIteratorTypeTrimHorizon,
					})
					if err == nil {
						iterators[id] = it.ShardIterator
					}
				}
			}
		}
		for id, p := range retry {
			if time.Now().Before(p.at) {
				continue
			}
			if rest := handleBatch(ctx, pass, handle, p.records, log); len(rest) > 0 {
				if p.tries >= maxRetries {
					log.Error("stream: batch skipped after its last retry", "retries", p.tries,
						"first_sequence_number", aws.ToString(rest[0].Dynamodb.SequenceNumber),
						"last_sequence_number", aws.ToString(rest[len(rest)-1].Dynamodb.SequenceNumber))
					delete(retry, id)
					continue
				}
				p.records, p.tries = rest, p.tries+1
				p.at = time.Now().Add(backoff(p.tries))
				continue
			}
			delete(retry, id)
		}
		for id, it := range iterators {
			if retry[id] != nil {
				continue // this shard waits until its failed records are handled
			}
			out, err := streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it, Limit: aws.Int32(100)})
			if err != nil {
				var expired *st.ExpiredIteratorException
				if errors.As(err, &expired) {
					delete(iterators, id) // re-opened from the trim horizon on the next describe
				} else if ctx.Err() == nil {
					log.Warn("stream: get records failed", "error", err.Error())
				}
				continue
			}
			if len(out.Records) > 0 {
				if rest := handleBatch(ctx, pass, handle, out.Records, log); len(rest) > 0 {
					retry[id] = &pending{records: rest, tries: 1, at: time.Now().Add(backoff(1))}
				}
			}
			if out.NextShardIterator == nil {
				delete(iterators, id)
				done[id] = true
			} else {
				iterators[id] = out.NextShardIterator
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// pending is a shard's batch that failed: handed again from its lowest
// failed record at time at.
type pending struct {
	records []st.Record
	tries   int
	at      time.Time
}

// backoff is the wait before handing a failed batch again: 100 ms doubling
// up to 5 s.
func backoff(tries int) time.Duration {
	return min(100*time.Millisecond<<min(tries-1, 6), 5*time.Second)
}

// handleBatch hands the records the template's filter passes to handle and
// returns the records from the lowest failed one on (nil when all were
// handled), as Lambda resumes a batch with ReportBatchItemFailures. A handler
// error fails the whole batch.
func handleBatch(ctx context.Context, pass Filter, handle Handler, records []st.Record, log *slog.Logger) []st.Record {
	var ev events.DynamoDBEvent
	for _, r := range records {
		rec := events.DynamoDBEventRecord{
			EventID:   aws.ToString(r.EventID),
			EventName: string(r.EventName),
			Change: events.DynamoDBStreamRecord{
				SequenceNumber: aws.ToString(r.Dynamodb.SequenceNumber),
				NewImage:       toEvents(r.Dynamodb.NewImage),
			},
		}
		if pass(rec) { // the event source mapping's filter
			ev.Records = append(ev.Records, rec)
		}
	}
	if len(ev.Records) == 0 {
		return nil
	}
	resp, err := handle(ctx, ev)
	if err != nil {
		log.Error("stream: batch failed; it will be handed again", "error", err.Error())
		return records
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for i, r := range records {
		if failed[aws.ToString(r.Dynamodb.SequenceNumber)] {
			log.Error("stream: delivery not recorded; the batch is handed again from it", "sequence_number", aws.ToString(r.Dynamodb.SequenceNumber))
			return records[i:]
		}
	}
	return nil
}

// toEvents converts the Streams API's attribute values into the events
// package's, as Lambda would deliver them.
func toEvents(img map[string]st.AttributeValue) map[string]events.DynamoDBAttributeValue {
	out := make(map[string]events.DynamoDBAttributeValue, len(img))
	for k, v := range img {
		out[k] = toEvent(v)
	}
	return out
}

func toEvent(v st.AttributeValue) events.DynamoDBAttributeValue {
	switch v := v.(type) {
	case *st.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value)
	case *st.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value)
	case *st.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value)
	case *st.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value)
	case *st.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value)
	case *st.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value)
	case *st.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value)
	case *st.AttributeValueMemberM:
		return events.NewMapAttribute(toEvents(v.Value))
	case *st.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = toEvent(e)
		}
		return events.NewListAttribute(l)
	}
	return events.NewNullAttribute()
}

// streamARN returns the table's stream, or nil when it has none (logged:
// webhooks are off) or ctx ends first. A failed read of the table
// (DynamoDB Local busy or starting) is tried again each second, so one slow
// answer at start does not turn webhooks off for the process's life.
func streamARN(ctx context.Context, db *dynamodb.Client, table string, log *slog.Logger) *string {
	for {
		desc, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err == nil {
			if desc.Table.LatestStreamArn == nil {
				log.Error("stream: no stream on the table; webhooks are off")
			}
			return desc.Table.LatestStreamArn
		}
		if ctx.Err() != nil {
			return nil
		}
		log.Warn("stream: reading the table failed; trying again in 1s", "error", err.Error())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}
