package wire

import (
	"strconv"

	"bizdata/shared/business"
	"bizdata/shared/money"
)

// The reports as the API answers them and the dashboard's overview draws
// them. Each report's fields are declared in the order of their JSON keys,
// as the API has always written them (sorted).

// Sums is a period's (or the totals') count of sales and sums of money, as
// a report shows them.
type Sums struct {
	Start      string `json:"start,omitempty"`
	End        string `json:"end,omitempty"`
	SalesCount int64  `json:"sales_count"`
	Invoiced   string `json:"invoiced"`
	Collected  string `json:"collected"`
	Refunded   string `json:"refunded"`
	Expenses   string `json:"expenses"`
	Net        string `json:"net"`
}

// NewSums returns p's sums as a report shows them (without a period for
// the totals).
func NewSums(p business.PeriodFigures) Sums {
	return Sums{Start: p.Start, End: p.End, SalesCount: p.SalesCount, Invoiced: money.FormatCents(p.Invoiced),
		Collected: money.FormatCents(p.Collected), Refunded: money.FormatCents(p.Refunded), Expenses: money.FormatCents(p.Expenses),
		Net: money.FormatCents(p.Net())}
}

// Figures is a period's (or the totals') sums and where they came from.
type Figures struct {
	Sums
	CollectedByMethod map[string]string `json:"collected_by_method"`
	ExpensesByType    map[string]string `json:"expenses_by_type"`
	// ExpensesOtherTypes is the expenses of the types past the
	// business.MaxExpenseTypes that ExpensesByType names.
	ExpensesOtherTypes string `json:"expenses_other_types"`
}

// NewFigures returns p's figures as a report shows them (without a period
// for the totals).
func NewFigures(p business.PeriodFigures) Figures {
	return Figures{Sums: NewSums(p), CollectedByMethod: centsMap(p.ByMethod), ExpensesByType: centsMap(p.ByType),
		ExpensesOtherTypes: money.FormatCents(p.OtherTypes)}
}

func centsMap(m map[string]int64) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = money.FormatCents(v)
	}
	return out
}

// SummaryReport is the report of GET /reports/summary.
type SummaryReport struct {
	AsOf     string    `json:"as_of"`
	Complete bool      `json:"complete"`
	Currency string    `json:"currency"`
	From     string    `json:"from"`
	GroupBy  string    `json:"group_by"`
	Periods  []Figures `json:"periods"`
	Timezone string    `json:"timezone"`
	To       string    `json:"to"`
	Totals   Figures   `json:"totals"`
}

// Aging is money owed by age: not yet due (current) and overdue by 1-30,
// 31-60, 61-90 and over 90 days.
type Aging struct {
	Current string `json:"current"`
	D1To30  string `json:"1_30"`
	D31To60 string `json:"31_60"`
	D61To90 string `json:"61_90"`
	Over90  string `json:"over_90"`
}

// NewAging returns a as a report shows it.
func NewAging(a business.Aging) Aging {
	return Aging{Current: money.FormatCents(a.Current), D1To30: money.FormatCents(a.Days1To30), D31To60: money.FormatCents(a.Days31To60),
		D61To90: money.FormatCents(a.Days61To90), Over90: money.FormatCents(a.Over90)}
}

// Debtor is a customer who owes money, with what it owes by age.
type Debtor struct {
	CustomerID  string `json:"customer_id"`
	Name        string `json:"name"`
	Outstanding string `json:"outstanding"`
	Buckets     Aging  `json:"buckets"`
}

// ReceivablesReport is the report of GET /reports/receivables.
type ReceivablesReport struct {
	AsOf        string   `json:"as_of"`
	Buckets     Aging    `json:"buckets"`
	Currency    string   `json:"currency"`
	Customers   []Debtor `json:"customers"`
	OpenSales   int      `json:"open_sales"`
	Outstanding string   `json:"outstanding"`
}

// NewReceivablesReport returns rec, in currency, as the report shows it.
func NewReceivablesReport(rec business.Receivables, currency string) ReceivablesReport {
	debtors := make([]Debtor, len(rec.Debtors))
	for i, d := range rec.Debtors {
		debtors[i] = Debtor{CustomerID: strconv.FormatInt(d.CustomerID, 10), Name: d.Name, Outstanding: money.FormatCents(d.Outstanding), Buckets: NewAging(d.Aging)}
	}
	return ReceivablesReport{AsOf: rec.AsOf, Buckets: NewAging(rec.Aging), Currency: currency, Customers: debtors,
		OpenSales: rec.Open, Outstanding: money.FormatCents(rec.Outstanding)}
}

// StockAlert is an item low on or out of stock.
type StockAlert struct {
	ItemCode        string `json:"item_code"`
	ItemName        string `json:"item_name"`
	Quantity        string `json:"quantity"`
	MinimumQtyAlert string `json:"minimum_qty_alert"`
	Status          string `json:"status"`
}

// InventoryReport is the report of GET /reports/inventory.
type InventoryReport struct {
	// Counts is the items of each stock status, by status.
	Counts          map[string]int `json:"counts"`
	Currency        string         `json:"currency"`
	ItemsCount      int            `json:"items_count"`
	Alerts          []StockAlert   `json:"low_and_out_items"`
	AlertsTruncated bool           `json:"low_and_out_truncated"`
	RetailValue     string         `json:"retail_value"`
	StockValue      string         `json:"stock_value"`
}

// NewInventoryReport returns rep, of items items, in currency, as the
// report shows it.
func NewInventoryReport(rep business.StockReport, items int, currency string) InventoryReport {
	alerts := make([]StockAlert, len(rep.Alerts))
	for i, it := range rep.Alerts {
		alerts[i] = StockAlert{ItemCode: it.ItemCode, ItemName: it.ItemName, Quantity: it.Quantity.String(),
			MinimumQtyAlert: it.MinimumQtyAlert.String(), Status: it.Status()}
	}
	return InventoryReport{
		Counts:   map[string]int{business.StockIn: rep.InStock, business.StockLow: rep.LowStock, business.StockOut: rep.OutOfStock},
		Currency: currency, ItemsCount: items, Alerts: alerts, AlertsTruncated: rep.AlertsTruncated,
		RetailValue: rep.RetailValue, StockValue: rep.StockValue,
	}
}
