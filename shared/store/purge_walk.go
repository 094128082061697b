package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// purger is one PurgeAccount call: its budget, shared by its workers.
type purger struct {
	s       *Store
	account string

	mu      sync.Mutex
	left    int // deletes the budget still allows
	deleted int // deletes made
	// spent says the budget fell short somewhere: the call will not be
	// done, so its other workers stop reading.
	spent atomic.Bool

	// calls holds a place for each DynamoDB call under way (purgeCalls).
	calls chan struct{}
	// allowed ends when purgeable has answered: no delete goes before.
	allowed *step
}

// deletedCount returns how many deletes the call made.
func (p *purger) deletedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.deleted
}

// budgetLeft returns how many deletes the budget still allows.
func (p *purger) budgetLeft() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.left
}

// reserveDeletes reserves up to n deletes and returns how many it reserved; whole
// reserves n or none.
func (p *purger) reserveDeletes(n int, whole bool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n > p.left {
		if whole {
			return 0
		}
		n = p.left
	}
	p.left -= n
	return n
}

// queryPage makes one Query within purgeCalls.
func (p *purger) queryPage(ctx context.Context, in *dynamodb.QueryInput) (*dynamodb.QueryOutput, error) {
	release, err := p.callSlot(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return p.s.db.Query(ctx, in)
}

// callSlot waits for a place among purgeCalls and returns its release.
func (p *purger) callSlot(ctx context.Context) (func(), error) {
	select {
	case p.calls <- struct{}{}:
		return func() { <-p.calls }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// purgeEndpoints purges each webhook endpoint: its deliveries, its queue, then
// the endpoint item (its secret goes with SECRET#<acct>), once the parts
// after are done.
func (p *purger) purgeEndpoints(ctx context.Context, after ...*step) error {
	var eps []attrs
	var start attrs
	for {
		out, err := p.queryPage(ctx, p.endpointsQuery(start))
		if err != nil {
			return fmt.Errorf("purge: list webhook endpoints: %w", err)
		}
		eps = append(eps, out.Items...)
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		start = out.LastEvaluatedKey
	}
	if err := waitAll(ctx, after); err != nil {
		return err
	}
	for _, ep := range eps {
		queue := EndpointQueue(p.account, strings.TrimPrefix(getS(ep, "SK"), endpointSKPrefix))
		if err := p.purgeListed(ctx, acctPK(queue)+"#DELIVERY", nil); err != nil {
			return err
		}
		if err := p.purgePartition(ctx, acctPK(queue)); err != nil {
			return err
		}
		if err := p.deleteKeys(ctx, []attrs{key(getS(ep, "PK"), getS(ep, "SK"))}, true); err != nil {
			return err
		}
	}
	return nil
}

// endpointsQuery reads the account's webhook endpoints from start.
func (p *purger) endpointsQuery(start attrs) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		TableName:                 aws.String(p.s.table),
		KeyConditionExpression:    aws.String("PK = :pk AND begins_with(SK, :prefix)"),
		ExpressionAttributeValues: attrs{":pk": str(acctPK(p.account)), ":prefix": str(endpointSKPrefix)},
		ProjectionExpression:      aws.String("PK, SK"),
		ConsistentRead:            aws.Bool(true),
		ExclusiveStartKey:         start,
	}
}

// purgeListed purges every record IndexCreated lists under pk (see purgeRecord), a
// page of them at a time, purgeWorkers at once.
func (p *purger) purgeListed(ctx context.Context, pk string, uniques func(string, attrs) []attrs) error {
	var start attrs
	for {
		out, err := p.queryPage(ctx, p.listedQuery(pk, start))
		if err != nil {
			return fmt.Errorf("purge: list %s: %w", pk, err)
		}
		var wg sync.WaitGroup
		sem := make(chan struct{}, purgeWorkers)
		errs := make([]error, len(out.Items))
		for i, it := range out.Items {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				errs[i] = p.purgeRecord(ctx, getS(it, "PK"), getS(it, "SK"), uniques)
			}()
		}
		wg.Wait()
		if err := firstPurgeError(errs); err != nil {
			return err
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		start = out.LastEvaluatedKey
	}
}

// listedQuery reads from start the records IndexCreated lists under pk: a
// page the budget can delete.
func (p *purger) listedQuery(pk string, start attrs) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		TableName:                 aws.String(p.s.table),
		IndexName:                 aws.String(IndexCreated.Name),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": IndexCreated.PK, "#tpk": "PK", "#tsk": "SK"},
		ExpressionAttributeValues: attrs{":pk": str(pk)},
		ProjectionExpression:      aws.String("#tpk, #tsk"),
		Limit:                     aws.Int32(int32(min(max(p.budgetLeft(), 1), 100))),
		ExclusiveStartKey:         start,
	}
}

// purgeRecord purges the record whose item is pk / leadSK: every other item of
// its partition first, then the unique values uniques derives from its item
// (nil: none), then the item.
func (p *purger) purgeRecord(ctx context.Context, pk, leadSK string, uniques func(string, attrs) []attrs) error {
	if p.spent.Load() {
		return errBudgetSpent
	}
	var lead attrs
	var start attrs
	for {
		// One more than the budget: the record's own item may be among them.
		out, err := p.queryPage(ctx, p.partitionQuery(pk, start, p.budgetLeft()+1, uniques == nil))
		if err != nil {
			return fmt.Errorf("purge: read %s: %w", pk, err)
		}
		var rest []attrs
		for _, it := range out.Items {
			if sk := getS(it, "SK"); sk == leadSK {
				lead = it
			} else {
				rest = append(rest, key(pk, sk))
			}
		}
		if err := p.deleteKeys(ctx, rest, false); err != nil {
			return err
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		start = out.LastEvaluatedKey
	}
	if lead == nil { // gone already (an index entry that trails its item)
		return nil
	}
	// The unique values still there: an earlier call may have deleted them
	// and stopped before the record's item (its budget, or its context, ran
	// out in between), and a delete of what is gone would cost as much.
	var guards []attrs
	if uniques != nil {
		var want []attrs
		seen := map[string]bool{}
		for _, g := range uniques(p.account, lead) {
			if k := getS(g, "PK") + "\x00" + getS(g, "SK"); !seen[k] {
				seen[k] = true
				want = append(want, g)
			}
		}
		release, err := p.callSlot(ctx)
		if err != nil {
			return err
		}
		found, err := p.s.batchGet(ctx, want)
		release()
		if err != nil {
			return fmt.Errorf("purge: read unique values of %s: %w", pk, err)
		}
		for _, g := range found {
			if g != nil {
				guards = append(guards, key(getS(g, "PK"), getS(g, "SK")))
			}
		}
	}
	if p.reserveDeletes(len(guards)+1, true) == 0 {
		// The budget cannot hold them and the item together: the unique
		// values it can hold go first, and the next call goes on.
		if err := p.deleteKeys(ctx, guards, false); err != nil {
			return err
		}
		return p.budgetSpent()
	}
	if err := p.deleteTaken(ctx, guards); err != nil {
		return err
	}
	return p.deleteTaken(ctx, []attrs{key(pk, leadSK)})
}

// purgePartition purges every item of the table partition pk, once the parts
// after are done. It reads only then: what they purge may add to it while
// they run (the stream's consumer applying a waiting figures item writes
// the report partition's sums), and a first page read before would miss
// that and end the purge with items left.
func (p *purger) purgePartition(ctx context.Context, pk string, after ...*step) error {
	if err := waitAll(ctx, after); err != nil {
		return err
	}
	var start attrs
	for {
		out, err := p.queryPage(ctx, p.partitionQuery(pk, start, max(p.budgetLeft(), 1), true))
		if err != nil {
			return fmt.Errorf("purge: read %s: %w", pk, err)
		}
		keys := make([]attrs, len(out.Items))
		for i, it := range out.Items {
			keys[i] = key(getS(it, "PK"), getS(it, "SK"))
		}
		if err := p.deleteKeys(ctx, keys, false); err != nil {
			return err
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		start = out.LastEvaluatedKey
	}
}

// partitionQuery reads from start a page of at most limit (and 1,000)
// items of the table partition pk, only their keys when keysOnly.
func (p *purger) partitionQuery(pk string, start attrs, limit int, keysOnly bool) *dynamodb.QueryInput {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(p.s.table),
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: attrs{":pk": str(pk)},
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(int32(min(limit, 1000))),
		ExclusiveStartKey:         start,
	}
	if keysOnly {
		in.ProjectionExpression = aws.String("PK, SK")
	}
	return in
}

// deleteKeys deletes keys as far as the budget allows (all of them or none
// when whole), in order; errBudgetSpent when it could not delete them all.
func (p *purger) deleteKeys(ctx context.Context, keys []attrs, whole bool) error {
	if len(keys) == 0 {
		return nil
	}
	n := p.reserveDeletes(len(keys), whole)
	if err := p.deleteTaken(ctx, keys[:n]); err != nil {
		return err
	}
	if n < len(keys) {
		return p.budgetSpent()
	}
	return nil
}

// budgetSpent records that the budget fell short and returns errBudgetSpent.
func (p *purger) budgetSpent() error {
	p.spent.Store(true)
	return errBudgetSpent
}

// deleteTaken deletes keys, whose deletes are reserved already, with
// BatchWriteItem: 25 per call, in order, each call's unprocessed items
// retried before the next; none before purgeable has allowed the purge.
func (p *purger) deleteTaken(ctx context.Context, keys []attrs) error {
	if len(keys) == 0 {
		return nil
	}
	select {
	case <-p.allowed.done:
		if p.allowed.err != nil {
			return p.allowed.err
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	const perCall = 25
	for lo := 0; lo < len(keys); lo += perCall {
		chunk := keys[lo:min(lo+perCall, len(keys))]
		reqs := make([]types.WriteRequest, len(chunk))
		for i, k := range chunk {
			reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}}
		}
		pending := map[string][]types.WriteRequest{p.s.table: reqs}
		for attempt := 0; len(pending) > 0; attempt++ {
			release, err := p.callSlot(ctx)
			if err != nil {
				return err
			}
			out, err := p.s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			release()
			if err != nil {
				return fmt.Errorf("purge: delete: %w", err)
			}
			pending = out.UnprocessedItems
			if len(pending) > 0 {
				if err := sleep(ctx, min(attempt, 5)); err != nil {
					return err
				}
			}
		}
		p.mu.Lock()
		p.deleted += len(chunk)
		p.mu.Unlock()
	}
	return nil
}
