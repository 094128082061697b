package store

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/money"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Stock: quantities moved by sales, refunds, voids and adjustments, each
// change with its movement in the item's ledger, in the same transaction.
//
// Every write of a quantity is conditioned on the item's version as read,
// and sets the quantity it computed from that read. That is what makes the
// ledger exact: a movement's quantity_after is the quantity the write left,
// and the movements of an item add up to its quantity. The price is that
// two writers moving one item at the same instant take turns (the second
// starts over on the item as the first left it).

// stockActions returns the transaction actions that move stock by moves (per
// item code, positive takes, negative gives back), as business.MoveStock
// decides each item's move, and what each item becomes. The items come from
// found, read consistently beforehand. Stock that would go below zero (or,
// given back, above a quantity's range) as read is still written, with a
// condition that fails, so the transaction's other conditions (a taken
// invoice code) are answered in their order; its failure is the move's
// refusal when the item is as read, and a new attempt when it changed in
// between.
//
// Each item's new version gets its event in ev: stock.adjusted for an
// adjustment, item.updated for a move a sale made, and item.stock_low or
// item.out_of_stock when the stock crossed down to its alert level or to
// zero.
func (s *Store) stockActions(account string, moves map[string]money.Delta, found map[string]attrs, now time.Time, cause business.StockCause, ev *events) ([]txItem, map[string]business.StockMove, error) {
	var actions []txItem
	out := make(map[string]business.StockMove, len(moves))
	for _, code := range slices.Sorted(maps.Keys(moves)) { // events in a fixed order
		d, it := moves[code], found[code]
		var read *business.Item
		if it != nil {
			x := invItemFrom(it)
			read = &x
		}
		mv, err := business.MoveStock(code, read, d, cause, now)
		if err != nil {
			return nil, nil, err
		}
		out[code] = mv
		if cause.Kind == business.MoveAdjustment {
			ev.item(business.EventStockAdjusted, mv.Item, read.Quantity)
		} else {
			ev.item(business.EventItemUpdated, mv.Item, read.Quantity)
		}
		ev.worth(business.StockChange{Old: worthOf(it), New: business.WorthOf(mv.Item)})
		up := s.quantityUpdate(account, it, mv.Item, d)
		up.failed = func(old attrs) error {
			if old != nil && getInt(old, "version") == read.Version && hasView(old) == hasView(it) && worthCounted(old) == worthCounted(it) {
				return mv.Refusal // the item is as read: its stock is short (or full)
			}
			return errRetry
		}
		actions = append(actions, up, txItem{action: put(s.table, movementItem(account, mv.Movement), "attribute_not_exists(PK)"), onFail: errRetry})
	}
	return actions, out, nil
}

// quantityUpdate sets the quantity of the item read as it to next's, with
// next's stamps, provided the item is still at the version read and its
// quantity takes d: at least d when taking, at most d's headroom when
// giving back.
// A record written before views keeps its fields at the top level: the
// condition names the shape read too, so whatever changed in between (a
// sale, an edit, `admin migrate` giving it its view or counting its worth),
// the attempt starts over on the item as it is now. The same write sets or
// removes the item's stock alert keys and marks its worth counted (an item
// read unmarked is counted whole by this change, on condition that it is
// still unmarked).
func (s *Store) quantityUpdate(account string, it attrs, next business.Item, d money.Delta) txItem {
	at, shape := "v.", "attribute_exists(v)"
	if !hasView(it) {
		at, shape = "", "attribute_not_exists(v)"
	}
	if !worthCounted(it) {
		shape += " AND attribute_not_exists(" + worthCountedAttr + ")"
	}
	cond := fmt.Sprintf("%s AND version = :read AND %squantity >= :d", shape, at)
	values := attrs{
		":q": num(next.Quantity.String()), ":now": str(fmtTime(next.UpdatedAt)), ":usk": str(fmtTime(next.UpdatedAt) + "#" + pad(next.ID)),
		":next": nInt(next.Version), ":read": nInt(next.Version - 1), ":d": num(d.String()),
	}
	if d.IsNegative() {
		bound, _ := d.Headroom() // business.MoveStock refused a give-back no stock takes
		cond = fmt.Sprintf("%s AND version = :read AND %squantity <= :bound", shape, at)
		delete(values, ":d")
		values[":bound"] = num(bound)
	}
	alertSet, alertRemove := alertUpdate(account, next, values)
	up := &types.Update{
		TableName: aws.String(s.table),
		Key:       itemKey(account, next.ItemCode),
		UpdateExpression: aws.String(fmt.Sprintf("SET %[1]squantity = :q, %[1]supdated_at = :now, %[2]s = :usk, version = :next, %[3]s%[4]s",
			at, IndexUpperBound.SK, alertSet, alertRemove)),
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	return txItem{action: types.TransactWriteItem{Update: up}, onFail: errRetry}
}
