package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
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

// sameInventory fails unless the inventory kept as the books change
// (Store.Inventory) is what valuing every item reads today: the same values
// to the cent, counts, items count and alert list, in order.
func sameInventory(t *testing.T, st *store.Store, account, when string) business.StockReport {
	t.Helper()
	ctx := context.Background()
	items, _, err := st.AllItems(ctx, account)
	if err != nil {
		t.Fatal(err)
	}
	want := business.ReportStock(items)
	got, count, _, err := st.Inventory(ctx, account)
	if err != nil {
		t.Fatalf("%s: inventory: %v", when, err)
	}
	alerts := func(r business.StockReport) string {
		var b strings.Builder
		for _, it := range r.Alerts {
			fmt.Fprintf(&b, "%s:%s:%s:%s ", it.ItemCode, it.ItemName, it.Quantity, it.MinimumQtyAlert)
		}
		return b.String()
	}
	if got.StockValue != want.StockValue || got.RetailValue != want.RetailValue || got.InStock != want.InStock ||
		got.LowStock != want.LowStock || got.OutOfStock != want.OutOfStock || got.AlertsTruncated != want.AlertsTruncated || count != len(items) {
		t.Fatalf("%s: kept %s / %s, %d in, %d low, %d out, truncated %v, %d items; recounted %s / %s, %d in, %d low, %d out, truncated %v, %d items",
			when, got.StockValue, got.RetailValue, got.InStock, got.LowStock, got.OutOfStock, got.AlertsTruncated, count,
			want.StockValue, want.RetailValue, want.InStock, want.LowStock, want.OutOfStock, want.AlertsTruncated, len(items))
	}
	if a, b := alerts(got), alerts(want); a != b {
		t.Fatalf("%s: alerts kept %s\nrecounted %s", when, a, b)
	}
	// With nothing waiting, it reads the account, the STOCK item and at
	// most 101 alerts, whatever the number of items.
	if _, _, read, err := st.Inventory(ctx, account); err != nil || read > 2+business.MaxStockAlerts+1 {
		t.Fatalf("%s: the report read %d items (%v)", when, read, err)
	}
	return got
}

// TestInventoryKeptCurrent: random item creates, edits (cost, price, alert
// level, a count), adjustments, sales of stocked lines, their edits, refunds
// that return goods and voids, with nothing applying figures between them
// but the report itself: the inventory report kept as the books change is
// at every check what valuing every item gives, to the cent, with the same
// alerts in the same order; past 100 alerts the list stops at 100 and says
// so.
func TestInventoryKeptCurrent(t *testing.T) {
	f := newFixture(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 39))
	cat, err := f.category("Goods")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.CreateCustomer(f.ctx, f.acct, business.Customer{Name: "Ama"}, nil, render[business.Customer]); err != nil {
		t.Fatal(err)
	}
	if r, n, _, err := f.st.Inventory(f.ctx, f.acct); err != nil || n != 0 || r.StockValue != "0.00" || r.RetailValue != "0.00" || len(r.Alerts) != 0 {
		t.Fatalf("an empty inventory: %+v %d %v", r, n, err)
	}
	amount := func() money.Amount {
		return money.MustAmount(fmt.Sprintf("%d.%02d", rng.IntN(50), rng.IntN(100)))
	}
	qty := func(max int) money.Quantity {
		if max <= 0 {
			return money.Quantity{}
		}
		if rng.IntN(3) == 0 { // a fraction of a unit, to the thousandth
			return money.MustQuantity(fmt.Sprintf("%d.%03d", rng.IntN(max), rng.IntN(1000)))
		}
		return money.MustQuantity(fmt.Sprint(rng.IntN(max + 1)))
	}
	var codes []string
	newItem := func(i int) {
		t.Helper()
		x := business.Item{ItemCode: fmt.Sprintf("IT-%03d", i), ItemName: fmt.Sprintf("Item %d", i), CategoryID: cat.ID,
			UnitCost: amount(), ItemPrice: amount(), Quantity: qty(20), MinimumQtyAlert: qty(6)}
		if _, err := f.st.CreateItem(f.ctx, f.acct, store.NewItem{Item: x}, nil, render[business.Item]); err != nil {
			t.Fatal(err)
		}
		codes = append(codes, x.ItemCode)
	}
	item := func(code string) business.Item {
		t.Helper()
		x, err := f.st.FindItemByCode(f.ctx, f.acct, code)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	type saleState struct {
		code  string
		paid  bool
		lines []business.SaleLine
	}
	var sales []*saleState
	// lines picks up to three distinct items with stock and takes part of it.
	lines := func() []business.SaleLine {
		var out []business.SaleLine
		seen := map[string]bool{}
		for range 1 + rng.IntN(3) {
			code := codes[rng.IntN(len(codes))]
			x := item(code)
			if seen[code] || x.Quantity.Cmp(money.MustQuantity("1")) < 0 {
				continue
			}
			seen[code] = true
			have, _ := money.ParseQuantity(x.Quantity.String())
			q := money.MustQuantity(fmt.Sprint(1 + rng.IntN(3)))
			if q.Cmp(have) > 0 {
				q = money.MustQuantity("1")
			}
			out = append(out, business.SaleLine{ItemCode: code, ItemName: x.ItemName, UnitPrice: x.ItemPrice, Quantity: q})
		}
		return out
	}
	totals := func(s *business.Sale) {
		sum := money.Zero
		for _, l := range s.Lines {
			sum = sum.Add(money.LineTotal(l.UnitPrice, l.Quantity))
		}
		s.SubTotal, s.Total = sum, sum
	}
	for i := range 12 {
		newItem(i)
	}
	sameInventory(t, f.st, f.acct, "after the first items")
	ops := map[string]int{}
	for step := 1; step <= 120; step++ {
		var op string
		switch k := rng.IntN(9); {
		case k == 0:
			op = "create"
			newItem(len(codes))
		case k == 1:
			op = "edit"
			code := codes[rng.IntN(len(codes))]
			_, err = f.st.UpdateItem(f.ctx, f.acct, code, func(x *business.Item) error {
				switch rng.IntN(4) {
				case 0:
					x.UnitCost = amount()
				case 1:
					x.ItemPrice = amount()
				case 2:
					x.MinimumQtyAlert = qty(8)
				default:
					x.Quantity = qty(15)
				}
				return nil
			})
		case k == 2:
			op = "adjust"
			x := item(codes[rng.IntN(len(codes))])
			d := money.Delta(qty(6))
			if rng.IntN(2) == 0 {
				if _, ok := x.Quantity.Less(d); !ok {
					d = x.Quantity.Delta()
				}
				d = d.Neg()
			}
			if !d.IsZero() {
				_, err = f.st.AdjustStock(f.ctx, f.acct, x.ItemCode, d, "count", "", nil, render[store.ItemMove])
			}
		case k <= 4:
			op = "sale"
			ls := lines()
			if len(ls) == 0 {
				continue
			}
			paid := rng.IntN(2) == 0
			s := business.Sale{InvoiceCode: fmt.Sprint(100000 + step), InvoiceNumber: fmt.Sprintf("INV-%d", step), CustomerID: 1,
				InvoiceType: "pos", PaymentType: "Cash", DueDate: "2026-12-31", Lines: ls}
			totals(&s)
			if paid {
				s.AmountPaid = s.Total
			}
			if err := s.Validate(""); err != nil {
				t.Fatal(err)
			}
			_, err = f.st.CreateSale(f.ctx, f.acct, store.NewSale{Sale: s}, nil, render[store.SaleRecord])
			sales = append(sales, &saleState{code: s.InvoiceCode, paid: paid, lines: ls})
		case k == 5 || k == 6:
			op = "sale edit"
			var open []*saleState
			for _, s := range sales {
				if !s.paid {
					open = append(open, s)
				}
			}
			if len(open) == 0 {
				continue
			}
			s := open[rng.IntN(len(open))]
			_, err = f.st.UpdateSale(f.ctx, f.acct, s.code, func(_ store.SaleRecord, next *business.Sale) error {
				next.Lines = append([]business.SaleLine(nil), next.Lines...)
				l := &next.Lines[rng.IntN(len(next.Lines))]
				if rng.IntN(2) == 0 || l.Quantity.Cmp(money.MustQuantity("1")) == 0 {
					l.Quantity = l.Quantity.Add(money.MustQuantity("1"))
				} else {
					l.Quantity = money.MustQuantity("1")
				}
				if x := item(l.ItemCode); l.Quantity.Cmp(x.Quantity) > 0 {
					l.Quantity = money.MustQuantity("1") // more than is in stock: give back instead
				}
				totals(next)
				return nil
			})
		case k == 7:
			op = "refund"
			var paid []*saleState
			for _, s := range sales {
				if s.paid {
					paid = append(paid, s)
				}
			}
			if len(paid) == 0 {
				continue
			}
			s := paid[rng.IntN(len(paid))]
			rec, err := f.st.FindSaleByCode(f.ctx, f.acct, s.code)
			if err != nil {
				t.Fatal(err)
			}
			at := rng.IntN(len(rec.Sale.Lines))
			l := rec.Sale.Lines[at]
			left, _ := l.Quantity.Sub(l.Returned)
			if left.IsZero() || rec.Sale.Held().Cmp(money.MustAmount("0.01")) < 0 {
				continue
			}
			_, err = f.st.RefundSale(f.ctx, f.acct, s.code, store.NewRefund{Amount: money.MustAmount("0.01"), Reason: "returned",
				Lines: []business.RefundLine{{LineID: at + 1, Quantity: left}}}, nil, render[store.SaleRecord])
			if err != nil {
				t.Fatalf("step %d, refund: %v", step, err)
			}
		default:
			op = "void"
			for i, s := range sales {
				if !s.paid {
					_, err = f.st.VoidSale(f.ctx, f.acct, s.code, "mistake", nil, render[store.SaleRecord])
					sales = append(sales[:i], sales[i+1:]...)
					break
				}
			}
		}
		if err != nil {
			t.Fatalf("step %d, %s: %v", step, op, err)
		}
		ops[op]++
		if step%20 == 0 {
			sameInventory(t, f.st, f.acct, fmt.Sprintf("step %d", step))
		}
	}
	t.Logf("operations: %v", ops)
	// Past 100 alerts: the list stops at 100 and says it was cut.
	for i := range business.MaxStockAlerts + 5 {
		x := business.Item{ItemCode: fmt.Sprintf("OUT-%03d", i), ItemName: fmt.Sprintf("Out %d", i), CategoryID: cat.ID,
			UnitCost: amount(), ItemPrice: amount(), MinimumQtyAlert: qty(3)}
		if _, err := f.st.CreateItem(f.ctx, f.acct, store.NewItem{Item: x}, nil, render[business.Item]); err != nil {
			t.Fatal(err)
		}
	}
	if r := sameInventory(t, f.st, f.acct, "past 100 alerts"); !r.AlertsTruncated || len(r.Alerts) != business.MaxStockAlerts {
		t.Fatalf("past 100 alerts: %d listed, truncated %v", len(r.Alerts), r.AlertsTruncated)
	}
}

// TestInventoryFiguresAppliedOnce: the same figures items applied by two
// appliers at once and again afterwards (a stream's redelivery) move the
// inventory's worth once; an item edit that moves no money (its price and
// alert level) still counts, in its own figures item.
func TestInventoryFiguresAppliedOnce(t *testing.T) {
	f := newFixture(t)
	cat, err := f.category("Goods")
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range []string{"10", "2.5", "0"} {
		x := business.Item{ItemCode: fmt.Sprintf("IT-%d", i), ItemName: fmt.Sprintf("Item %d", i), CategoryID: cat.ID,
			UnitCost: money.MustAmount("1.25"), ItemPrice: money.MustAmount("2.10"), Quantity: money.MustQuantity(q), MinimumQtyAlert: money.MustQuantity("3")}
		if _, err := f.st.CreateItem(f.ctx, f.acct, store.NewItem{Item: x}, nil, render[business.Item]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.st.UpdateItem(f.ctx, f.acct, "IT-0", func(x *business.Item) error {
		x.ItemPrice, x.MinimumQtyAlert = money.MustAmount("3.33"), money.MustQuantity("10")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	waiting, err := f.st.WaitingFigures(f.ctx, f.acct)
	if err != nil || len(waiting) != 4 {
		t.Fatalf("%d figures items waiting (%v), want one per change: 4", len(waiting), err)
	}
	var wg sync.WaitGroup
	applied := make([]int, 2)
	for i := range applied {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := f.st.ApplyFigures(f.ctx, f.acct, waiting)
			if err != nil {
				t.Error(err)
			}
			applied[i] = n
		}()
	}
	wg.Wait()
	if n, err := f.st.ApplyFigures(f.ctx, f.acct, waiting); err != nil || n != 0 || applied[0]+applied[1] != 4 {
		t.Fatalf("applied %v, then %d (%v): want 4 between the first two, then none", applied, n, err)
	}
	r := sameInventory(t, f.st, f.acct, "applied twice")
	// 12.5 + 3.125 at cost; 33.30 + 5.25 at retail.
	if r.StockValue != "15.63" || r.RetailValue != "38.55" || r.InStock != 0 || r.LowStock != 2 || r.OutOfStock != 1 {
		t.Fatalf("inventory %+v", r)
	}
}

// TestInventoryLegacyItems: items written before the inventory's worth was
// kept (no mark, no alert keys, nothing counted) count as nothing until
// their next change, which counts them whole, or `admin migrate`
// (CountLegacyItems), which counts the rest once, one of them without a
// view; one adjusted while the migration counts it (between the
// adjustment's read and its write) is counted once. A second run counts
// nothing.
func TestInventoryLegacyItems(t *testing.T) {
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
	a, _ := testdb.NewAccount(t, st, "Shop", "LEGACYINV")
	f := &fixture{t: t, st: st, acct: a.ID, ctx: ctx}
	cat, err := f.category("Goods")
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range []string{"10", "2", "0", "7.125", "1"} {
		x := business.Item{ItemCode: fmt.Sprintf("OLD-%d", i), ItemName: fmt.Sprintf("Old %d", i), CategoryID: cat.ID,
			UnitCost: money.MustAmount("0.07"), ItemPrice: money.MustAmount("1.99"), Quantity: money.MustQuantity(q), MinimumQtyAlert: money.MustQuantity("2")}
		if _, err := st.CreateItem(ctx, a.ID, store.NewItem{Item: x}, nil, render[business.Item]); err != nil {
			t.Fatal(err)
		}
	}
	// As a release before the kept worth left them: no mark, no alert
	// keys, nothing in the report partition; OLD-4 also without its view.
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
		case it["worth_counted"] != nil:
			_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: k, UpdateExpression: aws.String("REMOVE worth_counted, GSI9PK, GSI9SK")})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	old4 := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A#" + a.ID + "#ITEM#OLD-4"}, "SK": &types.AttributeValueMemberS{Value: "ITEM"}}
	got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: old4})
	if err != nil {
		t.Fatal(err)
	}
	flat := got.Item
	for name, val := range flat["v"].(*types.AttributeValueMemberM).Value {
		flat[name] = val
	}
	delete(flat, "v")
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: flat}); err != nil {
		t.Fatal(err)
	}
	if r, n, _, err := st.Inventory(ctx, a.ID); err != nil || n != 0 || r.StockValue != "0.00" || len(r.Alerts) != 0 {
		t.Fatalf("legacy items counted before they changed: %+v %d %v", r, n, err)
	}
	// OLD-0's edit counts it whole (its price changes; 0 before it).
	if _, err := st.UpdateItem(ctx, a.ID, "OLD-0", func(x *business.Item) error { x.ItemPrice = money.MustAmount("2.49"); return nil }); err != nil {
		t.Fatal(err)
	}
	// OLD-1 is adjusted while the migration counts it: the adjustment read it
	// unmarked, so its write is refused and made again on the item as
	// marked.
	migrated := make(chan int, 1)
	mig := func() {
		n, err := migrator.CountLegacyItems(ctx)
		if err != nil {
			t.Error(err)
		}
		migrated <- n
	}
	hook.Store(&mig)
	if _, err := st.AdjustStock(ctx, a.ID, "OLD-1", mustDelta(t, "-1.5"), "damaged", "", nil, render[store.ItemMove]); err != nil {
		t.Fatal(err)
	}
	if n := <-migrated; n != 4 {
		t.Fatalf("the migration counted %d items, want the 4 unchanged ones", n)
	}
	for run := range 2 {
		if n, err := migrator.CountLegacyItems(ctx); err != nil || n != 0 {
			t.Fatalf("run %d: counted %d again (%v)", run+2, n, err)
		}
	}
	r := sameInventory(t, st, a.ID, "after the migration")
	if r.InStock != 2 || r.LowStock != 2 || r.OutOfStock != 1 || len(r.Alerts) != 3 || r.Alerts[0].ItemCode != "OLD-2" || r.Alerts[1].ItemCode != "OLD-1" {
		t.Fatalf("inventory after the migration %+v", r)
	}
}
