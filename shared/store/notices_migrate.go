package store

import (
	"context"
	"fmt"
	"strings"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// PlanLegacyNotices plans the next notice of every open sale written before
// sales planned theirs (no scheduled list in its view): a reminder or an
// overdue day still to come is sent as if the sale had been written now.
// Each sale is marked planned (its list, empty when nothing is to come) on
// condition that it is unchanged since read, in the transaction that puts
// its notice; a sale edited meanwhile is read again. Idempotent: a second
// run finds nothing. It returns how many sales it planned.
func (s *Store) PlanLegacyNotices(ctx context.Context) (int, error) {
	return s.countEach(ctx, &dynamodb.ScanInput{
		TableName:                 aws.String(s.table),
		FilterExpression:          aws.String("#t = :sale AND attribute_not_exists(#v.#sched) AND #v.#status IN (:draft, :partial)"),
		ProjectionExpression:      aws.String("PK, SK"),
		ExpressionAttributeNames:  map[string]string{"#t": "type", "#v": viewAttr, "#sched": "scheduled", "#status": "payment_status"},
		ExpressionAttributeValues: attrs{":sale": str("sale"), ":draft": str("draft"), ":partial": str("partial")},
	}, "sales to plan notices of", func(k attrs, before int) (bool, error) {
		account, code, ok := strings.Cut(strings.TrimPrefix(getS(k, "PK"), "A#"), "#SALE#")
		if !ok {
			return false, nil
		}
		planned := false
		err := retrying(ctx, func() error {
			cur, err := s.findSale(ctx, account, code, true)
			if business.ErrorCode(err) == business.ENOTFOUND {
				return nil // deleted since the scan
			} else if err != nil {
				return err
			}
			hist, err := s.timezoneHistory(ctx, account)
			if err != nil {
				return err
			}
			next := cur.Sale
			actions := s.planNotices(account, &cur, &next, hist, s.stamp())
			list := &types.AttributeValueMemberL{Value: []types.AttributeValue{}}
			for _, sk := range next.Scheduled {
				list.Value = append(list.Value, str(sk))
			}
			mark := types.TransactWriteItem{Update: &types.Update{
				TableName: aws.String(s.table), Key: key(salePK(account, code), "SALE"),
				UpdateExpression:          aws.String("SET #v.#sched = :planned"),
				ConditionExpression:       aws.String("version = :version"),
				ExpressionAttributeNames:  map[string]string{"#v": viewAttr, "#sched": "scheduled"},
				ExpressionAttributeValues: attrs{":planned": list, ":version": nInt(cur.Sale.Version)},
			}}
			if err := s.transact(ctx, append([]txItem{{action: mark, onFail: errRetry}}, actions...)); err != nil {
				return err
			}
			planned = true
			return nil
		})
		if err != nil {
			return false, fmt.Errorf("plan the notices of %s's sale %s (%d before it; run again to go on): %w", account, code, before, err)
		}
		return planned, nil
	})
}
