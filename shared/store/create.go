package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// IdempotencyTTL is how long an Idempotency-Key is remembered.
const IdempotencyTTL = 24 * time.Hour

// Idempotency is a client's Idempotency-Key for one POST route, with a hash of
// the request body so a reused key with another body can be refused.
type Idempotency struct {
	Route    string
	Key      string
	BodyHash string
}

// Render turns a created record into the response body a client receives; the
// store keeps that body with the Idempotency-Key so a retry gets it again.
type Render[T any] func(T) ([]byte, error)

// createSpec describes one creation: the id counter to advance, items to read
// alongside the counter, and how to build the transaction once the id is known.
type createSpec struct {
	account string
	kind    string
	reads   []item
	idem    *Idempotency
	// build returns the transaction's actions and the response body for id;
	// reads holds the items found for spec.reads, nil where one is missing.
	build func(id int64, now time.Time, reads []item) ([]txItem, []byte, error)
}

// create assigns the next id of spec.kind and runs spec's transaction with the
// counter's advance (so ids have no gaps) and the idempotency record in it.
// It returns the response body: the new one, or the stored one when the
// Idempotency-Key was seen before with the same body. Returns ECONFLICT when
// the key was used with another body, and whatever build or the transaction's
// conditions report.
func (s *Store) create(ctx context.Context, spec createSpec) ([]byte, error) {
	var body []byte
	err := retrying(ctx, func() error {
		now := s.now().Truncate(time.Second)
		counterKey := key(acctPK(spec.account), "COUNTER#"+spec.kind)
		found, err := s.batchGet(ctx, append([]item{counterKey}, spec.reads...))
		if err != nil {
			return err
		}
		last := int64(0)
		if found[0] != nil {
			last = getInt(found[0], "n")
		}
		actions, resp, err := spec.build(last+1, now, found[1:])
		if err != nil {
			return err
		}
		counter := types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(s.table),
			Item:      item{"PK": counterKey["PK"], "SK": counterKey["SK"], "n": nInt(last + 1), "type": str("counter")},
		}}
		if last == 0 {
			counter.Put.ConditionExpression = aws.String("attribute_not_exists(PK)")
		} else {
			counter.Put.ConditionExpression = aws.String("n = :last")
			counter.Put.ExpressionAttributeValues = item{":last": nInt(last)}
		}
		actions = append(actions, txItem{action: counter, onFail: errRetry})
		var idemFail error
		if spec.idem != nil {
			idemFail = errors.New("idempotency key seen")
			actions = append(actions, txItem{action: s.idemPut(spec.account, spec.idem, resp, now), onFail: idemFail})
		}
		err = s.transact(ctx, actions)
		if idemFail != nil && errors.Is(err, idemFail) {
			body, err = s.replay(ctx, spec.account, spec.idem)
			return err
		}
		if err != nil {
			return err
		}
		body = resp
		return nil
	})
	return body, err
}

func idemKey(account string, i *Idempotency) item {
	return key(acctPK(account)+"#IDEM#"+i.Route+"#"+i.Key, "IDEM")
}

func (s *Store) idemPut(account string, i *Idempotency, resp []byte, now time.Time) types.TransactWriteItem {
	it := idemKey(account, i)
	it["type"] = str("idempotency")
	it["body_hash"] = str(i.BodyHash)
	it["response"] = &types.AttributeValueMemberB{Value: resp}
	it[TTLAttribute] = nInt(now.Add(IdempotencyTTL).Unix())
	return types.TransactWriteItem{Put: &types.Put{
		TableName:                 aws.String(s.table),
		Item:                      it,
		ConditionExpression:       aws.String("attribute_not_exists(PK) OR " + TTLAttribute + " < :now"),
		ExpressionAttributeValues: item{":now": nInt(now.Unix())},
	}}
}

// replay returns the response stored under an Idempotency-Key, or ECONFLICT
// when the key was first used with a different body.
func (s *Store) replay(ctx context.Context, account string, i *Idempotency) ([]byte, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: idemKey(account, i), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("get idempotency key: %w", err)
	}
	if out.Item == nil {
		return nil, errRetry // expired between the write and this read
	}
	if getS(out.Item, "body_hash") != i.BodyHash {
		return nil, business.Errorf(business.ECONFLICT, "Idempotency-Key %q was already used with a different request body", i.Key)
	}
	b, _ := out.Item["response"].(*types.AttributeValueMemberB)
	if b == nil {
		return nil, fmt.Errorf("idempotency record without response")
	}
	return b.Value, nil
}

// batchGet reads keys with strong consistency and returns the items in the
// same order, nil where an item does not exist.
func (s *Store) batchGet(ctx context.Context, keys []item) ([]item, error) {
	if len(keys) == 1 {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: keys[0], ConsistentRead: aws.Bool(true)})
		if err != nil {
			return nil, fmt.Errorf("get item: %w", err)
		}
		return []item{out.Item}, nil
	}
	res := make([]item, len(keys))
	pending := map[string]types.KeysAndAttributes{s.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
	for attempt := 0; len(pending) > 0; attempt++ {
		out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending})
		if err != nil {
			return nil, fmt.Errorf("batch get: %w", err)
		}
		for _, it := range out.Responses[s.table] {
			for i, k := range keys {
				if getS(it, "PK") == getS(k, "PK") && getS(it, "SK") == getS(k, "SK") {
					res[i] = it
				}
			}
		}
		pending = out.UnprocessedKeys
		if len(pending) > 0 {
			if err := sleep(ctx, min(attempt, 5)); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// versionGuard is the condition of a read-modify-write Put.
func versionGuard(put *types.Put, version int64) {
	put.ConditionExpression = aws.String("version = :v")
	put.ExpressionAttributeValues = item{":v": nInt(version)}
}
