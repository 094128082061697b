package store_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Records written before views (their fields at the top level, so the list
// indexes carry only their keys) are listed whole, read, edited and moved in
// stock as before, and `admin migrate`'s PackLegacyRecords gives each its
// view, after which a list is its one Query again.
func TestRecordsWrittenBeforeViews(t *testing.T) {
	var reqs testdb.Requests
	st, _ := testdb.NewStore(t, reqs.Option())
	a, _ := testdb.NewAccount(t, st, "Old Shop", "OLD1")
	ctx := context.Background()
	must := func(_ []byte, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.CreateCustomer(ctx, a.ID, business.Customer{Name: "Ama"}, nil, render[business.Customer]))
	must(st.CreateCategory(ctx, a.ID, business.Category{Name: "Grains"}, nil, render[business.Category]))
	must(st.CreateItem(ctx, a.ID, store.NewItem{Item: business.Item{ItemCode: "RICE-1", ItemName: "Rice", CategoryID: 1,
		Quantity: money.MustQuantity("10"), ItemPrice: money.MustAmount("5")}}, nil, render[business.Item]))
	must(st.CreateExpense(ctx, a.ID, business.Expense{ExpenseType: "Rent", Amount: money.MustAmount("100"), PaymentMethod: "Cash", CreatedBy: "Ama"}, nil, render[business.Expense]))
	sale := business.Sale{InvoiceCode: "100001", InvoiceNumber: "INV-100001", CustomerID: 1, InvoiceType: "main", PaymentType: "Cash",
		DueDate: "2026-12-31", SubTotal: money.MustAmount("10"), Total: money.MustAmount("10"), AmountPaid: money.MustAmount("4"),
		Lines: []business.SaleLine{{ItemCode: "RICE-1", ItemName: "Rice", UnitPrice: money.MustAmount("5"), Quantity: money.MustQuantity("2")}}}
	if err := sale.Validate(""); err != nil {
		t.Fatal(err)
	}
	must(st.CreateSale(ctx, a.ID, store.NewSale{Sale: sale}, nil, render[store.SaleRecord]))

	// Rewrite each as the first design stored it: no view, fields on top
	// (keys says where each is, for the checks after the migration).
	keys := map[string]string{"customer": "A#" + a.ID + "#CUSTOMER#000000000001", "category": "A#" + a.ID + "#CATEGORY#000000000001",
		"item": "A#" + a.ID + "#ITEM#RICE-1", "expense": "A#" + a.ID + "#EXPENSE#000000000001", "sale": "A#" + a.ID + "#SALE#100001"}
	sks := map[string]string{"customer": "CUSTOMER", "category": "CATEGORY", "item": "ITEM", "expense": "EXPENSE", "sale": "SALE"}
	raw := func(kind string) map[string]types.AttributeValue {
		t.Helper()
		out, err := st.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.Table()), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: keys[kind]}, "SK": &types.AttributeValueMemberS{Value: sks[kind]}}})
		if err != nil || out.Item == nil {
			t.Fatalf("%s: %v", kind, err)
		}
		return out.Item
	}
	if n := testdb.WithoutViews(t, st); n != len(keys) {
		t.Fatalf("rewrote %d records without views, want %d", n, len(keys))
	}

	check := func(when string, wantQuantity, wantPaid string) {
		t.Helper()
		cs, err := st.ListCustomers(ctx, a.ID, store.CustomerFilter{}, 10, "")
		if err != nil || len(cs.Items) != 1 || cs.Items[0].Name != "Ama" || cs.Items[0].ID != 1 {
			t.Fatalf("%s: customers %+v %v", when, cs.Items, err)
		}
		xs, err := st.ListItems(ctx, a.ID, store.ItemFilter{CategoryID: 1}, 10, "")
		if err != nil || len(xs.Items) != 1 || xs.Items[0].ItemCode != "RICE-1" || xs.Items[0].Quantity.String() != wantQuantity {
			t.Fatalf("%s: items %+v %v", when, xs.Items, err)
		}
		es, err := st.ListExpenses(ctx, a.ID, store.ExpenseFilter{}, 10, "")
		if err != nil || len(es.Items) != 1 || es.Items[0].ExpenseType != "Rent" {
			t.Fatalf("%s: expenses %+v %v", when, es.Items, err)
		}
		ss, err := st.ListSales(ctx, a.ID, store.SaleFilter{PaymentStatus: "partial"}, 10, "")
		if last := len(ss.Items) - 1; err != nil || last < 0 || ss.Items[last].AmountPaid.String() != wantPaid || ss.Items[last].CustomerName != "Ama" {
			t.Fatalf("%s: sales %+v %v", when, ss.Items, err)
		}
		cats, err := st.ListCategories(ctx, a.ID, store.CategoryFilter{}, 10, "")
		if err != nil || len(cats.Items) != 1 || cats.Items[0].Name != "Grains" {
			t.Fatalf("%s: categories %+v %v", when, cats.Items, err)
		}
	}
	check("before the migration", "8", "4.00")

	// A payment and a sale that takes stock from the legacy item.
	if _, err := st.UpdateSale(ctx, a.ID, "100001", func(_ store.SaleRecord, next *business.Sale) error {
		next.AmountPaid = money.MustAmount("5")
		return next.Validate("")
	}); err != nil {
		t.Fatal(err)
	}
	second := sale
	second.InvoiceCode, second.InvoiceNumber = "100002", "INV-100002"
	must(st.CreateSale(ctx, a.ID, store.NewSale{Sale: second}, nil, render[store.SaleRecord]))
	if x, err := st.FindItemByCode(ctx, a.ID, "RICE-1"); err != nil || x.Quantity.String() != "6" {
		t.Fatalf("the legacy item after a second sale: %+v %v", x, err)
	}
	if _, ok := raw("item")["v"]; ok {
		t.Fatal("a stock move gave the legacy item a view: the migration's job")
	}

	// The edited sale has its view now; the other four are packed by the
	// migration, and a second run finds nothing.
	for i, want := range []int{4, 0} {
		if n, err := st.PackLegacyRecords(ctx); err != nil || n != want {
			t.Fatalf("run %d: packed %d %v, want %d", i+1, n, err, want)
		}
	}
	for kind := range keys {
		if _, ok := raw(kind)["v"]; !ok {
			t.Fatalf("%s has no view after the migration", kind)
		}
	}
	mark := reqs.Mark()
	check("after the migration", "6", "5.00")
	for _, c := range reqs.Since(mark) {
		if _, ok := c.Input.(*dynamodb.BatchGetItemInput); ok {
			t.Fatal("a list read records from the table after the migration")
		}
	}
}

// A sale's entries in the list indexes carry its view and never its lines:
// an edit that leaves the lines alone (a payment) rewrites entries of a few
// hundred bytes, whatever the sale's size.
func TestIndexEntriesCarryNoLines(t *testing.T) {
	st, _ := testdb.NewStore(t)
	a, _ := testdb.NewAccount(t, st, "Shop", "SHOP1")
	ctx := context.Background()
	if _, err := st.CreateCustomer(ctx, a.ID, business.Customer{Name: "Ama"}, nil, render[business.Customer]); err != nil {
		t.Fatal(err)
	}
	sale := business.Sale{InvoiceCode: "100001", InvoiceNumber: "INV-100001", CustomerID: 1, InvoiceType: "main", PaymentType: "Cash",
		DueDate: "2026-12-31", SubTotal: money.MustAmount("10"), Total: money.MustAmount("10"), AmountPaid: money.MustAmount("4"), PaymentDate: "2026-11-01",
		Lines: []business.SaleLine{{ItemName: "Rice", Description: "long grain", UnitPrice: money.MustAmount("5"), Quantity: money.MustQuantity("2")}}}
	if err := sale.Validate(""); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateSale(ctx, a.ID, store.NewSale{Sale: sale}, nil, render[store.SaleRecord]); err != nil {
		t.Fatal(err)
	}
	out, err := st.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.Table()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A#" + a.ID + "#SALE#100001"}, "SK": &types.AttributeValueMemberS{Value: "SALE"}}})
	if err != nil || out.Item["lines"] == nil {
		t.Fatalf("the sale item has no lines: %v", err)
	}
	listed := 0
	for _, ix := range store.Indexes {
		pk, ok := out.Item[ix.PK]
		if !ok {
			continue
		}
		q, err := st.Client().Query(ctx, &dynamodb.QueryInput{TableName: aws.String(st.Table()), IndexName: aws.String(ix.Name),
			KeyConditionExpression:    aws.String("#pk = :pk AND #sk = :sk"),
			ExpressionAttributeNames:  map[string]string{"#pk": ix.PK, "#sk": ix.SK},
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": pk, ":sk": out.Item[ix.SK]}})
		if err != nil || len(q.Items) != 1 {
			t.Fatalf("%s: %d entries %v", ix.Name, len(q.Items), err)
		}
		if _, ok := q.Items[0]["lines"]; ok {
			t.Errorf("%s's entry carries the sale's lines", ix.Name)
		}
		if _, ok := q.Items[0]["v"]; !ok {
			t.Errorf("%s's entry carries no view", ix.Name)
		}
		listed++
	}
	if listed != 8 {
		t.Fatalf("the sale is in %d indexes, want 8 (one per way of listing sales)", listed)
	}
}

// A sale read a stocked item in the shape written before views, and the item
// got its view (an edit, the migration) before the sale's transaction: the
// sale is made again on the item as it is, not refused as short of stock.
func TestStockMoveAfterTheItemGotItsView(t *testing.T) {
	var (
		st    *store.Store
		armed atomic.Bool
	)
	packFirst := func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("PackFirst",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					if middleware.GetOperationName(ctx) == "TransactWriteItems" && armed.CompareAndSwap(true, false) {
						if n, err := st.PackLegacyRecords(ctx); err != nil || n == 0 {
							return middleware.InitializeOutput{}, middleware.Metadata{}, fmt.Errorf("pack: %d %v", n, err)
						}
					}
					return next.HandleInitialize(ctx, in)
				}), middleware.After)
		})
	}
	st, _ = testdb.NewStore(t, packFirst)
	a, _ := testdb.NewAccount(t, st, "Shop", "SHOP1")
	ctx := context.Background()
	if _, err := st.CreateCustomer(ctx, a.ID, business.Customer{Name: "Ama"}, nil, render[business.Customer]); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateCategory(ctx, a.ID, business.Category{Name: "Grains"}, nil, render[business.Category]); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateItem(ctx, a.ID, store.NewItem{Item: business.Item{ItemCode: "RICE-1", ItemName: "Rice", CategoryID: 1,
		Quantity: money.MustQuantity("10"), ItemPrice: money.MustAmount("5")}}, nil, render[business.Item]); err != nil {
		t.Fatal(err)
	}
	// The records as the first design stored them, the item among them.
	if n := testdb.WithoutViews(t, st); n != 3 {
		t.Fatalf("rewrote %d records without views, want 3", n)
	}
	sale := business.Sale{InvoiceCode: "100001", InvoiceNumber: "INV-100001", CustomerID: 1, InvoiceType: "main", PaymentType: "Cash",
		DueDate: "2026-12-31", SubTotal: money.MustAmount("10"), Total: money.MustAmount("10"),
		Lines: []business.SaleLine{{ItemCode: "RICE-1", ItemName: "Rice", UnitPrice: money.MustAmount("5"), Quantity: money.MustQuantity("2")}}}
	if err := sale.Validate(""); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	if _, err := st.CreateSale(ctx, a.ID, store.NewSale{Sale: sale}, nil, render[store.SaleRecord]); err != nil {
		t.Fatalf("the sale: %v", err)
	}
	if armed.Load() {
		t.Fatal("the item was not packed between the sale's read and its write: the test proves nothing")
	}
	if x, err := st.FindItemByCode(ctx, a.ID, "RICE-1"); err != nil || x.Quantity.String() != "8" {
		t.Fatalf("stock %+v %v, want 8", x.Quantity, err)
	}
}

// A table that lacks an index of the design (the devserver keeps its table
// in .data/ across upgrades) gets it from EnsureTable, filled from the items
// it holds, and lists read it. EnsureTable's wait is bounded, so an index
// that never becomes active fails the test, naming the index, instead of
// running out the package's time.
func TestEnsureTableAddsTheIndexesATableLacks(t *testing.T) {
	cfg := testdb.Config(t)
	ctx := context.Background()
	st, err := app.NewStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	def := store.TableDefinition(cfg.TableName)
	def.GlobalSecondaryIndexes = def.GlobalSecondaryIndexes[1:] // without IndexCreated
	var attrs []types.AttributeDefinition
	for _, a := range def.AttributeDefinitions {
		if n := aws.ToString(a.AttributeName); n != store.IndexCreated.PK && n != store.IndexCreated.SK {
			attrs = append(attrs, a)
		}
	}
	def.AttributeDefinitions = attrs
	if _, err := st.Client().CreateTable(ctx, def); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = st.Client().DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(cfg.TableName)})
	})
	a, _ := testdb.NewAccount(t, st, "Shop", "SHOP1")
	if _, err := st.CreateCustomer(ctx, a.ID, business.Customer{Name: "Ama"}, nil, render[business.Customer]); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ListCustomers(ctx, a.ID, store.CustomerFilter{}, 10, ""); err == nil {
		t.Fatal("a list read an index the table does not have")
	}
	wait, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := st.EnsureTable(wait); err != nil {
		t.Fatalf("EnsureTable on a table without %s: %v", store.IndexCreated.Name, err)
	}
	out, err := st.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(st.Table())})
	if err != nil || len(out.Table.GlobalSecondaryIndexes) != len(store.Indexes) {
		t.Fatalf("indexes after EnsureTable: %d %v, want %d", len(out.Table.GlobalSecondaryIndexes), err, len(store.Indexes))
	}
	page, err := st.ListCustomers(ctx, a.ID, store.CustomerFilter{}, 10, "")
	if err != nil || len(page.Items) != 1 || page.Items[0].Name != "Ama" {
		t.Fatalf("customers %+v %v", page.Items, err)
	}
}
