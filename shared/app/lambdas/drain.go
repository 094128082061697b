package lambdas

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"

	"bizdata/shared/app"
	"bizdata/shared/streamimage"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/smithy-go"
)

// StreamBatchInfo is the part of Lambda's invocation record, the message a
// stream event source mapping sends to its on-failure destination once a
// batch has used its retries (or outlived its maximum record age), that
// names the batch: its shard and the sequence numbers of its first and last
// records. The records themselves are not in the message; they stay on the
// stream for its 24 h retention.
type StreamBatchInfo struct {
	ShardID                         string `json:"shardId"`
	StartSequenceNumber             string `json:"startSequenceNumber"`
	EndSequenceNumber               string `json:"endSequenceNumber"`
	ApproximateArrivalOfFirstRecord string `json:"approximateArrivalOfFirstRecord"`
	ApproximateArrivalOfLastRecord  string `json:"approximateArrivalOfLastRecord"`
	BatchSize                       int    `json:"batchSize"`
	StreamArn                       string `json:"streamArn"`
}

// StreamFailure is the invocation record itself, as far as the drain reads
// it: why the batch was given up (RetryAttemptsExhausted,
// RecordAgeExceeded) and the batch.
type StreamFailure struct {
	RequestContext struct {
		Condition              string `json:"condition"`
		ApproximateInvokeCount int    `json:"approximateInvokeCount"`
	} `json:"requestContext"`
	Timestamp string           `json:"timestamp"`
	Batch     *StreamBatchInfo `json:"DDBStreamBatchInfo"`
}

// errMalformed marks a message that is no invocation record of a stream
// batch: no retry can change it.
var errMalformed = errors.New("not a stream batch's invocation record")

// ParseStreamFailure reads a message of the failure queue, refusing one
// without a shard, a stream or a range of decimal sequence numbers that
// starts before it ends.
func ParseStreamFailure(body string) (StreamFailure, error) {
	var f StreamFailure
	if err := json.Unmarshal([]byte(body), &f); err != nil {
		return f, fmt.Errorf("%w: %s", errMalformed, err.Error())
	}
	b := f.Batch
	switch {
	case b == nil:
		return f, fmt.Errorf("%w: no DDBStreamBatchInfo", errMalformed)
	case b.ShardID == "" || !strings.HasPrefix(b.StreamArn, "arn:"):
		return f, fmt.Errorf("%w: no shardId or streamArn", errMalformed)
	}
	start, ok1 := sequence(b.StartSequenceNumber)
	end, ok2 := sequence(b.EndSequenceNumber)
	if !ok1 || !ok2 || start.Cmp(end) > 0 {
		return f, fmt.Errorf("%w: sequence range %q to %q", errMalformed, b.StartSequenceNumber, b.EndSequenceNumber)
	}
	return f, nil
}

// sequence reads a stream sequence number: a decimal integer of 21 to 40
// digits (the Streams API's bounds), compared as a number (two of different
// lengths do not compare as strings).
func sequence(s string) (*big.Int, bool) {
	if len(s) < 21 || len(s) > 40 || strings.Trim(s, "0123456789") != "" {
		return nil, false
	}
	return new(big.Int).SetString(s, 10)
}

// drainEmptyPages is how many empty pages in a row the drain reads before
// it gives up on reaching a range's end for now: the Streams API may answer
// a few empty pages before the part of a shard that holds records, and a
// range that was handed to the function once is on the shard.
const drainEmptyPages = 20

// StreamRecordsHandler handles a batch of stream records as the stream's
// event source mapping hands them (webhook.Service.HandleStream).
type StreamRecordsHandler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// DrainStreamFailures is the drain-stream-failures function: for each
// message of the failure queue (the batches the deliver-webhooks mapping
// gave up on), it reads the batch's range again from the stream, keeps the
// records the mapping's filter passes (pass: webhook.Streamed) and hands
// them to handle, so the events of a skipped batch reach the endpoints and
// its payments their callback URL, without waiting for the sweep or a
// replay. Handing a record again is safe: deliveries are keyed by payment
// and by event and endpoint.
//
// A message is reported as a batch item failure, so the queue hands it
// again and, after its receives, moves it to the dead-letter queue and its
// alarm, when reading the stream or recording a delivery fails for a
// passing cause. It is dropped, with an error logged, when no retry can
// change the outcome: the message is no invocation record of a stream batch
// (malformed), or its records are gone from the stream (trimmed after the
// stream's 24 h retention, or a shard or stream that no longer exists). The
// sweep still gives the payments of such a batch their deliveries; its
// events reach an endpoint only by a replay.
func DrainStreamFailures(streams *dynamodbstreams.Client, pass func(events.DynamoDBEventRecord) bool, handle StreamRecordsHandler, log *slog.Logger) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, m := range ev.Records {
			f, err := ParseStreamFailure(m.Body)
			if err != nil {
				log.ErrorContext(ctx, "stream failure dropped: the message is no stream batch's invocation record", "message_id", m.MessageId, "error", err.Error())
				continue
			}
			b := f.Batch
			attrs := []any{"message_id", m.MessageId, "condition", f.RequestContext.Condition, "shard_id", b.ShardID,
				"start_sequence_number", b.StartSequenceNumber, "end_sequence_number", b.EndSequenceNumber}
			handed, err := drainBatch(ctx, streams, *b, pass, handle)
			switch {
			case err == nil:
				log.InfoContext(ctx, "stream failure drained", append(attrs, "records_handed", handed)...)
			case streamGone(err):
				log.ErrorContext(ctx, "stream failure dropped: its records are gone from the stream (or never were on it); the sweep still finds its payments, its events reach an endpoint only by a replay",
					append(attrs, "approximate_arrival_of_first_record", b.ApproximateArrivalOfFirstRecord, "records_handed", handed, "error", err.Error())...)
			default:
				log.ErrorContext(ctx, "stream failure not drained; the message is received again", append(attrs, "records_handed", handed, "error", err.Error())...)
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			}
		}
		return resp, nil
	}
}

// streamGone reports whether a Streams API error says the records asked for
// no longer exist: trimmed after the retention, their shard (removed 24 h
// after it closed) or stream gone; or that the stream refuses the range as
// none of the shard's (a ValidationException: no retry changes it).
func streamGone(err error) bool {
	var trimmed *st.TrimmedDataAccessException
	var missing *st.ResourceNotFoundException
	var apiErr smithy.APIError
	return errors.As(err, &trimmed) || errors.As(err, &missing) ||
		(errors.As(err, &apiErr) && apiErr.ErrorCode() == "ValidationException")
}

// drainBatch reads the records of b's range from its shard, page by page,
// and hands the ones pass keeps to handle; it returns how many it handed.
func drainBatch(ctx context.Context, streams *dynamodbstreams.Client, b StreamBatchInfo, pass func(events.DynamoDBEventRecord) bool, handle StreamRecordsHandler) (int, error) {
	end, _ := sequence(b.EndSequenceNumber)
	it, err := streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
		StreamArn: aws.String(b.StreamArn), ShardId: aws.String(b.ShardID),
		ShardIteratorType: st.ShardIteratorTypeAtSequenceNumber, SequenceNumber: aws.String(b.StartSequenceNumber),
	})
	if err != nil {
		return 0, err
	}
	handed, empty := 0, 0
	for next := it.ShardIterator; next != nil; {
		page, err := streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: next})
		if err != nil {
			return handed, err
		}
		var batch events.DynamoDBEvent
		done := false
		for _, r := range page.Records {
			seq, ok := sequence(aws.ToString(r.Dynamodb.SequenceNumber))
			if !ok || seq.Cmp(end) > 0 {
				done = true
				break
			}
			if rec := streamimage.LambdaRecord(r); pass(rec) { // the mapping's filter
				batch.Records = append(batch.Records, rec)
			}
			if seq.Cmp(end) == 0 {
				done = true
				break
			}
		}
		if len(batch.Records) > 0 {
			resp, err := handle(ctx, batch)
			if err != nil {
				return handed, err
			}
			if n := len(resp.BatchItemFailures); n > 0 {
				return handed, fmt.Errorf("%d of %d records not handled, from sequence number %s", n, len(batch.Records), resp.BatchItemFailures[0].ItemIdentifier)
			}
			handed += len(batch.Records)
		}
		if done {
			return handed, nil
		}
		if len(page.Records) == 0 {
			empty++
		} else {
			empty = 0
		}
		if empty >= drainEmptyPages {
			return handed, fmt.Errorf("the range's end was not reached after %d empty pages", empty)
		}
		next = page.NextShardIterator
	}
	// The shard ended (it was closed) before the range's end: what it held
	// of the range was handed.
	return handed, nil
}

// RunDrainStreamFailures starts the function fed by the failure queue of
// the deliver-webhooks mapping (DrainStreamFailures). Like RunFunction, it
// returns only when the function cannot start.
func RunDrainStreamFailures() error {
	cfg, err := app.FromEnv()
	if err != nil {
		return fmt.Errorf("drain-stream-failures: %w", err)
	}
	ctx := context.Background()
	svc, err := NewWebhookService(ctx, cfg)
	if err != nil {
		return fmt.Errorf("drain-stream-failures: %w", err)
	}
	streams, err := app.NewStreams(ctx, cfg.Endpoint)
	if err != nil {
		return fmt.Errorf("drain-stream-failures: %w", err)
	}
	lambda.StartWithOptions(DrainStreamFailures(streams, webhook.Streamed, svc.HandleStream, app.Logger()), lambda.WithEnableSIGTERM())
	return nil
}
