package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// RateWindow is the length of a rate limit's fixed window.
const RateWindow = time.Minute

// TakeTestSend counts one test notification of account in the fixed
// one-minute window holding now, unless limit were already counted there.
// It reports whether this one is allowed and, when it is not, how long until
// the window ends (at least a second). One conditional UpdateItem on
//
//	PK A#<acct>  SK TESTSEND#<Unix minute>  n (expires via TTL)
//
// so the limit holds across every process. Each window is an item of its
// own: an expired one DynamoDB has not deleted yet never counts.
func (s *Store) TakeTestSend(ctx context.Context, account string, limit int, now time.Time) (bool, time.Duration, error) {
	start := now.Truncate(RateWindow)
	end := start.Add(RateWindow)
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key(acctPK(account), "TESTSEND#"+strconv.FormatInt(start.Unix()/60, 10)),
		UpdateExpression:          aws.String("ADD n :one SET #t = :t, " + TTLAttribute + " = :exp"),
		ConditionExpression:       aws.String("attribute_not_exists(n) OR n < :limit"),
		ExpressionAttributeNames:  map[string]string{"#t": "type"},
		ExpressionAttributeValues: attrs{":one": nInt(1), ":limit": nInt(int64(limit)), ":t": str("ratelimit"), ":exp": nInt(end.Add(RateWindow).Unix())},
	})
	var cf *types.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		return false, max(end.Sub(now), time.Second), nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("count test send: %w", err)
	}
	return true, 0, nil
}
