package store

import (
	"context"

	"bizdata/shared/business"
)

// Receivables kept as the books change.

// putReceivables writes what a change moves in receivables into its figures
// item it.
func putReceivables(it attrs, cs []business.ReceivableChange) error { return nil }

// receivablesFrom reads what a figures item moves in receivables.
func receivablesFrom(it attrs) ([]business.ReceivableChange, error) { return nil, nil }

// receivableActions are the updates that apply cs to the account's
// receivables, in the transaction that applies their figures items.
func (s *Store) receivableActions(ctx context.Context, account string, cs []business.ReceivableChange) ([]txItem, error) {
	return nil, nil
}
