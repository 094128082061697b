// Package streampoll plays the part of Lambda's DynamoDB Streams event source
// on a machine without Lambda: the devserver and the benchmarks use it to
// feed the deliver-webhooks and apply-report-figures handlers from DynamoDB
// Local, one poller per function as each has its own event source mapping.
package streampoll

import (
	"context"
	"errors"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	"bizdata/shared/streamimage"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// Handler handles one batch of stream records, as the deliver-webhooks
// function does (webhook.Service.HandleStream).
type Handler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// Filter says whether a record passes an event source mapping's filter
// (webhook.Streamed, lambdas.IsFiguresInsert).
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

// Mapping is how an event source mapping of the template hands a shard's
// records to its function: batches of at most BatchSize records, up to
// ParallelizationFactor of them at once, each of its own partition keys
// (Lambda keeps each partition key's records in order, not the shard's),
// gathered for at most BatchingWindow before the first record's batch is
// handed (MaximumBatchingWindowInSeconds; zero hands what there is at once).
// MaxRetries is MaximumRetryAttempts.
type Mapping struct {
	BatchSize             int
	ParallelizationFactor int
	BatchingWindow        time.Duration
	MaxRetries            int
}

// The template's two stream mappings (a test compares them): the
// deliver-webhooks function's (PaymentInserts) and the apply-report-figures
// function's (FiguresInserts).
var (
	DeliverWebhooks    = Mapping{BatchSize: 25, ParallelizationFactor: 10, MaxRetries: MaximumRetryAttempts}
	ApplyReportFigures = Mapping{BatchSize: 1000, ParallelizationFactor: 1, BatchingWindow: time.Second, MaxRetries: MaximumRetryAttempts}
)

// pollInterval is how often a shard with nothing new is read again: Lambda
// polls a DynamoDB stream's shard 4 times a second, and reads on at once
// while records come.
const pollInterval = 250 * time.Millisecond

// Poll is PollMapping with the deliver-webhooks function's mapping and
// maxRetries retries of a failed batch.
func Poll(ctx context.Context, db *dynamodb.Client, streams *dynamodbstreams.Client, table string, pass Filter, handle Handler, maxRetries int, log *slog.Logger) {
	m := DeliverWebhooks
	m.MaxRetries = maxRetries
	PollMapping(ctx, db, streams, table, m, pass, handle, log)
}

// PollMapping plays the part of Lambda's stream event source locally: it
// reads every shard of the table's stream, each in a goroutine of its own as
// Lambda has a poller per shard (following new shards as they appear, a
// child once its parent is read to the end), keeps the records the
// template's filter would pass (pass: for the deliver-webhooks function,
// payment, refund and event inserts, webhook.Streamed), and hands them to
// handle as events.DynamoDBEvent batches, as m says. Starting at the trim
// horizon is safe: a payment or event seen twice keeps its deliveries, one
// per target.
//
// Like Lambda with ReportBatchItemFailures and BisectBatchOnFunctionError,
// it does not move past a record it failed to handle: a batch with failures
// is handed again from its lowest failed record, with backoff, before its
// lane (its partition keys) goes on; a batch whose handler returned an error
// is split in two and each half handed in turn, so a record that fails its
// whole batch ends in a batch of its own. After m.MaxRetries retries of one
// batch, or once its first record is older than MaximumRecordAge, the batch
// is skipped, logged by its sequence range (Lambda's on-failure
// destination), and the lane goes on. The shard's other lanes go on
// meanwhile: a slow or failing batch holds only the partition keys of its
// own lane.
func PollMapping(ctx context.Context, db *dynamodb.Client, streams *dynamodbstreams.Client, table string, m Mapping, pass Filter, handle Handler, log *slog.Logger) {
	arn, key := streamARN(ctx, db, table, log)
	if arn == nil {
		return
	}
	done := map[string]chan struct{}{} // shards polled -> closed once read to the end
	for {
		out, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			log.Warn("stream: describe failed", "error", err.Error())
		} else {
			var found []st.Shard
			for _, sh := range out.StreamDescription.Shards {
				if id := aws.ToString(sh.ShardId); done[id] == nil {
					done[id] = make(chan struct{})
					found = append(found, sh)
				}
			}
			for _, sh := range found { // parents first known, so a child waits for its own
				s := &shard{arn: arn, id: aws.ToString(sh.ShardId), key: key, m: m, pass: pass, handle: handle, streams: streams, log: log}
				go s.poll(ctx, done[aws.ToString(sh.ParentShardId)], done[s.id])
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
	}
}

// shard is the poller of one shard of the stream.
type shard struct {
	arn     *string
	id      string
	key     string // the table's partition key attribute
	m       Mapping
	pass    Filter
	handle  Handler
	streams *dynamodbstreams.Client
	log     *slog.Logger
}

// poll reads the shard to its end (a closed shard) or for good, after its
// parent (when polled here) is read to the end, and deals its records to
// m.ParallelizationFactor lanes by a hash of their partition key; it closes
// finished once every lane has handled what it was dealt.
func (s *shard) poll(ctx context.Context, parent <-chan struct{}, finished chan<- struct{}) {
	if parent != nil {
		select {
		case <-parent:
		case <-ctx.Done():
			return
		}
	}
	lanes := make([]chan st.Record, max(s.m.ParallelizationFactor, 1))
	var wg sync.WaitGroup
	for i := range lanes {
		// A lane reads ahead a few batches, so the shard's reader waits on
		// one busy lane only once it holds that many.
		lanes[i] = make(chan st.Record, 4*s.m.BatchSize)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.lane(ctx, lanes[i])
		}()
	}
	s.read(ctx, lanes)
	for _, l := range lanes {
		close(l)
	}
	wg.Wait()
	if ctx.Err() == nil {
		close(finished)
	}
}

// read deals the shard's records, those the filter passes, to lanes until the
// shard's end or ctx's.
func (s *shard) read(ctx context.Context, lanes []chan st.Record) {
	var it *string
	var last *string // the sequence number of the last record read
	for ctx.Err() == nil {
		if it == nil {
			in := &dynamodbstreams.GetShardIteratorInput{StreamArn: s.arn, ShardId: aws.String(s.id), ShardIteratorType: st.ShardIteratorTypeTrimHorizon}
			if last != nil {
				in.ShardIteratorType, in.SequenceNumber = st.ShardIteratorTypeAfterSequenceNumber, last
			}
			out, err := s.streams.GetShardIterator(ctx, in)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("stream: get shard iterator failed", "error", err.Error())
				}
				sleep(ctx, pollInterval)
				continue
			}
			it = out.ShardIterator
		}
		// GetRecords' largest page: the lanes bound how far it reads ahead.
		out, err := s.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it, Limit: aws.Int32(1000)})
		if err != nil {
			var expired *st.ExpiredIteratorException
			if !errors.As(err, &expired) && ctx.Err() == nil {
				s.log.Warn("stream: get records failed", "error", err.Error())
			}
			it = nil // a new iterator from the last record read
			sleep(ctx, pollInterval)
			continue
		}
		for _, r := range out.Records {
			last = r.Dynamodb.SequenceNumber
			if !s.pass(streamimage.LambdaRecord(r)) { // the mapping's filter, before batching
				continue
			}
			select {
			case lanes[s.laneOf(r, len(lanes))] <- r:
			case <-ctx.Done():
				return
			}
		}
		if out.NextShardIterator == nil {
			return // a closed shard, read to its end
		}
		it = out.NextShardIterator
		if len(out.Records) == 0 {
			sleep(ctx, pollInterval)
		}
	}
}

// laneOf is the lane of record r's partition key, of n.
func (s *shard) laneOf(r st.Record, n int) int {
	h := fnv.New32a()
	if v, ok := r.Dynamodb.Keys[s.key].(*st.AttributeValueMemberS); ok {
		h.Write([]byte(v.Value))
	}
	return int(h.Sum32() % uint32(n))
}

// lane hands the records dealt to it in batches, in order, each batch once
// the one before is handled or skipped, until records is closed and drained
// or ctx ends.
func (s *shard) lane(ctx context.Context, records <-chan st.Record) {
	for {
		batch := s.batch(ctx, records)
		if len(batch) == 0 {
			return
		}
		rest, whole := handleBatch(ctx, s.pass, s.handle, batch, s.log)
		if len(rest) == 0 {
			continue
		}
		for p := failed(rest, whole); ; {
			if !sleep(ctx, time.Until(p.at)) {
				return
			}
			if p.retry(ctx, s.pass, s.handle, s.m.MaxRetries, s.log) {
				break
			}
		}
	}
}

// batch waits for a record, then gathers the records that follow it up to
// m.BatchSize: those already read, or those read within m.BatchingWindow.
// It returns nil once records is closed and drained, or ctx ends.
func (s *shard) batch(ctx context.Context, records <-chan st.Record) []st.Record {
	var batch []st.Record
	select {
	case r, ok := <-records:
		if !ok {
			return nil
		}
		batch = append(batch, r)
	case <-ctx.Done():
		return nil
	}
	window := time.NewTimer(s.m.BatchingWindow)
	defer window.Stop()
	for len(batch) < s.m.BatchSize {
		select {
		case r, ok := <-records:
			if !ok {
				return batch
			}
			batch = append(batch, r)
			continue
		default:
		}
		if s.m.BatchingWindow <= 0 {
			return batch
		}
		select {
		case r, ok := <-records:
			if !ok {
				return batch
			}
			batch = append(batch, r)
		case <-window.C:
			return batch
		case <-ctx.Done():
			return batch
		}
	}
	return batch
}

// sleep waits d, or less when ctx ends first; it reports whether ctx is
// still live.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
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
		rec := streamimage.LambdaRecord(r)
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

// streamARN returns the table's stream and its partition key attribute, or
// nil when it has none (logged: webhooks are off) or ctx ends first. A failed
// read of the table (DynamoDB Local busy or starting) is tried again each
// second, so one slow answer at start does not turn webhooks off for the
// process's life.
func streamARN(ctx context.Context, db *dynamodb.Client, table string, log *slog.Logger) (*string, string) {
	for {
		desc, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err == nil {
			if desc.Table.LatestStreamArn == nil {
				log.Error("stream: no stream on the table; webhooks are off")
			}
			key := ""
			for _, k := range desc.Table.KeySchema {
				if k.KeyType == types.KeyTypeHash {
					key = aws.ToString(k.AttributeName)
				}
			}
			return desc.Table.LatestStreamArn, key
		}
		if ctx.Err() != nil {
			return nil, ""
		}
		log.Warn("stream: reading the table failed; trying again in 1s", "error", err.Error())
		select {
		case <-ctx.Done():
			return nil, ""
		case <-time.After(time.Second):
		}
	}
}
