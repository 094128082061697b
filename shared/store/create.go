package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
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

// createSpec describes one creation: the kind whose next id the record gets,
// items to read first (none for most kinds), and how to build the write once
// the id is known.
type createSpec struct {
	account string
	kind    string
	reads   []attrs
	idem    *Idempotency
	// build returns the transaction's actions and the response body for id;
	// reads holds the items found for spec.reads, nil where one is missing.
	build func(id int64, now time.Time, reads []attrs) ([]txItem, []byte, error)
}

// create runs one creation. Its common path is one write: the id comes from
// the process's block (see ids.go), and the Idempotency-Key is claimed by
// the transaction's own condition. Only a kind that must read something
// first (spec.reads) makes a read, with the key's record alongside, so two
// sequential calls.
//
// A replay is recognised before anything else decides the answer: when the
// write fails on any condition, the key's record is read, and a key already
// recorded with the same body returns the first response (also after the
// record was edited, or when the first request took the last stock). Returns
// ECONFLICT when the key was used with another body, and whatever build or
// the transaction's conditions report.
func (s *Store) create(ctx context.Context, spec createSpec) ([]byte, error) {
	// The id is taken alongside the first attempt's reads: when the process
	// must reserve a block, that call is made in parallel with them.
	var (
		id    int64
		idErr error
		gotID = make(chan struct{})
	)
	go func() {
		defer close(gotID)
		id, idErr = s.nextID(ctx, spec.account, spec.kind)
	}()
	var body []byte
	err := retrying(ctx, func() error {
		now := s.stamp()
		var found []attrs
		var err error
		if len(spec.reads) > 0 {
			keys := spec.reads
			if spec.idem != nil {
				keys = append([]attrs{idemKey(spec.account, spec.idem)}, spec.reads...)
			}
			found, err = s.batchGet(ctx, keys)
			if err != nil {
				return err
			}
			if spec.idem != nil {
				if rec := found[0]; liveIdem(rec, now) {
					body, err = replayFrom(rec, spec.idem)
					return err
				}
				found = found[1:]
			}
		}
		if <-gotID; idErr != nil {
			return idErr
		}
		actions, resp, err := spec.build(id, now, found)
		if err != nil {
			return err
		}
		if spec.idem != nil {
			put, err := s.idemPut(spec.account, spec.idem, resp, now)
			if err != nil {
				return err
			}
			actions = append(actions, txItem{action: put, onFail: errRetry})
		}
		err = s.transact(ctx, actions)
		if err != nil && spec.idem != nil && isConditionOutcome(err) {
			// The key may be recorded already (a replay, or an identical
			// request that committed first): its answer wins over whichever
			// condition this attempt failed on.
			if first, ok, rerr := s.recorded(ctx, spec.account, spec.idem, now); ok || rerr != nil {
				body = first
				return rerr
			}
		}
		if err != nil {
			return err
		}
		body = resp
		return nil
	})
	return body, err
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

// batchGet reads keys with strong consistency and returns the items in the
// same order, nil where an item does not exist. Keys beyond the 100 one call
// may name are read in further calls, in parallel.
func (s *Store) batchGet(ctx context.Context, keys []attrs) ([]attrs, error) {
	switch len(keys) {
	case 0: // a retried create with nothing to read
		return nil, nil
	case 1:
		it, err := s.getItem(ctx, keys[0], true)
		if err != nil {
			return nil, err
		}
		return []attrs{it}, nil
	}
	res := make([]attrs, len(keys))
	const perCall = 100
	errs := make([]error, (len(keys)+perCall-1)/perCall)
	var wg sync.WaitGroup
	for c := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo, hi := c*perCall, min(len(keys), (c+1)*perCall)
			errs[c] = s.batchGetCall(ctx, keys[lo:hi], res[lo:hi])
		}()
	}
	wg.Wait()
	return res, errors.Join(errs...)
}

// batchGetCall reads at most 100 keys into res, in the same order.
func (s *Store) batchGetCall(ctx context.Context, keys, res []attrs) error {
	pending := map[string]types.KeysAndAttributes{s.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
	for attempt := 0; len(pending) > 0; attempt++ {
		out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending})
		if err != nil {
			return fmt.Errorf("batch get: %w", err)
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
				return err
			}
		}
	}
	return nil
}
