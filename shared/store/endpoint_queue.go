package store

import (
	"context"
	"errors"
	"fmt"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// What the webhook dispatcher needs of an endpoint's queue beyond what an
// account's queue does (see endpoints.go and queue.go).

// FindEndpointNow is FindEndpoint with a consistent read: the dispatcher
// reads the endpoint with it before the attempts of each pass (a disable
// or a new URL applies to the next attempt), and decides from it to park a
// disabled endpoint's queue, which must not follow a read older than the
// queue's (a re-enable in between would be missed, and its deliveries
// stranded); a replay and a redelivery read it so, and queue nothing for an
// endpoint deleted a moment ago. Returns ENOTFOUND when the endpoint does
// not exist.
func (s *Store) FindEndpointNow(ctx context.Context, account, id string) (business.Endpoint, error) {
	it, err := s.getOne(ctx, endpointKey(account, id), endpointNotFound, true)
	if err != nil {
		return business.Endpoint{}, err
	}
	return endpointFrom(it), nil
}

// ParkEndpointQueue takes the ready entry of a disabled endpoint's queue
// out of the due index, closes its circuit and ends its streak of failures,
// so the queue costs nothing until the endpoint is enabled again (which
// wakes it, and its deliveries recorded meanwhile go out). Like Park, it
// does nothing (ErrNotClaimed) when deliveries were queued since q was read:
// that may be the re-enable's wake. A deleted endpoint's queue item is gone
// with it; it is not made again.
func (s *Store) ParkEndpointQueue(ctx context.Context, q Queue) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table),
		Key:       queueKey(q.AccountID),
		UpdateExpression: aws.String("SET failures = :zero REMOVE ready_at, " + IndexDue.PK + ", " + IndexDue.SK +
			", held_until, held_sk, probe_until, failing_since"),
		ConditionExpression:       aws.String("attribute_exists(PK) AND gen = :gen"),
		ExpressionAttributeValues: attrs{":gen": nInt(q.Gen), ":zero": nInt(0)},
	})
	var cf *types.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		return ErrNotClaimed
	}
	if err != nil {
		return fmt.Errorf("park webhook endpoint queue: %w", err)
	}
	return nil
}
