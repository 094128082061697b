package business

import (
	"time"

	"bizdata/shared/money"
)

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

// OwedBy is what sale s owes toward receivables: total less amount paid
// while it is open (draft or partial) and that is above nothing; else
// nothing. Refunds leave it alone (they move amount_refunded, not
// amount_paid); a void ends it. A due date that is not one counts as none
// (current), as AgeReceivables ages it.
func OwedBy(s Sale) Owed {
	if s.PaymentStatus != StatusDraft && s.PaymentStatus != StatusPartial {
		return Owed{}
	}
	c := s.Total.Cents() - s.AmountPaid.Cents()
	if c <= 0 {
		return Owed{}
	}
	due := s.DueDate
	if _, err := time.Parse(DateFormat, due); err != nil {
		due = ""
	}
	return Owed{CustomerID: s.CustomerID, CustomerName: s.CustomerName, DueDate: due, Cents: c}
}

// DaysPastDue is how many days past due on asOf an amount due on due is,
// as AgeReceivables counts them: 0 (current) when due is no date.
func DaysPastDue(asOf, due string) int {
	day, _ := time.Parse(DateFormat, asOf)
	d, err := time.Parse(DateFormat, due)
	if err != nil {
		return 0
	}
	return int(day.Sub(d).Hours() / 24)
}

// AgeDue ages amounts by due date (yyyy-mm-dd; any other key, such as
// "none", is current) on asOf.
func AgeDue(asOf string, due map[string]int64) Aging {
	var a Aging
	for d, c := range due {
		a.add(DaysPastDue(asOf, d), c)
	}
	return a
}

// AgingMonths returns the months (yyyy-mm, first and last) whose amounts an
// aging on asOf needs day by day: from January of the year of asOf less 91
// days (every amount due in an earlier year is over 90 days past due) to
// the month of the day before asOf (an amount due on asOf or later is
// current). last is before first when asOf is the first day there is.
func AgingMonths(asOf string) (first, last string) {
	day, _ := time.Parse(DateFormat, asOf)
	return day.AddDate(0, 0, -91).Format("2006") + "-01", day.AddDate(0, 0, -1).Format("2006-01")
}

// OwedSums are the receivables kept as the books change, as an aging on
// one date reads them: everything owed, by year of due date, and by day for
// the days of AgingMonths.
type OwedSums struct {
	Outstanding int64
	Open        int
	ByYear      map[string]int64 // yyyy: cents owed by open sales due that year
	ByDay       map[string]int64 // yyyy-mm-dd: cents owed by open sales due that day
}

// Age ages the sums on asOf exactly as AgeReceivables ages the sales they
// come from: amounts due in the years before AgingMonths' first are over
// 90 days past due, those due on its days by their days past due, and what
// is left of the outstanding amount (due on asOf or later, or with no due
// date) is current. Days outside AgingMonths are ignored (their years
// count them), so ByDay may hold more than the aging needs.
func (o OwedSums) Age(asOf string) Aging {
	first, last := AgingMonths(asOf)
	var a Aging
	for y, c := range o.ByYear {
		if y < first[:4] {
			a.Over90 += c
		}
	}
	for d, c := range o.ByDay {
		if len(d) == len(DateFormat) && d[:7] >= first && d[:7] <= last && d < asOf {
			a.add(DaysPastDue(asOf, d), c)
		}
	}
	a.Current = o.Outstanding - a.Days1To30 - a.Days31To60 - a.Days61To90 - a.Over90
	return a
}

// WorthOf is what item it adds to the inventory report: its value at cost
// and at its price, exact (rounded only where the report sums them), and
// its stock status.
func WorthOf(it Item) StockWorth {
	return StockWorth{Counted: true, Cost: money.Value(it.Quantity, it.UnitCost).String(),
		Retail: money.Value(it.Quantity, it.ItemPrice).String(), Status: it.Status()}
}
