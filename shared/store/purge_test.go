package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
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
)

// fillAccount writes records of every kind for account through the store's
// own write paths: categories, items with a stock adjustment, customers,
// sales with a payment and a refund (which returns stock), expenses, the
// callback and an endpoint with their secrets, deliveries of both webhooks
// with their queues, a test-send window, an idempotency key, and report
// figures both applied (days, months) and still waiting.
func fillAccount(t *testing.T, st *store.Store, account string) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("fill %s: %v", account, err)
		}
	}
	_, err := st.UpdateWebhook(ctx, account, aws.String("https://hooks.example.com/"+account), aws.String("whsec-"+account))
	must(err)
	for i := 1; i <= 2; i++ {
		body, err := st.CreateCategory(ctx, account, business.Category{Name: fmt.Sprintf("Grains %d", i)}, nil, render[business.Category])
		must(err)
		var c business.Category
		must(json.Unmarshal(body, &c))
		_, err = st.CreateItem(ctx, account, store.NewItem{Item: business.Item{ItemCode: fmt.Sprintf("RICE-%d", i), ItemName: fmt.Sprintf("Rice %d", i),
			CategoryID: c.ID, ItemPrice: money.MustAmount("5"), Quantity: money.MustQuantity("20")}}, nil, render[business.Item])
		must(err)
		_, err = st.AdjustStock(ctx, account, fmt.Sprintf("RICE-%d", i), mustDelta(t, "-1"), "damaged", "", nil, render[store.ItemMove])
		must(err)
	}
	body, err := st.CreateCustomer(ctx, account, business.Customer{Name: "Ama"}, &store.Idempotency{Route: "POST/customers", Key: "k1", BodyHash: "h"}, render[business.Customer])
	must(err)
	var ama business.Customer
	must(json.Unmarshal(body, &ama))
	_, err = st.CreateCustomer(ctx, account, business.Customer{Name: "Kofi"}, nil, render[business.Customer])
	must(err)
	for i := 1; i <= 3; i++ {
		code := fmt.Sprintf("%06d", 100000+i)
		total := money.LineTotal(money.MustAmount("5"), money.MustQuantity("2"))
		sale := business.Sale{InvoiceCode: code, InvoiceNumber: "INV-" + code, CustomerID: ama.ID, InvoiceType: "pos", PaymentType: "Cash",
			DueDate: "2026-12-31", SubTotal: total, Total: total, AmountPaid: money.MustAmount("4"),
			Lines: []business.SaleLine{{ItemCode: "RICE-1", ItemName: "Rice 1", UnitPrice: money.MustAmount("5"), Quantity: money.MustQuantity("2")}}}
		must(sale.Validate(""))
		_, err = st.CreateSale(ctx, account, store.NewSale{Sale: sale}, nil, render[store.SaleRecord])
		must(err)
		_, err = st.RefundSale(ctx, account, code, store.NewRefund{Amount: money.MustAmount("1"), Reason: "returned",
			Lines: []business.RefundLine{{LineID: 1, Quantity: money.MustQuantity("1")}}}, nil, render[store.SaleRecord])
		must(err)
	}
	e := business.Expense{ExpenseType: "Fuel", Amount: money.MustAmount("100.00"), PaymentMethod: "Cash", CreatedBy: "Ama"}
	_, err = st.CreateExpense(ctx, account, e, nil, render[business.Expense])
	must(err)
	// Figures so far are applied to the days and months; the next change's
	// wait in their shard.
	waiting, err := st.WaitingFigures(ctx, account)
	must(err)
	_, err = st.ApplyFigures(ctx, account, waiting)
	must(err)
	_, err = st.CreateExpense(ctx, account, e, nil, render[business.Expense])
	must(err)

	now := time.Now().UTC()
	ep, err := st.CreateEndpoint(ctx, account, business.Endpoint{URL: "https://hooks.example.com/ep", EnabledEvents: []string{"*"}}, business.NewEndpointSecret())
	must(err)
	queue := store.EndpointQueue(account, ep.ID)
	for range 2 {
		id := business.NewEventIDs(now).Next()
		_, err = st.CreateDelivery(ctx, business.Delivery{AccountID: queue, TransactionID: id, WebhookID: id,
			Payload: []byte(`{}`), State: business.DeliveryPending, NextAt: now, CreatedAt: now})
		must(err)
	}
	must(st.Wake(ctx, queue, now))
	_, err = st.CreateDelivery(ctx, business.Delivery{AccountID: account, TransactionID: "txn_" + account, WebhookID: "msg_" + account,
		Payload: []byte(`{}`), State: business.DeliveryPending, NextAt: now, CreatedAt: now})
	must(err)
	must(st.Wake(ctx, account, now))
	_, _, err = st.TakeTestSend(ctx, account, 3, now)
	must(err)
}

// tableItems returns the PK and SK of every item in the table (a Scan: for
// tests only).
func tableItems(t *testing.T, st *store.Store) [][2]string {
	t.Helper()
	var out [][2]string
	pages := dynamodb.NewScanPaginator(st.Client(), &dynamodb.ScanInput{TableName: aws.String(st.Table()), ProjectionExpression: aws.String("PK, SK"), ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			out = append(out, [2]string{it["PK"].(*types.AttributeValueMemberS).Value, it["SK"].(*types.AttributeValueMemberS).Value})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0]+"\x00"+out[i][1] < out[j][0]+"\x00"+out[j][1] })
	return out
}

// ownedBy reports whether the item with partition key pk belongs to account
// (exactly: not to an account whose id merely begins with it).
func ownedBy(pk, account string) bool {
	return pk == "A#"+account || strings.HasPrefix(pk, "A#"+account+"#") || pk == store.SecretKeyPrefix+account
}

// TestPurgeAccount: a retired test twin's records of every kind are deleted
// a small budget at a time, without touching the next twin (whose id begins
// with the retired one's) or the live account; only idempotency keys stay,
// for their TTL.
func TestPurgeAccount(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	live, _ := testdb.NewAccount(t, st, "Purge", "PURGE1")
	if _, _, err := st.CreateKey(ctx, live.ID, nil, business.APIKey{Name: "test", Scopes: []string{business.ScopeAll}}); err != nil {
		t.Fatal(err)
	}
	old := business.TwinID(live.ID, 1)
	fillAccount(t, st, old)
	retired, err := st.ClearTestData(ctx, live.ID)
	if err != nil || retired != old {
		t.Fatalf("ClearTestData: %q %v, want %q", retired, err, old)
	}
	fresh := business.TwinID(live.ID, 2)
	if !strings.HasPrefix(fresh, old) {
		t.Fatalf("the test needs the next twin's id %q to begin with the retired one's %q", fresh, old)
	}
	fillAccount(t, st, fresh)
	fillAccount(t, st, live.ID)

	before := tableItems(t, st)
	var target, others [][2]string
	kinds := map[string]bool{}
	for _, it := range before {
		if ownedBy(it[0], old) {
			target = append(target, it)
			part := "SECRET"
			if !strings.HasPrefix(it[0], store.SecretKeyPrefix) {
				part, _, _ = strings.Cut(strings.TrimPrefix(strings.TrimPrefix(it[0], "A#"+old), "#"), "#")
			}
			sk, _, _ := strings.Cut(it[1], "#")
			if strings.HasPrefix(sk, "evt_") {
				sk = "evt" // an event, sorted by its id in its shard
			}
			kinds[part+"/"+sk] = true
		} else {
			others = append(others, it)
		}
	}
	// Every kind of item the retired twin should hold is there to purge.
	for _, want := range []string{"/COUNTER", "/WHEP", "/WHEPCOUNT", "/WEBHOOKQ", "/TESTSEND", "SALE/SALE", "SALE/PAY", "SALE/REFUND",
		"ITEM/ITEM", "ITEM/MOVE", "CATEGORY/CATEGORY", "CUSTOMER/CUSTOMER", "EXPENSE/EXPENSE", "EVENT/evt", "DELIVERY/DELIVERY",
		"EP/WEBHOOKQ", "EP/DELIVERY", "UNIQUE/UNIQUE", "IDEM/IDEM", "REPORT/DAY", "REPORT/MONTH", "REPORT/PEND",
		"SECRET/WEBHOOK", "SECRET/WHEP"} {
		if !kinds[want] {
			t.Errorf("the retired twin holds no %s item (it holds %v)", want, kinds)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	var idem int
	for _, it := range target {
		if strings.HasPrefix(it[0], "A#"+old+"#IDEM#") {
			idem++
		}
	}
	t.Logf("%d items of %s to purge (%d idempotency keys stay), %d of others", len(target), old, idem, len(others))

	// Neither a live account nor the current twin may be purged.
	for _, id := range []string{live.ID, fresh} {
		if _, n, err := st.PurgeAccount(ctx, id, 100); err == nil || n != 0 {
			t.Fatalf("PurgeAccount(%s) = %d deletes, %v; want it refused", id, n, err)
		}
	}

	const budget = 7
	total := 0
	for call := 1; ; call++ {
		if call > len(target) {
			t.Fatalf("not done after %d calls", call-1)
		}
		done, n, err := st.PurgeAccount(ctx, old, budget)
		if err != nil {
			t.Fatal(err)
		}
		if n > budget {
			t.Fatalf("call %d deleted %d items, over its budget of %d", call, n, budget)
		}
		total += n
		left := 0
		for _, it := range tableItems(t, st) {
			if ownedBy(it[0], old) {
				left++
			}
		}
		if left != len(target)-total {
			t.Fatalf("call %d reports %d deletes (%d in all), but %d of %d items are left", call, n, total, left, len(target))
		}
		if done {
			t.Logf("done after %d calls, %d deletes", call, total)
			break
		}
		if n == 0 {
			t.Fatalf("call %d deleted nothing and is not done", call)
		}
	}
	if total != len(target)-idem {
		t.Fatalf("%d deletes, want %d (every item but the %d idempotency keys)", total, len(target)-idem, idem)
	}

	after := tableItems(t, st)
	var othersAfter [][2]string
	for _, it := range after {
		if ownedBy(it[0], old) {
			if !strings.HasPrefix(it[0], "A#"+old+"#IDEM#") {
				t.Errorf("left behind: %s / %s", it[0], it[1])
			}
			continue
		}
		othersAfter = append(othersAfter, it)
	}
	if fmt.Sprint(othersAfter) != fmt.Sprint(others) {
		t.Fatalf("other accounts' items changed: %d before, %d after", len(others), len(othersAfter))
	}

	// Done stays done, and a budget of 0 answers too.
	for _, b := range []int{budget, 0} {
		if done, n, err := st.PurgeAccount(ctx, old, b); !done || n != 0 || err != nil {
			t.Fatalf("again with budget %d: done %v, %d deletes, %v", b, done, n, err)
		}
	}
	// The next twin, once retired, purges as well, leaving the live account.
	if _, err := st.ClearTestData(ctx, live.ID); err != nil {
		t.Fatal(err)
	}
	for {
		done, _, err := st.PurgeAccount(ctx, fresh, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
	}
	for _, it := range tableItems(t, st) {
		if ownedBy(it[0], fresh) && !strings.HasPrefix(it[0], "A#"+fresh+"#IDEM#") {
			t.Errorf("left behind of %s: %s / %s", fresh, it[0], it[1])
		}
	}
}

// TestPurgeAccountBudgetOfOne: with a budget of 1 a purge still moves on at
// every call, a record's unique value and its item in turn.
func TestPurgeAccountBudgetOfOne(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	live, _ := testdb.NewAccount(t, st, "Purge", "PURGE2")
	if _, _, err := st.CreateKey(ctx, live.ID, nil, business.APIKey{Name: "test", Scopes: []string{business.ScopeAll}}); err != nil {
		t.Fatal(err)
	}
	old := business.TwinID(live.ID, 1)
	if _, err := st.CreateCategory(ctx, old, business.Category{Name: "Grains"}, nil, render[business.Category]); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClearTestData(ctx, live.ID); err != nil {
		t.Fatal(err)
	}
	n0 := 0
	for _, it := range tableItems(t, st) {
		if ownedBy(it[0], old) {
			n0++
		}
	}
	total := 0
	for call := 1; ; call++ {
		if call > n0+1 {
			t.Fatalf("not done after %d calls for %d items", call-1, n0)
		}
		done, n, err := st.PurgeAccount(ctx, old, 1)
		if err != nil {
			t.Fatal(err)
		}
		total += n
		if done {
			break
		}
		if n != 1 {
			t.Fatalf("call %d deleted %d, want 1", call, n)
		}
	}
	if total != n0 {
		t.Fatalf("%d deletes for %d items", total, n0)
	}
	for _, it := range tableItems(t, st) {
		if ownedBy(it[0], old) {
			t.Errorf("left behind: %s / %s", it[0], it[1])
		}
	}
}

// TestPurgeBesideTheFiguresConsumer: a retired twin's figures item still
// waits when the purge begins, and an apply of it by the stream's consumer
// (which read the twin's timezones before the clear) lands just as the
// purge deletes it, writing the twin's day sums. The purge reads the
// report partition only once the waiting items are gone, so it deletes
// those sums too and is done with nothing left (reading the partition
// first, it found it empty and ended with the sums behind).
func TestPurgeBesideTheFiguresConsumer(t *testing.T) {
	var twin, table atomic.Value
	var raw atomic.Pointer[dynamodb.Client] // a client of its own, outside the purge's
	var applied atomic.Bool
	st, cfg := testdb.NewStore(t, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("consumer", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				// As the purge deletes the waiting figures, a consumer's
				// apply that read the twin's timezones before the clear
				// lands: the twin's day sums appear.
				if bw, ok := in.Parameters.(*dynamodb.BatchWriteItemInput); ok && twin.Load() != nil && !applied.Load() {
					for _, reqs := range bw.RequestItems {
						for _, r := range reqs {
							if r.DeleteRequest == nil {
								continue
							}
							if pk, _ := r.DeleteRequest.Key["PK"].(*types.AttributeValueMemberS); pk != nil && strings.Contains(pk.Value, "#REPORT#PEND") && !applied.Swap(true) {
								_, err := raw.Load().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table.Load().(string)),
									Item: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A#" + twin.Load().(string) + "#REPORT"},
										"SK": &types.AttributeValueMemberS{Value: "DAY#2026-01-01"}, "expenses": &types.AttributeValueMemberN{Value: "300"}}})
								if err != nil {
									t.Errorf("the consumer's sums: %v", err)
								}
							}
						}
					}
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
		})
	})
	ctx := context.Background()
	live, _ := testdb.NewAccount(t, st, "Purge", "PURGEFIG")
	if _, _, err := st.CreateKey(ctx, live.ID, nil, business.APIKey{Name: "test", Scopes: []string{business.ScopeAll}}); err != nil {
		t.Fatal(err)
	}
	old := business.TwinID(live.ID, 1)
	if _, err := st.CreateExpense(ctx, old, business.Expense{ExpenseType: "Fuel", Amount: money.MustAmount("3.00"), PaymentMethod: "Cash", CreatedBy: "Ama"}, nil, render[business.Expense]); err != nil {
		t.Fatal(err)
	}
	if retired, err := st.ClearTestData(ctx, live.ID); err != nil || retired != old {
		t.Fatalf("ClearTestData: %q %v", retired, err)
	}
	c, err := app.NewStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	raw.Store(c.Client())
	table.Store(st.Table())
	twin.Store(old)
	done, _, err := st.PurgeAccount(ctx, old, 1000)
	if err != nil || !done {
		t.Fatalf("PurgeAccount: done %v, %v", done, err)
	}
	if !applied.Load() {
		t.Fatal("the consumer never ran beside the purge")
	}
	for _, it := range tableItems(t, st) {
		if ownedBy(it[0], old) && !strings.HasPrefix(it[0], "A#"+old+"#IDEM#") {
			t.Errorf("left after a purge that said it was done: %v", it)
		}
	}
}
