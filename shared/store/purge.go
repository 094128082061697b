package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Purging a retired test twin. Its items are found without a Scan (which
// would read every account's): every partition read is named exactly, from
// the account's own partition, the list index's partition of each kind
// (A#<acct>#<KIND> in IndexCreated, which gives each record's table key) and
// the partitions those lead to. Never a begins_with on a partition key: one
// account id may begin another's (acct_1_test, acct_1_test2).

// purgeWorkers bounds the records of one page of a kind that one purge
// deletes at once.
const purgeWorkers = 16

// purgeCalls bounds the DynamoDB calls one purge has under way at once:
// enough for every partition the walk names (some 25) to be read in one
// round, few enough that a big twin's walk does not crowd its function's
// connections.
const purgeCalls = 32

// purgeKinds are the kinds of record IndexCreated lists under
// A#<acct>#<KIND>, in the order they are purged, each with the unique values
// (A#<acct>#UNIQUE#…) its record claims, derived from the record's own item.
var purgeKinds = []struct {
	kind    string
	uniques func(account string, it attrs) []attrs
}{
	{"SALE", func(account string, it attrs) []attrs {
		return []attrs{invoiceNumberGuard(account, saleSummaryFrom(it).InvoiceNumber)}
	}},
	{"ITEM", func(account string, it attrs) []attrs {
		return []attrs{uniqueKey(account, "item_slug", invItemFrom(it).Slug)}
	}},
	{"CATEGORY", func(account string, it attrs) []attrs {
		return []attrs{uniqueKey(account, "category_name", business.NameKey(categoryFrom(it).Name))}
	}},
	{"CUSTOMER", nil},
	{"EXPENSE", nil},
	{"DELIVERY", nil}, // the payment webhook's deliveries
	// Events of the earlier layout, listed in IndexCreated until `admin
	// migrate` moves them (see MoveLegacyEvents); the sharded ones are
	// their partitions' (run).
	{"EVENT", nil},
}

// errBudgetSpent stops a purge that has more to delete than its budget
// allows.
var errBudgetSpent = errors.New("store: purge budget spent")

// PurgeAccount deletes the items of a retired account (a cleared test twin, see ClearTestData in shared/store/keys.go), at most budget deletes per call; done reports that nothing of it remains to delete.
//
// Each call walks the account's items afresh (what earlier calls deleted is
// gone), so that nothing is deleted before what leads to it. These go side
// by side, each in its order:
//
//   - its fan-out jobs and their queue (A#<acct>#FANOUT), which lead to
//     endpoints' deliveries; then each webhook endpoint (A#<acct> /
//     WHEP#<id>): its deliveries (listed in IndexCreated under
//     A#<acct>#EP#<id>#DELIVERY), its queue's partition (A#<acct>#EP#<id>),
//     then the endpoint item; then the account's partition A#<acct> (its
//     counters, queue item, rate limit windows, what is left of the
//     account) and its secrets, SECRET#<acct> (the callback secret, the
//     endpoints');
//   - each kind in purgeKinds (sales, items, categories, customers,
//     expenses, payment deliveries, events): each record of it, found in
//     IndexCreated under A#<acct>#<KIND>: first everything else in its own
//     partition (a sale's payments and refunds, an item's stock movements),
//     then the unique values it claims (invoice number, item slug, category
//     name), then the record's item itself;
//   - each shard of its events (A#<acct>#EVENT#<n>);
//   - the report figures waiting in A#<acct>#REPORT#PEND0..3, then the sums
//     in A#<acct>#REPORT.
//
// The first page of every partition named here is read at once, with the
// read that refuses what must not be purged, before anything is deleted: a
// near-empty twin costs that round of reads and a round or two of deletes,
// not a read after another (see "A clear answers in time" in
// docs/decisions.md). At most purgeCalls DynamoDB calls are under way at
// once; the budget is shared.
//
// A record's unique values are read (one consistent read) before they are
// deleted, so that none is deleted twice when an earlier call stopped
// between them and the record's item; a budget too small for both deletes
// the unique values and leaves the item to the next call, so every call
// with a budget of 1 or more deletes something while anything remains, and
// deleted counts items that were there.
//
// Left behind, to expire by TTL: idempotency keys (A#<acct>#IDEM#…, at most
// IdempotencyTTL, 24 h), which nothing lists; and the deliveries of an
// endpoint deleted before the twin was retired, which nothing left names
// (at most business.EventRetention, 30 days). Writes that reach the twin
// after this walked past their place (a test key cached by a warm process
// for a few seconds after ClearTestData, a webhook attempt under way) are
// left to a later call, which finds them while what leads to them is there:
// an endpoint's queue item written again after its endpoint was deleted is
// not found.
//
// It refuses an id that is not a test twin's, and the live account's
// current twin.
func (s *Store) PurgeAccount(ctx context.Context, account string, budget int) (done bool, deleted int, err error) {
	p := &purger{s: s, account: account, left: max(budget, 0), calls: make(chan struct{}, purgeCalls),
		allowed: newStep()}
	// The refusal's read goes beside the walk's first reads; every delete
	// waits for it (deleteTaken).
	var refused error
	err = together(
		func() error {
			refused = s.purgeable(ctx, account)
			p.allowed.finish(refused)
			return nil
		},
		func() error { return p.run(ctx) },
	)
	if refused != nil {
		return false, 0, refused
	}
	if errors.Is(err, errBudgetSpent) {
		return false, p.count(), nil
	}
	return err == nil, p.count(), err
}

// purgeable refuses what PurgeAccount must never delete: a live account,
// and the test twin that test keys use now.
func (s *Store) purgeable(ctx context.Context, account string) error {
	if !business.IsTestAccount(account) || strings.Contains(account, "#") {
		return fmt.Errorf("purge %s: not a test twin's id", account)
	}
	live, err := s.getItem(ctx, accountKey(business.LiveID(account)), true)
	if err != nil {
		return fmt.Errorf("purge %s: %w", account, err)
	}
	if gen := getInt(live, twinGenAttr); live != nil && gen > 0 && business.TwinID(business.LiveID(account), gen) == account {
		return fmt.Errorf("purge %s: it is its account's current test twin", account)
	}
	return nil
}

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

// count returns how many deletes the call made.
func (p *purger) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.deleted
}

// budget returns how many deletes the budget still allows.
func (p *purger) budget() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.left
}

// take reserves up to n deletes and returns how many it reserved; whole
// reserves n or none.
func (p *purger) take(n int, whole bool) int {
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

// run walks the account's partitions, side by side where nothing of one
// leads to the other: the fan-out queue, then the endpoints, then the
// account's partition and its secrets; each kind of record; each shard of
// the events; the waiting figures, then the sums. Each part reads its first
// page at once, so a near-empty twin costs one round of reads; what waits
// for another part waits only to delete.
func (p *purger) run(ctx context.Context) error {
	fanout, endpoints := newStep(), newStep()
	parts := []func() error{
		func() error { return fanout.finish(p.partition(ctx, acctPK(FanoutQueue(p.account)))) },
		func() error { return endpoints.finish(p.endpoints(ctx, fanout)) },
		func() error { return p.partition(ctx, acctPK(p.account), endpoints) },
		func() error { return p.partition(ctx, SecretKeyPrefix+p.account, endpoints) },
	}
	var pending []*step
	for shard := range figuresShards {
		pend := newStep()
		pending = append(pending, pend)
		parts = append(parts, func() error { return pend.finish(p.partition(ctx, pendingPK(p.account, shard))) })
	}
	parts = append(parts, func() error { return p.partition(ctx, reportPK(p.account), pending...) })
	for _, k := range purgeKinds {
		parts = append(parts, func() error { return p.listed(ctx, acctPK(p.account)+"#"+k.kind, k.uniques) })
	}
	for shard := range EventShards {
		parts = append(parts, func() error { return p.partition(ctx, eventsPK(p.account)+"#"+strconv.Itoa(shard)) })
	}
	return together(parts...)
}

// step is a part of the walk that others wait for before they delete.
type step struct {
	done chan struct{}
	err  error
}

func newStep() *step { return &step{done: make(chan struct{})} }

// finish records how the part ended and returns err.
func (s *step) finish(err error) error {
	s.err = err
	close(s.done)
	return err
}

// wait waits for the part to end: errBudgetSpent when it did not end
// whole (what it stopped for is reported where it stopped).
func (s *step) wait(ctx context.Context) error {
	select {
	case <-s.done:
		if s.err != nil {
			return errBudgetSpent
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitAll waits for each of after (see step.wait).
func waitAll(ctx context.Context, after []*step) error {
	for _, a := range after {
		if err := a.wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// fetch makes one Query within purgeCalls.
func (p *purger) fetch(ctx context.Context, in *dynamodb.QueryInput) (*dynamodb.QueryOutput, error) {
	release, err := p.place(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return p.s.db.Query(ctx, in)
}

// place waits for a place among purgeCalls and returns its release.
func (p *purger) place(ctx context.Context) (func(), error) {
	select {
	case p.calls <- struct{}{}:
		return func() { <-p.calls }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// together runs each of fns at once and returns the first fault among
// them (see firstPurgeError). The DynamoDB calls they make are bounded by
// purgeCalls, not here.
func together(fns ...func() error) error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn()
		}()
	}
	wg.Wait()
	return firstPurgeError(errs)
}

// endpoints purges each webhook endpoint: its deliveries, its queue, then
// the endpoint item (its secret goes with SECRET#<acct>), once the parts
// after are done.
func (p *purger) endpoints(ctx context.Context, after ...*step) error {
	var eps []attrs
	var start attrs
	for {
		out, err := p.fetch(ctx, p.endpointsQuery(start))
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
		if err := p.listed(ctx, acctPK(queue)+"#DELIVERY", nil); err != nil {
			return err
		}
		if err := p.partition(ctx, acctPK(queue)); err != nil {
			return err
		}
		if err := p.delete(ctx, []attrs{key(getS(ep, "PK"), getS(ep, "SK"))}, true); err != nil {
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

// listed purges every record IndexCreated lists under pk (see record), a
// page of them at a time, purgeWorkers at once.
func (p *purger) listed(ctx context.Context, pk string, uniques func(string, attrs) []attrs) error {
	var start attrs
	for {
		out, err := p.fetch(ctx, p.listedQuery(pk, start))
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
				errs[i] = p.record(ctx, getS(it, "PK"), getS(it, "SK"), uniques)
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
		Limit:                     aws.Int32(int32(min(max(p.budget(), 1), 100))),
		ExclusiveStartKey:         start,
	}
}

// firstPurgeError returns the first fault among errs, else errBudgetSpent
// when any worker ran out of budget, else nil.
func firstPurgeError(errs []error) error {
	var spent error
	for _, err := range errs {
		switch {
		case errors.Is(err, errBudgetSpent):
			spent = err
		case err != nil:
			return err
		}
	}
	return spent
}

// record purges the record whose item is pk / leadSK: every other item of
// its partition first, then the unique values uniques derives from its item
// (nil: none), then the item.
func (p *purger) record(ctx context.Context, pk, leadSK string, uniques func(string, attrs) []attrs) error {
	if p.spent.Load() {
		return errBudgetSpent
	}
	var lead attrs
	var start attrs
	for {
		in := &dynamodb.QueryInput{
			TableName:                 aws.String(p.s.table),
			KeyConditionExpression:    aws.String("PK = :pk"),
			ExpressionAttributeValues: attrs{":pk": str(pk)},
			ConsistentRead:            aws.Bool(true),
			Limit:                     aws.Int32(int32(min(p.budget()+1, 1000))),
			ExclusiveStartKey:         start,
		}
		if uniques == nil {
			in.ProjectionExpression = aws.String("PK, SK")
		}
		out, err := p.fetch(ctx, in)
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
		if err := p.delete(ctx, rest, false); err != nil {
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
		release, err := p.place(ctx)
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
	if p.take(len(guards)+1, true) == 0 {
		// The budget cannot hold them and the item together: the unique
		// values it can hold go first, and the next call goes on.
		if err := p.delete(ctx, guards, false); err != nil {
			return err
		}
		return p.stop()
	}
	if err := p.deleteTaken(ctx, guards); err != nil {
		return err
	}
	return p.deleteTaken(ctx, []attrs{key(pk, leadSK)})
}

// partition purges every item of the table partition pk, once the parts
// after are done. It reads only then: what they purge may add to it while
// they run (the stream's consumer applying a waiting figures item writes
// the report partition's sums), and a first page read before would miss
// that and end the purge with items left.
func (p *purger) partition(ctx context.Context, pk string, after ...*step) error {
	if err := waitAll(ctx, after); err != nil {
		return err
	}
	var start attrs
	for {
		out, err := p.fetch(ctx, p.partitionQuery(pk, start))
		if err != nil {
			return fmt.Errorf("purge: read %s: %w", pk, err)
		}
		keys := make([]attrs, len(out.Items))
		for i, it := range out.Items {
			keys[i] = key(getS(it, "PK"), getS(it, "SK"))
		}
		if err := p.delete(ctx, keys, false); err != nil {
			return err
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		start = out.LastEvaluatedKey
	}
}

// partitionQuery reads from start the keys of the table partition pk: a
// page the budget can delete.
func (p *purger) partitionQuery(pk string, start attrs) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		TableName:                 aws.String(p.s.table),
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: attrs{":pk": str(pk)},
		ProjectionExpression:      aws.String("PK, SK"),
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(int32(min(max(p.budget(), 1), 1000))),
		ExclusiveStartKey:         start,
	}
}

// delete deletes keys as far as the budget allows (all of them or none
// when whole), in order; errBudgetSpent when it could not delete them all.
func (p *purger) delete(ctx context.Context, keys []attrs, whole bool) error {
	if len(keys) == 0 {
		return nil
	}
	n := p.take(len(keys), whole)
	if err := p.deleteTaken(ctx, keys[:n]); err != nil {
		return err
	}
	if n < len(keys) {
		return p.stop()
	}
	return nil
}

// stop records that the budget fell short and returns errBudgetSpent.
func (p *purger) stop() error {
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
			release, err := p.place(ctx)
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
