package main

// The load: the run's account filled with the records the list, overhead
// and throughput steps read.

import (
	"fmt"
	"strings"
	"time"

	"bizdata/shared/business"
)

var (
	invoiceTypes = []string{"main", "pos", "order"}
	expenseTypes = []string{"Rent", "Fuel", "Salaries", "Transport", "Utilities"}
)

// load fills the account: 20 customers, 10 categories, then items, expenses
// and sales spread over the filters' values.
func (b *bench) load(sales, expenses, items int) error {
	if err := addCustomersAndCategories(b.post); err != nil {
		return err
	}
	if err := parallel(items, func(i int) error {
		_, _, err := b.request("POST", "/api/v1/inventory/items/add", map[string]any{"item_code": fmt.Sprintf("ITEM-%05d", i),
			"item_name": fmt.Sprintf("Item %d", i), "category_id": i%10 + 1, "item_price": "12.50", "quantity": "1000000"})
		return err
	}); err != nil {
		return err
	}
	if err := addExpenses(b.post, expenses); err != nil {
		return err
	}
	// A delivered webhook for the redeliver-webhook request to queue again.
	now := time.Now().UTC()
	if _, err := b.store.CreateDelivery(b.ctx, business.Delivery{AccountID: b.acct.ID, TransactionID: "txn_bench", WebhookID: "msg_txn_bench",
		Payload: []byte(`{"amount":"1.00"}`), State: business.DeliveryDelivered, NextAt: now, CreatedAt: now}); err != nil {
		return err
	}
	return parallel(sales, func(i int) error {
		return b.post("/api/v1/sales/add", loadedSale(i, fmt.Sprintf("2026-%02d-15", i%12+1), fmt.Sprintf("2026-10-%02d", i%28+1)))
	})
}

// lastCreatedAt returns the created_at of the newest record of a list.
func (b *bench) lastCreatedAt(path, key string) (string, error) {
	_, out, err := b.request("GET", path+"?limit=1", nil)
	if err != nil {
		return "", err
	}
	list, _ := out["data"].(map[string]any)[key].([]any)
	if len(list) == 0 {
		return "", fmt.Errorf("%s: empty", path)
	}
	return strings.TrimSpace(list[0].(map[string]any)["created_at"].(string)), nil
}

// addSmallShop fills an account through post with a few records of each
// kind: a category, 3 customers, 3 items (item(i) each), 3 expenses made by
// createdBy, and 6 sales due on due, by turns unpaid, paid in part and in
// full.
func addSmallShop(post func(path string, body any) error, item func(i int) map[string]any, createdBy, due string) error {
	if err := post("/api/v1/inventory/categories/add", map[string]any{"category_name": "Goods"}); err != nil {
		return err
	}
	for i := 0; i < 3; i++ {
		if err := post("/api/v1/customers/add", map[string]any{"name": fmt.Sprintf("Customer %d", i)}); err != nil {
			return err
		}
		if err := post("/api/v1/inventory/items/add", item(i)); err != nil {
			return err
		}
		if err := post("/api/v1/expenses/add", map[string]any{"expense_type": "Fuel", "expense_amount": "9.00",
			"payment_method": "Cash", "created_by": createdBy}); err != nil {
			return err
		}
	}
	for i := 0; i < 6; i++ {
		if err := post("/api/v1/sales/add", map[string]any{"customer_id": i%3 + 1, "sub_total_amount": "20.00", "total_amount": "20.00",
			"amount_paid": []string{"0", "5.00", "20.00"}[i%3], "payment_type": []string{"None", "Cash", "Cash"}[i%3],
			"invoice_type": "pos", "due_date": due}); err != nil {
			return err
		}
	}
	return nil
}

// addCustomersAndCategories adds 20 customers and 10 categories through
// post, 8 at a time.
func addCustomersAndCategories(post func(path string, body any) error) error {
	if err := parallel(20, func(i int) error {
		return post("/api/v1/customers/add", map[string]any{"name": fmt.Sprintf("Customer %d", i)})
	}); err != nil {
		return err
	}
	return parallel(10, func(i int) error {
		return post("/api/v1/inventory/categories/add", map[string]any{"category_name": fmt.Sprintf("Category %d", i)})
	})
}

// addExpenses adds n expenses of 40.00 through post, of the expense types
// by turns, 8 at a time.
func addExpenses(post func(path string, body any) error, n int) error {
	return parallel(n, func(i int) error {
		return post("/api/v1/expenses/add", map[string]any{"expense_type": expenseTypes[i%len(expenseTypes)],
			"expense_amount": "40.00", "payment_method": "Cash", "created_by": "Bench"})
	})
}

// loadedSale is the load's sale n, of 50.00 (two lines of goods), for one
// of 20 customers: by turns unpaid, paid 10.00 and paid in full, paid on
// paidOn, due on due, of each invoice type three in turn.
func loadedSale(n int, due, paidOn string) map[string]any {
	paid, pt := []string{"0", "10.00", "50.00"}[n%3], []string{"None", "Cash", "Mobile Money"}[n%3]
	body := map[string]any{
		"invoice_code": fmt.Sprint(100000 + n), "invoice_number": fmt.Sprint(100000 + n), "customer_id": n%20 + 1,
		"sub_total_amount": "50.00", "total_amount": "50.00", "amount_paid": paid, "payment_type": pt,
		"invoice_type": invoiceTypes[(n/3)%3], "due_date": due,
		"items": []any{map[string]any{"item_name": "Goods", "unit_price": "25.00", "quantity": "2"}},
	}
	if paid != "0" {
		body["payment_date"] = paidOn
	}
	return body
}
