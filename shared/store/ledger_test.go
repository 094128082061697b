package store_test

import (
	"strings"
	"testing"

	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/store"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestOpenLedgers: an item written before the ledger (its stock and no
// movement) gets one opening movement from OpenLedgers, after which its
// movements add up to its stock and the next move follows it; one moved
// after the upgrade but before the migration is opened below that move, with
// the stock it had before it; a second run opens nothing, and items with a
// ledger or without stock are left alone.
func TestOpenLedgers(t *testing.T) {
	f := newFixture(t)
	cat, err := f.category("Grains")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []business.Item{
		{ItemCode: "OLD-1", ItemName: "Old rice", CategoryID: cat.ID, ItemPrice: money.MustAmount("5"), Quantity: money.MustQuantity("7")},
		{ItemCode: "NEW-1", ItemName: "New rice", CategoryID: cat.ID, ItemPrice: money.MustAmount("5"), Quantity: money.MustQuantity("3")},
		{ItemCode: "NONE-1", ItemName: "Empty", CategoryID: cat.ID, ItemPrice: money.MustAmount("5")},
		{ItemCode: "MOVED-1", ItemName: "Moved", CategoryID: cat.ID, ItemPrice: money.MustAmount("5"), Quantity: money.MustQuantity("4")},
	} {
		if _, err := f.st.CreateItem(f.ctx, f.acct, store.NewItem{Item: x}, nil, render[business.Item]); err != nil {
			t.Fatal(err)
		}
	}
	// OLD-1 and MOVED-1 as the ledger found them: their initial movements
	// were never written; MOVED-1 then loses 1 before the migration.
	for _, code := range []string{"OLD-1", "MOVED-1"} {
		if _, err := f.st.Client().DeleteItem(f.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(f.st.Table()),
			Key: map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: "A#" + f.acct + "#ITEM#" + code},
				"SK": &types.AttributeValueMemberS{Value: "MOVE#000000000001"},
			}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.st.AdjustStock(f.ctx, f.acct, "MOVED-1", mustDelta(t, "-1"), "damaged", "", nil, render[store.ItemMove]); err != nil {
		t.Fatal(err)
	}
	ledger := func(code string) []business.Movement {
		t.Helper()
		p, err := f.st.ListMovements(f.ctx, f.acct, code, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		return p.Items
	}
	if got := ledger("OLD-1"); len(got) != 0 {
		t.Fatalf("setup: OLD-1 still has movements %+v", got)
	}
	for run, want := range []int{2, 0} {
		n, err := f.st.OpenLedgers(f.ctx)
		if err != nil || n != want {
			t.Fatalf("run %d: opened %d (%v), want %d", run+1, n, err, want)
		}
	}
	got := ledger("OLD-1")
	if len(got) != 1 || got[0].Kind != business.MoveInitial || got[0].Change.String() != "7" || got[0].After.String() != "7" {
		t.Fatalf("OLD-1's ledger %+v, want one initial of 7", got)
	}
	moved := ledger("MOVED-1")
	if len(moved) != 2 || moved[1].Kind != business.MoveInitial || moved[1].Change.String() != "4" || moved[1].After.String() != "4" ||
		moved[1].ID >= moved[0].ID || moved[0].After.String() != "3" {
		t.Fatalf("MOVED-1's ledger %+v, want an initial of 4 below its adjustment of -1", moved)
	}
	if got := ledger("NEW-1"); len(got) != 1 || got[0].Change.String() != "3" {
		t.Fatalf("NEW-1's ledger changed: %+v", got)
	}
	if got := ledger("NONE-1"); len(got) != 0 {
		t.Fatalf("an item without stock got movements: %+v", got)
	}
	// The next move is recorded after the opening one.
	if _, err := f.st.AdjustStock(f.ctx, f.acct, "OLD-1", mustDelta(t, "-2"), "damaged", "", nil, render[store.ItemMove]); err != nil {
		t.Fatal(err)
	}
	got = ledger("OLD-1")
	if len(got) != 2 || got[0].ID <= got[1].ID || got[0].After.String() != "5" {
		t.Fatalf("OLD-1's ledger after an adjustment: %+v", got)
	}
}

func mustDelta(t *testing.T, s string) money.Delta {
	t.Helper()
	d, err := money.ParseDelta(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestCountAfterASaleIsRefused: an item edit that sets the quantity, when
// stock moves between its read and its write, is 409 naming quantity and
// changes nothing, never re-applied over the newer stock; an edit that does
// not set it is made again and succeeds.
func TestCountAfterASaleIsRefused(t *testing.T) {
	f := newFixture(t)
	cat, err := f.category("Grains")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.CreateItem(f.ctx, f.acct, store.NewItem{Item: business.Item{ItemCode: "RICE-1", ItemName: "Rice",
		CategoryID: cat.ID, ItemPrice: money.MustAmount("5"), Quantity: money.MustQuantity("10")}}, nil, render[business.Item]); err != nil {
		t.Fatal(err)
	}
	sold := false
	sellOnce := func() {
		if !sold { // a sale lands between the edit's read and its write
			sold = true
			if _, err := f.st.AdjustStock(f.ctx, f.acct, "RICE-1", mustDelta(t, "-3"), "lost", "", nil, render[store.ItemMove]); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, err = f.st.UpdateItem(f.ctx, f.acct, "RICE-1", func(x *business.Item) error {
		sellOnce()
		x.Quantity = money.MustQuantity("12")
		return nil
	})
	wantCode(t, err, business.ECONFLICT)
	if be, ok := err.(*business.Error); !ok || !strings.Contains(be.Fields["quantity"], "7") {
		t.Fatalf("the conflict does not name quantity and the stock now: %v", err)
	}
	x, err := f.st.FindItemByCode(f.ctx, f.acct, "RICE-1")
	if err != nil || x.Quantity.String() != "7" {
		t.Fatalf("stock %v (%v), want the sale's 7", x.Quantity, err)
	}
	sold = false
	x, err = f.st.UpdateItem(f.ctx, f.acct, "RICE-1", func(x *business.Item) error {
		sellOnce()
		x.ItemName = "Brown rice"
		return nil
	})
	if err != nil || x.Quantity.String() != "4" || x.ItemName != "Brown rice" {
		t.Fatalf("a rename beside a sale: %+v (%v)", x, err)
	}
}
