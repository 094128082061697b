package business

import (
	"sort"

	"bizdata/shared/money"
)

// MaxStockAlerts is how many low and out-of-stock items an inventory report
// lists.
const MaxStockAlerts = 100

// StockReport is what the inventory is worth and what runs short.
type StockReport struct {
	// StockValue and RetailValue are money as the API writes it ("12.50"):
	// a stock's worth may pass what cents in an int64 hold.
	StockValue, RetailValue       string
	InStock, LowStock, OutOfStock int
	// Alerts are the out-of-stock items, then the low ones, each by
	// quantity and then item code, at most MaxStockAlerts.
	Alerts []Item
	// AlertsTruncated says more items are low or out than Alerts holds.
	AlertsTruncated bool
}

// ReportStock values items (quantity x unit_cost, quantity x item_price,
// each sum rounded once to cents) and counts them by stock status.
func ReportStock(items []Item) StockReport {
	var r StockReport
	cost, retail := money.Value(money.Quantity{}, money.Zero), money.Value(money.Quantity{}, money.Zero)
	for _, it := range items {
		cost = cost.Add(money.Value(it.Quantity, it.UnitCost))
		retail = retail.Add(money.Value(it.Quantity, it.ItemPrice))
		switch it.Status() {
		case StockOut:
			r.OutOfStock++
			r.Alerts = append(r.Alerts, it)
		case StockLow:
			r.LowStock++
			r.Alerts = append(r.Alerts, it)
		default:
			r.InStock++
		}
	}
	r.StockValue, r.RetailValue = money.FormatSum(cost), money.FormatSum(retail)
	sort.SliceStable(r.Alerts, func(i, j int) bool {
		a, b := r.Alerts[i], r.Alerts[j]
		if ao, bo := a.Status() == StockOut, b.Status() == StockOut; ao != bo {
			return ao
		}
		if c := a.Quantity.Cmp(b.Quantity); c != 0 {
			return c < 0
		}
		return a.ItemCode < b.ItemCode
	})
	if len(r.Alerts) > MaxStockAlerts {
		r.Alerts, r.AlertsTruncated = r.Alerts[:MaxStockAlerts], true
	}
	return r
}
