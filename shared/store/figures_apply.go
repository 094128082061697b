package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// errApplied cancels the application of a figures item another applier has
// applied already.
var errApplied = errors.New("store: figures applied already")

// errTooMany says the figures items of a batch move more sums than one
// transaction may name (maxTransactActions): each is applied on its own.
var errTooMany = errors.New("store: figures items move too many sums for one transaction")

// maxTransactActions is how many actions one TransactWriteItems takes.
const maxTransactActions = 100

// applyBatch is how many figures items one transaction applies at most:
// each is a delete, and the sums they move are mostly the same few (a busy
// day's, its month's, receivables' and the stock's), so a batch of a busy
// account's changes is one transaction of a few more than 40 actions; one
// that would pass 100 is split (applySplit).
const applyBatch = 40

// ApplyFigures applies the account's figures items (as read from the table
// or carried by the stream): each is added to its days and deleted, exactly
// once whoever else applies it at the same time. It returns how many it
// applied (those applied already by another are skipped).
func (s *Store) ApplyFigures(ctx context.Context, account string, items []map[string]types.AttributeValue) (int, error) {
	if len(items) == 0 {
		return 0, nil
	}
	hist, err := s.timezoneHistory(ctx, account)
	if err != nil {
		return 0, err
	}
	applied, stuck, err := s.applyFigures(ctx, account, hist, items)
	if err == nil && stuck != nil {
		err = stuck
	}
	return applied, err
}

// notSetAside is the failure to set aside figures items that cannot be
// applied: they stay waiting, counted by no report (which says it is
// incomplete), and the next applier tries again.
type notSetAside struct {
	n   int
	err error
}

func (e *notSetAside) Error() string {
	return fmt.Sprintf("%d figures items can be neither applied nor set aside: %v", e.n, e.err)
}

func (e *notSetAside) Unwrap() error { return e.err }

// applyFigures is ApplyFigures with the account's timezone history read
// already (consistently, after the items were written). Items that cannot
// be applied are set aside; those that cannot be set aside either (but for
// a transient failure, which is returned) are left waiting and reported in
// stuck, so a report still answers for every other change.
func (s *Store) applyFigures(ctx context.Context, account string, hist business.TimezoneHistory, items []attrs) (applied int, stuck *notSetAside, err error) {
	seen := map[string]bool{} // a transaction may name an item once
	items = slices.DeleteFunc(slices.Clone(items), func(it attrs) bool {
		k := getS(it, "PK") + "\x00" + getS(it, "SK")
		dup := seen[k]
		seen[k] = true
		return dup
	})
	var notParked []error
	for start := 0; start < len(items); start += applyBatch {
		n, err := s.applySplit(ctx, account, hist, items[start:min(start+applyBatch, len(items))], &notParked)
		applied += n
		if err != nil {
			return applied, nil, err
		}
	}
	if len(notParked) > 0 {
		stuck = &notSetAside{n: len(notParked), err: errors.Join(notParked...)}
	}
	return applied, stuck, nil
}

// applySplit applies items in one transaction; when that cannot be (one of
// them was applied by another already, they move more sums than a
// transaction takes, or one cannot be applied at all), it applies each
// half on its own, down to single items: an item applied already is
// skipped, one that cannot be applied is set aside (or, if even that
// fails for good, added to notParked and left waiting). A transient
// failure is returned.
func (s *Store) applySplit(ctx context.Context, account string, hist business.TimezoneHistory, items []attrs, notParked *[]error) (int, error) {
	err := s.applyTogether(ctx, account, hist, items)
	switch {
	case err == nil:
		return len(items), nil
	case len(items) > 1 && (errors.Is(err, errApplied) || errors.Is(err, errTooMany) || failedForGood(err)):
		half := len(items) / 2
		a, err := s.applySplit(ctx, account, hist, items[:half], notParked)
		if err != nil {
			return a, err
		}
		b, err := s.applySplit(ctx, account, hist, items[half:], notParked)
		return a + b, err
	case errors.Is(err, errApplied):
		return 0, nil
	case failedForGood(err):
		switch err := s.setAside(ctx, account, items[0], err); {
		case err == nil, errors.Is(err, errApplied):
		case transient(err):
			return 0, err
		default:
			*notParked = append(*notParked, fmt.Errorf("%s: %w", getS(items[0], "SK"), err))
		}
		return 0, nil
	default:
		return 0, err
	}
}

// errUnreadable marks a figures item whose changes do not decode.
var errUnreadable = errors.New("store: figures item unreadable")

// failedForGood reports whether applying a figures item failed for good: its
// changes do not decode, or DynamoDB refuses the write itself (a day's or
// month's sums that would pass the 400 KB an item may hold, which names of
// expense types far longer than expense_type allows could still do, though
// the sums name at most business.MaxExpenseTypes).
func failedForGood(err error) bool {
	var api smithy.APIError
	if errors.Is(err, errUnreadable) || errors.As(err, &api) && api.ErrorCode() == "ValidationException" {
		return true
	}
	var tc *types.TransactionCanceledException
	if errors.As(err, &tc) {
		for _, r := range tc.CancellationReasons {
			if aws.ToString(r.Code) == "ValidationError" {
				return true
			}
		}
	}
	return false
}

// parkedPrefix starts the sort key of a figures item that could not be
// applied, set aside in the report partition (never lost): reports say they
// are incomplete while one is there, and OnParkedFigures is told.
const parkedPrefix = "PARKED#"

// OnParkedFigures sets what is called when a figures item is set aside (the
// functions log it as an error, for an alarm).
func (s *Store) OnParkedFigures(f func(account, id string, cause error)) { s.onParked = f }

// setAside moves a figures item that cannot be applied out of the waiting
// ones, so it holds up no other: one transaction deletes it (if still waiting)
// and keeps it as PARKED#<id>. The copy is written by an Update that sets
// each attribute, not a Put: every applier (the stream's consumer, a
// summary, the dashboard's overview) may already update and delete in the
// account's report partition, and none needs to be allowed to put whole
// items for a path this rare.
func (s *Store) setAside(ctx context.Context, account string, it attrs, cause error) error {
	id := strings.TrimPrefix(getS(it, "SK"), pendingPrefix)
	kept := maps.Clone(it)
	delete(kept, "PK")
	delete(kept, "SK")
	kept["type"], kept["cause"] = str("figures_parked"), str(cause.Error())
	names, vals := map[string]string{}, attrs{}
	var sets []string
	for i, a := range slices.Sorted(maps.Keys(kept)) {
		n := strconv.Itoa(i)
		names["#p"+n], vals[":p"+n] = a, kept[a]
		sets = append(sets, "#p"+n+" = :p"+n)
	}
	err := s.transact(ctx, []txItem{
		{action: types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: key(getS(it, "PK"), getS(it, "SK")),
			ConditionExpression: aws.String("attribute_exists(PK)")}}, onFail: errApplied},
		{action: types.TransactWriteItem{Update: &types.Update{TableName: aws.String(s.table), Key: key(reportPK(account), parkedPrefix+id),
			UpdateExpression: aws.String("SET " + strings.Join(sets, ", ")), ExpressionAttributeNames: names, ExpressionAttributeValues: vals}}},
	})
	if err == nil && s.onParked != nil {
		s.onParked(account, id, cause)
	}
	return err
}

// typesAttempts bounds how many times applyTogether reads a day's or
// month's sums again because other appliers named expense types meanwhile.
const typesAttempts = 5

// applyTogether applies items in one transaction.
func (s *Store) applyTogether(ctx context.Context, account string, hist business.TimezoneHistory, items []attrs) error {
	var changes []business.FigureChange
	var deletes []txItem
	var recv []business.ReceivableChange
	var stock []business.StockChange
	for _, it := range items {
		cs, err := changesFrom(it)
		if err != nil {
			return err
		}
		r, err := receivablesFrom(it)
		if err != nil {
			return err
		}
		st, err := stockFrom(it)
		if err != nil {
			return err
		}
		changes, recv, stock = append(changes, cs...), append(recv, r...), append(stock, st...)
		deletes = append(deletes, txItem{action: types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table),
			Key: key(getS(it, "PK"), getS(it, "SK")), ConditionExpression: aws.String("attribute_exists(PK)")}}, onFail: errApplied})
	}
	days, months := business.FiguresByDate(hist, changes)
	for attempt := 1; ; attempt++ {
		actions := slices.Clone(deletes)
		for _, d := range slices.Sorted(maps.Keys(days)) {
			up, err := s.sumUpdate(ctx, account, dayPrefix+d, "report_day", d, days[d])
			if err != nil {
				return err
			}
			actions = append(actions, up)
		}
		for _, m := range slices.Sorted(maps.Keys(months)) {
			up, err := s.sumUpdate(ctx, account, monthPrefix+m, "report_month", m, months[m])
			if err != nil {
				return err
			}
			actions = append(actions, up)
		}
		owed, err := s.receivableActions(ctx, account, recv)
		if err != nil {
			return err
		}
		worth, err := s.stockActionsOf(ctx, account, stock)
		if err != nil {
			return err
		}
		actions = append(append(actions, owed...), worth...)
		if len(actions) > maxTransactActions && len(items) > 1 {
			return errTooMany
		}
		err = s.transact(ctx, actions)
		if !errors.Is(err, errTypesMoved) {
			return err
		}
		if attempt == typesAttempts {
			return business.Errorf(business.EBUSY, "Report figures are busy with other changes to the same sums; retry in a moment")
		}
		// Appliers that met on the same sums read again at different
		// moments, so the next round does not meet them again.
		select {
		case <-time.After(time.Duration(attempt*10+rand.IntN(attempt*20)) * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
