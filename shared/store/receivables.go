package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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
)

// Receivables kept as the books change.
//
// Every change of what a sale owes (its creation, an edit or payment, a
// void) says in its figures item what the sale owed before and after it
// (business.ReceivableChange); whoever applies the figures item moves the
// sums of the account's report partition by the difference, in the same
// transaction, so each change counts exactly once:
//
//   - OWED#M#<yyyy-mm>: d01..d31, the cents owed by open sales due each day
//     of the month (ADD);
//   - OWED#Y#<yyyy>: owed and open (the count of sales owing) of open sales
//     due in the year, and OWED#NONE those of sales with no due date (ADD);
//   - OWED#C#<customer id>: the customer's debt (v: owed, open, and cents by
//     due date), written whole by an applier that read it, on condition of
//     its version; while the customer owes anything it is listed in IX9
//     (A#<acct>#DEBTOR) largest first.
//
// Aging moves with the calendar, not only with writes: an aging on a date
// reads every year item (amounts due before the year of the date less 91
// days are over 90 days past due), the day items of at most 15 months (the
// days that fall in the buckets 1 to 90) and the 20 largest debts, whatever
// the size of the books.

const (
	owedMonthPrefix = "OWED#M#"
	owedYearPrefix  = "OWED#Y#"
	owedNone        = "OWED#NONE"
	debtPrefix      = "OWED#C#"
	// owedNoDue is the key of a debt's amounts with no due date.
	owedNoDue = "none"
	// receivablesAttr holds, in a figures item, what the change moves in
	// receivables (JSON).
	receivablesAttr = "receivables"
)

// owedCountedAttr marks a sale whose debt is in the kept receivables: every
// write of this release sets it. A sale written before lacks it and counts
// as owing nothing; its next change counts it whole, and CountLegacyDebts
// counts the rest.
const owedCountedAttr = "owed_counted"

func markOwedCounted(it attrs) { it[owedCountedAttr] = &types.AttributeValueMemberBOOL{Value: true} }

func owedCounted(it attrs) bool { _, ok := it[owedCountedAttr]; return ok }

// owedBefore is what a sale as read counts for in the kept receivables:
// nothing when it was written before they were kept.
func owedBefore(rec SaleRecord) business.Owed {
	if !rec.owedCounted {
		return business.Owed{}
	}
	return business.OwedBy(rec.Sale)
}

// stillOwedUncounted adds to a version-guarded put of a sale read without
// owedCountedAttr the condition that it is still without it (CountLegacyDebts
// marks a sale without changing its version).
func stillOwedUncounted(it txItem, uncounted bool) txItem {
	if p := it.action.Put; uncounted && p != nil {
		p.ConditionExpression = aws.String(aws.ToString(p.ConditionExpression) + " AND attribute_not_exists(#owedc)")
		if p.ExpressionAttributeNames == nil {
			p.ExpressionAttributeNames = map[string]string{}
		}
		p.ExpressionAttributeNames["#owedc"] = owedCountedAttr
	}
	return it
}

func debtorsPK(account string) string { return acctPK(account) + "#DEBTOR" }

// storedOwed is a business.Owed as a figures item keeps it.
type storedOwed struct {
	CustomerID int64  `json:"c,omitempty"`
	Name       string `json:"n,omitempty"`
	Due        string `json:"d,omitempty"`
	Cents      int64  `json:"v,omitempty"`
}

type storedReceivable struct {
	Old storedOwed `json:"old"`
	New storedOwed `json:"new"`
}

func toStoredOwed(o business.Owed) storedOwed {
	return storedOwed{CustomerID: o.CustomerID, Name: o.CustomerName, Due: o.DueDate, Cents: o.Cents}
}

func fromStoredOwed(o storedOwed) business.Owed {
	return business.Owed{CustomerID: o.CustomerID, CustomerName: o.Name, DueDate: o.Due, Cents: o.Cents}
}

// putReceivables writes what a change moves in receivables into its figures
// item it.
func putReceivables(it attrs, cs []business.ReceivableChange) error {
	if len(cs) == 0 {
		return nil
	}
	out := make([]storedReceivable, len(cs))
	for i, c := range cs {
		out[i] = storedReceivable{Old: toStoredOwed(c.Old), New: toStoredOwed(c.New)}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("encode receivables: %w", err)
	}
	it[receivablesAttr] = str(string(b))
	return nil
}

// receivablesFrom reads what a figures item moves in receivables.
func receivablesFrom(it attrs) ([]business.ReceivableChange, error) {
	raw := getS(it, receivablesAttr)
	if raw == "" {
		return nil, nil
	}
	var stored []storedReceivable
	if err := json.Unmarshal([]byte(raw), &stored); err != nil {
		return nil, fmt.Errorf("figures item %s: %w: receivables: %v", getS(it, "SK"), errUnreadable, err)
	}
	out := make([]business.ReceivableChange, len(stored))
	for i, c := range stored {
		out[i] = business.ReceivableChange{Old: fromStoredOwed(c.Old), New: fromStoredOwed(c.New)}
	}
	return out, nil
}

// owedSum is an ADD of owed cents and open sales.
type owedSum struct{ owed, open int64 }

// debtDelta is what changes move in one customer's debt.
type debtDelta struct {
	due  map[string]int64 // by due date, or owedNoDue
	open int64
	name string // of the latest sale owing under the customer, "" when none
}

// receivableActions are the updates that apply cs to the account's
// receivables, in the transaction that applies their figures items. Each
// sums item is named once (a transaction names an item at most once); the
// customers' debts are read consistently with the customers (one
// BatchGetItem) and each written whole on condition of its version: one
// that another applier moved meanwhile fails with errTypesMoved, and
// applyTogether reads again. When a debt is written, OWED#NONE says when
// (debtsMovedAttr).
func (s *Store) receivableActions(ctx context.Context, account string, cs []business.ReceivableChange) ([]txItem, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	months := map[string]map[string]int64{} // yyyy-mm: dNN: cents
	years := map[string]owedSum{}
	var none owedSum
	debts := map[int64]*debtDelta{}
	touch := func(customer int64) *debtDelta {
		d := debts[customer]
		if d == nil {
			d = &debtDelta{due: map[string]int64{}}
			debts[customer] = d
		}
		return d
	}
	move := func(o business.Owed, sign int64) {
		if o.Cents == 0 {
			return
		}
		c := sign * o.Cents
		due := owedNoDue
		if o.DueDate == "" {
			none.owed, none.open = none.owed+c, none.open+sign
		} else {
			due = o.DueDate
			m := months[due[:7]]
			if m == nil {
				m = map[string]int64{}
				months[due[:7]] = m
			}
			m["d"+due[8:10]] += c
			y := years[due[:4]]
			years[due[:4]] = owedSum{y.owed + c, y.open + sign}
		}
		d := touch(o.CustomerID)
		d.due[due] += c
		d.open += sign
		if sign > 0 {
			d.name = o.CustomerName
		}
	}
	for _, c := range cs {
		if c.Old.Cents == 0 && c.New.Cents == 0 {
			touch(c.New.CustomerID) // a rename: the debt takes the customer's name
		}
		move(c.Old, -1)
		move(c.New, 1)
	}
	var out []txItem
	for _, m := range slices.Sorted(maps.Keys(months)) {
		if up := s.owedAdd(account, owedMonthPrefix+m, "owed_month", months[m], time.Time{}); up != nil {
			out = append(out, *up)
		}
	}
	for _, y := range slices.Sorted(maps.Keys(years)) {
		if up := s.owedAdd(account, owedYearPrefix+y, "owed_year", map[string]int64{"owed": years[y].owed, "open": years[y].open}, time.Time{}); up != nil {
			out = append(out, *up)
		}
	}
	ids := slices.Sorted(maps.Keys(debts))
	keys := make([]attrs, 0, 2*len(ids))
	for _, id := range ids {
		keys = append(keys, debtKey(account, id), customerKey(account, id))
	}
	// Consistent: the version each write is conditioned on, and the name
	// the customer has now.
	read, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	var moved time.Time
	for i, id := range ids {
		up, err := s.debtWrite(account, id, read[2*i], read[2*i+1], debts[id])
		if err != nil {
			return nil, err
		}
		if up != nil {
			out, moved = append(out, *up), time.Now() // the index's lag is in real time, whatever the store's clock
		}
	}
	if up := s.owedAdd(account, owedNone, "owed_none", map[string]int64{"owed": none.owed, "open": none.open}, moved); up != nil {
		out = append(out, *up)
	}
	return out, nil
}

func debtKey(account string, customer int64) attrs {
	return key(reportPK(account), debtPrefix+strconv.FormatInt(customer, 10))
}

// owedAdd is the ADD of the non-zero amounts of adds to the sums item sk,
// and the SET of debtsMovedAttr to debtsMoved unless it is zero; nil when
// they move nothing.
func (s *Store) owedAdd(account, sk, kind string, adds map[string]int64, debtsMoved time.Time) *txItem {
	names := map[string]string{"#type": "type"}
	vals := attrs{":type": str(kind)}
	set := "SET #type = :type"
	if !debtsMoved.IsZero() {
		set += ", #moved = :moved"
		names["#moved"], vals[":moved"] = debtsMovedAttr, nInt(debtsMoved.UnixMilli())
	}
	var parts []string
	for _, a := range slices.Sorted(maps.Keys(adds)) {
		if adds[a] == 0 {
			continue
		}
		n := strconv.Itoa(len(parts))
		names["#a"+n], vals[":v"+n] = a, nInt(adds[a])
		parts = append(parts, "#a"+n+" :v"+n)
	}
	if len(parts) == 0 && debtsMoved.IsZero() {
		return nil
	}
	if len(parts) > 0 {
		set += " ADD " + strings.Join(parts, ", ")
	}
	return &txItem{action: types.TransactWriteItem{Update: &types.Update{TableName: aws.String(s.table), Key: key(reportPK(account), sk),
		UpdateExpression: aws.String(set), ExpressionAttributeNames: names, ExpressionAttributeValues: vals}}}
}

// debtsMovedAttr is when, in milliseconds since 1970 (real time), a
// customer's debt was last written (on OWED#NONE, which every receivables
// read reads consistently). The debtors' IX9 entries may trail the table
// for a moment after: until DebtsSettle has passed, a reader reads the
// debts it lists from the table again, so a change answered before the
// read is in every debtor's figures, as it is in the sums.
const debtsMovedAttr = "debts_moved_at"

// DebtsSettle is how long after a debt's write its IX9 entry is not trusted
// to show it: indexes follow the table within a fraction of a second, under
// normal conditions.
const DebtsSettle = 5 * time.Second

// SetDebtsSettle changes how long after a debt's write reports read the
// debts from the table (tests use 0, or an hour).
func (s *Store) SetDebtsSettle(d time.Duration) { s.debtsSettle = &d }

// debtsSettled says whether the debts' IX9 entries may be read as the
// debts: none is laid out as before their entries carried their aging, and
// no debt was written within the settle time (owed holds OWED#NONE, if it
// exists).
func (s *Store) debtsSettled(owed, debtors []attrs) bool {
	settle := DebtsSettle
	if s.debtsSettle != nil {
		settle = *s.debtsSettle
	}
	for _, it := range owed {
		if getS(it, "SK") == owedNone && time.Since(time.UnixMilli(getInt(it, debtsMovedAttr))) < settle {
			return false
		}
	}
	for _, it := range debtors {
		if v, ok := it[viewAttr].(*types.AttributeValueMemberM); !ok || v.Value[agingAttr] == nil {
			return false
		}
	}
	return true
}

// legacyDueAttr is where debts written before their aging was kept in
// their view held their cents by due date (a map, outside the view, so the
// debtors' IX9 entries could not age them). A debt still so laid out is
// read from the table (debtsNow) and rewritten in today's layout by its
// next change or by RelayoutDebts.
const legacyDueAttr = "due"

// The debt's view keeps its cents by due date in agingAttr (agingFormat,
// then for each date in order the days since the previous one, the first
// since 1970-01-01, and its cents, both as varints) and those with no due
// date in undatedAttr. A few bytes a due date: the debtors' IX9 entries
// carry them, so the largest debts age from the index alone, however many
// due dates a customer has open (hundreds come to a few KB).
const (
	agingAttr   = "aging"
	undatedAttr = "undated"
	agingFormat = 1
)

// encodeAging is due's dated amounts (owedNoDue left out) as agingAttr
// keeps them.
func encodeAging(due map[string]int64) []byte {
	days := make([]int64, 0, len(due))
	cents := make(map[int64]int64, len(due))
	for d, c := range due {
		t, err := time.Parse(business.DateFormat, d)
		if d == owedNoDue || c == 0 || err != nil {
			continue
		}
		day := t.Unix() / 86400
		days, cents[day] = append(days, day), c
	}
	slices.Sort(days)
	out := make([]byte, 1, 1+len(days)*5)
	out[0] = agingFormat
	prev := int64(0)
	for _, day := range days {
		out = binary.AppendVarint(out, day-prev)
		out = binary.AppendVarint(out, cents[day])
		prev = day
	}
	return out
}

// decodeAging adds the amounts b (agingAttr) holds into due, by date.
func decodeAging(b []byte, due map[string]int64) error {
	if len(b) == 0 || b[0] != agingFormat {
		return fmt.Errorf("%w: debt aging of format %v", errUnreadable, b[:min(len(b), 1)])
	}
	day := int64(0)
	for rest := b[1:]; len(rest) > 0; {
		step, n := binary.Varint(rest)
		if n <= 0 {
			return fmt.Errorf("%w: debt aging cut short", errUnreadable)
		}
		c, m := binary.Varint(rest[n:])
		if m <= 0 {
			return fmt.Errorf("%w: debt aging cut short", errUnreadable)
		}
		day, rest = day+step, rest[n+m:]
		due[time.Unix(day*86400, 0).UTC().Format(business.DateFormat)] += c
	}
	return nil
}

// debt is one customer's debt as its item keeps it.
type debt struct {
	CustomerID int64
	Name       string
	Owed, Open int64
	Due        map[string]int64 // by due date, or owedNoDue
	// legacy is a debt laid out before its view kept its aging: an IX9
	// entry of one does not say what it owes by due date.
	legacy bool
}

// debtFrom reads a debt item, or its IX9 entry, or nil (no debt yet).
func debtFrom(it attrs) (debt, error) {
	d := debt{Due: map[string]int64{}}
	v, ok := it[viewAttr].(*types.AttributeValueMemberM)
	if !ok {
		return d, nil
	}
	d.CustomerID, d.Name = getInt(v.Value, "customer_id"), getS(v.Value, "name")
	d.Owed, d.Open = getInt(v.Value, "owed"), getInt(v.Value, "open")
	aging, ok := v.Value[agingAttr].(*types.AttributeValueMemberB)
	if !ok {
		d.legacy = true
		if due, ok := it[legacyDueAttr].(*types.AttributeValueMemberM); ok {
			for k := range due.Value {
				at := k
				if _, err := time.Parse(business.DateFormat, k); err != nil {
					at = owedNoDue // counted as current, as the sums count it
				}
				d.Due[at] += getInt(due.Value, k)
			}
		}
		return d, nil
	}
	if c := getInt(v.Value, undatedAttr); c != 0 {
		d.Due[owedNoDue] = c
	}
	if err := decodeAging(aging.Value, d.Due); err != nil {
		return d, fmt.Errorf("debt of customer %d: %w", d.CustomerID, err)
	}
	return d, nil
}

// maxOwed is the most a debtor's listing key orders (15 digits of cents).
const maxOwed = 999999999999999

// debtWrite writes customer's debt as read (was, nil when it has none yet)
// moved by delta, named as the customer is now (cust; nil when the
// customer is not found, and the debt keeps the name of its latest sale);
// nil when it moves nothing. A debt laid out before its view kept its
// aging is rewritten whole even when delta moves nothing.
func (s *Store) debtWrite(account string, customer int64, was, cust attrs, delta *debtDelta) (*txItem, error) {
	d, err := debtFrom(was)
	if err != nil {
		return nil, err
	}
	moved := was != nil && d.legacy
	for due, c := range delta.due {
		if c == 0 {
			continue
		}
		moved = true
		if d.Due[due] += c; d.Due[due] == 0 {
			delete(d.Due, due)
		}
	}
	d.Open += delta.open
	moved = moved || delta.open != 0
	name := d.Name
	if delta.name != "" {
		name = delta.name
	}
	if cust != nil {
		name = customerFrom(cust).Name
	}
	if name != d.Name {
		d.Name, moved = name, true
	}
	if !moved || was == nil && len(d.Due) == 0 && d.Open == 0 {
		return nil, nil
	}
	d.Owed = 0
	for _, c := range d.Due {
		d.Owed += c
	}
	v := attrs{"customer_id": nInt(customer), "owed": nInt(d.Owed), "open": nInt(d.Open),
		agingAttr: &types.AttributeValueMemberB{Value: encodeAging(d.Due)}}
	if c := d.Due[owedNoDue]; c != 0 {
		v[undatedAttr] = nInt(c)
	}
	setS(v, "name", d.Name)
	names := map[string]string{"#type": "type", "#v": viewAttr, "#due": legacyDueAttr, "#version": "version", "#pk": IndexStatusDue.PK, "#sk": IndexStatusDue.SK}
	vals := attrs{":type": str("owed_customer"), ":v": &types.AttributeValueMemberM{Value: v}}
	set, remove := "SET #type = :type, #v = :v, #version = :next", " REMOVE #due"
	var cond string
	if was == nil {
		cond, vals[":next"] = "attribute_not_exists(PK)", nInt(1)
	} else {
		cond, vals[":was"], vals[":next"] = "#version = :was", nInt(getInt(was, "version")), nInt(getInt(was, "version")+1)
	}
	if d.Owed > 0 {
		set += ", #pk = :pk, #sk = :sk"
		vals[":pk"], vals[":sk"] = str(debtorsPK(account)), str(debtorSK(d.Owed, customer))
	} else {
		remove += ", #pk, #sk"
	}
	return &txItem{action: types.TransactWriteItem{Update: &types.Update{TableName: aws.String(s.table), Key: debtKey(account, customer),
		UpdateExpression: aws.String(set + remove), ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: vals}},
		onFail: errTypesMoved}, nil
}

// debtorSK orders debtors by what they owe, largest first, then by
// customer id.
func debtorSK(owed, customer int64) string {
	return fmt.Sprintf("%015d#%019d", maxOwed-min(owed, maxOwed), customer)
}

// receivablesOf assembles the receivables on asOf from what was read: owed,
// the account's sums items (any superset of the OWED#M#, OWED#Y# and
// OWED#NONE items AgingMonths needs; others are ignored), debtors, the
// debts IX9 lists (largest first; at most business.MaxDebtors are named)
// and names, the customers' current names by id (a customer missing keeps
// the name its debt holds).
func receivablesOf(asOf string, owed []attrs, debtors []attrs, names map[string]string) (business.Receivables, error) {
	sums := business.OwedSums{ByYear: map[string]int64{}, ByDay: map[string]int64{}}
	for _, it := range owed {
		switch sk := getS(it, "SK"); {
		case sk == owedNone:
			sums.Outstanding += getInt(it, "owed")
			sums.Open += int(getInt(it, "open"))
		case strings.HasPrefix(sk, owedYearPrefix):
			sums.ByYear[strings.TrimPrefix(sk, owedYearPrefix)] += getInt(it, "owed")
			sums.Outstanding += getInt(it, "owed")
			sums.Open += int(getInt(it, "open"))
		case strings.HasPrefix(sk, owedMonthPrefix):
			month := strings.TrimPrefix(sk, owedMonthPrefix)
			for a := range it {
				if len(a) == 3 && a[0] == 'd' {
					if c := getInt(it, a); c != 0 {
						sums.ByDay[month+"-"+a[1:]] += c
					}
				}
			}
		}
	}
	r := business.Receivables{AsOf: asOf, Outstanding: sums.Outstanding, Aging: sums.Age(asOf), Open: sums.Open}
	for _, it := range debtors {
		d, err := debtFrom(it)
		if err != nil {
			return business.Receivables{}, err
		}
		if d.Owed <= 0 {
			continue
		}
		name := d.Name
		if n, ok := names[strconv.FormatInt(d.CustomerID, 10)]; ok {
			name = n
		}
		r.Debtors = append(r.Debtors, business.Debtor{CustomerID: d.CustomerID, Name: name, Outstanding: d.Owed, Aging: business.AgeDue(asOf, d.Due)})
	}
	sort.SliceStable(r.Debtors, func(i, j int) bool {
		a, b := r.Debtors[i], r.Debtors[j]
		if a.Outstanding != b.Outstanding {
			return a.Outstanding > b.Outstanding
		}
		return a.CustomerID < b.CustomerID
	})
	if len(r.Debtors) > business.MaxDebtors {
		r.Debtors = r.Debtors[:business.MaxDebtors]
	}
	return r, nil
}

// Receivables returns what the account is owed on asOf (a local date; ""
// for today where the merchant is, as Receivables.AsOf says), with every
// change answered before the call counted. In the usual case, when nothing
// waits and no debt was written in the last DebtsSettle, it is one round
// trip: at once the account item (its timezones), the waiting figures
// items, the sums (one Query of OWED#NONE and the year items, one of the
// day items AgingMonths names) and the largest debts' IX9 entries, which
// carry their aging and their customers' names. When something waits, it
// is applied (EBUSY past maxPendingApplied) and the sums and debts are read
// again; then, when a debt was just written (by that apply or another: the
// index may trail the table) or one listed is laid out as before its entry
// carried its aging, the debts listed are read as they are now with their
// customers (one BatchGetItem). It returns how many items it read: whatever the
// size of the books, at most the waiting items, one item per year with
// sales due, 17 month items, the account item and 60 more (debtors'
// entries, their debts and customers).
func (s *Store) Receivables(ctx context.Context, account, asOf string) (business.Receivables, int, error) {
	// The sums' months a day either side of UTC's date cover today's
	// wherever the merchant is, so the reads need not wait for the
	// account's timezone.
	first, last := business.AgingMonths(asOf)
	if asOf == "" {
		now := s.now().UTC()
		first, _ = business.AgingMonths(now.AddDate(0, 0, -1).Format(business.DateFormat))
		_, last = business.AgingMonths(now.AddDate(0, 0, 1).Format(business.DateFormat))
	}
	var hist business.TimezoneHistory
	var waiting, owed, debtors []attrs
	var more bool
	var read int
	errs := make([]error, 3)
	var wg sync.WaitGroup
	wg.Go(func() { hist, errs[0] = s.timezoneHistory(ctx, account) })
	wg.Go(func() { waiting, more, errs[1] = s.waiting(ctx, account, maxPendingApplied+1) })
	wg.Go(func() { owed, debtors, read, errs[2] = s.owedAndDebtors(ctx, account, first, last) })
	wg.Wait()
	read += 1 + len(waiting) // the account item, and what waits
	if err := errors.Join(errs...); err != nil {
		return business.Receivables{}, read, err
	}
	if asOf == "" {
		asOf = hist.Today(s.now())
	}
	if len(waiting) > 0 { // counted, then the sums read again
		if _, err := s.applyRead(ctx, account, hist, waiting, more); err != nil {
			return business.Receivables{}, read, err
		}
		var n int
		if owed, debtors, n, errs[2] = s.owedAndDebtors(ctx, account, first, last); errs[2] != nil {
			return business.Receivables{}, read + n, errs[2]
		}
		read += n
	}
	var names map[string]string
	if !s.debtsSettled(owed, debtors) { // what a report applies stamps OWED#NONE too
		var n int
		var err error
		if names, n, err = s.debtsNow(ctx, account, debtors); err != nil {
			return business.Receivables{}, read + n, err
		}
		read += n
	}
	r, err := receivablesOf(asOf, owed, debtors, names)
	return r, read, err
}

// largestDebts reads the IX9 entries of the account's largest debts
// (business.MaxDebtors of them, largest first, each with its aging; a page
// of 1 MB holds them unless debts run to tens of thousands of open due
// dates, when it reads on).
func (s *Store) largestDebts(ctx context.Context, account string) ([]attrs, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(IndexStatusDue.Name),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": IndexStatusDue.PK},
		ExpressionAttributeValues: attrs{":pk": str(debtorsPK(account))},
		Limit:                     aws.Int32(business.MaxDebtors),
	}
	var found []attrs
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("query debtors: %w", err)
		}
		found = append(found, out.Items...)
		if len(found) >= business.MaxDebtors || out.LastEvaluatedKey == nil {
			return found, nil
		}
		in.ExclusiveStartKey, in.Limit = out.LastEvaluatedKey, aws.Int32(int32(business.MaxDebtors-len(found)))
	}
}

// debtsNow reads, in one BatchGetItem, the debts debtors lists as they are
// now (the index may trail the table by a moment, and entries laid out as
// before hold no aging), replacing each entry found, and their customers,
// whose current names it returns by id; and how many items it read.
func (s *Store) debtsNow(ctx context.Context, account string, debtors []attrs) (map[string]string, int, error) {
	ids := make([]int64, len(debtors))
	keys := make([]attrs, 0, 2*len(debtors))
	for i, it := range debtors {
		d, err := debtFrom(it)
		if err != nil {
			return nil, 0, err
		}
		ids[i] = d.CustomerID
		keys = append(keys, debtKey(account, ids[i]), customerKey(account, ids[i]))
	}
	found, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, 0, err
	}
	names, read := map[string]string{}, 0
	for i, id := range ids {
		if it := found[2*i]; it != nil {
			debtors[i] = it
			read++
		}
		if it := found[2*i+1]; it != nil {
			names[strconv.FormatInt(id, 10)] = customerFrom(it).Name
			read++
		}
	}
	return names, read, nil
}

// owedAndDebtors reads, at once, the account's OWED#NONE and year items
// (one Query), its OWED#M# items of the months first..last (one Query;
// none when last is before first) and the largest debts' IX9 entries; it
// returns them and how many items it read.
func (s *Store) owedAndDebtors(ctx context.Context, account, first, last string) (owed, debtors []attrs, read int, err error) {
	type span struct{ from, to string }
	spans := []span{{owedNone, owedYearPrefix + "~"}}
	if last >= first {
		spans = append(spans, span{owedMonthPrefix + first, owedMonthPrefix + last})
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(spans)+1)
	for i, sp := range spans {
		wg.Go(func() {
			pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
				TableName:                 aws.String(s.table),
				KeyConditionExpression:    aws.String("PK = :pk AND SK BETWEEN :from AND :to"),
				ExpressionAttributeValues: attrs{":pk": str(reportPK(account)), ":from": str(sp.from), ":to": str(sp.to)},
				ConsistentRead:            aws.Bool(true),
			})
			for pages.HasMorePages() {
				out, err := pages.NextPage(ctx)
				if err != nil {
					errs[i] = fmt.Errorf("query receivables: %w", err)
					return
				}
				mu.Lock()
				owed, read = append(owed, out.Items...), read+len(out.Items)
				mu.Unlock()
			}
		})
	}
	wg.Go(func() {
		found, err := s.largestDebts(ctx, account)
		mu.Lock()
		debtors, read, errs[len(spans)] = found, read+len(found), err
		mu.Unlock()
	})
	wg.Wait()
	return owed, debtors, read, errors.Join(errs...)
}

// CountLegacyDebts puts in the kept receivables what every sale written
// before them owes (one Scan of the table for sales without
// owedCountedAttr; run from `admin migrate`, safe beside the API and again
// after an interruption). Each sale is marked in the transaction that
// writes its figures item, on condition that it is still unmarked and
// unchanged since read: a sale changed meanwhile is read again (the change
// counted it, or it is counted as it now is). It returns how many sales it
// marked.
func (s *Store) CountLegacyDebts(ctx context.Context) (int, error) {
	pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{
		TableName:                 aws.String(s.table),
		FilterExpression:          aws.String("#t = :sale AND attribute_not_exists(#c)"),
		ProjectionExpression:      aws.String("PK, SK"),
		ExpressionAttributeNames:  map[string]string{"#t": "type", "#c": owedCountedAttr},
		ExpressionAttributeValues: attrs{":sale": str("sale")},
	})
	n := 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return n, fmt.Errorf("scan for sales not in receivables: %w", err)
		}
		for _, k := range page.Items {
			done, err := s.countLegacyDebt(ctx, key(getS(k, "PK"), getS(k, "SK")))
			if err != nil {
				return n, fmt.Errorf("count %s in receivables (%d counted before it; run again to go on): %w", getS(k, "PK"), n, err)
			}
			if done {
				n++
			}
		}
	}
	return n, nil
}

// countLegacyDebt counts one sale written before receivables were kept;
// false when it is counted already.
func (s *Store) countLegacyDebt(ctx context.Context, k attrs) (bool, error) {
	done := false
	err := retrying(ctx, func() error {
		done = false
		it, err := s.getItem(ctx, k, true)
		if err != nil || it == nil || owedCounted(it) || getS(it, "type") != "sale" {
			return err
		}
		account, _, _ := strings.Cut(strings.TrimPrefix(getS(it, "PK"), "A#"), "#")
		actions := []txItem{{action: types.TransactWriteItem{Update: &types.Update{TableName: aws.String(s.table), Key: k,
			UpdateExpression:          aws.String("SET #c = :t"),
			ConditionExpression:       aws.String("attribute_exists(PK) AND attribute_not_exists(#c) AND version = :v"),
			ExpressionAttributeNames:  map[string]string{"#c": owedCountedAttr},
			ExpressionAttributeValues: attrs{":t": &types.AttributeValueMemberBOOL{Value: true}, ":v": nInt(getInt(it, "version"))}}}, onFail: errRetry}}
		ev := newEvents(account, s.stamp())
		ev.owe(business.ReceivableChange{New: business.OwedBy(saleSummaryFrom(it))})
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

// RelayoutDebts rewrites every debt laid out before its view kept its
// aging (see legacyDueAttr) in today's layout, named as its customer is now
// (one Scan of the table for them; run from `admin migrate`, safe beside
// the API and again after an interruption: each is written on condition of
// the version read, and read again when an applier moved it meanwhile). It
// returns how many it rewrote. Until then, reports read such debts from
// the table as well as from the index.
func (s *Store) RelayoutDebts(ctx context.Context) (int, error) {
	pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{
		TableName:                 aws.String(s.table),
		FilterExpression:          aws.String("#t = :debt AND attribute_not_exists(#v.#aging)"),
		ProjectionExpression:      aws.String("PK, SK"),
		ExpressionAttributeNames:  map[string]string{"#t": "type", "#v": viewAttr, "#aging": agingAttr},
		ExpressionAttributeValues: attrs{":debt": str("owed_customer")},
	})
	n := 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return n, fmt.Errorf("scan for debts to lay out again: %w", err)
		}
		for _, k := range page.Items {
			account := strings.TrimSuffix(strings.TrimPrefix(getS(k, "PK"), "A#"), "#REPORT")
			id, err := strconv.ParseInt(strings.TrimPrefix(getS(k, "SK"), debtPrefix), 10, 64)
			if err != nil {
				return n, fmt.Errorf("debt %s %s: %w", getS(k, "PK"), getS(k, "SK"), err)
			}
			err = retrying(ctx, func() error {
				actions, err := s.receivableActions(ctx, account, []business.ReceivableChange{{New: business.Owed{CustomerID: id}}})
				if err != nil || len(actions) == 0 {
					return err
				}
				if err := s.transact(ctx, actions); errors.Is(err, errTypesMoved) {
					return errRetry
				} else if err != nil {
					return err
				}
				n++
				return nil
			})
			if err != nil {
				return n, fmt.Errorf("lay out %s's debt of customer %d again (%d before it; run again to go on): %w", account, id, n, err)
			}
		}
	}
	return n, nil
}
