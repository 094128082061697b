package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// delayTx holds the n-th TransactWriteItems call (counting down n) for d
// before sending it: a transaction that commits late.
func delayTx(n *atomic.Int64, d time.Duration) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("DelayTx",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					if middleware.GetOperationName(ctx) == "TransactWriteItems" && n.Add(-1) == 0 {
						time.Sleep(d)
					}
					return next.HandleFinalize(ctx, in)
				}), middleware.After)
		})
	}
}

// TestCatchUpMissesNoLateCommit: an event takes its id before its
// transaction commits, so a change that commits late has an id below one
// committed after it. A client that polls with since and keeps the last id
// it read sees both, because catching up stays the settle time behind now
// (found by review: without it the late event was never listed).
func TestCatchUpMissesNoLateCommit(t *testing.T) {
	var n atomic.Int64
	st, _ := testdb.NewStore(t, delayTx(&n, 1500*time.Millisecond))
	st.SetEventSettle(3 * time.Second)
	a, _ := testdb.NewAccount(t, st, "Shop", "LATE1")
	ctx := context.Background()
	last := business.EventIDAt(time.Now().Add(-time.Second))
	n.Store(1)
	done := make(chan error, 1)
	go func() {
		_, err := st.CreateCustomer(ctx, a.ID, business.Customer{Name: "Slow"}, nil, render[business.Customer])
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	if _, err := st.CreateCustomer(ctx, a.ID, business.Customer{Name: "Fast"}, nil, render[business.Customer]); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for deadline := time.Now().Add(6 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		p, err := st.ListEvents(ctx, a.ID, store.EventFilter{After: last}, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range p.Items {
			var ev business.Event
			if err := json.Unmarshal(b, &ev); err != nil {
				t.Fatal(err)
			}
			seen[ev.Resource.ID], last = true, ev.ID
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !seen["1"] || !seen["2"] {
		t.Fatalf("a client catching up from its last id saw customers %v, want 1 and 2", seen)
	}
}

// TestWideSaleFromBeforeTheBoundStillTakesPayments: a sale stored when a
// sale could move more stocked items than it may now (30) still takes a
// payment, an edit that moves no stock; it may not add items.
func TestWideSaleFromBeforeTheBoundStillTakesPayments(t *testing.T) {
	f := newFixture(t)
	if _, err := f.st.CreateCustomer(f.ctx, f.acct, business.Customer{Name: "Ama"}, nil, render[business.Customer]); err != nil {
		t.Fatal(err)
	}
	var lines []business.SaleLine
	for i := range 30 {
		lines = append(lines, business.SaleLine{ItemCode: fmt.Sprintf("IT-%02d", i), ItemName: "Thing", UnitPrice: money.MustAmount("1"), Quantity: money.MustQuantity("1")})
	}
	s := business.Sale{InvoiceCode: "400001", InvoiceNumber: "INV-400001", CustomerID: 1, InvoiceType: "main", PaymentType: "Cash",
		DueDate: "2026-12-31", SubTotal: money.MustAmount("30"), Total: money.MustAmount("30"), AmountPaid: money.MustAmount("0"), Lines: lines}
	if err := s.Validate(""); err != nil {
		t.Fatal(err)
	}
	s.ID, s.Version = 1, 1
	if _, err := f.st.Client().PutItem(f.ctx, &dynamodb.PutItemInput{TableName: aws.String(f.st.Table()), Item: store.SaleItem(f.acct, s)}); err != nil {
		t.Fatal(err)
	}
	rec, err := f.st.UpdateSale(f.ctx, f.acct, "400001", func(cur store.SaleRecord, next *business.Sale) error {
		next.AmountPaid = money.MustAmount("10")
		return next.Validate("")
	})
	wantCode(t, err, "")
	if len(rec.Payments) != 1 {
		t.Fatalf("payments %d, want 1", len(rec.Payments))
	}
	_, err = f.st.UpdateSale(f.ctx, f.acct, "400001", func(cur store.SaleRecord, next *business.Sale) error {
		next.Lines = append(next.Lines, business.SaleLine{ItemCode: "IT-99", ItemName: "More", UnitPrice: money.MustAmount("1"), Quantity: money.MustQuantity("1")})
		next.SubTotal, next.Total = money.MustAmount("31"), money.MustAmount("31")
		return next.Validate("")
	})
	wantCode(t, err, business.EINVALID)
}
