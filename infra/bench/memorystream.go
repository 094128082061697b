package main

// The memory step's events of the two stream consumers besides
// deliver-webhooks: apply-report-figures, fed by the stream, and
// drain-stream-failures, by the deliver-webhooks mapping's failure queue.

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// figuresBatch is an apply-report-figures event of n of the loaded
// account's waiting figures items, as the stream's inserts carry them,
// which it must apply without a failure.
func (b *bench) figuresBatch(n int) fnEvent {
	return fnEvent{
		event: func() (any, error) {
			items, err := b.waitingFigures(n)
			if err != nil {
				return nil, err
			}
			var ev events.DynamoDBEvent
			for i, it := range items {
				ev.Records = append(ev.Records, events.DynamoDBEventRecord{EventName: "INSERT", EventSource: "aws:dynamodb",
					Change: events.DynamoDBStreamRecord{SequenceNumber: fmt.Sprint(i + 1), Keys: streamImage(map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}),
						NewImage: streamImage(it), StreamViewType: "NEW_AND_OLD_IMAGES"}})
			}
			return ev, nil
		},
		check: func(answer []byte) error {
			var res events.DynamoDBEventResponse
			if err := json.Unmarshal(answer, &res); err != nil || len(res.BatchItemFailures) > 0 {
				return fmt.Errorf("figures batch answered %.300s", answer)
			}
			return nil
		},
	}
}

var (
	figuresMu      sync.Mutex
	figuresWaiting []map[string]types.AttributeValue
	figuresRead    bool
)

// waitingFigures hands out n of the loaded account's waiting figures items,
// read once, each once.
func (b *bench) waitingFigures(n int) ([]map[string]types.AttributeValue, error) {
	figuresMu.Lock()
	defer figuresMu.Unlock()
	if !figuresRead {
		items, err := b.store.WaitingFigures(b.ctx, b.acct.ID)
		if err != nil {
			return nil, err
		}
		figuresWaiting, figuresRead = items, true
	}
	if len(figuresWaiting) < n {
		return nil, fmt.Errorf("%d waiting figures items left, %d wanted", len(figuresWaiting), n)
	}
	out := figuresWaiting[:n]
	figuresWaiting = figuresWaiting[n:]
	return out, nil
}

// streamImage is an item as a stream record's image carries it, the
// inverse of streamimage.Item.
func streamImage(it map[string]types.AttributeValue) map[string]events.DynamoDBAttributeValue {
	img := map[string]events.DynamoDBAttributeValue{}
	for k, v := range it {
		if a, ok := streamValue(v); ok {
			img[k] = a
		}
	}
	return img
}

func streamValue(v types.AttributeValue) (events.DynamoDBAttributeValue, bool) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value), true
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value), true
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value), true
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value), true
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value), true
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value), true
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value), true
	case *types.AttributeValueMemberNULL:
		return events.NewNullAttribute(), true
	case *types.AttributeValueMemberL:
		var l []events.DynamoDBAttributeValue
		for _, e := range v.Value {
			if a, ok := streamValue(e); ok {
				l = append(l, a)
			}
		}
		return events.NewListAttribute(l), true
	case *types.AttributeValueMemberM:
		return events.NewMapAttribute(streamImage(v.Value)), true
	}
	return events.DynamoDBAttributeValue{}, false
}

// streamFailure is a drain-stream-failures event: the failure queue's
// message for a skipped batch of the table's stream, the records of n paid
// sales just made (their payments' and events' deliveries are recorded
// again, which finds them recorded or records them), which it must drain
// without a failure.
func (b *bench) streamFailure(sales int) fnEvent {
	return fnEvent{
		event: func() (any, error) {
			info, err := b.streamRange(sales)
			if err != nil {
				return nil, err
			}
			msg, _ := json.Marshal(map[string]any{
				"requestContext":     map[string]any{"condition": "RetryAttemptsExhausted", "approximateInvokeCount": 21},
				"timestamp":          time.Now().UTC().Format(time.RFC3339),
				"DDBStreamBatchInfo": info,
			})
			return events.SQSEvent{Records: []events.SQSMessage{{MessageId: fmt.Sprintf("msg-%d", time.Now().UnixNano()), Body: string(msg), EventSource: "aws:sqs"}}}, nil
		},
		check: func(answer []byte) error {
			var res events.SQSEventResponse
			if err := json.Unmarshal(answer, &res); err != nil || len(res.BatchItemFailures) > 0 {
				return fmt.Errorf("stream failure answered %.300s", answer)
			}
			return nil
		},
	}
}

// streamRange makes n paid sales and returns the range of the table's
// stream that holds their records, as a failure message names it: from the
// first record after the shards' ends as they were to the last one read.
func (b *bench) streamRange(n int) (lambdas.StreamBatchInfo, error) {
	var info lambdas.StreamBatchInfo
	streams, err := app.NewStreams(b.ctx, b.cfg.Endpoint)
	if err != nil {
		return info, err
	}
	desc, err := b.db.DescribeTable(b.ctx, &dynamodb.DescribeTableInput{TableName: aws.String(b.cfg.TableName)})
	if err != nil || desc.Table.LatestStreamArn == nil {
		return info, fmt.Errorf("the table's stream: %v", err)
	}
	arn := desc.Table.LatestStreamArn
	latest := map[string]*string{} // open shard: an iterator at its end
	var after *string
	for {
		stream, err := streams.DescribeStream(b.ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn, ExclusiveStartShardId: after})
		if err != nil {
			return info, err
		}
		for _, sh := range stream.StreamDescription.Shards {
			if sh.SequenceNumberRange != nil && sh.SequenceNumberRange.EndingSequenceNumber != nil {
				continue
			}
			it, err := streams.GetShardIterator(b.ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn, ShardId: sh.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeLatest})
			if err != nil {
				return info, err
			}
			latest[aws.ToString(sh.ShardId)] = it.ShardIterator
		}
		if after = stream.StreamDescription.LastEvaluatedShardId; after == nil {
			break
		}
	}
	if _, err := b.paidSaleRecords(n); err != nil {
		return info, err
	}
	for shard, next := range latest {
		var first, last string
		count := 0
		for empty := 0; next != nil && empty < 3; {
			page, err := streams.GetRecords(b.ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: next})
			if err != nil {
				return info, err
			}
			if len(page.Records) == 0 {
				empty++
			}
			for _, r := range page.Records {
				if first == "" {
					first = aws.ToString(r.Dynamodb.SequenceNumber)
				}
				last = aws.ToString(r.Dynamodb.SequenceNumber)
				count++
			}
			next = page.NextShardIterator
		}
		if count > 0 {
			return lambdas.StreamBatchInfo{ShardID: shard, StartSequenceNumber: first, EndSequenceNumber: last, StreamArn: aws.ToString(arn), BatchSize: count,
				ApproximateArrivalOfFirstRecord: time.Now().UTC().Format(time.RFC3339), ApproximateArrivalOfLastRecord: time.Now().UTC().Format(time.RFC3339)}, nil
		}
	}
	return info, errors.New("no stream records of the sales just made")
}
