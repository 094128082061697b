package business

// What the receivables and inventory reports keep as the books change: each
// change says what one sale owed (or one item was worth) before and after
// it, and whoever applies the change's figures item moves the running sums
// by the difference.

// Owed is what one sale owes toward receivables: nothing (Cents 0) unless it
// is open (draft or partial) and owes more than nothing.
type Owed struct {
	CustomerID   int64
	CustomerName string
	DueDate      string // "" when the sale has none (counted as current)
	Cents        int64
}

// ReceivableChange moves one sale's debt from Old to New.
type ReceivableChange struct{ Old, New Owed }

// StockWorth is what one inventory item adds to the inventory report:
// nothing (Counted false) when it does not exist.
type StockWorth struct {
	Counted bool
	// Cost and Retail are exact decimals: quantity × unit_cost and
	// quantity × item_price.
	Cost, Retail string
	Status       string // StockIn, StockLow or StockOut
}

// StockChange moves one item's worth from Old to New.
type StockChange struct{ Old, New StockWorth }
