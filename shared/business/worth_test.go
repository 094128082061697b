package business

import (
	"testing"

	"bizdata/shared/money"
)

// TestWorthOf: an item's worth is exact (no rounding to cents), written the
// same whatever trailing zeros its figures carry, so that a change that
// moves nothing compares equal; an item with no stock is worth nothing and
// out of stock.
func TestWorthOf(t *testing.T) {
	it := Item{Quantity: money.MustQuantity("2.125"), MinimumQtyAlert: money.MustQuantity("3"),
		UnitCost: money.MustAmount("0.05"), ItemPrice: money.MustAmount("1.10")}
	if w := WorthOf(it); w != (StockWorth{Counted: true, Cost: "0.10625", Retail: "2.3375", Status: StockLow}) {
		t.Fatalf("worth %+v", w)
	}
	same := it
	same.ItemPrice = money.MustAmount("1.1")
	if WorthOf(same) != WorthOf(it) {
		t.Fatalf("the same worth written two ways: %+v and %+v", WorthOf(same), WorthOf(it))
	}
	if w := WorthOf(Item{UnitCost: money.MustAmount("9.99")}); w != (StockWorth{Counted: true, Cost: "0", Retail: "0", Status: StockOut}) {
		t.Fatalf("no stock: %+v", w)
	}
	big := Item{Quantity: money.MaxQuantity(), UnitCost: money.MustAmount("99999999.99"), ItemPrice: money.MustAmount("0.01")}
	if w := WorthOf(big); w.Cost != "99999999989900000.00001" || w.Retail != "9999999.99999" || w.Status != StockIn {
		t.Fatalf("the largest stock: %+v", w)
	}
}
