package business

import (
	"fmt"
	"testing"
	"time"

	"bizdata/shared/money"
)

func at(s string) time.Time {
	t, err := time.Parse(TimeFormat, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestTimezoneHistory: each instant is dated in the zone in effect at it; a
// change takes effect TimezoneDelay later, replaces one not yet in effect,
// and going back to the zone in effect drops the pending one.
func TestTimezoneHistory(t *testing.T) {
	var h TimezoneHistory
	if got := h.LocalDate(at("2026-01-31 22:30:00")); got != "2026-01-31" {
		t.Fatalf("UTC by default: %s", got)
	}
	h, from, err := h.Change("Africa/Nairobi", at("2026-01-20 09:00:00"))
	if err != nil || from != at("2026-01-20 09:00:15") || len(h) != 2 || h[0].Name != "UTC" {
		t.Fatalf("first change: %v %v %v", h, from, err)
	}
	for _, c := range []struct{ at, want string }{
		{"2026-01-19 22:00:00", "2026-01-19"}, // before the change: UTC
		{"2026-01-20 09:00:14", "2026-01-20"},
		{"2026-01-31 20:59:59", "2026-01-31"}, // 23:59:59 in Nairobi
		{"2026-01-31 22:30:00", "2026-02-01"}, // 01:30 in Nairobi
	} {
		if got := h.LocalDate(at(c.at)); got != c.want {
			t.Errorf("LocalDate(%s) = %s, want %s", c.at, got, c.want)
		}
	}
	// A change, and another before it took effect: it follows the first,
	// which is in effect for the seconds between (the history only grows).
	h2, _, _ := h.Change("Asia/Kathmandu", at("2026-03-01 00:00:00"))
	h2, from, _ = h2.Change("America/New_York", at("2026-03-01 00:00:05"))
	if len(h2) != 4 || h2[2].Name != "Asia/Kathmandu" || h2[3].Name != "America/New_York" || from != at("2026-03-01 00:00:20") {
		t.Fatalf("a change while another waits: %v %v", h2, from)
	}
	if got := h2.LocalDate(at("2026-03-01 00:00:17")); got != "2026-03-01" {
		t.Errorf("between the two: %s", got)
	}
	// A change whose clock is behind the newest entry's still follows it.
	h3, from, _ := h2.Change("UTC", at("2026-03-01 00:00:00"))
	if from != at("2026-03-01 00:00:21") || len(h3) != 5 {
		t.Fatalf("a change behind the newest: %v %v", h3, from)
	}
	// Kathmandu is UTC+5:45.
	h4, _, _ := TimezoneHistory(nil).Change("Asia/Kathmandu", at("2026-01-01 00:00:00"))
	if got := h4.LocalDate(at("2026-05-31 18:15:00")); got != "2026-06-01" {
		t.Errorf("Kathmandu: %s", got)
	}
	if got := h4.LocalDate(at("2026-05-31 18:14:59")); got != "2026-05-31" {
		t.Errorf("Kathmandu: %s", got)
	}
	for _, bad := range []string{"", "Local", "Mars/Olympus", "utc ", "../etc/passwd"} {
		if _, _, err := h.Change(bad, at("2026-03-01 00:00:00")); ErrorCode(err) != EINVALID {
			t.Errorf("Change(%q): %v", bad, err)
		}
	}
}

// TestReportPeriods: ranges split by day, ISO week and month, cut at their
// ends, and refused past each grouping's limit.
func TestReportPeriods(t *testing.T) {
	for _, c := range []struct{ from, to, by, want string }{
		{"2026-01-30", "2026-02-01", "day", "[{2026-01-30 2026-01-30} {2026-01-31 2026-01-31} {2026-02-01 2026-02-01}]"},
		{"2026-05-01", "2026-05-12", "week", "[{2026-05-01 2026-05-03} {2026-05-04 2026-05-10} {2026-05-11 2026-05-12}]"},
		{"2026-01-15", "2026-03-10", "month", "[{2026-01-15 2026-01-31} {2026-02-01 2026-02-28} {2026-03-01 2026-03-10}]"},
		{"2028-02-01", "2028-02-29", "", "[{2028-02-01 2028-02-29}]"},
	} {
		p, err := ReportPeriods(c.from, c.to, c.by)
		if err != nil || fmt.Sprint(p) != c.want {
			t.Errorf("ReportPeriods(%s, %s, %s) = %v %v, want %s", c.from, c.to, c.by, p, err, c.want)
		}
	}
	if p, err := ReportPeriods("2025-01-01", "2026-02-04", "day"); err != nil || len(p) != 400 {
		t.Errorf("400 days by day: %d %v", len(p), err)
	}
	for _, c := range []struct{ from, to, by, field string }{
		{"2025-01-01", "2026-02-05", "day", "to"},
		{"2020-01-01", "2026-01-01", "week", "to"},
		{"2016-01-01", "2026-01-01", "month", "to"},
		{"2026-01-02", "2026-01-01", "day", "to"},
		{"2026-02-30", "2026-03-01", "day", "from"},
		{"2026-01-01", "2026-01-02", "year", "group_by"},
	} {
		_, err := ReportPeriods(c.from, c.to, c.by)
		if e, ok := err.(*Error); !ok || e.Fields[c.field] == "" {
			t.Errorf("ReportPeriods(%s, %s, %s): %v, want a field error on %s", c.from, c.to, c.by, err, c.field)
		}
	}
	p, _ := ReportPeriods("2026-01-15", "2027-01-10", "month")
	if days, months := SumsNeeded(p); fmt.Sprint(days) != "[{2026-01-15 2026-01-31} {2027-01-01 2027-01-10}]" || len(months) != 11 || months[0] != "2026-02" || months[10] != "2026-12" {
		t.Errorf("a year by month reads days %v and months %v", days, months)
	}
	p, _ = ReportPeriods("2026-01-15", "2026-02-10", "week")
	if days, months := SumsNeeded(p); fmt.Sprint(days) != "[{2026-01-15 2026-02-10}]" || len(months) != 0 {
		t.Errorf("weeks read days %v and months %v", days, months)
	}
	if f, to := DefaultRange("", "", "month", "2026-11-24"); f != "2025-12-01" || to != "2026-11-24" {
		t.Errorf("default by month: %s..%s", f, to)
	}
	if f, _ := DefaultRange("", "", "week", "2026-11-24"); f != "2026-09-07" { // 24 Nov 2026 is a Tuesday
		t.Errorf("default by week: %s", f)
	}
	if f, _ := DefaultRange("", "", "day", "2026-11-24"); f != "2026-10-25" {
		t.Errorf("default by day: %s", f)
	}
}

// TestFigureChanges: what each change moves, and where, and that periods
// add their days and the totals their periods.
func TestFigureChanges(t *testing.T) {
	created := at("2026-02-01 10:00:00")
	old := Sale{CreatedAt: created, Total: money.MustAmount("50.00")}
	next := old
	next.Total = money.MustAmount("45.50")
	pay := &Payment{Amount: money.MustAmount("20.00"), Method: "Cash", PaymentAt: at("2026-03-02 08:00:00")}
	got := SaleEditedFigures(old, next, pay)
	if len(got) != 2 || got[0].At != created || got[0].Invoiced != -450 || got[1].At != pay.PaymentAt || got[1].Collected != 2000 || got[1].ByMethod["Cash"] != 2000 {
		t.Fatalf("edit: %+v", got)
	}
	if got := SaleEditedFigures(old, old, nil); len(got) != 0 {
		t.Fatalf("an edit of notes moves %+v", got)
	}
	if got := VoidFigures(old); len(got) != 1 || got[0].SalesCount != -1 || got[0].Invoiced != -5000 || got[0].At != created {
		t.Fatalf("void: %+v", got)
	}
	e := Expense{ExpenseType: "Fuel", Amount: money.MustAmount("3.00"), CreatedAt: created}
	e2 := e
	e2.ExpenseType, e2.Amount = "Transport", money.MustAmount("3.50")
	got = ExpenseEditedFigures(e, e2)
	if len(got) != 1 || got[0].Expenses != 50 || fmt.Sprint(got[0].ByType) != "map[Fuel:-300 Transport:350]" {
		t.Fatalf("expense edit: %+v", got)
	}
	days := map[string]Figures{
		"2026-01-31": {Expenses: 200, ByType: map[string]int64{"Fuel": 200}},
		"2026-02-01": {SalesCount: 1, Invoiced: 5000, Collected: 2000, ByMethod: map[string]int64{"Cash": 2000}},
		"2026-03-05": {Refunded: 100},
	}
	periods, _ := ReportPeriods("2026-01-01", "2026-02-28", "month")
	out, total := Summarize(periods, days, nil)
	if out[0].Expenses != 200 || out[1].Invoiced != 5000 || total.Net() != 1800 || total.Refunded != 0 {
		t.Fatalf("summary %+v total %+v", out, total)
	}
}

// TestAgeReceivables: days past due by bucket at each edge, paid-up sales
// left out, debtors by what they owe then by id, at most 20.
func TestAgeReceivables(t *testing.T) {
	var sales []OpenSale
	for i, due := range []string{"2026-07-01", "2026-06-30", "2026-06-01", "2026-05-31", "2026-05-02", "2026-05-01", "2026-04-02", "2026-04-01"} {
		sales = append(sales, OpenSale{CustomerID: int64(i + 1), Total: money.MustAmount("10.00"), Paid: money.MustAmount("1.00"), DueDate: due})
	}
	sales = append(sales, OpenSale{CustomerID: 99, Total: money.MustAmount("5.00"), Paid: money.MustAmount("5.00"), DueDate: "2026-01-01"})
	r := AgeReceivables("2026-07-01", sales)
	// 0 | 1, 30 | 31, 60 | 61, 90 | 91 days past due
	if r.Outstanding != 7200 || r.Current != 900 || r.Days1To30 != 1800 || r.Days31To60 != 1800 || r.Days61To90 != 1800 || r.Over90 != 900 {
		t.Fatalf("aging %+v", r)
	}
	if len(r.Debtors) != 8 || r.Debtors[0].CustomerID != 1 || r.Debtors[7].CustomerID != 8 {
		t.Fatalf("debtors %+v", r.Debtors)
	}
	var many []OpenSale
	for i := 1; i <= 25; i++ {
		many = append(many, OpenSale{CustomerID: int64(i), Total: money.MustAmount(fmt.Sprintf("%d.00", i)), DueDate: "2026-07-01"})
	}
	if d := AgeReceivables("2026-07-01", many).Debtors; len(d) != MaxDebtors || d[0].CustomerID != 25 || d[19].CustomerID != 6 {
		t.Fatalf("top debtors %+v", d)
	}
}

// TestReportStock: values rounded once, half away from zero; statuses
// counted; alerts out first.
func TestReportStock(t *testing.T) {
	items := []Item{
		{ItemCode: "A", Quantity: money.MustQuantity("0.001"), MinimumQtyAlert: money.MustQuantity("1"), UnitCost: money.MustAmount("5.00"), ItemPrice: money.MustAmount("5.00")},
		{ItemCode: "B", Quantity: money.MustQuantity("0"), UnitCost: money.MustAmount("9.99")},
		{ItemCode: "C", Quantity: money.MustQuantity("100"), MinimumQtyAlert: money.MustQuantity("1"), UnitCost: money.MustAmount("0.01")},
	}
	r := ReportStock(items)
	// 0.005 + 1.00 = 1.005 -> 1.01; retail 0.005 -> 0.01
	if r.StockValue != "1.01" || r.RetailValue != "0.01" || r.InStock != 1 || r.LowStock != 1 || r.OutOfStock != 1 || r.Alerts[0].ItemCode != "B" || r.Alerts[1].ItemCode != "A" {
		t.Fatalf("stock report %+v", r)
	}
	// The largest stock at the largest price, twice: past int64 cents.
	big := Item{Quantity: money.MaxQuantity(), UnitCost: money.MustAmount("99999999.99"), ItemPrice: money.MustAmount("99999999.99")}
	if r := ReportStock([]Item{big, big}); r.StockValue != "199999999979800000.00" {
		t.Fatalf("the largest stock is worth %s", r.StockValue)
	}
}

// TestFoldTypes: a day's or month's figures name a type they name already,
// and new ones while fewer than MaxExpenseTypes are named, by name; the
// rest go to OtherTypes. Once full they stay full, so an edit of a folded
// expense (its old type out, its new one in) folds both sides and the
// figures still add up to the cent.
func TestFoldTypes(t *testing.T) {
	named := map[string]bool{}
	for i := range MaxExpenseTypes - 2 {
		named[fmt.Sprintf("T%02d", i)] = true
	}
	keep, other, added := FoldTypes(map[string]int64{"T00": 5, "New c": 7, "New a": 11, "New b": 13}, func(s string) bool { return named[s] }, len(named))
	if fmt.Sprint(keep) != "map[New a:11 New b:13 T00:5]" || other != 7 || added != 2 {
		t.Fatalf("keep %v, other %d, added %d; want T00 and the first two new types by name kept, New c folded", keep, other, added)
	}
	named["New a"], named["New b"] = true, true
	keep, other, added = FoldTypes(ExpenseEditedFigures(Expense{ExpenseType: "New c", Amount: money.MustAmount("0.07")},
		Expense{ExpenseType: "New d", Amount: money.MustAmount("0.09")})[0].ByType, func(s string) bool { return named[s] }, len(named))
	if len(keep) != 0 || other != 2 || added != 0 {
		t.Fatalf("an edit of a folded expense: keep %v, other %d, added %d; want both sides folded (+0.02)", keep, other, added)
	}
}

// TestSummarizeLimitsTypes: a period whose days name more than
// MaxExpenseTypes types between them names the largest and sums the rest as
// OtherTypes; the totals too; expenses stay exact.
func TestSummarizeLimitsTypes(t *testing.T) {
	days := map[string]Figures{}
	var want int64
	for d := range 3 {
		f := Figures{ByType: map[string]int64{}}
		for i := range 30 {
			c := int64(d*100 + i + 1)
			f.ByType[fmt.Sprintf("D%d-%02d", d, i)] = c
			f.Expenses += c
		}
		days[fmt.Sprintf("2026-03-0%d", d+1)] = f
		want += f.Expenses
	}
	periods := []Period{{Start: "2026-03-01", End: "2026-03-02"}, {Start: "2026-03-03", End: "2026-03-03"}}
	out, total := Summarize(periods, days, nil)
	for _, c := range []struct {
		f                Figures
		smallest, folded string // the smallest type named, the largest folded
	}{{out[0].Figures, "D0-10", "D0-09"}, {total, "D1-10", "D1-09"}} {
		var named int64
		for _, v := range c.f.ByType {
			named += v
		}
		_, kept := c.f.ByType[c.smallest]
		_, lost := c.f.ByType[c.folded]
		if len(c.f.ByType) != MaxExpenseTypes || named+c.f.OtherTypes != c.f.Expenses || !kept || lost {
			t.Fatalf("%d types naming %d, %d other, of %d: want the %d largest named, down to %s", len(c.f.ByType), named, c.f.OtherTypes,
				c.f.Expenses, MaxExpenseTypes, c.smallest)
		}
	}
	if total.Expenses != want || len(out[1].ByType) != 30 || out[1].OtherTypes != 0 {
		t.Fatalf("totals %d (want %d); the third day %d types, %d other", total.Expenses, want, len(out[1].ByType), out[1].OtherTypes)
	}
}
