package store_test

import (
	"context"
	"fmt"
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

// longSale stores a sale of 1000.00 with n payments of 1.00, each carrying
// the longest internal note the API accepts (2000 characters of 3 bytes
// each), so that the sale's partition is far over the 1 MB one Query page
// holds. The first payment is made by CreateSale; the others are written
// directly (through UpdateSale that would take minutes), and the sale's
// amount_paid and payment count are set to match them.
func longSale(t *testing.T, st *store.Store, account, code string, n int) string {
	t.Helper()
	ctx := context.Background()
	note := strings.Repeat("€", 2000)
	if _, err := st.CreateCustomer(ctx, account, business.Customer{Name: "Ama"}, nil, render[business.Customer]); err != nil {
		t.Fatal(err)
	}
	sale := business.Sale{InvoiceCode: code, InvoiceNumber: "INV-" + code, CustomerID: 1, InvoiceType: "main", PaymentType: "Cash",
		DueDate: "2026-12-31", SubTotal: money.MustAmount("1000"), Total: money.MustAmount("1000"), AmountPaid: money.MustAmount("1"),
		PaymentInternalNote: note}
	if err := sale.Validate(""); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateSale(ctx, account, store.NewSale{Sale: sale}, nil, render[store.SaleRecord]); err != nil {
		t.Fatal(err)
	}
	first, err := st.FindSaleByCode(ctx, account, code)
	if err != nil || len(first.Payments) != 1 {
		t.Fatalf("the new sale: %+v %v", first, err)
	}
	var pk types.AttributeValue
	var batch []types.WriteRequest
	flush := func() {
		pending := map[string][]types.WriteRequest{st.Table(): batch}
		for len(pending) > 0 {
			out, err := st.Client().BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				t.Fatal(err)
			}
			pending = out.UnprocessedItems
		}
		batch = batch[:0]
	}
	for seq := 2; seq <= n; seq++ {
		p := first.Payments[0]
		p.Seq, p.TransactionID, p.PaymentAt = seq, business.NewTransactionID(), p.PaymentAt.Add(time.Duration(seq)*time.Second)
		it := store.PaymentItem(account, p)
		pk = it["PK"]
		batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		if len(batch) == 25 {
			flush()
		}
	}
	if len(batch) > 0 {
		flush()
	}
	_, err = st.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(st.Table()),
		Key:              map[string]types.AttributeValue{"PK": pk, "SK": &types.AttributeValueMemberS{Value: "SALE"}},
		UpdateExpression: aws.String("SET v.amount_paid = :paid, v.payments = :n, version = version + :one"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":paid": &types.AttributeValueMemberN{Value: fmt.Sprintf("%d.00", n)},
			":n":    &types.AttributeValueMemberN{Value: fmt.Sprint(n)},
			":one":  &types.AttributeValueMemberN{Value: "1"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return note
}

// wantPayments fails unless rec is the sale with n payments of 1.00, in
// order, each with note.
func wantPayments(t *testing.T, rec store.SaleRecord, n int, note string) {
	t.Helper()
	if rec.Sale.Payments != n || rec.Sale.AmountPaid.String() != fmt.Sprintf("%d.00", n) || len(rec.Payments) != n {
		t.Fatalf("sale with %d payments, amount_paid %s; %d payment records, want %d", rec.Sale.Payments, rec.Sale.AmountPaid, len(rec.Payments), n)
	}
	for i, p := range rec.Payments {
		if p.Seq != i+1 || p.Amount.String() != "1.00" || p.InternalNote != note {
			t.Fatalf("payment %d: seq %d, amount %s, note of %d characters", i+1, p.Seq, p.Amount, len([]rune(p.InternalNote)))
		}
	}
}

// A sale whose payments fill more than one Query page (1 MB) is found with
// every payment, oldest first, by FindSaleByCode and by UpdateSale's
// consistent read, and UpdateSale adds the next payment to it. A sale with
// few payments still costs one Query.
func TestSaleWithMoreThanOnePageOfPayments(t *testing.T) {
	var reqs testdb.Requests
	st, _ := testdb.NewStore(t, reqs.Option())
	a, _ := testdb.NewAccount(t, st, "Shop", "SHOP1")
	ctx := context.Background()
	const n = 500
	note := longSale(t, st, a.ID, "500500", n)

	queries := func(mark int) (all, consistent int) {
		for _, c := range reqs.Since(mark) {
			if in, ok := c.Input.(*dynamodb.QueryInput); ok {
				all++
				if aws.ToBool(in.ConsistentRead) {
					consistent++
				}
			}
		}
		return all, consistent
	}

	mark := reqs.Mark()
	rec, err := st.FindSaleByCode(ctx, a.ID, "500500")
	if err != nil {
		t.Fatalf("FindSaleByCode: %v", err)
	}
	wantPayments(t, rec, n, note)
	if q, _ := queries(mark); q < 2 {
		t.Fatalf("the sale was read with %d Query; the fixture must be larger than one page", q)
	}

	mark = reqs.Mark()
	rec, err = st.UpdateSale(ctx, a.ID, "500500", func(cur store.SaleRecord, next *business.Sale) error {
		wantPayments(t, cur, n, note)
		next.AmountPaid = money.MustAmount(fmt.Sprint(n + 1))
		return next.Validate("")
	})
	if err != nil {
		t.Fatalf("UpdateSale: %v", err)
	}
	if q, c := queries(mark); q != c {
		t.Fatalf("UpdateSale read the sale with %d Query, %d of them consistent", q, c)
	}
	wantPayments(t, rec, n+1, note)
	rec, err = st.FindSaleByCode(ctx, a.ID, "500500")
	if err != nil {
		t.Fatalf("FindSaleByCode after UpdateSale: %v", err)
	}
	wantPayments(t, rec, n+1, note)

	// The common case: a sale and its payment in one Query.
	small := business.Sale{InvoiceCode: "100001", InvoiceNumber: "INV-100001", CustomerID: 1, InvoiceType: "pos", PaymentType: "Cash",
		DueDate: "2026-12-31", SubTotal: money.MustAmount("10"), Total: money.MustAmount("10"), AmountPaid: money.MustAmount("1")}
	if err := small.Validate(""); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateSale(ctx, a.ID, store.NewSale{Sale: small}, nil, render[store.SaleRecord]); err != nil {
		t.Fatal(err)
	}
	mark = reqs.Mark()
	if rec, err := st.FindSaleByCode(ctx, a.ID, "100001"); err != nil || len(rec.Payments) != 1 {
		t.Fatalf("small sale: %+v %v", rec, err)
	}
	if calls := reqs.Since(mark); len(calls) != 1 {
		t.Fatalf("a sale with one payment took %d DynamoDB calls, want 1", len(calls))
	}
}
