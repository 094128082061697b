package dashboard

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"bizdata/shared/store"
)

// BenchmarkPages draws each signed-in page of an account with 60 sales,
// 20 items and 30 expenses, and reports the DynamoDB calls each costs
// (calls/op) beside its time: the session and account reads every page
// makes, and the API handlers' own reads.
//
//	go test -run '^$' -bench Pages -benchtime 20x ./shared/dashboard
func BenchmarkPages(b *testing.B) {
	var calls atomic.Int64
	bd := newBoard(b, store.CountCalls(&calls))
	o := bd.newOwner("BENCH1")
	salesFixture(b, o, "500000", "25.00")
	o.mustAPI("POST", "/api/v1/inventory/items/RICE/adjustments", map[string]any{"quantity": "1000", "reason": "received"})
	for i := 1; i < 60; i++ {
		paid := "25.00"
		if i%3 == 0 {
			paid = "0.00"
		}
		salesAdd(b, o, fmt.Sprintf("5%05d", i), paid)
	}
	for i := range 20 {
		o.mustAPI("POST", "/api/v1/inventory/items/add", map[string]any{"item_code": fmt.Sprintf("ITEM-%d", i), "item_name": "Item",
			"category_id": 1, "item_price": "5.00", "quantity": fmt.Sprint(i), "minimum_qty_alert": "3"})
	}
	for range 30 {
		o.mustAPI("POST", "/api/v1/expenses/add", map[string]any{"expense_type": "Rent", "expense_amount": "10.00", "payment_method": "cash", "created_by": "Kofi"})
	}
	for _, page := range []string{"/dashboard", "/dashboard/sales", "/dashboard/sales/500001", "/dashboard/expenses",
		"/dashboard/inventory", "/dashboard/inventory/ITEM-5", "/dashboard/customers", "/dashboard/developers",
		"/dashboard/developers/events", "/dashboard/settings"} {
		b.Run(page, func(b *testing.B) {
			o := o.with(b)
			if st, _, _ := o.get(page); st != http.StatusOK { // warm, and the session's last use stamped
				b.Fatalf("%s: %d", page, st)
			}
			calls.Store(0)
			b.ResetTimer()
			for range b.N {
				o.get(page)
			}
			b.ReportMetric(float64(calls.Load())/float64(b.N), "calls/op")
		})
	}
}
