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

	"bizdata/shared/webhook"

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
// before it is skipped, and MaximumRecordAge how old a record may be when it
// is handed, as the template's event source mappings say: after that Lambda
// moves on and sends only the records' sequence range to the on-failure
// queue. A record no retry can process never gets that far (the handlers
// pass it over, logged); what a skipped batch held is found again by the
// webhook sweep (payments) or stays in the table until a report applies it
// (figures).
const (
	MaximumRetryAttempts = 5
	MaximumRecordAge     = 6 * time.Hour
)

// Poll plays the part of Lambda's stream event source locally: it reads
// every shard of the table's stream (following new shards as they appear),
// keeps the records the template's filter would pass (pass: for the
// deliver-webhooks function, payment, refund and event inserts,
// webhook.Streamed), and hands them to handle as an events.DynamoDBEvent. Starting at the trim horizon is safe:
// a payment or event seen twice keeps its deliveries, one per target.
//
// Like Lambda with ReportBatchItemFailures and BisectBatchOnFunctionError,
// it does not move past a record it failed to handle: a batch with failures
// is handed again from its lowest failed record, with backoff, before the
// shard is read further; a batch whose handler returned an error is split in
// two and each half handed in turn, so a record that fails its whole batch
// ends in a batch of its own. After maxRetries retries of one batch
// (MaximumRetryAttempts in the devserver), or once its first record is older
// than MaximumRecordAge, the batch is skipped, logged by its sequence range
// (Lambda's on-failure destination), and the shard goes on.
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
			if p.retry(ctx, pass, handle, maxRetries, log) {
				delete(retry, id)
			}
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
				if rest, whole := handleBatch(ctx, pass, handle, out.Records, log); len(rest) > 0 {
					retry[id] = failed(rest, whole)
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

// pending is a shard's records from its lowest failed one on: the first
// size of them are the batch handed again at time at, which has been handed
// tries times; the shard is read further once all of them are handled or
// skipped.
type pending struct {
	records []st.Record
	size    int
	tries   int
	at      time.Time
}

// failed returns the pending records of a batch that failed from rest on;
// whole says its handler returned an error, so the batch is bisected.
func failed(rest []st.Record, whole bool) *pending {
	p := &pending{records: rest, size: len(rest)}
	p.next(rest, whole, 1)
	return p
}

// next sets the batch to hand again after a try that failed from rest on,
// with tries tries made of it.
func (p *pending) next(rest []st.Record, whole bool, tries int) {
	p.records = append(rest[:len(rest):len(rest)], p.records[p.size:]...)
	p.size, p.tries = len(rest), tries
	if whole && len(rest) > 1 {
		// BisectBatchOnFunctionError: the first half is a batch of its own,
		// its retries counted afresh; the second follows it.
		p.size, p.tries = len(rest)/2, 1
	}
	p.at = time.Now().Add(backoff(p.tries))
}

// retry hands the pending batch again, after dropping the records older
// than MaximumRecordAge; it reports whether nothing of the shard is pending
// any more. A batch tried maxRetries times is skipped.
func (p *pending) retry(ctx context.Context, pass Filter, handle Handler, maxRetries int, log *slog.Logger) bool {
	if old := tooOld(p.records[:p.size]); old > 0 {
		skipped(log, "stream: records skipped: older than the maximum record age", p.records[:old], p.tries)
		p.records, p.size = p.records[old:], p.size-old
	}
	if p.size > 0 {
		rest, whole := handleBatch(ctx, pass, handle, p.records[:p.size], log)
		switch {
		case len(rest) == 0:
			p.records = p.records[p.size:]
		case p.tries >= maxRetries:
			skipped(log, "stream: batch skipped after its last retry", rest, p.tries)
			p.records = p.records[p.size:]
		default:
			p.next(rest, whole, p.tries+1)
			return false
		}
	} else {
		p.records = p.records[p.size:]
	}
	if len(p.records) == 0 {
		return true
	}
	// What follows the batch is handed as a batch of its own.
	p.size, p.tries, p.at = len(p.records), 0, time.Time{}
	return false
}

// tooOld returns how many of records, from the first, are older than
// MaximumRecordAge.
func tooOld(records []st.Record) int {
	for i, r := range records {
		if at := r.Dynamodb.ApproximateCreationDateTime; at == nil || time.Since(*at) <= MaximumRecordAge {
			return i
		}
	}
	return len(records)
}

// skipped logs records passed over as Lambda sends them to the on-failure
// destination: by their sequence range.
func skipped(log *slog.Logger, msg string, records []st.Record, retries int) {
	log.Error(msg, "retries", retries,
		"first_sequence_number", aws.ToString(records[0].Dynamodb.SequenceNumber),
		"last_sequence_number", aws.ToString(records[len(records)-1].Dynamodb.SequenceNumber))
}

// backoff is the wait before handing a failed batch again: 100 ms doubling
// up to 5 s.
func backoff(tries int) time.Duration {
	return min(100*time.Millisecond<<min(tries-1, 6), 5*time.Second)
}

// handleBatch hands the records the template's filter passes to handle and
// returns the records from the lowest failed one on (nil when all were
// handled), as Lambda resumes a batch with ReportBatchItemFailures. A handler
// error fails the whole batch, and whole says so.
func handleBatch(ctx context.Context, pass Filter, handle Handler, records []st.Record, log *slog.Logger) (rest []st.Record, whole bool) {
	var ev events.DynamoDBEvent
	for _, r := range records {
		rec := webhook.StreamRecord(r)
		if pass(rec) { // the event source mapping's filter
			ev.Records = append(ev.Records, rec)
		}
	}
	if len(ev.Records) == 0 {
		return nil, false
	}
	resp, err := handle(ctx, ev)
	if err != nil {
		log.Error("stream: batch failed; it will be handed again", "error", err.Error())
		return records, true
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for i, r := range records {
		if failed[aws.ToString(r.Dynamodb.SequenceNumber)] {
			log.Error("stream: record not handled; the batch is handed again from it", "sequence_number", aws.ToString(r.Dynamodb.SequenceNumber))
			return records[i:], false
		}
	}
	return nil, false
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
