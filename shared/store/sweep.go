package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Every payment record is also listed in the due index by the hour it was
// written (PK PAID#<yyyymmddhh>#<shard>, SK <unix seconds>#<account>#<tx>),
// so the webhook sweep can find any payment whose delivery was never
// recorded (its stream batch skipped after Lambda's last retry) without
// reading the stream, whose records live 24 hours.

func paidPartition(account string, at time.Time) string {
	return fmt.Sprintf("PAID#%s#%02d", at.UTC().Format("2006010215"), ShardOf(account))
}

func paidSK(account string, at time.Time, tx string) string {
	return fmt.Sprintf("%012d#%s#%s", at.Unix(), account, tx)
}

// PaymentsWritten returns the payment records written in [from, to), as
// stored (the form a stream image carries).
func (s *Store) PaymentsWritten(ctx context.Context, from, to time.Time) ([]map[string]types.AttributeValue, error) {
	var partitions []string
	for h := from.UTC().Truncate(time.Hour); h.Before(to); h = h.Add(time.Hour) {
		for i := 0; i < DueShards; i++ {
			partitions = append(partitions, fmt.Sprintf("PAID#%s#%02d", h.Format("2006010215"), i))
		}
	}
	results := make([][]map[string]types.AttributeValue, len(partitions))
	errs := make([]error, len(partitions))
	sem := make(chan struct{}, DueShards)
	var wg sync.WaitGroup
	for i, pk := range partitions {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var start attrs
			for {
				out, err := s.db.Query(ctx, &dynamodb.QueryInput{
					TableName:              aws.String(s.table),
					IndexName:              aws.String(IndexDue.Name),
					KeyConditionExpression: aws.String(IndexDue.PK + " = :pk AND " + IndexDue.SK + " BETWEEN :from AND :to"),
					ExpressionAttributeValues: attrs{":pk": str(pk), ":from": str(fmt.Sprintf("%012d", from.Unix())),
						":to": str(fmt.Sprintf("%012d$", to.Unix()-1))},
					ExclusiveStartKey: start,
				})
				if err != nil {
					errs[i] = fmt.Errorf("query payments written: %w", err)
					return
				}
				results[i] = append(results[i], out.Items...)
				if out.LastEvaluatedKey == nil {
					return
				}
				start = out.LastEvaluatedKey
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var all []map[string]types.AttributeValue
	for _, r := range results {
		all = append(all, r...)
	}
	return all, nil
}

// WithoutDelivery returns the payment records among payments whose delivery
// does not exist, and the accounts of those whose delivery still waits.
func (s *Store) WithoutDelivery(ctx context.Context, payments []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, []string, error) {
	var missing []map[string]types.AttributeValue
	waiting := map[string]bool{}
	for len(payments) > 0 {
		chunk := payments[:min(100, len(payments))]
		payments = payments[len(chunk):]
		keys := make([]attrs, len(chunk))
		for i, p := range chunk {
			keys[i] = deliveryKey(getS(p, "account_id"), getS(p, "transaction_id"))
		}
		found, err := s.batchGet(ctx, keys)
		if err != nil {
			return nil, nil, err
		}
		for i, it := range found {
			switch {
			case it == nil:
				missing = append(missing, chunk[i])
			case getS(it, IndexDue.PK) != "":
				waiting[getS(it, "account_id")] = true
			}
		}
	}
	return missing, slices.Sorted(maps.Keys(waiting)), nil
}

func sweepKey() attrs { return key("SWEEP", "PAYMENTS") }

// SweepCursor returns the time up to which payments have been swept; zero
// before the first sweep.
func (s *Store) SweepCursor(ctx context.Context) (time.Time, error) {
	found, err := s.batchGet(ctx, []attrs{sweepKey()})
	if err != nil || found[0] == nil {
		return time.Time{}, err
	}
	return unixAt(found[0], "through"), nil
}

// AdvanceSweep records that payments written before to have been swept,
// unless another sweeper moved the cursor from from meanwhile.
func (s *Store) AdvanceSweep(ctx context.Context, from, to time.Time, first bool) error {
	in := &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       sweepKey(),
		UpdateExpression:          aws.String("SET through = :to, #type = :type"),
		ConditionExpression:       aws.String("through = :from"),
		ExpressionAttributeNames:  map[string]string{"#type": "type"},
		ExpressionAttributeValues: attrs{":to": nInt(to.Unix()), ":from": nInt(from.Unix()), ":type": str("webhook_sweep")},
	}
	if first {
		in.ConditionExpression = aws.String("attribute_not_exists(through)")
		delete(in.ExpressionAttributeValues, ":from")
	}
	_, err := s.db.UpdateItem(ctx, in)
	var cf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &cf) {
		return fmt.Errorf("advance sweep: %w", err)
	}
	return nil
}
