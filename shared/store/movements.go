package store

import (
	"context"
	"fmt"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/money"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// An item's ledger lives in the item's own partition, beside the item:
// SK MOVE#<the item's version after the move, 12 digits>. The item (SK
// ITEM) sorts below every movement, so one Query read newest first returns
// a page of movements and, once the ledger is read to its start, the item
// itself: a ledger's page proves the item exists without a second read.

const movePrefix = "MOVE#"

func movementItem(account string, m business.Movement) attrs {
	return movementAt(getS(itemKey(account, m.ItemCode), "PK"), m)
}

// movementAt is movement m in the item partition pk.
func movementAt(pk string, m business.Movement) attrs {
	it := key(pk, fmt.Sprintf("%s%012d", movePrefix, m.ID))
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

// OpenLedgers gives every item written before the ledger its opening
// movement: an `initial` of the stock it had before its first movement (its
// quantity less what its movements add up to, when they do not add up to
// it), numbered below them, so that its movements add up to its quantity. It
// returns how many it opened. Each is written on the condition that the item
// is unchanged since its ledger was read, so it is safe beside the API (an
// item moved after the upgrade and before this runs is opened with what it
// had before that move) and may be run again.
func (s *Store) OpenLedgers(ctx context.Context) (int, error) {
	pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{
		TableName:                 aws.String(s.table),
		FilterExpression:          aws.String("#t = :item"),
		ProjectionExpression:      aws.String("PK, SK"),
		ExpressionAttributeNames:  map[string]string{"#t": "type"},
		ExpressionAttributeValues: attrs{":item": str("item")},
	})
	opened := 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return opened, fmt.Errorf("scan for items: %w", err)
		}
		for _, k := range page.Items {
			done, err := s.openLedger(ctx, key(getS(k, "PK"), getS(k, "SK")))
			if err != nil {
				return opened, fmt.Errorf("open the ledger of %s (%d opened before it; run again to go on): %w", getS(k, "PK"), opened, err)
			}
			if done {
				opened++
			}
		}
	}
	return opened, nil
}

// openLedger writes one item's opening movement; false when its movements
// add up to its quantity already.
func (s *Store) openLedger(ctx context.Context, k attrs) (bool, error) {
	done := false
	err := retrying(ctx, func() error {
		done = false
		it, err := s.getItem(ctx, k, true)
		if err != nil || it == nil {
			return err
		}
		x := invItemFrom(it)
		sum, first := money.Delta{}, x.Version+1
		pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			KeyConditionExpression:    aws.String("PK = :pk AND begins_with(SK, :move)"),
			ExpressionAttributeValues: attrs{":pk": k["PK"], ":move": str(movePrefix)},
			ConsistentRead:            aws.Bool(true),
		})
		for pages.HasMorePages() {
			out, err := pages.NextPage(ctx)
			if err != nil {
				return fmt.Errorf("query movements: %w", err)
			}
			for _, mv := range out.Items {
				m := movementFrom(mv)
				sum, first = sum.Add(m.Change), min(first, m.ID)
			}
		}
		m, needed, err := business.OpeningBalance(x, sum, first, s.stamp())
		if err != nil || !needed {
			return err
		}
		err = s.transact(ctx, []txItem{
			{action: types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
				TableName: aws.String(s.table), Key: k, ConditionExpression: aws.String("version = :v"),
				ExpressionAttributeValues: attrs{":v": nInt(x.Version)},
			}}, onFail: errRetry},
			{action: put(s.table, movementAt(getS(k, "PK"), m), "attribute_not_exists(PK)"), onFail: errRetry},
		})
		done = err == nil
		return err
	})
	return done, err
}
