package store

import (
	"fmt"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/money"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Stock: quantities moved by sales, atomically and never below zero.

// stockActions returns the transaction actions that move stock by moves:
// each takes (or gives back) quantity atomically, refusing to go below zero.
// The items come from found (read alongside): their ids, so their updated_at
// index keys can move too, and their shape (see view.go). Returns EINVALID for an item code that is not in stock.
func (s *Store) stockActions(account string, moves map[string]money.Delta, found map[string]attrs, now time.Time) ([]txItem, error) {
	var actions []txItem
	for code, d := range moves {
		it := found[code]
		if it == nil {
			return nil, business.FieldErrors{"items": fmt.Sprintf("item_code %s: no such inventory item", code)}.Err()
		}
		// A record written before views keeps its quantity at the top level.
		// The condition names the shape read, so a write that gave the item
		// its view in between (an edit, `admin migrate`) cancels this attempt,
		// which is then made again on the item as it is now.
		at, shape := "v.", "attribute_exists(v)"
		if !hasView(it) {
			at, shape = "", "attribute_not_exists(v)"
		}
		x := invItemFrom(it)
		up := &types.Update{
			TableName: aws.String(s.table),
			Key:       itemKey(account, code),
			UpdateExpression: aws.String(fmt.Sprintf("SET %[1]squantity = %[1]squantity - :q, %[1]supdated_at = :now, %[2]s = :usk, version = version + :one",
				at, IndexUpperBound.SK)),
			ExpressionAttributeValues: attrs{
				":q": num(d.String()), ":now": str(fmtTime(now)), ":usk": str(fmtTime(now) + "#" + pad(x.ID)), ":one": nInt(1),
			},
		}
		onFail := error(&business.Error{Code: business.EINVALID, Message: fmt.Sprintf("insufficient stock of item %s", code),
			Fields: map[string]string{"items": fmt.Sprintf("insufficient stock of item %s (%s in stock when read)", code, x.Quantity)}})
		if d.IsNegative() {
			// Stock given back may not leave the range of a quantity, or the
			// item would read as malformed and lose its stock on a later write.
			headroom, ok := d.Headroom()
			full := business.FieldErrors{"items": fmt.Sprintf("item_code %s: giving back %s would take its stock above %s", code, d.Abs(), money.MaxQuantity())}.Err()
			if !ok {
				return nil, full
			}
			up.ConditionExpression = aws.String(fmt.Sprintf("%s AND %squantity <= :cap", shape, at))
			up.ExpressionAttributeValues[":cap"] = num(headroom)
			onFail = full
		} else {
			up.ConditionExpression = aws.String(fmt.Sprintf("%s AND %squantity >= :q", shape, at))
		}
		up.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
		failed := func(old attrs) error {
			if old != nil && hasView(old) != hasView(it) {
				return errRetry // the shape changed, not the stock
			}
			return onFail
		}
		actions = append(actions, txItem{action: types.TransactWriteItem{Update: up}, onFail: onFail, failed: failed})
	}
	return actions, nil
}
