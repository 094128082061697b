package store_test

// Each store method's contract, tested directly against DynamoDB Local: an
// OK case and one case per error code its doc comment promises.

import (
	"context"
	"encoding/json"
	"fmt"
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

// fixture is a store over a fresh table with one account.
type fixture struct {
	t    *testing.T
	st   *store.Store
	acct string
	ctx  context.Context
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, _ := testdb.NewStore(t)
	a, _ := testdb.NewAccount(t, st, "Contracts", "CON1")
	return &fixture{t: t, st: st, acct: a.ID, ctx: context.Background()}
}

// wantCode fails unless err carries code ("" for no error).
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("error %v, want none", err)
		}
		return
	}
	if got := business.ErrorCode(err); got != code {
		t.Fatalf("error %v (%s), want %s", err, got, code)
	}
}

func render[T any](v T) ([]byte, error) { return json.Marshal(v) }

func (f *fixture) category(name string) (business.Category, error) {
	var c business.Category
	body, err := f.st.CreateCategory(f.ctx, f.acct, business.Category{Name: name}, nil, render[business.Category])
	if err == nil {
		_ = json.Unmarshal(body, &c)
	}
	return c, err
}

func TestCategoryContracts(t *testing.T) {
	f := newFixture(t)
	t.Run("OK", func(t *testing.T) {
		c, err := f.category("Grains")
		wantCode(t, err, "")
		if c.ID < 1 || c.Name != "Grains" {
			t.Fatalf("%+v", c)
		}
	})
	t.Run("ECONFLICTNameTakenIgnoringCase", func(t *testing.T) {
		_, err := f.category("GRAINS")
		wantCode(t, err, business.ECONFLICT)
	})
	t.Run("UpdateENOTFOUND", func(t *testing.T) {
		_, err := f.st.UpdateCategory(f.ctx, f.acct, 999, func(*business.Category) error { return nil })
		wantCode(t, err, business.ENOTFOUND)
	})
	t.Run("UpdateECONFLICT", func(t *testing.T) {
		oils, err := f.category("Oils")
		wantCode(t, err, "")
		_, err = f.st.UpdateCategory(f.ctx, f.acct, oils.ID, func(c *business.Category) error { c.Name = "grains"; return nil })
		wantCode(t, err, business.ECONFLICT)
	})
}

func TestIdempotencyContracts(t *testing.T) {
	f := newFixture(t)
	idem := &store.Idempotency{Route: "POST/x", Key: "k1", BodyHash: "h1"}
	first, err := f.st.CreateCategory(f.ctx, f.acct, business.Category{Name: "Grains"}, idem, render[business.Category])
	wantCode(t, err, "")
	t.Run("ReplayReturnsTheFirstAnswer", func(t *testing.T) {
		again, err := f.st.CreateCategory(f.ctx, f.acct, business.Category{Name: "Grains"}, idem, render[business.Category])
		wantCode(t, err, "")
		if string(again) != string(first) {
			t.Fatalf("%s != %s", again, first)
		}
	})
	t.Run("ECONFLICTOtherBody", func(t *testing.T) {
		other := &store.Idempotency{Route: "POST/x", Key: "k1", BodyHash: "h2"}
		_, err := f.st.CreateCategory(f.ctx, f.acct, business.Category{Name: "Other"}, other, render[business.Category])
		wantCode(t, err, business.ECONFLICT)
	})
	t.Run("ReplayKnownWithoutCreating", func(t *testing.T) {
		body, ok, err := f.st.Replay(f.ctx, f.acct, idem)
		wantCode(t, err, "")
		if !ok || string(body) != string(first) {
			t.Fatalf("%v %s", ok, body)
		}
		_, ok, err = f.st.Replay(f.ctx, f.acct, &store.Idempotency{Route: "POST/x", Key: "unknown", BodyHash: "h"})
		wantCode(t, err, "")
		if ok {
			t.Fatal("an unknown key replayed")
		}
	})
}

func TestItemContracts(t *testing.T) {
	f := newFixture(t)
	cat, err := f.category("Grains")
	wantCode(t, err, "")
	item := business.Item{ItemCode: "RICE-1", ItemName: "Rice", CategoryID: cat.ID, ItemPrice: money.MustAmount("5"), Quantity: money.MustQuantity("3")}
	t.Run("OK", func(t *testing.T) {
		_, err := f.st.CreateItem(f.ctx, f.acct, store.NewItem{Item: item}, nil, render[business.Item])
		wantCode(t, err, "")
		x, err := f.st.FindItemByCode(f.ctx, f.acct, "RICE-1")
		wantCode(t, err, "")
		if x.Slug != "rice" || x.Quantity.String() != "3" {
			t.Fatalf("%+v", x)
		}
	})
	t.Run("ECONFLICTCodeTaken", func(t *testing.T) {
		_, err := f.st.CreateItem(f.ctx, f.acct, store.NewItem{Item: item}, nil, render[business.Item])
		wantCode(t, err, business.ECONFLICT)
	})
	t.Run("EINVALIDMissingCategory", func(t *testing.T) {
		x := item
		x.ItemCode, x.CategoryID = "RICE-2", 999
		_, err := f.st.CreateItem(f.ctx, f.acct, store.NewItem{Item: x}, nil, render[business.Item])
		wantCode(t, err, business.EINVALID)
	})
	t.Run("FindENOTFOUND", func(t *testing.T) {
		_, err := f.st.FindItemByCode(f.ctx, f.acct, "NOPE")
		wantCode(t, err, business.ENOTFOUND)
	})
	t.Run("UpdatePreviousPrice", func(t *testing.T) {
		x, err := f.st.UpdateItem(f.ctx, f.acct, "RICE-1", func(x *business.Item) error { x.ItemPrice = money.MustAmount("6"); return nil })
		wantCode(t, err, "")
		if x.PreviousPrice.String() != "5.00" {
			t.Fatalf("previous price %s", x.PreviousPrice)
		}
	})
	t.Run("UpdateENOTFOUND", func(t *testing.T) {
		_, err := f.st.UpdateItem(f.ctx, f.acct, "NOPE", func(*business.Item) error { return nil })
		wantCode(t, err, business.ENOTFOUND)
	})
}

func TestSaleContracts(t *testing.T) {
	f := newFixture(t)
	cat, _ := f.category("Grains")
	_, err := f.st.CreateItem(f.ctx, f.acct, store.NewItem{Item: business.Item{ItemCode: "RICE-1", ItemName: "Rice", CategoryID: cat.ID, ItemPrice: money.MustAmount("5"), Quantity: money.MustQuantity("2")}}, nil, render[business.Item])
	wantCode(t, err, "")
	_, err = f.st.CreateCustomer(f.ctx, f.acct, business.Customer{Name: "Ama"}, nil, render[business.Customer])
	wantCode(t, err, "")
	sale := func(code string, customer int64, qty string) store.NewSale {
		total := money.LineTotal(money.MustAmount("5"), money.MustQuantity(qty))
		s := business.Sale{InvoiceCode: code, InvoiceNumber: "INV-" + code, CustomerID: customer, InvoiceType: "pos", PaymentType: "Cash",
			DueDate: "2026-12-31", SubTotal: total, Total: total, AmountPaid: money.MustAmount("4"),
			Lines: []business.SaleLine{{ItemCode: "RICE-1", ItemName: "Rice", UnitPrice: money.MustAmount("5"), Quantity: money.MustQuantity(qty)}}}
		if err := s.Validate(""); err != nil {
			t.Fatal(err)
		}
		return store.NewSale{Sale: s}
	}
	t.Run("OK", func(t *testing.T) {
		_, err := f.st.CreateSale(f.ctx, f.acct, sale("111111", 1, "2"), nil, render[store.SaleRecord])
		wantCode(t, err, "")
		rec, err := f.st.FindSaleByCode(f.ctx, f.acct, "111111")
		wantCode(t, err, "")
		if len(rec.Payments) != 1 || rec.Payments[0].Amount.String() != "4.00" {
			t.Fatalf("%+v", rec)
		}
	})
	t.Run("ECONFLICTCodeTaken", func(t *testing.T) {
		_, err := f.st.CreateSale(f.ctx, f.acct, sale("111111", 1, "1"), nil, render[store.SaleRecord])
		wantCode(t, err, business.ECONFLICT)
	})
	t.Run("EINVALIDMissingCustomer", func(t *testing.T) {
		_, err := f.st.CreateSale(f.ctx, f.acct, sale("222222", 99, "1"), nil, render[store.SaleRecord])
		wantCode(t, err, business.EINVALID)
	})
	t.Run("EINVALIDInsufficientStock", func(t *testing.T) {
		_, err := f.st.CreateSale(f.ctx, f.acct, sale("333333", 1, "1"), nil, render[store.SaleRecord])
		wantCode(t, err, business.EINVALID)
	})
	t.Run("FindENOTFOUND", func(t *testing.T) {
		_, err := f.st.FindSaleByCode(f.ctx, f.acct, "999999")
		wantCode(t, err, business.ENOTFOUND)
	})
	t.Run("UpdatePaysAndGivesBackStock", func(t *testing.T) {
		rec, err := f.st.UpdateSale(f.ctx, f.acct, "111111", func(cur store.SaleRecord, next *business.Sale) error {
			next.Lines = nil // the amounts are taken as sent without lines
			next.AmountPaid = money.MustAmount("10")
			return next.Validate("")
		})
		wantCode(t, err, "")
		if len(rec.Payments) != 2 || rec.Sale.PaymentStatus != business.StatusPaid {
			t.Fatalf("%+v", rec)
		}
		x, _ := f.st.FindItemByCode(f.ctx, f.acct, "RICE-1")
		if x.Quantity.String() != "2" {
			t.Fatalf("stock %s after the lines were removed", x.Quantity)
		}
	})
	t.Run("UpdateENOTFOUND", func(t *testing.T) {
		_, err := f.st.UpdateSale(f.ctx, f.acct, "999999", func(store.SaleRecord, *business.Sale) error { return nil })
		wantCode(t, err, business.ENOTFOUND)
	})
}

func TestCustomerAndExpenseContracts(t *testing.T) {
	f := newFixture(t)
	_, err := f.st.CreateCustomer(f.ctx, f.acct, business.Customer{Name: "Ama"}, nil, render[business.Customer])
	wantCode(t, err, "")
	_, err = f.st.FindCustomerByID(f.ctx, f.acct, 999)
	wantCode(t, err, business.ENOTFOUND)
	_, err = f.st.UpdateCustomer(f.ctx, f.acct, 999, func(*business.Customer) error { return nil })
	wantCode(t, err, business.ENOTFOUND)
	_, err = f.st.FindExpenseByID(f.ctx, f.acct, 999)
	wantCode(t, err, business.ENOTFOUND)
	_, err = f.st.UpdateExpense(f.ctx, f.acct, 999, func(*business.Expense) error { return nil })
	wantCode(t, err, business.ENOTFOUND)
}

func TestDeliveryContracts(t *testing.T) {
	f := newFixture(t)
	now := time.Now().UTC().Add(-time.Second)
	d := business.Delivery{AccountID: f.acct, TransactionID: "txn_1", WebhookID: "msg_txn_1", Payload: []byte(`{}`), State: business.DeliveryPending, NextAt: now, CreatedAt: now}
	created, err := f.st.CreateDelivery(f.ctx, d)
	wantCode(t, err, "")
	again, err := f.st.CreateDelivery(f.ctx, d)
	wantCode(t, err, "")
	if !created || again {
		t.Fatalf("created %v, again %v: one delivery per payment", created, again)
	}
	_, err = f.st.Redeliver(f.ctx, f.acct, "txn_1", now)
	wantCode(t, err, business.ECONFLICT) // still pending
	_, err = f.st.Redeliver(f.ctx, f.acct, "txn_none", now)
	wantCode(t, err, business.ENOTFOUND)
	_, err = f.st.FindDelivery(f.ctx, f.acct, "txn_none")
	wantCode(t, err, business.ENOTFOUND)
	lease, err := f.st.ClaimDelivery(f.ctx, d, time.Now(), time.Minute)
	wantCode(t, err, "")
	if _, err := f.st.ClaimDelivery(f.ctx, d, time.Now(), time.Minute); err != store.ErrNotClaimed {
		t.Fatalf("a claimed attempt claimed again: %v", err)
	}
	d.State = business.DeliveryDelivered
	wantCode(t, f.st.SaveAttempt(f.ctx, d, lease), "")
	due, _, err := f.st.AccountDue(f.ctx, f.acct, 10)
	wantCode(t, err, "")
	if len(due) != 0 {
		t.Fatalf("a delivered delivery is due: %+v", due)
	}
}

// TestQueueContracts: a woken account is ready; Park moves it only when
// nothing was queued since its read, and removes it when nothing waits; a
// delivery left in a shard of the due index by the dispatcher before queues
// is moved to its account's partition and its account woken.
func TestQueueContracts(t *testing.T) {
	f := newFixture(t)
	now := time.Now().UTC()
	ready := func() []store.Queue {
		t.Helper()
		qs, err := f.st.ReadyQueues(f.ctx, now)
		wantCode(t, err, "")
		return qs
	}
	if qs := ready(); len(qs) != 0 {
		t.Fatalf("ready before any wake: %+v", qs)
	}
	wantCode(t, f.st.Wake(f.ctx, f.acct, now), "")
	qs := ready()
	if len(qs) != 1 || qs[0].AccountID != f.acct || qs[0].Gen != 1 {
		t.Fatalf("after a wake: %+v", qs)
	}
	wantCode(t, f.st.Wake(f.ctx, f.acct, now), "") // queued again since the read
	if err := f.st.Park(f.ctx, qs[0], now.Add(time.Hour)); err != store.ErrNotClaimed {
		t.Fatalf("a stale park moved the entry: %v", err)
	}
	qs = ready()
	wantCode(t, f.st.Park(f.ctx, qs[0], now.Add(time.Hour)), "")
	if qs := ready(); len(qs) != 0 {
		t.Fatalf("ready after parking an hour ahead: %+v", qs)
	}
	if qs, _ := f.st.ReadyQueues(f.ctx, now.Add(2*time.Hour)); len(qs) != 1 {
		t.Fatalf("not ready once the park time passed: %+v", qs)
	}
	q, err := f.st.FindQueue(f.ctx, f.acct)
	wantCode(t, err, "")
	wantCode(t, f.st.Park(f.ctx, q, time.Time{}), "")
	if qs, _ := f.st.ReadyQueues(f.ctx, now.Add(48*time.Hour)); len(qs) != 0 {
		t.Fatalf("ready after parking with nothing waiting: %+v", qs)
	}

	// A waiting delivery as the dispatcher before queues stored it.
	_, err = f.st.Client().PutItem(f.ctx, &dynamodb.PutItemInput{TableName: aws.String(f.st.Table()), Item: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "A#" + f.acct + "#DELIVERY#txn_old"}, "SK": &types.AttributeValueMemberS{Value: "DELIVERY"},
		"type": &types.AttributeValueMemberS{Value: "delivery"}, "account_id": &types.AttributeValueMemberS{Value: f.acct},
		"transaction_id": &types.AttributeValueMemberS{Value: "txn_old"}, "webhook_id": &types.AttributeValueMemberS{Value: "msg_txn_old"},
		"state": &types.AttributeValueMemberS{Value: "pending"}, "attempt": &types.AttributeValueMemberN{Value: "0"},
		"next_at":         &types.AttributeValueMemberN{Value: fmt.Sprint(now.Unix() - 60)},
		store.IndexDue.PK: &types.AttributeValueMemberS{Value: fmt.Sprintf("DUE#%02d", store.ShardOf(f.acct))},
		store.IndexDue.SK: &types.AttributeValueMemberS{Value: fmt.Sprintf("%012d#%s#txn_old", now.Unix()-60, f.acct)},
	}})
	wantCode(t, err, "")
	ready() // moves it
	qs = ready()
	due, _, err := f.st.AccountDue(f.ctx, f.acct, 10)
	wantCode(t, err, "")
	if len(qs) != 1 || qs[0].AccountID != f.acct || len(due) != 1 || due[0].TransactionID != "txn_old" {
		t.Fatalf("legacy due delivery: ready %+v, account's due %+v", qs, due)
	}
}

func TestAccountContracts(t *testing.T) {
	f := newFixture(t)
	t.Run("OK", func(t *testing.T) {
		a, err := business.NewAccount("Second", "CON2", "GHS", "")
		wantCode(t, err, "")
		a, _, err = f.st.CreateAccount(f.ctx, a)
		wantCode(t, err, "")
		found, err := f.st.FindAccountByCode(f.ctx, "CON2")
		if err != nil || found.ID != a.ID {
			t.Fatalf("FindAccountByCode: %+v %v", found, err)
		}
		all, err := f.st.ListAccounts(f.ctx)
		if err != nil || len(all) != 2 || all[0].BusinessCode != "CON1" || all[1].ID != a.ID {
			t.Fatalf("ListAccounts: %+v %v", all, err)
		}
	})
	t.Run("CodeTakenIsConflict", func(t *testing.T) {
		a, _ := business.NewAccount("Copy", "CON1", "USD", "")
		_, _, err := f.st.CreateAccount(f.ctx, a)
		wantCode(t, err, business.ECONFLICT)
		if all, _ := f.st.ListAccounts(f.ctx); len(all) != 2 {
			t.Fatalf("a refused create left %d accounts", len(all))
		}
	})
	t.Run("UnknownCodeIsNotFound", func(t *testing.T) {
		_, err := f.st.FindAccountByCode(f.ctx, "NOPE")
		wantCode(t, err, business.ENOTFOUND)
	})
}
