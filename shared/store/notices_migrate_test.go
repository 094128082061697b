package store_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestPlanLegacyNotices: open sales written before sales planned their
// notices (no scheduled list, nothing in the schedule) get their next one
// from admin migrate, once; a paid one and one whose dates have passed get
// none, and a second run finds nothing.
func TestPlanLegacyNotices(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "NOTICEMIG")
	if _, err := st.CreateCustomer(ctx, a.ID, business.Customer{Name: "Ama", Email: "ama@example.com"}, nil, render[business.Customer]); err != nil {
		t.Fatal(err)
	}
	day := func(n int) string { return time.Now().UTC().AddDate(0, 0, n).Format(business.DateFormat) }
	for i, s := range []struct{ due, remind, paid string }{
		{day(10), day(3), "0"},    // planned: its reminder in 3 days
		{day(-20), "", "0"},       // its overdue day has passed: nothing to plan
		{day(10), day(3), "5.00"}, // paid: nothing
	} {
		c := strconv.Itoa(600000 + i)
		paid, _ := money.ParseAmount(s.paid)
		sale := business.Sale{InvoiceCode: c, InvoiceNumber: "INV-" + c, CustomerID: 1, InvoiceType: "main", PaymentType: "Cash",
			DueDate: s.due, ReminderDate: s.remind, PaymentDate: day(0), SubTotal: cents(500), Total: cents(500), AmountPaid: paid}
		if err := sale.Validate(""); err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateSale(ctx, a.ID, store.NewSale{Sale: sale}, nil, render[store.SaleRecord]); err != nil {
			t.Fatal(err)
		}
	}
	// As before sales planned notices: no list on the sales, an empty schedule.
	unplan(t, st)
	if n, err := st.PlanLegacyNotices(ctx); err != nil || n != 2 {
		t.Fatalf("planned %d (%v), want 2: the open sales", n, err)
	}
	due, err := st.DueNotices(ctx, time.Now().UTC().AddDate(0, 0, 4), 10)
	if err != nil || len(due) != 1 || due[0].InvoiceCode != "600000" || due[0].Kind != business.NoticeReminder || due[0].Date != day(3) {
		t.Fatalf("due in 4 days: %+v (%v), want 600000's reminder", due, err)
	}
	if n, err := st.PlanLegacyNotices(ctx); err != nil || n != 0 {
		t.Fatalf("a second run planned %d (%v), want 0", n, err)
	}
}

// unplan takes every sale's scheduled list away and empties the schedule.
func unplan(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	out, err := st.Client().Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(st.Table())})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range out.Items {
		k := map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}
		pk := it["PK"].(*types.AttributeValueMemberS).Value
		switch {
		case len(pk) > 7 && pk[:7] == "NOTICE#":
			_, err = st.Client().DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(st.Table()), Key: k})
		case it["SK"].(*types.AttributeValueMemberS).Value == "SALE":
			_, err = st.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(st.Table()), Key: k,
				UpdateExpression: aws.String("REMOVE v.scheduled")})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
