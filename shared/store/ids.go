package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Ids. Each account has a counter per kind of record (PK A#<acct>, SK
// COUNTER#<kind>, attribute n). A process does not take one id per create
// from it: it reserves a block of ids with one atomic add and hands them out
// without a round trip until the block is spent, so a create's common path
// is its one write. Blocks start small and double as an account keeps
// creating in the same process (up to maxIDBlock), so a quiet account loses
// few ids when a process ends and a busy one seldom goes back to its counter.
//
// What an id promises: unique within its account and kind, never reused, a
// positive integer, growing with time as a process hands them out. Ids of
// records created around the same time (in different processes, or in one
// whose blocks were dropped at maxIDCounters) may be out of creation order,
// and ids have gaps (the unused rest of a process's blocks). Lists order by
// created_at, never by id.
const (
	firstIDBlock = 4
	maxIDBlock   = 64
	// maxIDCounters bounds the blocks a process keeps; past it, they are
	// dropped (their unused ids become gaps).
	maxIDCounters = 4096
)

type idBlocks struct {
	mu sync.Mutex
	m  map[string]*idBlock
}

// idBlock is the unused rest of one reserved block: next to last, inclusive.
type idBlock struct {
	mu         sync.Mutex
	next, last int64
	size       int64 // of the last reservation
}

// nextID returns the next id of kind for account, reserving a block when the
// process has none left.
func (s *Store) nextID(ctx context.Context, account, kind string) (int64, error) {
	s.ids.mu.Lock()
	if s.ids.m == nil || len(s.ids.m) >= maxIDCounters {
		s.ids.m = map[string]*idBlock{}
	}
	b := s.ids.m[account+"\x00"+kind]
	if b == nil {
		b = &idBlock{}
		s.ids.m[account+"\x00"+kind] = b
	}
	s.ids.mu.Unlock()

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next == 0 || b.next > b.last {
		size := min(max(2*b.size, firstIDBlock), maxIDBlock)
		last, err := s.reserveIDs(ctx, account, kind, size)
		if err != nil {
			return 0, err
		}
		b.next, b.last, b.size = last-size+1, last, size
	}
	id := b.next
	b.next++
	return id, nil
}

// reserveIDs advances the account's counter of kind by size and returns its
// new value, the last id of the block reserved.
func (s *Store) reserveIDs(ctx context.Context, account, kind string, size int64) (int64, error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key(acctPK(account), "COUNTER#"+kind),
		UpdateExpression:          aws.String("ADD n :size SET #t = :t"),
		ExpressionAttributeNames:  map[string]string{"#t": "type"},
		ExpressionAttributeValues: attrs{":size": nInt(size), ":t": str("counter")},
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, fmt.Errorf("reserve %s ids: %w", kind, err)
	}
	last := getInt(out.Attributes, "n")
	if last < size {
		return 0, fmt.Errorf("reserve %s ids: counter returned %q", kind, getN(out.Attributes, "n"))
	}
	return last, nil
}
