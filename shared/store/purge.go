package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"bizdata/shared/business"
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

// PurgeAccount deletes the items of a retired test twin (see
// ClearTestData), at most budget deletes a call; done reports that nothing
// of it remains. It refuses an id that is not a test twin's, and the live
// account's current twin.
//
// Each call walks the account's partitions afresh (purgeAll names them),
// deleting nothing before what leads to it. The first page of every
// partition is read at once, beside the refusal's read, so a near-empty
// twin costs one round of reads and a round or two of deletes (see "A
// clear answers in time" in docs/decisions.md).
//
// Left to expire by TTL: idempotency keys, which nothing lists, and the
// deliveries of an endpoint deleted before the twin was retired. A write
// that reaches the twin after the walk passed its place (a test key cached
// for a few seconds after ClearTestData, a webhook attempt under way) is
// left to a later call.
func (s *Store) PurgeAccount(ctx context.Context, account string, budget int) (done bool, deleted int, err error) {
	p := &purger{s: s, account: account, left: max(budget, 0), calls: make(chan struct{}, purgeCalls),
		allowed: newStep()}
	// The refusal's read goes beside the walk's first reads; every delete
	// waits for it (deleteTaken).
	var refused error
	err = runTogether(
		func() error {
			refused = s.purgeable(ctx, account)
			p.allowed.finish(refused)
			return nil
		},
		func() error { return p.purgeAll(ctx) },
	)
	if refused != nil {
		return false, 0, refused
	}
	if errors.Is(err, errBudgetSpent) {
		return false, p.deletedCount(), nil
	}
	return err == nil, p.deletedCount(), err
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

// purgeAll walks the account's partitions, side by side where nothing of one
// leads to the other: the fan-out queue, then the endpoints, then the
// account's partition and its secrets; each kind of record; each shard of
// the events; the waiting figures, then the sums. Each part reads its first
// page at once, so a near-empty twin costs one round of reads; what waits
// for another part waits only to delete.
func (p *purger) purgeAll(ctx context.Context) error {
	fanout, endpoints := newStep(), newStep()
	parts := []func() error{
		func() error { return fanout.finish(p.purgePartition(ctx, acctPK(FanoutQueue(p.account)))) },
		func() error { return endpoints.finish(p.purgeEndpoints(ctx, fanout)) },
		func() error { return p.purgePartition(ctx, acctPK(p.account), endpoints) },
		func() error { return p.purgePartition(ctx, SecretKeyPrefix+p.account, endpoints) },
	}
	var pending []*step
	for shard := range figuresShards {
		pend := newStep()
		pending = append(pending, pend)
		parts = append(parts, func() error { return pend.finish(p.purgePartition(ctx, pendingPK(p.account, shard))) })
	}
	parts = append(parts, func() error { return p.purgePartition(ctx, reportPK(p.account), pending...) })
	for _, k := range purgeKinds {
		parts = append(parts, func() error { return p.purgeListed(ctx, acctPK(p.account)+"#"+k.kind, k.uniques) })
	}
	for shard := range EventShards {
		parts = append(parts, func() error { return p.purgePartition(ctx, eventsPK(p.account)+"#"+strconv.Itoa(shard)) })
	}
	return runTogether(parts...)
}

// runTogether runs each of fns at once and returns the first fault among
// them (see firstPurgeError). The DynamoDB calls they make are bounded by
// purgeCalls, not here.
func runTogether(fns ...func() error) error {
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
