package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// applyWaiting applies the account's figures items that wait (at most
// maxPendingApplied; EBUSY when more wait), dating them by hist, and returns
// how many items it read and how many it could neither apply nor set aside
// (left waiting: the report leaves them out and says so).
func (s *Store) applyWaiting(ctx context.Context, account string, hist business.TimezoneHistory) (read, left int, err error) {
	items, more, err := s.readWaiting(ctx, account, maxPendingApplied+1)
	if err != nil {
		return 0, 0, err
	}
	left, err = s.applyRead(ctx, account, hist, items, more)
	return len(items), left, err
}

// applyRead applies the waiting figures items read (waiting with a limit
// of maxPendingApplied+1; more: a shard held more): the oldest
// maxPendingApplied of them, EBUSY when there were more (the rest on the
// next call). It returns how many it could neither apply nor set aside.
func (s *Store) applyRead(ctx context.Context, account string, hist business.TimezoneHistory, items []attrs, more bool) (left int, err error) {
	if more || len(items) > maxPendingApplied {
		more, items = true, items[:min(len(items), maxPendingApplied)]
	}
	_, stuck, err := s.applyFigures(ctx, account, hist, items)
	if err != nil {
		return 0, err
	}
	if stuck != nil {
		left = stuck.n
	}
	if more {
		return left, business.Errorf(business.EBUSY, "Report figures are catching up with recent changes; retry in a moment")
	}
	return left, nil
}

// WaitingFigures returns the account's figures items not applied yet.
func (s *Store) WaitingFigures(ctx context.Context, account string) ([]map[string]types.AttributeValue, error) {
	items, _, err := s.readWaiting(ctx, account, 0)
	return items, err
}

// readWaiting reads the account's waiting figures items, one consistent Query
// of each shard at once, at most limit of each (0: all); more says a shard
// holds more.
func (s *Store) readWaiting(ctx context.Context, account string, limit int32) ([]attrs, bool, error) {
	var mu sync.Mutex
	var items []attrs
	more := false
	var wg sync.WaitGroup
	errs := make([]error, figuresShards)
	for shard := range figuresShards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[shard] = s.queryWaiting(ctx, pendingPK(account, shard), limit, func(out []attrs, rest bool) {
				mu.Lock()
				items, more = append(items, out...), more || rest
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	sort.Slice(items, func(i, j int) bool { return getS(items[i], "SK") < getS(items[j], "SK") })
	return items, more, errors.Join(errs...)
}

// queryWaiting reads one shard of waiting figures items, at most limit (0:
// all), handing each page to got with whether more remain past the limit.
func (s *Store) queryWaiting(ctx context.Context, pk string, limit int32, got func([]attrs, bool)) error {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: attrs{":pk": str(pk)},
		ConsistentRead:            aws.Bool(true),
	}
	if limit > 0 {
		in.Limit = aws.Int32(limit)
	}
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return fmt.Errorf("query waiting figures: %w", err)
		}
		got(out.Items, limit > 0 && len(out.LastEvaluatedKey) > 0)
		if limit > 0 || len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}
