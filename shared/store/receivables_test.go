package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
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
	"github.com/google/go-cmp/cmp"
)

// recount is receivables as the report counted them before they were kept:
// every open sale read from the status index, aged, its debtors named by
// their customers' current names.
func recount(t *testing.T, st *store.Store, account, asOf string) business.Receivables {
	t.Helper()
	ctx := context.Background()
	sales, _, err := st.OpenSales(ctx, account)
	if err != nil {
		t.Fatal(err)
	}
	open := make([]business.OpenSale, len(sales))
	for i, x := range sales {
		open[i] = business.OpenSale{CustomerID: x.CustomerID, CustomerName: x.CustomerName, Total: x.Total, Paid: x.AmountPaid, DueDate: x.DueDate}
	}
	r := business.AgeReceivables(asOf, open)
	ids := make([]int64, len(r.Debtors))
	for i, d := range r.Debtors {
		ids[i] = d.CustomerID
	}
	names, err := st.CustomerNames(ctx, account, ids)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range r.Debtors {
		if n, ok := names[strconv.FormatInt(d.CustomerID, 10)]; ok {
			r.Debtors[i].Name = n
		}
	}
	return r
}

// sameReceivables fails unless the kept receivables on each date are the
// recount's, to the cent.
func sameReceivables(t *testing.T, st *store.Store, account string, dates ...string) {
	t.Helper()
	for _, asOf := range dates {
		got, read, err := st.Receivables(context.Background(), account, asOf)
		if err != nil {
			t.Fatalf("receivables as of %s: %v", asOf, err)
		}
		if d := cmp.Diff(recount(t, st, account, asOf), got); d != "" {
			t.Fatalf("receivables as of %s (-recount +kept):\n%s", asOf, d)
		}
		if read > 400 {
			t.Fatalf("receivables as of %s read %d items", asOf, read)
		}
	}
}

func cents(c int64) money.Amount { return money.MustAmount(fmt.Sprintf("%d.%02d", c/100, c%100)) }

// TestReceivablesKeptLikeARecount: random sales, payments, edits of due
// date, customer and total, refunds, voids and customers renamed, with no
// stream consumer (each report applies what waits): the kept receivables
// equal a recount of the open sales to the cent on dates before, on and
// long after their due dates, around the buckets' edges and the turn of a
// year.
func TestReceivablesKeptLikeARecount(t *testing.T) {
	f := newFixture(t)
	r := rand.New(rand.NewPCG(39, 2))
	const customers = 25 // more than the report names
	for i := range customers {
		if _, err := f.st.CreateCustomer(f.ctx, f.acct, business.Customer{Name: fmt.Sprintf("Customer %d", i+1)}, nil, render[business.Customer]); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	due := func() string { return base.AddDate(0, 0, r.IntN(500)-250).Format(business.DateFormat) }
	var codes []string
	dates := []string{"2024-06-01", "2025-09-01", "2025-12-31", "2026-01-01", "2026-02-15", "2026-04-01", "2026-04-02", "2026-07-30", "2031-01-01"}
	for step := range 160 {
		op := r.IntN(10)
		if len(codes) < 5 {
			op = 0
		}
		code := ""
		if len(codes) > 0 {
			code = codes[r.IntN(len(codes))]
		}
		var err error
		switch op {
		case 0, 1, 2: // a new sale, paid in part or not at all
			total := int64(r.IntN(50000) + 100)
			paid := int64(0)
			if r.IntN(2) == 0 {
				paid = int64(r.IntN(int(total)))
			}
			c := strconv.Itoa(100000 + step)
			s := business.Sale{InvoiceCode: c, InvoiceNumber: "INV-" + c, CustomerID: int64(r.IntN(customers) + 1), InvoiceType: "main", PaymentType: "Cash",
				DueDate: due(), SubTotal: cents(total), Total: cents(total), AmountPaid: cents(paid)}
			if err := s.Validate(""); err != nil {
				t.Fatal(err)
			}
			_, err = f.st.CreateSale(f.ctx, f.acct, store.NewSale{Sale: s}, nil, render[store.SaleRecord])
			codes = append(codes, c)
		case 3, 4: // a payment, some of what is left or all of it
			_, err = f.st.UpdateSale(f.ctx, f.acct, code, func(cur store.SaleRecord, next *business.Sale) error {
				left := next.Total.Cents() - next.AmountPaid.Cents()
				if left <= 0 {
					return nil
				}
				pay := left
				if r.IntN(2) == 0 {
					pay = int64(r.IntN(int(left))) + 1
				}
				next.AmountPaid = cents(next.AmountPaid.Cents() + pay)
				return next.Validate("")
			})
		case 5, 6: // an edit of the due date, the customer or the total
			_, err = f.st.UpdateSale(f.ctx, f.acct, code, func(cur store.SaleRecord, next *business.Sale) error {
				switch r.IntN(3) {
				case 0:
					next.DueDate = due()
				case 1:
					next.CustomerID = int64(r.IntN(customers) + 1)
				default:
					total := next.AmountPaid.Cents() + int64(r.IntN(30000))
					next.Total, next.SubTotal = cents(total), cents(total)
				}
				return next.Validate("")
			})
		case 7: // a refund of some of what was paid
			rec, ferr := f.st.FindSaleByCode(f.ctx, f.acct, code)
			if ferr != nil {
				t.Fatal(ferr)
			}
			if held := rec.Sale.Held().Cents(); held > 0 && !rec.Sale.Void() {
				_, err = f.st.RefundSale(f.ctx, f.acct, code, store.NewRefund{Amount: cents(int64(r.IntN(int(held))) + 1)}, nil, render[store.SaleRecord])
			}
		case 8: // a void, once what was paid is refunded
			rec, ferr := f.st.FindSaleByCode(f.ctx, f.acct, code)
			if ferr != nil {
				t.Fatal(ferr)
			}
			if rec.Sale.Void() {
				break
			}
			if held := rec.Sale.Held(); !held.IsZero() {
				if _, err := f.st.RefundSale(f.ctx, f.acct, code, store.NewRefund{Amount: held}, nil, render[store.SaleRecord]); err != nil {
					t.Fatal(err)
				}
			}
			_, err = f.st.VoidSale(f.ctx, f.acct, code, "wrong till", nil, render[store.SaleRecord])
		case 9: // a customer renamed: the report names them as they are now
			id := int64(r.IntN(customers) + 1)
			_, err = f.st.UpdateCustomer(f.ctx, f.acct, id, func(c *business.Customer) error { c.Name = fmt.Sprintf("Customer %d (step %d)", id, step); return nil })
		}
		if err != nil && business.ErrorCode(err) != business.ECONFLICT { // a void sale refuses changes
			t.Fatalf("step %d (op %d on %s): %v", step, op, code, err)
		}
		if step%20 == 19 {
			sameReceivables(t, f.st, f.acct, dates...)
		}
	}
	sameReceivables(t, f.st, f.acct, dates...)
	if left, err := f.st.WaitingFigures(f.ctx, f.acct); err != nil || len(left) != 0 {
		t.Fatalf("%d figures items still wait (%v)", len(left), err)
	}
}

// TestReceivablesAppliedOnce: the figures items of many sales of a few
// customers, applied by two appliers at once in opposite orders (their
// writes of one customer's debt race: the loser reads it again), then once
// more: each sale is counted once.
func TestReceivablesAppliedOnce(t *testing.T) {
	f := newFixture(t)
	for i := range 3 {
		if _, err := f.st.CreateCustomer(f.ctx, f.acct, business.Customer{Name: fmt.Sprintf("Customer %d", i+1)}, nil, render[business.Customer]); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 40 {
		c := strconv.Itoa(200000 + i)
		total := cents(int64(1000 + i*37))
		s := business.Sale{InvoiceCode: c, InvoiceNumber: "INV-" + c, CustomerID: int64(i%3 + 1), InvoiceType: "main", PaymentType: "Cash",
			DueDate: time.Date(2026, 1, 1+i*5, 0, 0, 0, 0, time.UTC).Format(business.DateFormat), SubTotal: total, Total: total, AmountPaid: cents(int64(i))}
		if err := s.Validate(""); err != nil {
			t.Fatal(err)
		}
		if _, err := f.st.CreateSale(f.ctx, f.acct, store.NewSale{Sale: s}, nil, render[store.SaleRecord]); err != nil {
			t.Fatal(err)
		}
	}
	items, err := f.st.WaitingFigures(f.ctx, f.acct)
	if err != nil || len(items) != 40 {
		t.Fatalf("%d figures items wait (%v), want the 40 sales'", len(items), err)
	}
	applied := make(chan int, 2)
	errs := make(chan error, 2)
	for g := range 2 {
		go func() {
			order := slices.Clone(items)
			if g == 1 {
				slices.Reverse(order)
			}
			n, err := f.st.ApplyFigures(f.ctx, f.acct, order)
			applied <- n
			errs <- err
		}()
	}
	total := 0
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		total += <-applied
	}
	if total != 40 {
		t.Fatalf("%d figures items applied between the appliers, want each of the 40 once", total)
	}
	if n, err := f.st.ApplyFigures(f.ctx, f.acct, items); err != nil || n != 0 {
		t.Fatalf("applied again: %d %v", n, err)
	}
	sameReceivables(t, f.st, f.acct, "2025-12-01", "2026-03-01", "2026-05-15", "2027-01-01")
}

// TestLegacySalesCountedOnce: sales written before receivables were kept
// count for nothing until counted: one edited counts whole with its edit,
// admin migrate counts the rest (and nothing on a second run), and the
// kept receivables equal a recount.
func TestLegacySalesCountedOnce(t *testing.T) {
	f := newFixture(t)
	if _, err := f.st.CreateCustomer(f.ctx, f.acct, business.Customer{Name: "Ama"}, nil, render[business.Customer]); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		c := strconv.Itoa(300000 + i)
		total := cents(int64(5000 + i*100))
		s := business.Sale{InvoiceCode: c, InvoiceNumber: "INV-" + c, CustomerID: 1, InvoiceType: "main", PaymentType: "Cash",
			DueDate: fmt.Sprintf("2026-0%d-15", i+1), SubTotal: total, Total: total, AmountPaid: cents(int64(i * 100))}
		if err := s.Validate(""); err != nil {
			t.Fatal(err)
		}
		if _, err := f.st.CreateSale(f.ctx, f.acct, store.NewSale{Sale: s}, nil, render[store.SaleRecord]); err != nil {
			t.Fatal(err)
		}
	}
	// As a release before kept receivables left them: no mark, no sums.
	db, table := f.st.Client(), f.st.Table()
	scan, err := db.Scan(f.ctx, &dynamodb.ScanInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range scan.Items {
		k := map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}
		pk, sk := it["PK"].(*types.AttributeValueMemberS).Value, it["SK"].(*types.AttributeValueMemberS).Value
		switch {
		case strings.Contains(pk, "#REPORT#PEND"), strings.HasSuffix(pk, "#REPORT") && strings.HasPrefix(sk, "OWED#"):
			_, err = db.DeleteItem(f.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: k})
		case it["owed_counted"] != nil:
			_, err = db.UpdateItem(f.ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: k, UpdateExpression: aws.String("REMOVE owed_counted")})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := f.st.Receivables(f.ctx, f.acct, "2026-06-01")
	if err != nil || got.Outstanding != 0 || got.Open != 0 || len(got.Debtors) != 0 {
		t.Fatalf("receivables of sales not counted yet: %+v %v", got, err)
	}
	// An edit of one counts it whole, as it is after the edit.
	if _, err := f.st.UpdateSale(f.ctx, f.acct, "300002", func(_ store.SaleRecord, next *business.Sale) error {
		next.DueDate = "2025-11-30"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, _, err = f.st.Receivables(f.ctx, f.acct, "2026-06-01")
	if err != nil || got.Outstanding != 5000 || got.Open != 1 || got.Over90 != 5000 {
		t.Fatalf("receivables with one legacy sale edited: %+v %v, want its 50.00, over 90 days", got, err)
	}
	for i, want := range []int{5, 0} {
		n, err := f.st.CountLegacyDebts(f.ctx)
		if err != nil || n != want {
			t.Fatalf("run %d of the migration counted %d sales (%v), want %d", i+1, n, err, want)
		}
	}
	sameReceivables(t, f.st, f.acct, "2026-01-01", "2026-03-20", "2026-06-01", "2027-01-01")
}

// TestDebtMovedMeanwhile: another applier writes a customer's debt between
// an applier's read of it and its write (here, another sale of the same
// customer applied by a second store from inside the first one's
// transaction call). The first write is refused on the debt's version and
// made again on the debt as it now is, so both sales count once.
func TestDebtMovedMeanwhile(t *testing.T) {
	var hook atomic.Pointer[func()]
	st, cfg := testdb.NewStore(t, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("ApplyOtherFirst",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					if tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok && slices.ContainsFunc(tx.TransactItems, func(it types.TransactWriteItem) bool {
						return it.Update != nil && strings.HasPrefix(it.Update.Key["SK"].(*types.AttributeValueMemberS).Value, "OWED#C#")
					}) {
						if f := hook.Swap(nil); f != nil {
							(*f)()
						}
					}
					return next.HandleInitialize(ctx, in)
				}), middleware.After)
		})
	})
	ctx := context.Background()
	other, err := app.NewStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := testdb.NewAccount(t, st, "Shop", "DEBTRACE")
	if _, err := st.CreateCustomer(ctx, a.ID, business.Customer{Name: "Ama"}, nil, render[business.Customer]); err != nil {
		t.Fatal(err)
	}
	for i, due := range []string{"2026-01-10", "2026-02-20", "2026-02-20"} {
		c := strconv.Itoa(400000 + i)
		total := cents(int64(1000 * (i + 1)))
		s := business.Sale{InvoiceCode: c, InvoiceNumber: "INV-" + c, CustomerID: 1, InvoiceType: "main", PaymentType: "Cash",
			DueDate: due, SubTotal: total, Total: total, AmountPaid: money.Zero}
		if err := s.Validate(""); err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateSale(ctx, a.ID, store.NewSale{Sale: s}, nil, render[store.SaleRecord]); err != nil {
			t.Fatal(err)
		}
	}
	items, err := st.WaitingFigures(ctx, a.ID)
	if err != nil || len(items) != 3 {
		t.Fatalf("%d figures items wait (%v), want the three sales'", len(items), err)
	}
	if n, err := other.ApplyFigures(ctx, a.ID, items[:1]); err != nil || n != 1 { // the debt exists
		t.Fatalf("applied %d (%v)", n, err)
	}
	ran := false
	f := func() {
		ran = true
		if n, err := other.ApplyFigures(ctx, a.ID, items[2:]); err != nil || n != 1 {
			t.Errorf("the other applier applied %d (%v)", n, err)
		}
	}
	hook.Store(&f)
	if n, err := st.ApplyFigures(ctx, a.ID, items[1:2]); err != nil || n != 1 {
		t.Fatalf("applied %d (%v)", n, err)
	}
	if !ran {
		t.Fatal("no write of the debt was made")
	}
	got, _, err := st.Receivables(ctx, a.ID, "2026-03-01")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Debtors) != 1 || got.Debtors[0].Outstanding != 6000 || got.Debtors[0].Days31To60 != 1000 || got.Debtors[0].Days1To30 != 5000 {
		t.Fatalf("the debtor %+v, want 60.00 owed: 10.00 at 31-60 days and 50.00 at 1-30", got.Debtors)
	}
	sameReceivables(t, st, a.ID, "2026-03-01")
}

// TestDebtsAgeFromTheIndex: once what waits is applied and the debts have
// settled, receivables are one round trip (no read of the debts or
// customers after the index's), their debtors named as their customers are
// now, a rename included (a customer who owes nothing gets no debt by it).
// Within the settle time of a debt's write the debts listed are read from
// the table again. Debts laid out as before their IX9 entries carried their
// aging (cents by due date outside the view, a sale's old name in it) still
// age exactly, read from the table with their customers' names;
// RelayoutDebts lays them out again once, after which the index alone
// serves.
func TestDebtsAgeFromTheIndex(t *testing.T) {
	var reqs testdb.Requests
	st, _ := testdb.NewStore(t, reqs.Option())
	st.SetDebtsSettle(0)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "DEBTLAYOUT")
	for _, name := range []string{"Ama", "Kofi", "Yaw"} {
		if _, err := st.CreateCustomer(ctx, a.ID, business.Customer{Name: name}, nil, render[business.Customer]); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range []struct {
		customer int64
		due      string
		cents    int64
	}{{1, "2026-01-10", 1000}, {1, "2026-02-20", 2000}, {1, "2026-03-15", 500}, {2, "2026-02-01", 700}} {
		c := strconv.Itoa(500000 + i)
		sale := business.Sale{InvoiceCode: c, InvoiceNumber: "INV-" + c, CustomerID: s.customer, InvoiceType: "main", PaymentType: "Cash",
			DueDate: s.due, SubTotal: cents(s.cents), Total: cents(s.cents), AmountPaid: money.Zero}
		if err := sale.Validate(""); err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateSale(ctx, a.ID, store.NewSale{Sale: sale}, nil, render[store.SaleRecord]); err != nil {
			t.Fatal(err)
		}
	}
	dates := []string{"2026-03-01", "2026-01-05", "2026-06-30"}
	// reads are the calls of one report, and whether any read the debts or
	// customers after the index.
	reads := func() (calls int, after bool) {
		t.Helper()
		mark := reqs.Mark()
		if _, _, err := st.Receivables(ctx, a.ID, "2026-03-01"); err != nil {
			t.Fatal(err)
		}
		for _, r := range reqs.Since(mark) {
			after = after || r.Operation == "BatchGetItem"
		}
		return len(reqs.Since(mark)), after
	}
	sameReceivables(t, st, a.ID, dates...) // the first applies what waits
	if calls, after := reads(); after || calls > 8 {
		t.Fatalf("receivables made %d calls, reading the debts after the index: %v", calls, after)
	}
	if _, err := st.UpdateCustomer(ctx, a.ID, 1, func(c *business.Customer) error { c.Name = "Ama Mensah"; return nil }); err != nil {
		t.Fatal(err)
	}
	sameReceivables(t, st, a.ID, dates...) // the rename applied, then from the index
	if got, _, err := st.Receivables(ctx, a.ID, "2026-03-01"); err != nil || len(got.Debtors) != 2 || got.Debtors[0].Name != "Ama Mensah" {
		t.Fatalf("debtors %+v (%v), want Ama Mensah first", got.Debtors, err)
	}
	if _, err := st.UpdateCustomer(ctx, a.ID, 3, func(c *business.Customer) error { c.Name = "Yaw Boateng"; return nil }); err != nil {
		t.Fatal(err)
	}
	sameReceivables(t, st, a.ID, dates...)
	debtOf := func(id string) map[string]types.AttributeValue {
		t.Helper()
		k := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A#" + a.ID + "#REPORT"}, "SK": &types.AttributeValueMemberS{Value: "OWED#C#" + id}}
		out, err := st.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.Table()), Key: k, ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		return out.Item
	}
	if it := debtOf("3"); it != nil {
		t.Fatalf("a rename of a customer who owes nothing wrote a debt: %v", it)
	}

	// A debt just written (here by an applier other than the report) is
	// read from the table until it settles.
	sale := business.Sale{InvoiceCode: "500009", InvoiceNumber: "INV-500009", CustomerID: 2, InvoiceType: "main", PaymentType: "Cash",
		DueDate: "2026-02-10", SubTotal: cents(900), Total: cents(900), AmountPaid: money.Zero}
	if err := sale.Validate(""); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateSale(ctx, a.ID, store.NewSale{Sale: sale}, nil, render[store.SaleRecord]); err != nil {
		t.Fatal(err)
	}
	items, err := st.WaitingFigures(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := st.ApplyFigures(ctx, a.ID, items); err != nil || n != 1 {
		t.Fatalf("applied %d (%v)", n, err)
	}
	st.SetDebtsSettle(time.Hour)
	if _, after := reads(); !after {
		t.Fatal("a debt written a moment before was read from the index alone")
	}
	sameReceivables(t, st, a.ID, dates...)
	st.SetDebtsSettle(0)
	if calls, after := reads(); after || calls > 8 {
		t.Fatalf("once settled, receivables made %d calls, reading the debts after the index: %v", calls, after)
	}

	// The layout before: Ama's and Kofi's debts as that release wrote them.
	legacy := map[string]map[string]int64{"1": {"2026-01-10": 1000, "2026-02-20": 2000, "2026-03-15": 500}, "2": {"2026-02-01": 700, "2026-02-10": 900}}
	for id, due := range legacy {
		it := debtOf(id)
		if it == nil {
			t.Fatalf("customer %s has no debt", id)
		}
		v := it["v"].(*types.AttributeValueMemberM).Value
		if _, ok := v["aging"]; !ok {
			t.Fatalf("debt of customer %s has no aging in its view: %v", id, v)
		}
		delete(v, "aging")
		delete(v, "undated")
		v["name"] = &types.AttributeValueMemberS{Value: "Name on an old sale"}
		m := map[string]types.AttributeValue{}
		for d, c := range due {
			m[d] = &types.AttributeValueMemberN{Value: strconv.FormatInt(c, 10)}
		}
		it["due"] = &types.AttributeValueMemberM{Value: m}
		if _, err := st.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.Table()), Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	sameReceivables(t, st, a.ID, dates...)
	if _, after := reads(); !after {
		t.Fatal("debts laid out as before were aged from the index alone")
	}
	for i, want := range []int{2, 0} { // a second run finds nothing to do
		if n, err := st.RelayoutDebts(ctx); err != nil || n != want {
			t.Fatalf("run %d laid out %d debts again (%v), want %d", i+1, n, err, want)
		}
	}
	sameReceivables(t, st, a.ID, dates...)
	if calls, after := reads(); after || calls > 8 {
		t.Fatalf("after the migration, receivables made %d calls, reading the debts after the index: %v", calls, after)
	}
}
