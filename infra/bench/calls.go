package main

// The requests of every route that the round-trips, cost and memory steps
// make, and the count of a request's DynamoDB calls (its typical run).

import (
	"encoding/json"
	"fmt"
	"strings"
)

// call is one request of a route, through its Lambda function.
type call struct {
	function, method, path, query string
	body                          func(i int) any
}

// afterCall reads the response of the functions whose answer the bench needs:
// rotate-api-key hands it its new key.
var afterCall = map[string]func(b *bench, body string){
	"rotate-api-key": func(b *bench, body string) {
		var out struct {
			Data struct {
				APIKey string `json:"api_key"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(body), &out) == nil && out.Data.APIKey != "" {
			b.key = out.Data.APIKey
		}
	},
}

// cents formats n cents as an amount: payments that grow by a cent at a
// time stay under a sale's total for thousands of edits.
func cents(n int) string { return fmt.Sprintf("%d.%02d", n/100, n%100) }

func (b *bench) benchCalls() []call {
	// Values that must change with every request (amount_paid only grows)
	// come from one sequence across the steps that make these calls.
	fresh := func() int { return int(b.seq.Add(1)) }
	return []call{
		{"authenticate", "GET", "/api/v1/user/authenticate", "", nil},
		{"list-sales", "GET", "/api/v1/sales", "", nil},
		{"get-sale", "GET", "/api/v1/sales/100042", "", nil},
		{"add-sale", "POST", "/api/v1/sales/add", "", func(int) any {
			return map[string]any{"customer_id": 1, "sub_total_amount": "20.00", "total_amount": "20.00", "amount_paid": "5.00",
				"payment_type": "Cash", "invoice_type": "pos", "due_date": "2026-12-31"}
		}},
		{"edit-sale", "PUT", "/api/v1/sales/edit/100000", "", func(int) any {
			return map[string]any{"invoice_code": "100000", "invoice_number": "INV-100000", "customer_id": 1,
				"sub_total_amount": "50.00", "total_amount": "50.00", "amount_paid": cents(fresh()), "payment_type": "Cash"}
		}},
		{"list-expenses", "GET", "/api/v1/expenses", "", nil},
		{"get-expense", "GET", "/api/v1/expenses/7", "", nil},
		{"add-expense", "POST", "/api/v1/expenses/add", "", func(int) any {
			return map[string]any{"expense_type": "Fuel", "expense_amount": "9.00", "payment_method": "Cash", "created_by": "Bench"}
		}},
		{"edit-expense", "PUT", "/api/v1/expenses/7", "", func(int) any {
			return map[string]any{"expense_type": "Fuel", "expense_amount": "9.50", "payment_method": "Cash", "created_by": "Bench"}
		}},
		{"list-items", "GET", "/api/v1/inventory/items", "", nil},
		{"get-item", "GET", "/api/v1/inventory/items/ITEM-00007", "", nil},
		{"add-item", "POST", "/api/v1/inventory/items/add", "", func(int) any {
			return map[string]any{"item_name": fmt.Sprintf("New item %d", fresh()), "category_id": 1, "item_price": 3}
		}},
		{"edit-item", "PUT", "/api/v1/inventory/items/ITEM-00007", "", func(int) any {
			return map[string]any{"item_price": fmt.Sprintf("%d.00", fresh())}
		}},
		{"list-categories", "GET", "/api/v1/inventory/categories", "", nil},
		{"add-category", "POST", "/api/v1/inventory/categories/add", "", func(int) any {
			return map[string]any{"category_name": fmt.Sprintf("New category %d", fresh())}
		}},
		{"edit-category", "PUT", "/api/v1/inventory/categories/3", "", func(int) any {
			return map[string]any{"description": fmt.Sprintf("edited %d", fresh())}
		}},
		{"list-customers", "GET", "/api/v1/customers", "", nil},
		{"get-customer", "GET", "/api/v1/customers/3", "", nil},
		{"add-customer", "POST", "/api/v1/customers/add", "", func(int) any { return map[string]any{"name": "Walk-in"} }},
		{"edit-customer", "PUT", "/api/v1/customers/3", "", func(int) any {
			return map[string]any{"phone": fmt.Sprintf("020%07d", fresh())}
		}},
		{"get-webhook-settings", "GET", "/api/v1/user/webhook", "", nil},
		{"update-webhook-settings", "PUT", "/api/v1/user/webhook", "", func(int) any {
			return map[string]any{"callback_url": "https://hooks.example.com/bench"}
		}},
		{"test-webhook", "POST", "/api/v1/user/webhook/test", "", nil},
		{"list-webhook-deliveries", "GET", "/api/v1/user/webhook/deliveries", "", nil},
		{"redeliver-webhook", "POST", "/api/v1/user/webhook/deliveries/txn_bench/redeliver", "", nil},
		{"rotate-api-key", "POST", "/api/v1/user/api-key/rotate", "", nil},
	}
}

// invokeCall makes request i of c through its Lambda function, and hands
// the answer to the function's afterCall.
func (b *bench) invokeCall(c call, i int) error {
	res, err := b.invoke(c.function, c.method, c.path, c.query, bodyAt(c.body, i))
	if after := afterCall[c.function]; err == nil && after != nil {
		after(b, res.Body)
	}
	return err
}

// tripCount is one run's DynamoDB calls and their sequential depth.
type tripCount struct{ calls, depth int }

// typicalRun makes a request runs times (fn(0..runs-1)) and returns the most
// frequent count (on a tie the shallower), and the runs that differed from
// it ("none" when none did).
func (b *bench) typicalRun(runs int, fn func(i int) error) (tripCount, string, error) {
	return b.typicalRunAfter(runs, nil, fn)
}

// typicalRunAfter is typicalRun with before (when not nil) made before each
// run, uncounted.
func (b *bench) typicalRunAfter(runs int, before func() error, fn func(i int) error) (tripCount, string, error) {
	seen := map[tripCount]int{}
	for i := 0; i < runs; i++ {
		if before != nil {
			if err := before(); err != nil {
				return tripCount{}, "", err
			}
		}
		mark := b.spans.Mark()
		if err := fn(i); err != nil {
			return tripCount{}, "", err
		}
		got, depth := b.spans.Since(mark)
		seen[tripCount{got, depth}]++
	}
	var typical tripCount
	for k, n := range seen {
		if n > seen[typical] || (n == seen[typical] && k.depth < typical.depth) {
			typical = k
		}
	}
	differed := ""
	for k, n := range seen {
		if k != typical {
			differed += fmt.Sprintf("%d with %d calls, %d sequential; ", n, k.calls, k.depth)
		}
	}
	if differed == "" {
		differed = "none"
	}
	return typical, strings.TrimSuffix(differed, "; "), nil
}

// bodyAt is body(i), or nil for a request without a body.
func bodyAt(body func(i int) any, i int) any {
	if body == nil {
		return nil
	}
	return body(i)
}

// tripsTableHead is the head of a table of round-trip cases.
const tripsTableHead = "| function | case | method | calls | sequential round trips | runs that differed | target | met |\n|---|---|---|---|---|---|---|---|\n"

// printTripRow prints one case's row of a table of round-trip cases.
func (b *bench) printTripRow(function, what, method string, typical tripCount, differed, target, met string) {
	b.printf("| %s | %s | %s | %d | %d | %s | %s | %s |\n", function, what, method, typical.calls, typical.depth, differed, target, met)
}

// warmKey makes an authenticate request, which caches the bench's key.
func (b *bench) warmKey() error {
	_, err := b.invoke("authenticate", "GET", "/api/v1/user/authenticate", "", nil)
	return err
}
