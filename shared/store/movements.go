package store

import (
	"context"
	"fmt"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/money"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// An item's ledger lives in the item's own partition, beside the item:
// SK MOVE#<the item's version after the move, 12 digits>. The item (SK
// ITEM) sorts below every movement, so one Query read newest first returns
// a page of movements and, once the ledger is read to its start, the item
// itself: a ledger's page proves the item exists without a second read.

const movePrefix = "MOVE#"

func movementItem(account string, m business.Movement) attrs {
	k := itemKey(account, m.ItemCode)
	it := key(getS(k, "PK"), fmt.Sprintf("%s%012d", movePrefix, m.ID))
	it["type"] = str("movement")
	it["id"] = nInt(m.ID)
	it["item_code"] = str(m.ItemCode)
	it["kind"] = str(m.Kind)
	it["quantity"] = num(m.Change.String())
	it["quantity_after"] = num(m.After.String())
	setS(it, "reason", m.Reason)
	setS(it, "note", m.Note)
	setS(it, "invoice_code", m.InvoiceCode)
	it["created_at"] = str(fmtTime(m.CreatedAt))
	return it
}

func movementFrom(it attrs) business.Movement {
	change, _ := money.ParseDelta(getN(it, "quantity"))
	return business.Movement{
		ID: getInt(it, "id"), ItemCode: getS(it, "item_code"), Kind: getS(it, "kind"), Change: change,
		After: quantityAt(it, "quantity_after"), Reason: getS(it, "reason"), Note: getS(it, "note"),
		InvoiceCode: getS(it, "invoice_code"), CreatedAt: getTime(it, "created_at"),
	}
}

// ListMovements returns a page of an item's ledger, newest first, with one
// Query (more only when a page passes 1 MB). Returns ENOTFOUND when the
// account has no item with that code.
func (s *Store) ListMovements(ctx context.Context, account, code string, limit int, cursor string) (Page[business.Movement], error) {
	pk := getS(itemKey(account, code), "PK")
	const fp = "movements"
	start, err := s.decodeCursor(cursor, "PK", pk, fp)
	if err != nil {
		return Page[business.Movement]{}, err
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("PK = :pk AND SK >= :item"),
		ExpressionAttributeValues: attrs{":pk": str(pk), ":item": str("ITEM")},
		ScanIndexForward:          aws.Bool(false),
		ExclusiveStartKey:         start,
	}
	// A signed cursor of this partition was made from a page of an item that
	// existed, and items are never deleted.
	exists := start != nil
	var got []attrs
	p := Page[business.Movement]{}
	for {
		// The page, one more to know whether another follows, and the item.
		in.Limit = aws.Int32(int32(limit + 2 - len(got)))
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return p, fmt.Errorf("query movements: %w", err)
		}
		p.Scanned += int(out.ScannedCount)
		reached := false
		for _, it := range out.Items {
			if !strings.HasPrefix(getS(it, "SK"), movePrefix) {
				exists, reached = true, true
				break
			}
			got = append(got, it)
		}
		if reached || len(got) > limit || out.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	if !exists && len(got) == 0 {
		return p, business.Errorf(business.ENOTFOUND, "Item not found")
	}
	if len(got) > limit {
		got = got[:limit]
		last := got[limit-1]
		p.Next = s.encodeCursor(attrs{"PK": last["PK"], "SK": last["SK"]}, fp)
	}
	p.Items = make([]business.Movement, len(got))
	for i, it := range got {
		p.Items[i] = movementFrom(it)
	}
	return p, nil
}
