package business

import (
	"sort"
	"time"

	"bizdata/shared/money"
)

// Aging is money owed by how many days past its due date it is on the
// report's date, in cents: not yet due (or due that day), 1–30 days, 31–60,
// 61–90, more than 90.
type Aging struct {
	Current, Days1To30, Days31To60, Days61To90, Over90 int64
}

func (a *Aging) add(days int, cents int64) {
	switch {
	case days <= 0:
		a.Current += cents
	case days <= 30:
		a.Days1To30 += cents
	case days <= 60:
		a.Days31To60 += cents
	case days <= 90:
		a.Days61To90 += cents
	default:
		a.Over90 += cents
	}
}

// OpenSale is what receivables need of a sale that is neither paid nor void.
type OpenSale struct {
	CustomerID   int64
	CustomerName string
	Total        money.Amount
	Paid         money.Amount
	DueDate      string
}

// Debtor is one customer's share of the receivables.
type Debtor struct {
	CustomerID  int64
	Name        string
	Outstanding int64
	Aging
}

// Receivables is what an account is owed on a date.
type Receivables struct {
	AsOf        string // the date aged on (yyyy-mm-dd)
	Outstanding int64
	Aging
	Open    int      // the sales that owe something
	Debtors []Debtor // the largest first
}

// MaxDebtors is how many customers a receivables report names.
const MaxDebtors = 20

// AgeReceivables adds up what sales owe (total less paid) by days past
// their due date on asOf, in all and for the MaxDebtors customers who owe
// most (ties by customer id). A sale's customer name is the one it carries;
// the store may replace it with the customer's current name.
func AgeReceivables(asOf string, sales []OpenSale) Receivables {
	day, _ := time.Parse(DateFormat, asOf)
	r := Receivables{AsOf: asOf}
	by := map[int64]*Debtor{}
	for _, s := range sales {
		owed := s.Total.Cents() - s.Paid.Cents()
		if owed <= 0 {
			continue
		}
		days := 0
		if due, err := time.Parse(DateFormat, s.DueDate); err == nil {
			days = int(day.Sub(due).Hours() / 24)
		}
		r.Outstanding, r.Open = r.Outstanding+owed, r.Open+1
		r.add(days, owed)
		d := by[s.CustomerID]
		if d == nil {
			d = &Debtor{CustomerID: s.CustomerID, Name: s.CustomerName}
			by[s.CustomerID] = d
		}
		d.Outstanding += owed
		d.add(days, owed)
	}
	for _, d := range by {
		r.Debtors = append(r.Debtors, *d)
	}
	r.Debtors = TopDebtors(r.Debtors)
	return r
}

// TopDebtors orders debtors by what they owe, largest first (ties by
// customer id), and keeps the MaxDebtors first.
func TopDebtors(debtors []Debtor) []Debtor {
	sort.SliceStable(debtors, func(i, j int) bool {
		a, b := debtors[i], debtors[j]
		if a.Outstanding != b.Outstanding {
			return a.Outstanding > b.Outstanding
		}
		return a.CustomerID < b.CustomerID
	})
	if len(debtors) > MaxDebtors {
		debtors = debtors[:MaxDebtors]
	}
	return debtors
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

// Receivables is the receivables on asOf: the sums aged, and debts (the
// largest customers' debts, each under the name it should show) as its
// debtors, those that owe nothing left out.
func (o OwedSums) Receivables(asOf string, debts []Debt) Receivables {
	r := Receivables{AsOf: asOf, Outstanding: o.Outstanding, Aging: o.Age(asOf), Open: o.Open}
	for _, d := range debts {
		if d.Owed > 0 {
			r.Debtors = append(r.Debtors, Debtor{CustomerID: d.CustomerID, Name: d.Name, Outstanding: d.Owed, Aging: AgeDue(asOf, d.Due)})
		}
	}
	r.Debtors = TopDebtors(r.Debtors)
	return r
}
