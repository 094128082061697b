package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

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
		body, err = s.commitOnce(ctx, spec.account, spec.idem, actions, resp, now)
		return err
	})
	return body, err
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
