package store

import (
	"context"

	"bizdata/shared/business"
)

// The inventory's worth kept as the books change.

// putStock writes what a change moves in the inventory's worth into its
// figures item it.
func putStock(it attrs, cs []business.StockChange) error { return nil }

// stockFrom reads what a figures item moves in the inventory's worth.
func stockFrom(it attrs) ([]business.StockChange, error) { return nil, nil }

// stockActionsOf are the updates that apply cs to the account's inventory
// worth, in the transaction that applies their figures items.
func (s *Store) stockActionsOf(ctx context.Context, account string, cs []business.StockChange) ([]txItem, error) {
	return nil, nil
}
