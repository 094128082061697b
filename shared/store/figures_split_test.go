package store_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// TestApplyFiguresSplitsWhatOneTransactionCannotTake: 90 changes, each on a
// day of a month of its own, move more sums than one transaction of 40 may
// name (40 deletes, 40 days, 40 months), and one of them was applied by
// another applier already. The apply splits its batches in halves rather
// than going one item at a time, skips the one applied, and counts every
// other once.
func TestApplyFiguresSplitsWhatOneTransactionCannotTake(t *testing.T) {
	var transacts atomic.Int64
	st, _ := testdb.NewStore(t, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("count", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if _, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok {
					transacts.Add(1)
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
		})
	})
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "SPLIT")
	start := time.Date(2019, 1, 15, 12, 0, 0, 0, time.UTC)
	var items []map[string]types.AttributeValue
	for i := range 90 {
		at := start.AddDate(0, i, 0)
		it := map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: fmt.Sprintf("A#%s#REPORT#PEND%d", a.ID, i%4)}, "SK": &types.AttributeValueMemberS{Value: fmt.Sprintf("PEND#evt_%04d", i)},
			"type": &types.AttributeValueMemberS{Value: "figures"}, "account_id": &types.AttributeValueMemberS{Value: a.ID},
			"changes": &types.AttributeValueMemberS{Value: fmt.Sprintf(`[{"at":%d,"expenses":%d}]`, at.Unix(), i+1)}}
		if _, err := st.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.Table()), Item: it}); err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	if n, err := st.ApplyFigures(ctx, a.ID, items[7:8]); err != nil || n != 1 {
		t.Fatalf("the other applier: %d applied, %v", n, err)
	}
	transacts.Store(0)
	n, err := st.ApplyFigures(ctx, a.ID, items)
	if err != nil || n != 89 {
		t.Fatalf("%d applied (%v), want the 89 not applied before", n, err)
	}
	// Batches of 40 split in halves to fit, and the one holding the item
	// applied splits down to it: 13 transactions. Applying a batch that
	// fails one item at a time would take at least 20 more than its share.
	if got := transacts.Load(); got > 15 {
		t.Errorf("%d transactions for 90 changes, want the batches split in halves (at most 15)", got)
	}
	days, _, err := st.ReportDays(ctx, a.ID, "2019-01-01", "2026-12-31")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 90 {
		d := start.AddDate(0, i, 0).Format(time.DateOnly)
		if got := days[d].Expenses; got != int64(i+1) {
			t.Errorf("%s: expenses %d, want %d (counted once)", d, got, i+1)
		}
	}
}
