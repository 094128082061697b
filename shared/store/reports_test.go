package store_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// TestMigrationBesideALegacyEdit: an expense written before reports is
// edited while admin migrate counts it, between the edit's read and its
// write. The edit read it uncounted, so it would count it whole again; its
// write is refused instead and made again on the record as marked, so the
// expense is counted once, at its new amount.
func TestMigrationBesideALegacyEdit(t *testing.T) {
	var hook atomic.Pointer[func()]
	st, cfg := testdb.NewStore(t, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("MigrateFirst",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					if _, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok {
						if f := hook.Swap(nil); f != nil {
							(*f)()
						}
					}
					return next.HandleInitialize(ctx, in)
				}), middleware.After)
		})
	})
	ctx := context.Background()
	migrator, err := app.NewStore(ctx, cfg) // the admin CLI's own store
	if err != nil {
		t.Fatal(err)
	}
	a, _ := testdb.NewAccount(t, st, "Shop", "MIGRACE")
	day := time.Now().UTC().Format(business.DateFormat)
	e := business.Expense{ExpenseType: "Fuel", Amount: money.MustAmount("100.00"), PaymentMethod: "Cash", CreatedBy: "Ama"}
	if _, err := st.CreateExpense(ctx, a.ID, e, nil, func(business.Expense) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	// As a release before reports left it: no mark, no figures.
	db, table := st.Client(), st.Table()
	scan, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range scan.Items {
		k := map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}
		switch pk := it["PK"].(*types.AttributeValueMemberS).Value; {
		case strings.Contains(pk, "#REPORT"):
			_, err = db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: k})
		case it["counted"] != nil:
			_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: k, UpdateExpression: aws.String("REMOVE counted")})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	migrated := make(chan int, 1)
	f := func() {
		n, err := migrator.CountLegacyRecords(ctx)
		if err != nil {
			t.Error(err)
		}
		migrated <- n
	}
	hook.Store(&f)
	if _, err := st.UpdateExpense(ctx, a.ID, 1, func(x *business.Expense) error { x.Amount = money.MustAmount("150.00"); return nil }); err != nil {
		t.Fatal(err)
	}
	if n := <-migrated; n != 1 {
		t.Fatalf("the migration counted %d records, want the expense", n)
	}
	days, _, err := st.ReportDays(ctx, a.ID, day, day)
	if err != nil {
		t.Fatal(err)
	}
	if f := days[day]; f.Expenses != 15000 || f.ByType["Fuel"] != 15000 {
		t.Fatalf("the day's figures %+v, want the expense once, at 150.00", f)
	}
}
