package business

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
	_ "time/tzdata" // every IANA zone, whatever the machine has installed

	"bizdata/shared/money"
)

// Reports: what the figures of a period are, and which figures each change
// moves. Everything here is arithmetic on values; where the figures are kept
// and how they are read is the store's.

// DefaultTimezone is an account's timezone until its owner sets one.
const DefaultTimezone = "UTC"

// TimezoneDelay is how long after a timezone change the new zone takes
// effect. The figures of a change are dated when they are applied, which may
// be a moment after the change itself (see the store); a delay longer than
// any settings write can take means the history an applier reads always
// holds every zone in effect at the instant it dates.
const TimezoneDelay = 15 * time.Second

// MaxTimezoneChanges bounds an account's timezone history (it lives in the
// account item).
const MaxTimezoneChanges = 100

// LoadTimezone returns the IANA zone named name ("Africa/Nairobi", "UTC").
// Returns EINVALID naming timezone for anything else, "Local" included.
func LoadTimezone(name string) (*time.Location, error) {
	if name == "" || name == "Local" || len(name) > 64 || strings.ContainsAny(name, " \\") {
		return nil, FieldErrors{"timezone": fmt.Sprintf("%q is not an IANA timezone name such as Africa/Nairobi or UTC", name)}.Err()
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, FieldErrors{"timezone": fmt.Sprintf("%q is not an IANA timezone name such as Africa/Nairobi or UTC", name)}.Err()
	}
	return loc, nil
}

// TimezoneSpan is one entry of an account's timezone history: Name is in
// effect from From (the zero time: from the start) until the next entry's.
type TimezoneSpan struct {
	Name string
	From time.Time
}

// TimezoneHistory is every timezone an account has had, oldest first. A
// change never rewrites the past: each instant is dated, once and for good,
// in the zone in effect at that instant.
type TimezoneHistory []TimezoneSpan

// Current returns the newest zone (which may take effect a few seconds from
// now) and when it took or takes effect (zero: from the start).
func (h TimezoneHistory) Current() TimezoneSpan {
	if len(h) == 0 {
		return TimezoneSpan{Name: DefaultTimezone}
	}
	return h[len(h)-1]
}

// At returns the zone in effect at t.
func (h TimezoneHistory) At(t time.Time) *time.Location {
	name := DefaultTimezone
	for _, s := range h {
		if s.From.After(t) {
			break
		}
		name = s.Name
	}
	loc, err := time.LoadLocation(name)
	if err != nil { // names are checked when set
		return time.UTC
	}
	return loc
}

// LocalDate returns the date of instant t where the account was at t.
func (h TimezoneHistory) LocalDate(t time.Time) string {
	return t.In(h.At(t)).Format(DateFormat)
}

// Today returns the local date of now in the newest zone in effect.
func (h TimezoneHistory) Today(now time.Time) string { return h.LocalDate(now) }

// Change returns the history with name in effect from TimezoneDelay after
// now (whole seconds), and that instant. The history only grows: a change
// made while another still waits to take effect follows it (the earlier one
// is in effect for the seconds between), so no instant is ever dated in a
// zone other than the one a reader of the history found for it. Setting the
// newest zone again changes nothing. Returns EINVALID for an unknown zone and
// ECONFLICT when the history is full (MaxTimezoneChanges changes).
func (h TimezoneHistory) Change(name string, now time.Time) (TimezoneHistory, time.Time, error) {
	if _, err := LoadTimezone(name); err != nil {
		return nil, time.Time{}, err
	}
	cur := h.Current()
	if cur.Name == name {
		return h, cur.From, nil
	}
	from := now.Truncate(time.Second).Add(TimezoneDelay)
	if !from.After(cur.From) {
		from = cur.From.Add(time.Second)
	}
	out := append(TimezoneHistory(nil), h...)
	if len(out) == 0 {
		out = TimezoneHistory{{Name: DefaultTimezone}}
	}
	if len(out) > MaxTimezoneChanges {
		return nil, time.Time{}, Errorf(ECONFLICT, "timezone has been changed %d times, the most an account keeps", MaxTimezoneChanges)
	}
	return append(out, TimezoneSpan{Name: name, From: from}), from, nil
}

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

// Report groupings.
const (
	GroupByDay   = "day"
	GroupByWeek  = "week"
	GroupByMonth = "month"
)

// The longest range each grouping reports at once.
const (
	MaxDaysByDay     = 400
	MaxDaysByWeek    = 3 * 366
	MaxMonthsByMonth = 120
)

// Period is a span of local dates, both inclusive.
type Period struct {
	Start, End string
}

// DefaultRange returns the range a summary covers when from or to is not
// given: to defaults to today, and from to the start of the twelfth month
// (by month), the twelfth week (by week) or the 31st day (by day) back.
func DefaultRange(from, to, groupBy, today string) (string, string) {
	if to == "" {
		to = today
	}
	if from != "" {
		return from, to
	}
	t, err := time.Parse(DateFormat, to)
	if err != nil {
		return from, to // reported by ReportPeriods
	}
	switch groupBy {
	case GroupByDay:
		t = t.AddDate(0, 0, -30)
	case GroupByWeek:
		t = weekStart(t).AddDate(0, 0, -7*11)
	default:
		t = time.Date(t.Year(), t.Month()-11, 1, 0, 0, 0, 0, time.UTC)
	}
	return t.Format(DateFormat), to
}

// weekStart is the Monday of t's week (weeks run Monday to Sunday, as ISO
// 8601 has them).
func weekStart(t time.Time) time.Time {
	return t.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7))
}

// ReportPeriods splits the local dates from..to (inclusive) into periods by
// day, week (Monday to Sunday) or month; the first and last are cut at from
// and to. Returns EINVALID naming the parameter: a date that is not one,
// to before from, an unknown grouping, or a range longer than the grouping
// allows (400 days by day, 3 years by week, 10 years by month).
func ReportPeriods(from, to, groupBy string) ([]Period, error) {
	if groupBy == "" {
		groupBy = GroupByMonth
	}
	if groupBy != GroupByDay && groupBy != GroupByWeek && groupBy != GroupByMonth {
		return nil, FieldErrors{"group_by": "must be day, week or month"}.Err()
	}
	f, ferr := time.Parse(DateFormat, from)
	t, terr := time.Parse(DateFormat, to)
	if fe := (FieldErrors{}); ferr != nil || terr != nil {
		if ferr != nil && from != "" { // an empty from follows an unreadable to
			fe.Add("from", "must be a real date YYYY-MM-DD")
		}
		if terr != nil {
			fe.Add("to", "must be a real date YYYY-MM-DD")
		}
		return nil, fe.Err()
	}
	if t.Before(f) {
		return nil, FieldErrors{"to": "must not be before from"}.Err()
	}
	days := int(t.Sub(f).Hours()/24) + 1
	switch {
	case groupBy == GroupByDay && days > MaxDaysByDay:
		return nil, FieldErrors{"to": fmt.Sprintf("must be at most %d days from from when group_by is day (asked %d); group by week or month for longer", MaxDaysByDay, days)}.Err()
	case groupBy == GroupByWeek && days > MaxDaysByWeek:
		return nil, FieldErrors{"to": fmt.Sprintf("must be at most %d days from from when group_by is week (asked %d); group by month for longer", MaxDaysByWeek, days)}.Err()
	case groupBy == GroupByMonth && (t.Year()-f.Year())*12+int(t.Month()-f.Month())+1 > MaxMonthsByMonth:
		return nil, FieldErrors{"to": fmt.Sprintf("must be within %d months (10 years) of from", MaxMonthsByMonth)}.Err()
	}
	var out []Period
	for start := f; !start.After(t); {
		var next time.Time
		switch groupBy {
		case GroupByDay:
			next = start.AddDate(0, 0, 1)
		case GroupByWeek:
			next = weekStart(start).AddDate(0, 0, 7)
		default:
			next = time.Date(start.Year(), start.Month()+1, 1, 0, 0, 0, 0, time.UTC)
		}
		end := next.AddDate(0, 0, -1)
		if end.After(t) {
			end = t
		}
		out = append(out, Period{Start: start.Format(DateFormat), End: end.Format(DateFormat)})
		start = next
	}
	return out, nil
}

// FullMonth reports whether p is a whole calendar month, whose figures the
// month's sums hold.
func (p Period) FullMonth() bool {
	start, err := time.Parse(DateFormat, p.Start)
	if err != nil || start.Day() != 1 {
		return false
	}
	return start.AddDate(0, 1, -1).Format(DateFormat) == p.End
}

// SumsNeeded returns what a summary of periods reads: the whole months
// (yyyy-mm) whose sums stand for them, and the ranges of days for the rest
// (adjacent periods in one range).
func SumsNeeded(periods []Period) (days []Period, months []string) {
	for _, p := range periods {
		switch {
		case p.FullMonth():
			months = append(months, p.Start[:7])
		case len(days) > 0 && nextDay(days[len(days)-1].End) == p.Start:
			days[len(days)-1].End = p.End
		default:
			days = append(days, p)
		}
	}
	return days, months
}

func nextDay(d string) string {
	t, _ := time.Parse(DateFormat, d)
	return t.AddDate(0, 0, 1).Format(DateFormat)
}

// PeriodFigures is one period of a summary with its figures.
type PeriodFigures struct {
	Period
	Figures
}

// Summarize adds each day's figures (by local date) into the periods, and
// the periods into the totals; a whole month takes its month's sums (by
// yyyy-mm) instead, when months is given. Days outside every period are
// left out. Each period and the totals name at most MaxExpenseTypes
// expense types (LimitTypes).
func Summarize(periods []Period, days, months map[string]Figures) ([]PeriodFigures, Figures) {
	out := make([]PeriodFigures, len(periods))
	var total Figures
	dates := make([]string, 0, len(days))
	for d := range days {
		dates = append(dates, d)
	}
	sort.Strings(dates)
	for i, p := range periods {
		out[i].Period = p
		if months != nil && p.FullMonth() {
			out[i].Add(months[p.Start[:7]])
		} else {
			for _, d := range dates {
				if d >= p.Start && d <= p.End {
					out[i].Add(days[d])
				}
			}
		}
		total.Add(out[i].Figures)
		out[i].LimitTypes()
	}
	total.LimitTypes()
	return out, total
}

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
	sort.Slice(r.Debtors, func(i, j int) bool {
		a, b := r.Debtors[i], r.Debtors[j]
		if a.Outstanding != b.Outstanding {
			return a.Outstanding > b.Outstanding
		}
		return a.CustomerID < b.CustomerID
	})
	if len(r.Debtors) > MaxDebtors {
		r.Debtors = r.Debtors[:MaxDebtors]
	}
	return r
}

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
