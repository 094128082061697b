package store_test

import (
	"context"
	"strings"
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

// TestLinkCountsAnUncountedSale: a link is a rewrite of the sale, which
// marks it counted; a sale written before reports and receivables were
// kept (no marks, no figures) brings its count, total and debt in with its
// first link, as any edit of it does, instead of being marked counted
// without them.
func TestLinkCountsAnUncountedSale(t *testing.T) {
	st, _ := testdb.NewStore(t)
	st.SetDebtsSettle(0)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "LINKCOUNT")
	if _, err := st.CreateCustomer(ctx, a.ID, business.Customer{Name: "Ama"}, nil, render[business.Customer]); err != nil {
		t.Fatal(err)
	}
	day := time.Now().UTC().Format(business.DateFormat)
	sale := business.Sale{InvoiceCode: "700001", InvoiceNumber: "INV-700001", CustomerID: 1, InvoiceType: "main", PaymentType: "None",
		DueDate: day, SubTotal: money.MustAmount("40.00"), Total: money.MustAmount("40.00"), AmountPaid: money.Zero}
	if err := sale.Validate(""); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateSale(ctx, a.ID, store.NewSale{Sale: sale}, nil, render[store.SaleRecord]); err != nil {
		t.Fatal(err)
	}
	// As a release before reports and receivables left it.
	scan, err := st.Client().Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(st.Table())})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range scan.Items {
		k := map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}
		switch pk := it["PK"].(*types.AttributeValueMemberS).Value; {
		case strings.Contains(pk, "#REPORT"):
			_, err = st.Client().DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(st.Table()), Key: k})
		case it["counted"] != nil:
			_, err = st.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(st.Table()), Key: k,
				UpdateExpression: aws.String("REMOVE counted, owed_counted")})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CreateInvoiceLink(ctx, a.ID, "700001"); err != nil {
		t.Fatal(err)
	}
	days, _, err := st.ReportDays(ctx, a.ID, day, day)
	if err != nil {
		t.Fatal(err)
	}
	if f := days[day]; f.SalesCount != 1 || f.Invoiced != 4000 {
		t.Fatalf("the day's figures after the link %+v, want the sale counted once, 40.00", f)
	}
	r, _, err := st.Receivables(ctx, a.ID, day)
	if err != nil || r.Outstanding != 4000 {
		t.Fatalf("receivables after the link: %+v (%v), want 40.00 owed", r, err)
	}
}
