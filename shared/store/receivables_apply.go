package store

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

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
	m := business.MoveReceivables(cs)
	months := map[string]map[string]int64{} // yyyy-mm: dNN: cents
	for due, c := range m.ByDay {
		if months[due[:7]] == nil {
			months[due[:7]] = map[string]int64{}
		}
		months[due[:7]]["d"+due[8:10]] += c
	}
	var out []txItem
	for _, mo := range slices.Sorted(maps.Keys(months)) {
		if up := s.owedAdd(account, owedMonthPrefix+mo, "owed_month", months[mo], time.Time{}); up != nil {
			out = append(out, *up)
		}
	}
	for _, y := range slices.Sorted(maps.Keys(m.ByYear)) {
		if up := s.owedAdd(account, owedYearPrefix+y, "owed_year", owedCountAdds(m.ByYear[y]), time.Time{}); up != nil {
			out = append(out, *up)
		}
	}
	ids := slices.Sorted(maps.Keys(m.Debts))
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
		up, err := s.debtWrite(account, id, read[2*i], read[2*i+1], *m.Debts[id])
		if err != nil {
			return nil, err
		}
		if up != nil {
			out, moved = append(out, *up), time.Now() // the index's lag is in real time, whatever the store's clock
		}
	}
	if up := s.owedAdd(account, owedNone, "owed_none", owedCountAdds(m.NoDue), moved); up != nil {
		out = append(out, *up)
	}
	return out, nil
}

// owedCountAdds is the ADD of a year's or OWED#NONE's sums.
func owedCountAdds(c business.OwedCount) map[string]int64 {
	return map[string]int64{"owed": c.Owed, "open": c.Open}
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
