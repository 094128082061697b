package business

import (
	"maps"
	"slices"
	"sort"
	"time"
)

// Figures are the report figures of a day or a period; money in cents.
type Figures struct {
	SalesCount int64
	Invoiced   int64
	Collected  int64
	Refunded   int64
	Expenses   int64
	// ByMethod is collected by the payment's method; ByType is expenses by
	// expense_type, naming at most MaxExpenseTypes types, and OtherTypes
	// the expenses of the types past them: ByType's sum and OtherTypes
	// make Expenses, to the cent.
	ByMethod   map[string]int64
	ByType     map[string]int64
	OtherTypes int64
}

// MaxExpenseTypes is how many expense types a day's or a month's figures
// name, and each period and the totals of a summary: the expenses of any
// other type are summed as OtherTypes. It bounds what one day's or month's
// sums keep (50 names of at most 100 characters, 400 bytes each: about
// 21 KB, far inside the 400 KB DynamoDB lets an item hold), whatever the
// number of distinct types written, and what a summary answers.
const MaxExpenseTypes = 50

// Net is collected less refunded and expenses.
func (f Figures) Net() int64 { return f.Collected - f.Refunded - f.Expenses }

// Add adds g to f.
func (f *Figures) Add(g Figures) {
	f.SalesCount += g.SalesCount
	f.Invoiced += g.Invoiced
	f.Collected += g.Collected
	f.Refunded += g.Refunded
	f.Expenses += g.Expenses
	f.ByMethod = addAll(f.ByMethod, g.ByMethod)
	f.ByType = addAll(f.ByType, g.ByType)
	f.OtherTypes += g.OtherTypes
}

func addAll(m, n map[string]int64) map[string]int64 {
	if len(n) == 0 {
		return m
	}
	if m == nil {
		m = map[string]int64{}
	}
	for k, v := range n {
		m[k] += v
		if m[k] == 0 {
			delete(m, k)
		}
	}
	return m
}

// IsZero reports whether f moves nothing.
func (f Figures) IsZero() bool {
	return f.SalesCount == 0 && f.Invoiced == 0 && f.Collected == 0 && f.Refunded == 0 && f.Expenses == 0 &&
		len(f.ByMethod) == 0 && len(f.ByType) == 0 && f.OtherTypes == 0
}

// FoldTypes splits byType, expenses by type to add to a day's or a month's
// figures that name count types already (named tells which), into the
// types to name and the cents to add to OtherTypes: a type named already
// stays named; a new one is named while fewer than MaxExpenseTypes are;
// the rest are folded. A day's or month's figures never stop naming a type
// and never name more than MaxExpenseTypes, so each type is, in them,
// either always named or always folded: its edits and corrections land
// where it was counted. New types are taken by name, so appliers that read
// the same figures split alike. added is how many types it names anew.
func FoldTypes(byType map[string]int64, named func(string) bool, count int) (keep map[string]int64, other int64, added int) {
	keep = map[string]int64{}
	for _, t := range slices.Sorted(maps.Keys(byType)) {
		switch {
		case named(t):
		case count+added < MaxExpenseTypes:
			added++
		default:
			other += byType[t]
			continue
		}
		keep[t] = byType[t]
	}
	return keep, other, added
}

// LimitTypes folds f's expense types past MaxExpenseTypes into OtherTypes:
// the largest (by amount, then by name) stay named.
func (f *Figures) LimitTypes() {
	if len(f.ByType) <= MaxExpenseTypes {
		return
	}
	names := slices.Collect(maps.Keys(f.ByType))
	size := func(t string) int64 {
		if v := f.ByType[t]; v < 0 {
			return -v
		}
		return f.ByType[t]
	}
	sort.Slice(names, func(i, j int) bool {
		if a, b := size(names[i]), size(names[j]); a != b {
			return a > b
		}
		return names[i] < names[j]
	})
	for _, t := range names[MaxExpenseTypes:] {
		f.OtherTypes += f.ByType[t]
		delete(f.ByType, t)
	}
}

// Clone returns f with maps of its own.
func (f Figures) Clone() Figures {
	f.ByMethod, f.ByType = maps.Clone(f.ByMethod), maps.Clone(f.ByType)
	return f
}

// FigureChange is what one change moves in the figures, and the instant it
// counts at: money is counted where it happened (a payment when it was
// made), a sale's invoiced total and an expense where they were created.
type FigureChange struct {
	At time.Time
	Figures
}

func nonZero(cs ...FigureChange) []FigureChange {
	out := cs[:0]
	for _, c := range cs {
		if !c.IsZero() {
			out = append(out, c)
		}
	}
	return out
}

// PaymentFigures is what a payment moves: its amount, by its method, when
// it was made.
func PaymentFigures(p Payment) []FigureChange { return nonZero(paymentFigures(&p)) }

func paymentFigures(p *Payment) FigureChange {
	if p == nil {
		return FigureChange{}
	}
	c := p.Amount.Cents()
	return FigureChange{At: p.PaymentAt, Figures: Figures{Collected: c, ByMethod: map[string]int64{p.Method: c}}}
}

// SaleCreatedFigures is what a new sale moves: one sale and its total on the
// day it was created, and its first payment, if any.
func SaleCreatedFigures(s Sale, p *Payment) []FigureChange {
	return nonZero(FigureChange{At: s.CreatedAt, Figures: Figures{SalesCount: 1, Invoiced: s.Total.Cents()}}, paymentFigures(p))
}

// SaleEditedFigures is what an edit of a sale moves: a changed total on the
// day the sale was created, and the payment the edit recorded, if any.
func SaleEditedFigures(old, next Sale, p *Payment) []FigureChange {
	return nonZero(FigureChange{At: old.CreatedAt, Figures: Figures{Invoiced: next.Total.Cents() - old.Total.Cents()}}, paymentFigures(p))
}

// RefundFigures is what a refund moves: its amount, when it was made.
func RefundFigures(r Refund) []FigureChange {
	return nonZero(FigureChange{At: r.RefundedAt, Figures: Figures{Refunded: r.Amount.Cents()}})
}

// VoidFigures is what a void moves: the sale leaves the count and total of
// the day it was created (what it collected and refunded stays: that money
// moved).
func VoidFigures(s Sale) []FigureChange {
	return nonZero(FigureChange{At: s.CreatedAt, Figures: Figures{SalesCount: -1, Invoiced: -s.Total.Cents()}})
}

// ExpenseCreatedFigures is what a new expense moves, on the day it was created.
func ExpenseCreatedFigures(e Expense) []FigureChange {
	c := e.Amount.Cents()
	return nonZero(FigureChange{At: e.CreatedAt, Figures: Figures{Expenses: c, ByType: map[string]int64{e.ExpenseType: c}}})
}

// ExpenseEditedFigures is what an edit of an expense moves, on the day it was
// created: the change of amount, and of type.
func ExpenseEditedFigures(old, next Expense) []FigureChange {
	f := Figures{Expenses: next.Amount.Cents() - old.Amount.Cents()}
	f.ByType = addAll(addAll(nil, map[string]int64{old.ExpenseType: -old.Amount.Cents()}), map[string]int64{next.ExpenseType: next.Amount.Cents()})
	return nonZero(FigureChange{At: old.CreatedAt, Figures: f})
}

// FiguresByDate adds up changes by the local date of their instants in hist
// (yyyy-mm-dd), and those days by month (yyyy-mm): what applying them moves
// in the day and month sums.
func FiguresByDate(hist TimezoneHistory, changes []FigureChange) (days, months map[string]Figures) {
	days, months = map[string]Figures{}, map[string]Figures{}
	for _, c := range changes {
		d := hist.LocalDate(c.At)
		f := days[d]
		f.Add(c.Figures)
		days[d] = f
	}
	for d, f := range days {
		m := months[d[:7]]
		m.Add(f)
		months[d[:7]] = m
	}
	return days, months
}
