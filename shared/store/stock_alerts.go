package store

import (
	"context"
	"fmt"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// queryStockAlerts reads the first page of the account's stock alerts in
// IX9 (out of stock first, then low): business.MaxStockAlerts of them and
// one more, which says the list is cut. Entries of items written before
// views hold no view.
func (s *Store) queryStockAlerts(ctx context.Context, account string) ([]attrs, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(IndexStatusDue.Name),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": IndexStatusDue.PK},
		ExpressionAttributeValues: attrs{":pk": str(acctPK(account) + alertPartition)},
		Limit:                     aws.Int32(business.MaxStockAlerts + 1),
	})
	if err != nil {
		return nil, fmt.Errorf("query stock alerts: %w", err)
	}
	return out.Items, nil
}
