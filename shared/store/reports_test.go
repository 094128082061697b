package store_test

import (
	"context"
	"fmt"
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

// TestUnappliableFiguresAreSetAside: a figures item that cannot be applied
// (its changes do not decode; one that would take its day's sums past
// DynamoDB's 400 KB item) holds up no other change: it is kept aside, the
// hook is told, the others are counted, and the report says it is
// incomplete instead of failing for good.
func TestUnappliableFiguresAreSetAside(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "PARKING")
	var parked []string
	st.OnParkedFigures(func(_, id string, cause error) { parked = append(parked, id) })
	day := "2026-03-03"
	put := func(id, changes string) {
		t.Helper()
		_, err := st.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.Table()), Item: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "A#" + a.ID + "#REPORT#PEND0"}, "SK": &types.AttributeValueMemberS{Value: "PEND#" + id},
			"type": &types.AttributeValueMemberS{Value: "figures"}, "account_id": &types.AttributeValueMemberS{Value: a.ID},
			"changes": &types.AttributeValueMemberS{Value: changes}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Two changes of 70 expense types with 3,000-character names each: the
	// day's sums hold the first; with the second they would pass 400 KB.
	many := func(tag string) string {
		var b strings.Builder
		b.WriteString(`[{"at":1772539200,"expenses":7000,"by_type":{`)
		for i := range 70 {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"%s%03d%s":100`, tag, i, strings.Repeat("x", 2996))
		}
		b.WriteString("}}]")
		return b.String()
	}
	put("evt_1", `[{"at":1772539200,"expenses":250}]`) // 2026-03-03 12:00 UTC
	put("evt_2", many("a"))
	put("evt_3", `not json`)
	put("evt_4", many("b"))
	put("evt_5", `[{"at":1772539200,"collected":500,"by_method":{"Cash":500}}]`)
	sums, err := st.ReportFigures(ctx, a.ID, nil, []business.Period{{Start: day, End: day}}, nil) // the account's zone: UTC
	if err != nil {
		t.Fatal(err)
	}
	if f := sums.Days[day]; f.Expenses != 7250 || len(f.ByType) != 70 || f.Collected != 500 || sums.Parked != 2 {
		t.Fatalf("figures (%d, %d types, %d collected) with %d set aside, want 72.50 of expenses in 70 types, 5.00 collected and two set aside",
			f.Expenses, len(f.ByType), f.Collected, sums.Parked)
	}
	if fmt.Sprint(parked) != "[evt_3 evt_4]" {
		t.Fatalf("set aside: %v", parked)
	}
	if left, err := st.WaitingFigures(ctx, a.ID); err != nil || len(left) != 0 {
		t.Fatalf("%d figures items still wait (%v)", len(left), err)
	}
}
