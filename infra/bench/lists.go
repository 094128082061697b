package main

// The items-read and combined-filters steps: items DynamoDB read per item a
// list returned.

import (
	"context"
	"fmt"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
)

// lister reads one page of a list from cursor: the items DynamoDB read,
// the items returned, and the next page's cursor.
type lister func(cursor string) (int, int, string, error)

// pagesOf is the lister of the bench account's list with filter f, in
// pages of 50.
func pagesOf[F, T any](b *bench, list func(ctx context.Context, account string, f F, limit int, cursor string) (store.Page[T], error), f F) lister {
	return func(cursor string) (int, int, string, error) {
		p, err := list(b.ctx, b.acct.ID, f, 50, cursor)
		return p.Scanned, len(p.Items), p.Next, err
	}
}

// readRatio is the items read per item returned, as a table shows it.
func readRatio(read, returned int) string {
	if returned == 0 {
		return "n/a (nothing matched)"
	}
	return fmt.Sprintf("%.3f", float64(read)/float64(returned))
}

// readPages reads up to 4 pages of a list and returns the items read and
// returned.
func readPages(l lister) (int, int, error) {
	read, returned, cursor := 0, 0, ""
	for p := 0; p < 4; p++ {
		sc, n, next, err := l(cursor)
		if err != nil {
			return 0, 0, err
		}
		read, returned = read+sc, returned+n
		if cursor = next; cursor == "" {
			break
		}
	}
	return read, returned, nil
}

// itemsRead reports, for every list filter, the items DynamoDB read per item
// returned over up to 4 pages of 50.
func (b *bench) itemsRead() error {
	created, err := b.lastCreatedAt("/api/v1/sales", "sales")
	if err != nil {
		return err
	}
	t, _ := time.Parse(business.TimeFormat, created)
	recent := t.Add(-3 * time.Second).Format(business.TimeFormat)
	sale := func(f store.SaleFilter) lister { return pagesOf(b, b.store.ListSales, f) }
	expense := func(f store.ExpenseFilter) lister { return pagesOf(b, b.store.ListExpenses, f) }
	item := func(f store.ItemFilter) lister { return pagesOf(b, b.store.ListItems, f) }
	category := func(f store.CategoryFilter) lister { return pagesOf(b, b.store.ListCategories, f) }
	rows := []struct {
		name string
		l    lister
	}{
		{"sales (no filter)", sale(store.SaleFilter{})},
		{"sales invoice_code", sale(store.SaleFilter{InvoiceCode: "104242"})},
		{"sales customer_id", sale(store.SaleFilter{CustomerID: 7})},
		{"sales invoice_type=pos", sale(store.SaleFilter{InvoiceType: "pos"})},
		{"sales invoice_type=invoice (main)", sale(store.SaleFilter{InvoiceType: "main"})},
		{"sales invoice_type=storefront (order)", sale(store.SaleFilter{InvoiceType: "order"})},
		{"sales payment_date", sale(store.SaleFilter{PaymentDate: "2026-10-05"})},
		{"sales payment_status=paid", sale(store.SaleFilter{PaymentStatus: "paid"})},
		{"sales payment_status=partial", sale(store.SaleFilter{PaymentStatus: "partial"})},
		{"sales payment_status=draft", sale(store.SaleFilter{PaymentStatus: "draft"})},
		{"sales created_at (last 3 s of the load)", sale(store.SaleFilter{CreatedFrom: recent})},
		{"sales due_date <= 2026-03-31", sale(store.SaleFilter{DueTo: "2026-03-31~"})},
		{"expenses (no filter)", expense(store.ExpenseFilter{})},
		{"expenses expense_type", expense(store.ExpenseFilter{ExpenseType: "Rent"})},
		{"expenses created_at", expense(store.ExpenseFilter{CreatedFrom: "2020-01-01"})},
		{"expenses updated_at", expense(store.ExpenseFilter{UpdatedTo: "2999-12-31~"})},
		{"items (no filter)", item(store.ItemFilter{})},
		{"items category_id", item(store.ItemFilter{CategoryID: 3})},
		{"items created_at", item(store.ItemFilter{CreatedFrom: "2020-01-01"})},
		{"items updated_at", item(store.ItemFilter{UpdatedTo: "2999-12-31~"})},
		{"categories (no filter)", category(store.CategoryFilter{})},
		{"categories category_name", category(store.CategoryFilter{Name: "category 3"})},
		{"categories created_at", category(store.CategoryFilter{CreatedFrom: "2020-01-01"})},
		{"categories updated_at", category(store.CategoryFilter{UpdatedTo: "2999-12-31~"})},
	}
	b.printf("## Items read per item returned\n\nWith 10,000 sales, 2,000 expenses and 2,000 items loaded; up to 4 pages of 50 per filter; items read is DynamoDB's ScannedCount. Target: at most 1.5.\n\n| list filter | items read | items returned | read per returned |\n|---|---|---|---|\n")
	for _, r := range rows {
		read, returned, err := readPages(r.l)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		b.printf("| %s | %d | %d | %s |\n", r.name, read, returned, readRatio(read, returned))
	}
	read, returned, err := b.ledgerRead()
	if err != nil {
		return fmt.Errorf("movements: %w", err)
	}
	b.printf("| movements of one item (newest first; one page of %d of its %d, as GET .../movements?limit=%d reads it) | %d | %d | %.3f |\n",
		corrMovesMax, corrMoves, corrMovesMax, read, returned, float64(read)/float64(returned))
	b.printf("\n")
	return nil
}

// combinedFilters reports items read per item returned for the filter
// combinations merchants ask most, over the loaded 10,000 sales, and with
// limit=1 the cost of the first page relative to a plain one.
func (b *bench) combinedFilters() error {
	rows := []struct {
		name string
		f    store.SaleFilter
	}{
		{"customer_id=7&payment_status=paid (what a customer owes: settled)", store.SaleFilter{CustomerID: 7, PaymentStatus: "paid"}},
		{"customer_id=7&payment_status=partial (what a customer owes)", store.SaleFilter{CustomerID: 7, PaymentStatus: "partial"}},
		{"payment_status=partial&due_date=2026-03-31 (overdue)", store.SaleFilter{PaymentStatus: "partial", DueTo: "2026-03-31~"}},
		{"payment_status=draft&due_date=2026-03-31 (overdue)", store.SaleFilter{PaymentStatus: "draft", DueTo: "2026-03-31~"}},
		{"payment_status=partial&due_date=2001-01-01 (nothing overdue)", store.SaleFilter{PaymentStatus: "partial", DueTo: "2001-01-01~"}},
		{"customer_id=7&created_at=2020-01-01 (a customer's sales in a period)", store.SaleFilter{CustomerID: 7, CreatedFrom: "2020-01-01"}},
		{"payment_status=paid&invoice_type=pos (filtered within a key)", store.SaleFilter{PaymentStatus: "paid", InvoiceType: "pos"}},
	}
	b.printf("## Combined filters\n\nSales lists with two filters over the 10,000 loaded sales: up to 4 pages of 50 (items read per item returned; target at most 1.5 for the combinations with keys of their own), and a first page with limit=1 against a plain limit=1 page (DynamoDB items read; at most %d per request, the bound on a request's work).\n\n| filters | items read | returned | read per returned | limit=1: items read (plain page: 2) |\n|---|---|---|---|---|\n", store.MaxEvaluated)
	for _, r := range rows {
		read, returned, err := readPages(pagesOf(b, b.store.ListSales, r.f))
		if err != nil {
			return err
		}
		first, err := b.store.ListSales(b.ctx, b.acct.ID, r.f, 1, "")
		if err != nil {
			return err
		}
		b.printf("| `%s` | %d | %d | %s | %d |\n", r.name, read, returned, readRatio(read, returned), first.Scanned)
	}
	b.printf("\n")
	return nil
}
