package api_test

// The model's books: each sale, payment (by its method), change of a
// sale's total, refund, void, expense (by its type) and edit of one is a
// fact at an instant, dated by the local date the timezone history gives
// that instant; and the reports the books give, which the API's must
// answer to the cent.

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/money"

	"github.com/shopspring/decimal"
)

// mFact is one fact of the books: what a change moved (money in cents) and
// the instant it counts at.
type mFact struct {
	at                                             time.Time
	count, invoiced, collected, refunded, expenses int64
	byMethod, byType                               map[string]int64
}

func (a *mAccount) book(f mFact) { a.facts = append(a.facts, f) }

// bookNewSale books a new sale: one sale more and its total where it was
// created, and its first payment (amount_paid) where it was made.
func (a *mAccount) bookNewSale(s *mSale) {
	a.book(mFact{at: parseStamp(s.created), count: 1, invoiced: cents(s.total)})
	a.bookPayment(s.paid, s.payType)
}

// bookPayment books a payment made now by method.
func (a *mAccount) bookPayment(amount money.Amount, method string) {
	if c := cents(amount); c != 0 {
		a.book(mFact{at: a.clk.stamp(), collected: c, byMethod: map[string]int64{method: c}})
	}
}

func cents(x money.Amount) int64 { return decimal.RequireFromString(x.String()).Shift(2).IntPart() }

func fmtCents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

func parseStamp(s string) time.Time {
	t, err := time.Parse(business.TimeFormat, s)
	if err != nil {
		panic(err)
	}
	return t
}

// mFigures are the figures of a period.
type mFigures struct {
	count, invoiced, collected, refunded, expenses int64
	byMethod, byType                               map[string]int64
}

func (f *mFigures) add(x mFigures) {
	f.count += x.count
	f.invoiced += x.invoiced
	f.collected += x.collected
	f.refunded += x.refunded
	f.expenses += x.expenses
	f.byMethod, f.byType = addCents(f.byMethod, x.byMethod), addCents(f.byType, x.byType)
}

func addCents(m, n map[string]int64) map[string]int64 {
	if m == nil {
		m = map[string]int64{}
	}
	for k, v := range n {
		m[k] += v
	}
	return m
}

// json is f as a report shows it: maps without the entries that add up to
// nothing. The model's few expense types are all named (none past the 50
// a report names), so nothing is in other types.
func (f mFigures) json() map[string]any {
	toText := func(m map[string]int64) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if v != 0 {
				out[k] = fmtCents(v)
			}
		}
		return out
	}
	return map[string]any{"sales_count": f.count, "invoiced": fmtCents(f.invoiced), "collected": fmtCents(f.collected),
		"refunded": fmtCents(f.refunded), "expenses": fmtCents(f.expenses), "net": fmtCents(f.collected - f.refunded - f.expenses),
		"collected_by_method": toText(f.byMethod), "expenses_by_type": toText(f.byType), "expenses_other_types": fmtCents(0)}
}

// periodsOf splits the dates from..to into periods of group: days, weeks
// from Monday to Sunday, or months, the first and last cut at from and to.
func periodsOf(from, to time.Time, group string) [][2]time.Time {
	key := func(d time.Time) time.Time {
		switch group {
		case "day":
			return d
		case "week":
			return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
		}
		return time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	var out [][2]time.Time
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		if n := len(out); n > 0 && key(d).Equal(key(out[n-1][0])) {
			out[n-1][1] = d
		} else {
			out = append(out, [2]time.Time{d, d})
		}
	}
	return out
}

// wantSummary is the summary the books give at now for from, to and group
// as sent ("" when left out), or the parameter a 400 must name.
func (a *mAccount) wantSummary(from, to, group string, now time.Time) (map[string]any, string) {
	const day = business.DateFormat
	if group == "" {
		group = "month"
	}
	if to == "" {
		to = a.localDate(now)
	}
	end, err := time.Parse(day, to)
	if err != nil {
		return nil, "to"
	}
	if from == "" {
		switch group {
		case "day":
			from = end.AddDate(0, 0, -30).Format(day)
		case "week":
			from = end.AddDate(0, 0, -((int(end.Weekday())+6)%7)-77).Format(day)
		default:
			from = time.Date(end.Year(), end.Month()-11, 1, 0, 0, 0, 0, time.UTC).Format(day)
		}
	}
	start, err := time.Parse(day, from)
	if err != nil {
		return nil, "from"
	}
	days := int(end.Sub(start).Hours()/24) + 1
	months := (end.Year()-start.Year())*12 + int(end.Month()) - int(start.Month()) + 1
	if end.Before(start) || group == "day" && days > 400 || group == "week" && days > 3*366 || group == "month" && months > 120 {
		return nil, "to"
	}
	byDate := map[string]mFigures{}
	for _, f := range a.facts {
		d := a.localDate(f.at)
		x := byDate[d]
		x.add(mFigures{count: f.count, invoiced: f.invoiced, collected: f.collected, refunded: f.refunded, expenses: f.expenses,
			byMethod: f.byMethod, byType: f.byType})
		byDate[d] = x
	}
	var periods []any
	var totals mFigures
	for _, p := range periodsOf(start, end, group) {
		var sum mFigures
		for d := p[0]; !d.After(p[1]); d = d.AddDate(0, 0, 1) {
			sum.add(byDate[d.Format(day)])
		}
		totals.add(sum)
		j := sum.json()
		j["start"], j["end"] = p[0].Format(day), p[1].Format(day)
		periods = append(periods, j)
	}
	// timezone: the zone in effect at now, the one "today" is in; complete:
	// no change the model makes is set aside.
	return map[string]any{"from": from, "to": to, "group_by": group, "timezone": a.zoneAt(now).String(), "currency": "GHS",
		"as_of": now.Format(business.TimeFormat), "complete": true, "periods": periods, "totals": totals.json()}, ""
}

// wantReceivables is the receivables report the model's sales give on asOf
// ("": today where the account is).
func (a *mAccount) wantReceivables(asOf string, now time.Time) map[string]any {
	if asOf == "" {
		asOf = a.localDate(now)
	}
	day, _ := time.Parse(business.DateFormat, asOf)
	type debtor struct {
		id, owed int64
		aging    [5]int64
	}
	aging := func(b [5]int64) map[string]any {
		return map[string]any{"current": fmtCents(b[0]), "1_30": fmtCents(b[1]), "31_60": fmtCents(b[2]), "61_90": fmtCents(b[3]), "over_90": fmtCents(b[4])}
	}
	var total int64
	var all [5]int64
	open := 0
	by := map[int64]*debtor{}
	for _, s := range a.sales {
		if s.status != business.StatusDraft && s.status != business.StatusPartial {
			continue
		}
		open++
		owed := cents(s.total) - cents(s.paid)
		due, _ := time.Parse(business.DateFormat, s.dueDate)
		late, bucket := int(day.Sub(due).Hours()/24), 4
		switch {
		case late <= 0:
			bucket = 0
		case late <= 30:
			bucket = 1
		case late <= 60:
			bucket = 2
		case late <= 90:
			bucket = 3
		}
		total += owed
		all[bucket] += owed
		d := by[s.customer]
		if d == nil {
			d = &debtor{id: s.customer}
			by[s.customer] = d
		}
		d.owed += owed
		d.aging[bucket] += owed
	}
	debtors := slices.Collect(maps.Values(by))
	sort.Slice(debtors, func(i, j int) bool {
		if debtors[i].owed != debtors[j].owed {
			return debtors[i].owed > debtors[j].owed
		}
		return debtors[i].id < debtors[j].id
	})
	customers := []any{}
	for i, d := range debtors {
		if i == 20 {
			break
		}
		customers = append(customers, map[string]any{"customer_id": strconv.FormatInt(d.id, 10), "name": a.customers[d.id].name,
			"outstanding": fmtCents(d.owed), "buckets": aging(d.aging)})
	}
	return map[string]any{"as_of": asOf, "currency": "GHS", "outstanding": fmtCents(total), "open_sales": open,
		"buckets": aging(all), "customers": customers}
}

func (x *mItem) status() string {
	switch {
	case x.qty.IsZero():
		return business.StockOut
	case x.qty.LessThanOrEqual(x.minAlert):
		return business.StockLow
	}
	return business.StockIn
}

// wantInventory is the inventory report the model's items give: values
// summed exactly and rounded once, half away from zero.
func (a *mAccount) wantInventory() map[string]any {
	cost, retail := decimal.Zero, decimal.Zero
	counts := map[string]any{business.StockIn: 0, business.StockLow: 0, business.StockOut: 0}
	var short []*mItem
	for _, x := range a.items {
		cost = cost.Add(x.qty.Mul(x.cost))
		retail = retail.Add(x.qty.Mul(decimal.RequireFromString(x.price)))
		st := x.status()
		counts[st] = counts[st].(int) + 1
		if st != business.StockIn {
			short = append(short, x)
		}
	}
	sort.Slice(short, func(i, j int) bool {
		x, y := short[i], short[j]
		if xo, yo := x.qty.IsZero(), y.qty.IsZero(); xo != yo {
			return xo
		}
		if c := x.qty.Cmp(y.qty); c != 0 {
			return c < 0
		}
		return x.code < y.code
	})
	alerts := []any{}
	for i, x := range short {
		if i == 100 {
			break
		}
		alerts = append(alerts, map[string]any{"item_code": x.code, "item_name": x.name, "quantity": money.MustQuantity(x.qty.String()).String(),
			"minimum_qty_alert": money.MustQuantity(x.minAlert.String()).String(), "status": x.status()})
	}
	return map[string]any{"currency": "GHS", "items_count": len(a.items), "stock_value": cost.Round(2).StringFixed(2),
		"retail_value": retail.Round(2).StringFixed(2), "counts": counts, "low_and_out_items": alerts,
		"low_and_out_truncated": len(short) > 100}
}

// booksText shows the account's timezone history and facts, for a failure.
func (a *mAccount) booksText() string {
	var out strings.Builder
	for _, s := range a.tz {
		fmt.Fprintf(&out, "\n  zone %s from %v", s.name, stampOrNull(s.from))
	}
	for _, f := range a.facts {
		fmt.Fprintf(&out, "\n  %s (%s): count %d invoiced %s collected %s %v refunded %s expenses %s %v", f.at.Format(business.TimeFormat),
			a.localDate(f.at), f.count, fmtCents(f.invoiced), fmtCents(f.collected), f.byMethod, fmtCents(f.refunded), fmtCents(f.expenses), f.byType)
	}
	return out.String()
}
