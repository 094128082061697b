package store

import (
	"context"
	"encoding/json"
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
	return stillUnmarked(it, uncounted, "#counted", countedAttr)
}

// stillUnmarked adds to a version-guarded put of a record read without mark
// (when unmarked) the condition that it is still without it, naming mark
// name in the condition.
func stillUnmarked(it txItem, unmarked bool, name, mark string) txItem {
	if p := it.action.Put; unmarked && p != nil {
		p.ConditionExpression = aws.String(aws.ToString(p.ConditionExpression) + " AND attribute_not_exists(" + name + ")")
		if p.ExpressionAttributeNames == nil {
			p.ExpressionAttributeNames = map[string]string{}
		}
		p.ExpressionAttributeNames[name] = mark
	}
	return it
}
