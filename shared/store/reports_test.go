package store_test

import (
	"context"
	"fmt"
	"slices"
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
	// Two changes of 30 expense types with 9,000-character names each (far
	// longer than expense_type allows): the day's sums hold the first; with
	// the 20 types of the second they may still name, they would pass
	// 400 KB.
	many := func(tag string) string {
		var b strings.Builder
		b.WriteString(`[{"at":1772539200,"expenses":3000,"by_type":{`)
		for i := range 30 {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"%s%03d%s":100`, tag, i, strings.Repeat("x", 8996))
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
	if f := sums.Days[day]; f.Expenses != 3250 || len(f.ByType) != 30 || f.Collected != 500 || sums.Parked != 2 {
		t.Fatalf("figures (%d, %d types, %d collected) with %d set aside, want 32.50 of expenses in 30 types, 5.00 collected and two set aside",
			f.Expenses, len(f.ByType), f.Collected, sums.Parked)
	}
	if fmt.Sprint(parked) != "[evt_3 evt_4]" {
		t.Fatalf("set aside: %v", parked)
	}
	if left, err := st.WaitingFigures(ctx, a.ID); err != nil || len(left) != 0 {
		t.Fatalf("%d figures items still wait (%v)", len(left), err)
	}
}

// TestManyExpenseTypesFold: 1,200 distinct expense types of 100
// four-byte characters in one day, the most expense_type allows (about
// 490 KB of names), applied by two appliers at once in opposite orders.
// The day's and the month's sums name 50 of them and add the rest as
// other_types: nothing is set aside, the report is complete, its totals
// are exact to the cent and its items stay small; applying again changes
// nothing.
func TestManyExpenseTypesFold(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "MANYTYPES")
	day := "2026-03-03"
	var items []map[string]types.AttributeValue
	var want int64
	for i := range 60 {
		var b strings.Builder
		var sum int64
		fmt.Fprintf(&b, `[{"at":1772539200,"by_type":{`)
		for j := range 20 {
			c := int64(i*20+j)*7 + 13
			sum += c
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"%s%04d":%d`, strings.Repeat("𝔼", 96), i*20+j, c)
		}
		fmt.Fprintf(&b, `},"expenses":%d}]`, sum)
		want += sum
		it := map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: fmt.Sprintf("A#%s#REPORT#PEND%d", a.ID, i%4)}, "SK": &types.AttributeValueMemberS{Value: fmt.Sprintf("PEND#evt_%04d", i)},
			"type": &types.AttributeValueMemberS{Value: "figures"}, "account_id": &types.AttributeValueMemberS{Value: a.ID},
			"changes": &types.AttributeValueMemberS{Value: b.String()}}
		if _, err := st.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.Table()), Item: it}); err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	var parked atomic.Int64
	st.OnParkedFigures(func(_, _ string, cause error) { parked.Add(1); t.Errorf("set aside: %v", cause) })
	var applied atomic.Int64
	errs := make(chan error, 2)
	for g := range 2 {
		go func() {
			order := slices.Clone(items)
			if g == 1 {
				slices.Reverse(order)
			}
			n, err := st.ApplyFigures(ctx, a.ID, order)
			applied.Add(int64(n))
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if applied.Load() != 60 {
		t.Fatalf("%d figures items applied between the appliers, want each of the 60 once", applied.Load())
	}
	check := func() {
		t.Helper()
		sums, err := st.ReportFigures(ctx, a.ID, nil, []business.Period{{Start: day, End: day}}, []string{day[:7]})
		if err != nil {
			t.Fatal(err)
		}
		if sums.Parked != 0 {
			t.Fatalf("%d changes not counted", sums.Parked)
		}
		for what, f := range map[string]business.Figures{"day": sums.Days[day], "month": sums.Months[day[:7]]} {
			var named int64
			for _, c := range f.ByType {
				named += c
			}
			if f.Expenses != want || len(f.ByType) != business.MaxExpenseTypes || named+f.OtherTypes != want || f.OtherTypes == 0 {
				t.Fatalf("the %s's figures: %d of expenses, %d types naming %d and %d in other types; want %d in %d types and the rest",
					what, f.Expenses, len(f.ByType), named, f.OtherTypes, want, business.MaxExpenseTypes)
			}
		}
		_, total := business.Summarize([]business.Period{{Start: "2026-03-01", End: "2026-03-31"}}, sums.Days, sums.Months)
		if total.Expenses != want || len(total.ByType) != business.MaxExpenseTypes {
			t.Fatalf("the summary's totals: %d of expenses in %d types, want %d", total.Expenses, len(total.ByType), want)
		}
	}
	check()
	for _, sk := range []string{"DAY#" + day, "MONTH#" + day[:7]} {
		out, err := st.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.Table()), Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "A#" + a.ID + "#REPORT"}, "SK": &types.AttributeValueMemberS{Value: sk}}})
		if err != nil {
			t.Fatal(err)
		}
		size := 0
		for k, v := range out.Item {
			size += len(k)
			if s, ok := v.(*types.AttributeValueMemberS); ok {
				size += len(s.Value)
			} else {
				size += 21
			}
		}
		if size > 25_000 {
			t.Fatalf("%s holds about %d bytes, want about 21 KB at most", sk, size)
		}
	}
	if n, err := st.ApplyFigures(ctx, a.ID, items[:3]); err != nil || n != 0 {
		t.Fatalf("applied again: %d %v", n, err)
	}
	check()
}

// TestFiguresThatCannotBeSetAside: a figures item that can be neither
// applied nor set aside (here DynamoDB refuses its copy's key, longer than
// 1,024 bytes; on AWS, a policy that refused the write would do the same)
// stays waiting, and the report answers for every other change and says it
// is incomplete, rather than failing every summary of the account; the
// stream's consumer is told.
func TestFiguresThatCannotBeSetAside(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "STUCK")
	day := "2026-03-03"
	for _, it := range []struct{ id, changes string }{
		{"evt_1", `[{"at":1772539200,"expenses":250,"by_type":{"Fuel":250}}]`},
		{"evt_2" + strings.Repeat("x", 1013), `not json`}, // PEND#<id>: 1,023 bytes; PARKED#<id>: 1,025
	} {
		_, err := st.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.Table()), Item: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "A#" + a.ID + "#REPORT#PEND0"}, "SK": &types.AttributeValueMemberS{Value: "PEND#" + it.id},
			"type": &types.AttributeValueMemberS{Value: "figures"}, "account_id": &types.AttributeValueMemberS{Value: a.ID},
			"changes": &types.AttributeValueMemberS{Value: it.changes}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	waiting, err := st.WaitingFigures(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		sums, err := st.ReportFigures(ctx, a.ID, nil, []business.Period{{Start: day, End: day}}, nil)
		if err != nil {
			t.Fatalf("the report failed: %v", err)
		}
		if f := sums.Days[day]; f.Expenses != 250 || sums.Parked != 1 {
			t.Fatalf("figures %+v with %d left out, want 2.50 of expenses and one left out", f, sums.Parked)
		}
	}
	if left, err := st.WaitingFigures(ctx, a.ID); err != nil || len(left) != 1 {
		t.Fatalf("%d figures items wait (%v), want the one that could not be set aside", len(left), err)
	}
	if _, err := st.ApplyFigures(ctx, a.ID, waiting); err == nil || !strings.Contains(err.Error(), "neither applied nor set aside") {
		t.Fatalf("the stream's consumer was told %v", err)
	}
}
