package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// Report figures: sums per local day and per local month of each account,
// kept off the request path.
//
// A change that moves the figures (a sale, its edit, a refund, a void, an
// expense and its edit) puts one "figures" item in its own transaction
// (PK A#<acct>#REPORT#PEND<shard>, SK PEND#<id>): what it moves and the
// instant each part counts at, never a date. That costs the write one small
// item of its own and no shared one, so one busy account's writes never take
// turns; the items spread over figuresShards partitions, so one account's
// changes are not bound by one partition's write rate.
//
// Applying a figures item adds it to the day items (SK DAY#<local date>)
// and month items (MONTH#<yyyy-mm>) of the dates its instants have in the
// account's timezone history and deletes it, in one transaction whose
// delete is conditional on the item still being there: each change is applied exactly once, whoever applies it. The
// table's stream applies them within a second (the apply-report-figures
// function); a report applies whatever is still waiting before it reads the
// days, so it counts every change answered before it was asked.

func reportPK(account string) string { return acctPK(account) + "#REPORT" }

// figuresShards is how many partitions an account's waiting figures items
// spread over.
const figuresShards = 4

func pendingPK(account string, shard int) string {
	return reportPK(account) + "#PEND" + strconv.Itoa(shard)
}

const (
	pendingPrefix = "PEND#"
	dayPrefix     = "DAY#"
	// FiguresType is the type of a change's figures item, which the stream
	// filter passes to the function that applies it.
	FiguresType = "figures"
)

// maxPendingApplied bounds the figures items one report applies: past it,
// the report is EBUSY (the stream's consumer has stopped; retrying makes
// progress). A busy account's consumer is about a second behind, a few
// hundred changes at most: a report applies them, 40 to a transaction, in
// well under a second.
const maxPendingApplied = 1000

// storedChange is a FigureChange as a figures item keeps it (JSON).
type storedChange struct {
	At         int64            `json:"at"`
	SalesCount int64            `json:"sales_count,omitempty"`
	Invoiced   int64            `json:"invoiced,omitempty"`
	Collected  int64            `json:"collected,omitempty"`
	Refunded   int64            `json:"refunded,omitempty"`
	Expenses   int64            `json:"expenses,omitempty"`
	ByMethod   map[string]int64 `json:"by_method,omitempty"`
	ByType     map[string]int64 `json:"by_type,omitempty"`
}

// count records what the change moves in the report figures.
func (e *events) count(cs []business.FigureChange) {
	if e != nil {
		e.figures = append(e.figures, cs...)
	}
}

// owe records what the change moves in receivables (nothing when the sale
// owes the same before and after).
func (e *events) owe(c business.ReceivableChange) {
	if e != nil && c.Old != c.New {
		e.recv = append(e.recv, c)
	}
}

// worth records what the change moves in the inventory's worth.
func (e *events) worth(c business.StockChange) {
	if e != nil && c.Old != c.New {
		e.stock = append(e.stock, c)
	}
}

// figuresAction is the put of the change's figures item, named after its
// first event's id (so it sorts by time); nil when it moves nothing.
func (s *Store) figuresAction(e *events, id string) (*txItem, error) {
	if e == nil || len(e.figures) == 0 && len(e.recv) == 0 && len(e.stock) == 0 {
		return nil, nil
	}
	out := make([]storedChange, len(e.figures))
	for i, c := range e.figures {
		out[i] = storedChange{At: c.At.Unix(), SalesCount: c.SalesCount, Invoiced: c.Invoiced, Collected: c.Collected,
			Refunded: c.Refunded, Expenses: c.Expenses, ByMethod: c.ByMethod, ByType: c.ByType}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode figures: %w", err)
	}
	it := key(pendingPK(e.account, rand.IntN(figuresShards)), pendingPrefix+id)
	it["type"], it["account_id"], it["changes"] = str(FiguresType), str(e.account), str(string(b))
	it["created_at"] = str(fmtTime(e.now))
	if err := putReceivables(it, e.recv); err != nil {
		return nil, err
	}
	if err := putStock(it, e.stock); err != nil {
		return nil, err
	}
	return &txItem{action: put(s.table, it, "attribute_not_exists(PK)"), onFail: errRetry}, nil
}

// FiguresAccount returns the account a figures item (or its stream image)
// belongs to; ok is false for any other item.
func FiguresAccount(it map[string]types.AttributeValue) (string, bool) {
	if getS(it, "type") != FiguresType {
		return "", false
	}
	return getS(it, "account_id"), true
}

func changesFrom(it attrs) ([]business.FigureChange, error) {
	var stored []storedChange
	if err := json.Unmarshal([]byte(getS(it, "changes")), &stored); err != nil {
		return nil, fmt.Errorf("figures item %s: %w: %v", getS(it, "SK"), errUnreadable, err)
	}
	out := make([]business.FigureChange, len(stored))
	for i, c := range stored {
		out[i] = business.FigureChange{At: time.Unix(c.At, 0).UTC(), Figures: business.Figures{SalesCount: c.SalesCount,
			Invoiced: c.Invoiced, Collected: c.Collected, Refunded: c.Refunded, Expenses: c.Expenses, ByMethod: c.ByMethod, ByType: c.ByType}}
	}
	return out, nil
}

// The day item's attributes: one number per figure, and one per payment
// method (m#<method>) and expense type (t#<type>), at most
// business.MaxExpenseTypes of these, with other_types the expenses of the
// types past them and type_count how many t# it holds.
const (
	methodPrefix   = "m#"
	typePrefix     = "t#"
	otherTypesAttr = "other_types"
	typeCountAttr  = "type_count"
)

// monthPrefix starts a month item's sort key (MONTH#<yyyy-mm>): the sums of
// a local month's days, so that a report by month reads a month as one item.
const monthPrefix = "MONTH#"

// errTypesMoved cancels an update of a day's or month's sums that named
// new expense types when another applier named some since it read them.
var errTypesMoved = errors.New("store: expense types of the sums changed since read")

// sumUpdate is the ADD of f to the sums item sk (a day's or a month's).
// When f moves expenses by type, it reads the item first (consistently) and
// names only as many new types as business.FoldTypes lets it, adding the
// rest to other_types; an update that names new types is conditioned on
// type_count being as read, so appliers at the same time never name more
// than business.MaxExpenseTypes between them (the one that loses fails
// with errTypesMoved and reads again). Types are never unnamed, so one
// that folds (the item is full) needs no condition.
func (s *Store) sumUpdate(ctx context.Context, account, sk, kind, date string, f business.Figures) (txItem, error) {
	k := key(reportPK(account), sk)
	names := map[string]string{"#type": "type", "#date": "date"}
	vals := attrs{":type": str(kind), ":date": str(date)}
	expr, cond := "SET #type = :type, #date = :date", ""
	if len(f.ByType) > 0 {
		it, err := s.getItem(ctx, k, true)
		if err != nil {
			return txItem{}, err
		}
		count := 0
		for a := range it {
			if strings.HasPrefix(a, typePrefix) {
				count++
			}
		}
		keep, other, added := business.FoldTypes(f.ByType, func(t string) bool { _, ok := it[typePrefix+t]; return ok }, count)
		f.ByType, f.OtherTypes = keep, f.OtherTypes+other
		if added > 0 {
			names["#tc"], vals[":tc"] = typeCountAttr, nInt(int64(count+added))
			expr += ", #tc = :tc"
			if was, ok := it[typeCountAttr]; ok {
				cond, vals[":was"] = "#tc = :was", was
			} else {
				cond = "attribute_not_exists(#tc)"
			}
		}
	}
	var adds []string
	add := func(attr string, v int64) {
		if v == 0 {
			return
		}
		n := "#a" + strconv.Itoa(len(adds))
		names[n] = attr
		vals[":v"+strconv.Itoa(len(adds))] = nInt(v)
		adds = append(adds, n+" :v"+strconv.Itoa(len(adds)))
	}
	add("sales_count", f.SalesCount)
	add("invoiced", f.Invoiced)
	add("collected", f.Collected)
	add("refunded", f.Refunded)
	add("expenses", f.Expenses)
	for _, k := range slices.Sorted(maps.Keys(f.ByMethod)) {
		add(methodPrefix+k, f.ByMethod[k])
	}
	for _, k := range slices.Sorted(maps.Keys(f.ByType)) {
		add(typePrefix+k, f.ByType[k])
	}
	add(otherTypesAttr, f.OtherTypes)
	if len(adds) > 0 {
		expr += " ADD " + strings.Join(adds, ", ")
	}
	up := &types.Update{TableName: aws.String(s.table), Key: k,
		UpdateExpression: aws.String(expr), ExpressionAttributeNames: names, ExpressionAttributeValues: vals}
	if cond != "" {
		up.ConditionExpression = aws.String(cond)
	}
	return txItem{action: types.TransactWriteItem{Update: up}, onFail: errTypesMoved}, nil
}

func sumsFrom(it attrs) business.Figures {
	f := business.Figures{SalesCount: getInt(it, "sales_count"), Invoiced: getInt(it, "invoiced"), Collected: getInt(it, "collected"),
		Refunded: getInt(it, "refunded"), Expenses: getInt(it, "expenses"), OtherTypes: getInt(it, otherTypesAttr)}
	for k := range it {
		if m, ok := strings.CutPrefix(k, methodPrefix); ok {
			f.Add(business.Figures{ByMethod: map[string]int64{m: getInt(it, k)}})
		} else if t, ok := strings.CutPrefix(k, typePrefix); ok {
			f.Add(business.Figures{ByType: map[string]int64{t: getInt(it, k)}})
		}
	}
	return f
}

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
	case len(items) > 1 && (errors.Is(err, errApplied) || errors.Is(err, errTooMany) || permanent(err)):
		half := len(items) / 2
		a, err := s.applySplit(ctx, account, hist, items[:half], notParked)
		if err != nil {
			return a, err
		}
		b, err := s.applySplit(ctx, account, hist, items[half:], notParked)
		return a + b, err
	case errors.Is(err, errApplied):
		return 0, nil
	case permanent(err):
		switch err := s.park(ctx, account, items[0], err); {
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

// permanent reports whether applying a figures item failed for good: its
// changes do not decode, or DynamoDB refuses the write itself (a day's or
// month's sums that would pass the 400 KB an item may hold, which names of
// expense types far longer than expense_type allows could still do, though
// the sums name at most business.MaxExpenseTypes).
func permanent(err error) bool {
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

// park moves a figures item that cannot be applied out of the waiting ones,
// so it holds up no other: one transaction deletes it (if still waiting)
// and keeps it as PARKED#<id>. The copy is written by an Update that sets
// each attribute, not a Put: every applier (the stream's consumer, a
// summary, the dashboard's overview) may already update and delete in the
// account's report partition, and none needs to be allowed to put whole
// items for a path this rare.
func (s *Store) park(ctx context.Context, account string, it attrs, cause error) error {
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
	days := map[string]business.Figures{}
	var deletes []txItem
	var recv []business.ReceivableChange
	var stock []business.StockChange
	for _, it := range items {
		changes, err := changesFrom(it)
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
		recv, stock = append(recv, r...), append(stock, st...)
		for _, c := range changes {
			d := hist.LocalDate(c.At)
			f := days[d]
			f.Add(c.Figures)
			days[d] = f
		}
		deletes = append(deletes, txItem{action: types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table),
			Key: key(getS(it, "PK"), getS(it, "SK")), ConditionExpression: aws.String("attribute_exists(PK)")}}, onFail: errApplied})
	}
	months := map[string]business.Figures{}
	for d, f := range days {
		m := months[d[:7]]
		m.Add(f)
		months[d[:7]] = m
	}
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

// applyWaiting applies the account's figures items that wait (at most
// maxPendingApplied; EBUSY when more wait), dating them by hist, and returns
// how many items it read and how many it could neither apply nor set aside
// (left waiting: the report leaves them out and says so).
func (s *Store) applyWaiting(ctx context.Context, account string, hist business.TimezoneHistory) (read, left int, err error) {
	items, more, err := s.waiting(ctx, account, maxPendingApplied+1)
	if err != nil {
		return 0, 0, err
	}
	left, err = s.applyRead(ctx, account, hist, items, more)
	return len(items), left, err
}

// applyRead applies the waiting figures items read (waiting with a limit
// of maxPendingApplied+1; more: a shard held more): the oldest
// maxPendingApplied of them, EBUSY when there were more (the rest on the
// next call). It returns how many it could neither apply nor set aside.
func (s *Store) applyRead(ctx context.Context, account string, hist business.TimezoneHistory, items []attrs, more bool) (left int, err error) {
	if more || len(items) > maxPendingApplied {
		more, items = true, items[:min(len(items), maxPendingApplied)]
	}
	_, stuck, err := s.applyFigures(ctx, account, hist, items)
	if err != nil {
		return 0, err
	}
	if stuck != nil {
		left = stuck.n
	}
	if more {
		return left, business.Errorf(business.EBUSY, "Report figures are catching up with recent changes; retry in a moment")
	}
	return left, nil
}

// WaitingFigures returns the account's figures items not applied yet.
func (s *Store) WaitingFigures(ctx context.Context, account string) ([]map[string]types.AttributeValue, error) {
	items, _, err := s.waiting(ctx, account, 0)
	return items, err
}

// waiting reads the account's waiting figures items, one consistent Query
// of each shard at once, at most limit of each (0: all); more says a shard
// holds more.
func (s *Store) waiting(ctx context.Context, account string, limit int32) ([]attrs, bool, error) {
	var mu sync.Mutex
	var items []attrs
	more := false
	var wg sync.WaitGroup
	errs := make([]error, figuresShards)
	for shard := range figuresShards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[shard] = s.queryWaiting(ctx, pendingPK(account, shard), limit, func(out []attrs, rest bool) {
				mu.Lock()
				items, more = append(items, out...), more || rest
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	sort.Slice(items, func(i, j int) bool { return getS(items[i], "SK") < getS(items[j], "SK") })
	return items, more, errors.Join(errs...)
}

// queryWaiting reads one shard of waiting figures items, at most limit (0:
// all), handing each page to got with whether more remain past the limit.
func (s *Store) queryWaiting(ctx context.Context, pk string, limit int32, got func([]attrs, bool)) error {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: attrs{":pk": str(pk)},
		ConsistentRead:            aws.Bool(true),
	}
	if limit > 0 {
		in.Limit = aws.Int32(limit)
	}
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return fmt.Errorf("query waiting figures: %w", err)
		}
		got(out.Items, limit > 0 && len(out.LastEvaluatedKey) > 0)
		if limit > 0 || len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// countedAttr marks a sale, payment, refund or expense whose figures are in
// the reports: every write of this release sets it. Records written before
// reports lack it; CountLegacyRecords counts them, and a change of one
// counts what it had before along with what it changes.
const countedAttr = "counted"

func markCounted(it attrs) { it[countedAttr] = &types.AttributeValueMemberBOOL{Value: true} }

func counted(it attrs) bool { _, ok := it[countedAttr]; return ok }

// stillUncounted adds to a version-guarded put of a record read without
// countedAttr the condition that it is still without it: CountLegacyRecords
// marks a record without changing its version, so a change that counts the
// record as it read it must not pass once the migration has counted it (it
// is retried, and reads the mark).
func stillUncounted(it txItem, uncounted bool) txItem {
	if p := it.action.Put; uncounted && p != nil {
		p.ConditionExpression = aws.String(aws.ToString(p.ConditionExpression) + " AND attribute_not_exists(#counted)")
		if p.ExpressionAttributeNames == nil {
			p.ExpressionAttributeNames = map[string]string{}
		}
		p.ExpressionAttributeNames["#counted"] = countedAttr
	}
	return it
}

// CountLegacyRecords puts in the reports every sale, payment, refund and
// expense written before them (one Scan of the table for records without
// countedAttr; run once per deployment from `admin migrate`, safe beside the
// API and again after an interruption). Each record is marked counted in the
// transaction that writes its figures item, on condition that it is not
// counted yet and, for sales and expenses, unchanged since read: a record
// edited meanwhile is read again (the edit counted it already, or it is
// counted as it now is). It returns how many records it counted.
func (s *Store) CountLegacyRecords(ctx context.Context) (int, error) {
	pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{
		TableName:                aws.String(s.table),
		FilterExpression:         aws.String("#t IN (:sale, :payment, :refund, :expense) AND attribute_not_exists(#c)"),
		ProjectionExpression:     aws.String("PK, SK"),
		ExpressionAttributeNames: map[string]string{"#t": "type", "#c": countedAttr},
		ExpressionAttributeValues: attrs{":sale": str("sale"), ":payment": str("payment"), ":refund": str("refund"),
			":expense": str("expense")},
	})
	n := 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return n, fmt.Errorf("scan for records not in the reports: %w", err)
		}
		for _, k := range page.Items {
			done, err := s.countLegacy(ctx, key(getS(k, "PK"), getS(k, "SK")))
			if err != nil {
				return n, fmt.Errorf("count %s %s in the reports (%d counted before it; run again to go on): %w", getS(k, "PK"), getS(k, "SK"), n, err)
			}
			if done {
				n++
			}
		}
	}
	return n, nil
}

// countLegacy counts one record written before reports; false when it is
// counted already.
func (s *Store) countLegacy(ctx context.Context, k attrs) (bool, error) {
	done := false
	err := retrying(ctx, func() error {
		done = false
		it, err := s.getItem(ctx, k, true)
		if err != nil || it == nil || counted(it) {
			return err
		}
		pk := getS(it, "PK")
		account, _, _ := strings.Cut(strings.TrimPrefix(pk, "A#"), "#")
		cond, vals := "attribute_exists(PK) AND attribute_not_exists(#c)", attrs{":t": &types.AttributeValueMemberBOOL{Value: true}}
		var figs []business.FigureChange
		switch getS(it, "type") {
		case "sale":
			if sale := saleFrom(it); !sale.Void() {
				figs = business.SaleCreatedFigures(sale, nil)
			}
			cond, vals[":v"] = cond+" AND version = :v", nInt(getInt(it, "version"))
		case "expense":
			figs = business.ExpenseCreatedFigures(expenseFrom(it))
			cond, vals[":v"] = cond+" AND version = :v", nInt(getInt(it, "version"))
		case "payment":
			figs = business.PaymentFigures(PaymentFrom(it))
		case "refund":
			figs = business.RefundFigures(RefundFrom(it))
		default:
			return nil
		}
		actions := []txItem{{action: types.TransactWriteItem{Update: &types.Update{TableName: aws.String(s.table), Key: k,
			UpdateExpression: aws.String("SET #c = :t"), ConditionExpression: aws.String(cond),
			ExpressionAttributeNames: map[string]string{"#c": countedAttr}, ExpressionAttributeValues: vals}}, onFail: errRetry}}
		ev := newEvents(account, s.stamp())
		ev.count(figs)
		fig, err := s.figuresAction(ev, ev.ids.Next())
		if err != nil {
			return err
		}
		if fig != nil {
			actions = append(actions, *fig)
		}
		if err := s.transact(ctx, actions); err != nil {
			return err
		}
		done = true
		return nil
	})
	return done, err
}
