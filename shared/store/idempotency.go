package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
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

// changeOnce runs a change that is not a creation under an Idempotency-Key,
// as create does a creation: attempt reads what it needs and returns the
// transaction and the response; the key's record is read alongside (so a
// replay costs no more round trips than the change), and a key already
// recorded answers with its first response, whatever the record's state
// now (a retried void of a voided sale gets its first answer). The key is
// claimed by the transaction's own condition. Attempts start over when the
// records changed in between.
func (s *Store) changeOnce(ctx context.Context, account string, idem *Idempotency, attempt func(now time.Time) ([]txItem, []byte, error)) ([]byte, error) {
	var body []byte
	err := retrying(ctx, func() error {
		now := s.stamp()
		var (
			rec    attrs
			recErr error
			read   = make(chan struct{})
		)
		go func() {
			defer close(read)
			if idem != nil {
				rec, recErr = s.getItem(ctx, idemKey(account, idem), true)
			}
		}()
		actions, resp, err := attempt(now)
		if <-read; recErr != nil {
			return recErr
		}
		if !liveIdem(rec, now) {
			// The first request with this key may have committed between the
			// two reads: the record as it is now decides.
			if first, ok, rerr := s.recordedAfter(ctx, account, idem, now, err); ok || rerr != nil {
				body = first
				return rerr
			}
		}
		if liveIdem(rec, now) {
			body, err = replayFrom(rec, idem)
			return err
		}
		if err != nil {
			return err
		}
		body, err = s.commitOnce(ctx, account, idem, actions, resp, now)
		return err
	})
	return body, err
}

// commitOnce commits actions with the Idempotency-Key's record of resp
// (when idem is set: the key is claimed by the transaction's own
// condition), and returns resp. When the commit fails on a condition and
// the key is recorded (a replay, or an identical request that committed
// first), the key's first response wins over whichever condition this
// attempt failed on.
func (s *Store) commitOnce(ctx context.Context, account string, idem *Idempotency, actions []txItem, resp []byte, now time.Time) ([]byte, error) {
	if idem != nil {
		put, err := s.idemPut(account, idem, resp, now)
		if err != nil {
			return nil, err
		}
		actions = append(actions, txItem{action: put, onFail: errRetry})
	}
	err := s.transact(ctx, actions)
	if first, ok, rerr := s.recordedAfter(ctx, account, idem, now, err); ok || rerr != nil {
		return first, rerr
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// recordedAfter is recorded when err is what a failed condition reports
// and idem is set, so the key's answer may replace err; false otherwise.
func (s *Store) recordedAfter(ctx context.Context, account string, idem *Idempotency, now time.Time, err error) ([]byte, bool, error) {
	if idem == nil || !isConditionOutcome(err) {
		return nil, false, nil
	}
	return s.recorded(ctx, account, idem, now)
}

// recorded returns the first response recorded under an Idempotency-Key,
// and true, when the key is recorded (ECONFLICT when with another body).
func (s *Store) recorded(ctx context.Context, account string, idem *Idempotency, now time.Time) ([]byte, bool, error) {
	rec, err := s.getItem(ctx, idemKey(account, idem), true)
	if err != nil || !liveIdem(rec, now) {
		return nil, false, err
	}
	body, err := replayFrom(rec, idem)
	return body, true, err
}

// Replay returns the response recorded under an Idempotency-Key, and true,
// when the key is known: a request the API refuses before it reaches the
// store (a body that fails validation) still answers as the key decides.
// Returns ECONFLICT when the key was used with another body.
func (s *Store) Replay(ctx context.Context, account string, idem *Idempotency) ([]byte, bool, error) {
	return s.recorded(ctx, account, idem, s.now())
}

// isConditionOutcome reports whether err is what a failed transaction
// condition reports (a business error or a retry), as opposed to a fault.
func isConditionOutcome(err error) bool {
	var be *business.Error
	return errors.Is(err, errRetry) || errors.As(err, &be)
}

func idemKey(account string, i *Idempotency) attrs {
	return key(acctPK(account)+"#IDEM#"+i.Route+"#"+i.Key, "IDEM")
}

// idemPut records the key with the response, gzipped so that the response
// of the largest record still fits in one item.
func (s *Store) idemPut(account string, i *Idempotency, resp []byte, now time.Time) (types.TransactWriteItem, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(resp); err != nil {
		return types.TransactWriteItem{}, err
	}
	if err := zw.Close(); err != nil {
		return types.TransactWriteItem{}, err
	}
	it := idemKey(account, i)
	it["type"] = str("idempotency")
	it["body_hash"] = str(i.BodyHash)
	it["response_gz"] = &types.AttributeValueMemberB{Value: buf.Bytes()}
	it[TTLAttribute] = nInt(now.Add(IdempotencyTTL).Unix())
	return types.TransactWriteItem{Put: &types.Put{
		TableName:                 aws.String(s.table),
		Item:                      it,
		ConditionExpression:       aws.String("attribute_not_exists(PK) OR " + TTLAttribute + " < :now"),
		ExpressionAttributeValues: attrs{":now": nInt(now.Unix())},
	}}, nil
}

// liveIdem reports whether rec is an idempotency record that has not expired
// (DynamoDB's TTL deletes expired items late, so expiry is checked here).
func liveIdem(rec attrs, now time.Time) bool {
	return rec != nil && getInt(rec, TTLAttribute) >= now.Unix()
}

// replayFrom returns the response stored in an idempotency record, or
// ECONFLICT when the key was first used with a different body.
func replayFrom(rec attrs, i *Idempotency) ([]byte, error) {
	if getS(rec, "body_hash") != i.BodyHash {
		return nil, business.Errorf(business.ECONFLICT, "Idempotency-Key %q was already used with a different request body", i.Key)
	}
	if b, ok := rec["response_gz"].(*types.AttributeValueMemberB); ok {
		zr, err := gzip.NewReader(bytes.NewReader(b.Value))
		if err != nil {
			return nil, fmt.Errorf("idempotency record: %w", err)
		}
		return io.ReadAll(zr)
	}
	if b, ok := rec["response"].(*types.AttributeValueMemberB); ok { // written before responses were gzipped
		return b.Value, nil
	}
	return nil, fmt.Errorf("idempotency record without response")
}
