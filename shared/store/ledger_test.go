package store_test

import (
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
// movements add up to its stock and the next move follows it; a second run
// opens nothing, and items with a ledger or without stock are left alone.
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
	} {
		if _, err := f.st.CreateItem(f.ctx, f.acct, store.NewItem{Item: x}, nil, render[business.Item]); err != nil {
			t.Fatal(err)
		}
	}
	// OLD-1 as the ledger found it: its initial movement was never written.
	if _, err := f.st.Client().DeleteItem(f.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(f.st.Table()),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "A#" + f.acct + "#ITEM#OLD-1"},
			"SK": &types.AttributeValueMemberS{Value: "MOVE#000000000001"},
		}}); err != nil {
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
	for run, want := range []int{1, 0} {
		n, err := f.st.OpenLedgers(f.ctx)
		if err != nil || n != want {
			t.Fatalf("run %d: opened %d (%v), want %d", run+1, n, err, want)
		}
	}
	got := ledger("OLD-1")
	if len(got) != 1 || got[0].Kind != business.MoveInitial || got[0].Change.String() != "7" || got[0].After.String() != "7" {
		t.Fatalf("OLD-1's ledger %+v, want one initial of 7", got)
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
