package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// What `admin migrate` runs to bring records written before the reports
// and receivables were kept into them, and debts into today's layout: each
// is one Scan of the table, safe beside the API and again after an
// interruption.

// countEach hands each item one Scan of the table by in finds to fn, in
// turn, with how many fn has done before it, and returns how many it did
// (fn's true), stopping at fn's first error, which it returns as it is;
// sought names the items in the error of the Scan itself.
func (s *Store) countEach(ctx context.Context, in *dynamodb.ScanInput, sought string, fn func(it attrs, before int) (bool, error)) (int, error) {
	n := 0
	pages := dynamodb.NewScanPaginator(s.db, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return n, fmt.Errorf("scan for %s: %w", sought, err)
		}
		for _, it := range page.Items {
			done, err := fn(it, n)
			if err != nil {
				return n, err
			}
			if done {
				n++
			}
		}
	}
	return n, nil
}

// CountLegacyRecords puts in the reports every sale, payment, refund and
// expense written before them (records without countedAttr; run once per
// deployment). Each record is marked counted in the transaction that
// writes its figures item, on condition that it is not counted yet and,
// for sales and expenses, unchanged since read: a record edited meanwhile
// is read again (the edit counted it already, or it is counted as it now
// is). It returns how many records it counted.
func (s *Store) CountLegacyRecords(ctx context.Context) (int, error) {
	return s.countEach(ctx, &dynamodb.ScanInput{
		TableName:                aws.String(s.table),
		FilterExpression:         aws.String("#t IN (:sale, :payment, :refund, :expense) AND attribute_not_exists(#c)"),
		ProjectionExpression:     aws.String("PK, SK"),
		ExpressionAttributeNames: map[string]string{"#t": "type", "#c": countedAttr},
		ExpressionAttributeValues: attrs{":sale": str("sale"), ":payment": str("payment"), ":refund": str("refund"),
			":expense": str("expense")},
	}, "records not in the reports", func(k attrs, before int) (bool, error) {
		done, err := s.markCountedOnce(ctx, key(getS(k, "PK"), getS(k, "SK")), countedAttr, legacyFigures)
		if err != nil {
			return false, fmt.Errorf("count %s %s in the reports (%d counted before it; run again to go on): %w", getS(k, "PK"), getS(k, "SK"), before, err)
		}
		return done, nil
	})
}

// legacyFigures records in ev what a record written before reports moves
// in them; versioned says its mark is conditioned on its version (sales and
// expenses change), ok false that it is not a record the reports count.
func legacyFigures(it attrs, ev *events) (versioned, ok bool) {
	switch getS(it, "type") {
	case "sale":
		if sale := saleFrom(it); !sale.Void() {
			ev.count(business.SaleCreatedFigures(sale, nil))
		}
		return true, true
	case "expense":
		ev.count(business.ExpenseCreatedFigures(expenseFrom(it)))
		return true, true
	case "payment":
		ev.count(business.PaymentFigures(PaymentFrom(it)))
	case "refund":
		ev.count(business.RefundFigures(RefundFrom(it)))
	default:
		return false, false
	}
	return false, true
}

// CountLegacyDebts puts in the kept receivables what every sale written
// before them owes (sales without owedCountedAttr). Each sale is marked in
// the transaction that writes its figures item, on condition that it is
// still unmarked and unchanged since read: a sale changed meanwhile is read
// again (the change counted it, or it is counted as it now is). It returns
// how many sales it marked.
func (s *Store) CountLegacyDebts(ctx context.Context) (int, error) {
	return s.countEach(ctx, &dynamodb.ScanInput{
		TableName:                 aws.String(s.table),
		FilterExpression:          aws.String("#t = :sale AND attribute_not_exists(#c)"),
		ProjectionExpression:      aws.String("PK, SK"),
		ExpressionAttributeNames:  map[string]string{"#t": "type", "#c": owedCountedAttr},
		ExpressionAttributeValues: attrs{":sale": str("sale")},
	}, "sales not in receivables", func(k attrs, before int) (bool, error) {
		done, err := s.markCountedOnce(ctx, key(getS(k, "PK"), getS(k, "SK")), owedCountedAttr, legacyDebt)
		if err != nil {
			return false, fmt.Errorf("count %s in receivables (%d counted before it; run again to go on): %w", getS(k, "PK"), before, err)
		}
		return done, nil
	})
}

// legacyDebt records in ev what a sale written before receivables were
// kept owes; its mark is conditioned on its version.
func legacyDebt(it attrs, ev *events) (versioned, ok bool) {
	if getS(it, "type") != "sale" {
		return false, false
	}
	ev.owe(business.ReceivableChange{New: business.OwedBy(saleSummaryFrom(it))})
	return true, true
}

// markCountedOnce counts the record at k, unless it holds mark already:
// one transaction sets mark on it, on condition that it is still there and
// unmarked (and, when versioned, of the version read), and writes the
// figures item of what counting it moves (what moves records in the
// change's events). It returns false when there was nothing to count.
func (s *Store) markCountedOnce(ctx context.Context, k attrs, mark string, moves func(it attrs, ev *events) (versioned, ok bool)) (bool, error) {
	done := false
	err := retrying(ctx, func() error {
		done = false
		it, err := s.getItem(ctx, k, true)
		if err != nil || it == nil || it[mark] != nil {
			return err
		}
		account, _, _ := strings.Cut(strings.TrimPrefix(getS(it, "PK"), "A#"), "#")
		ev := newEvents(account, s.stamp())
		versioned, ok := moves(it, ev)
		if !ok {
			return nil
		}
		cond, vals := "attribute_exists(PK) AND attribute_not_exists(#c)", attrs{":t": &types.AttributeValueMemberBOOL{Value: true}}
		if versioned {
			cond, vals[":v"] = cond+" AND version = :v", nInt(getInt(it, "version"))
		}
		actions := []txItem{{action: types.TransactWriteItem{Update: &types.Update{TableName: aws.String(s.table), Key: k,
			UpdateExpression: aws.String("SET #c = :t"), ConditionExpression: aws.String(cond),
			ExpressionAttributeNames: map[string]string{"#c": mark}, ExpressionAttributeValues: vals}}, onFail: errRetry}}
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
// aging (see legacyDueAttr) in today's layout, named as its customer is now:
// each is written on condition of the version read, and read again when an
// applier moved it meanwhile. It returns how many it rewrote. Until then,
// reports read such debts from the table as well as from the index.
func (s *Store) RelayoutDebts(ctx context.Context) (int, error) {
	return s.countEach(ctx, &dynamodb.ScanInput{
		TableName:                 aws.String(s.table),
		FilterExpression:          aws.String("#t = :debt AND attribute_not_exists(#v.#aging)"),
		ProjectionExpression:      aws.String("PK, SK"),
		ExpressionAttributeNames:  map[string]string{"#t": "type", "#v": viewAttr, "#aging": agingAttr},
		ExpressionAttributeValues: attrs{":debt": str("owed_customer")},
	}, "debts to lay out again", func(k attrs, before int) (bool, error) {
		account := strings.TrimSuffix(strings.TrimPrefix(getS(k, "PK"), "A#"), "#REPORT")
		id, err := strconv.ParseInt(strings.TrimPrefix(getS(k, "SK"), debtPrefix), 10, 64)
		if err != nil {
			return false, fmt.Errorf("debt %s %s: %w", getS(k, "PK"), getS(k, "SK"), err)
		}
		done := false
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
			done = true
			return nil
		})
		if err != nil {
			return false, fmt.Errorf("lay out %s's debt of customer %d again (%d before it; run again to go on): %w", account, id, before, err)
		}
		return done, nil
	})
}
