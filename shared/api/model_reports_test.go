package api_test

// Reports in the model. Every summary (by day, week or month, over ranges
// around the facts and far from them, and by default) is compared with the
// books period by period; receivables with the open sales aged on dates at
// the edges of the buckets, and across a local midnight; the debtors by
// their current names, more of them than the report names now and then;
// the inventory report with the items' values and stock alerts, more items
// shortened than it lists now and then. Bad queries must be refused naming the
// parameter. Reports asked at once, with the stream's consumer applying the
// same changes (and a stale copy of its batch), or after a few hundred
// changes, must all answer the books: each change counted once.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/money"

	"github.com/shopspring/decimal"
	"pgregory.net/rapid"
)

// reportBusyMessage is the 503 of a report asked while more than 100
// changes wait to be added to the figures: each ask adds 100.
const reportBusyMessage = "Report figures are catching up"

// report asks for a report; again while the store says figures are still
// being applied.
func (m *model) report(a *mAccount, path string) reply {
	for tries := 0; ; tries++ {
		r := m.sendAllowing("GET", path, a.key, nil, nil, true)
		if r.code != http.StatusServiceUnavailable {
			return r
		}
		if !strings.Contains(string(r.raw), reportBusyMessage) || tries > 100 {
			m.t.Fatalf("%s: %s", path, r.raw)
		}
	}
}

// checkReport compares a report's answer with want, or with a 400 naming
// bad when bad is not "".
func (m *model) checkReport(a *mAccount, r reply, path string, want map[string]any, bad string) {
	if bad != "" {
		m.expectRefused(r, bad, path)
		return
	}
	m.expect(r, 200, path)
	if d := jsonDiff("report", r.obj("report"), want); d != "" || r.body["message"] != "Report ready" {
		m.t.Fatalf("%s at %s: %s\nthe books:%s", path, m.clk.now().Format(time.RFC3339Nano), d, a.booksText())
	}
}

// summaryPath is the path of a summary for from, to and group ("" left out).
func summaryPath(from, to, group string) string {
	q := url.Values{}
	for k, v := range map[string]string{"from": from, "to": to, "group_by": group} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if len(q) == 0 {
		return "/api/v1/reports/summary"
	}
	return "/api/v1/reports/summary?" + q.Encode()
}

func (m *model) checkSummary(a *mAccount, from, to, group string) {
	path := summaryPath(from, to, group)
	want, bad := a.wantSummary(from, to, group, m.clk.now())
	m.checkReport(a, m.report(a, path), path, want, bad)
}

func receivablesPath(asOf string) string {
	if asOf == "" {
		return "/api/v1/reports/receivables"
	}
	return "/api/v1/reports/receivables?as_of=" + asOf
}

func (m *model) checkReceivables(a *mAccount, asOf string) {
	path := receivablesPath(asOf)
	m.checkReport(a, m.report(a, path), path, a.wantReceivables(asOf, m.clk.now()), "")
}

func (m *model) checkInventory(a *mAccount) {
	const path = "/api/v1/reports/inventory"
	m.checkReport(a, m.report(a, path), path, a.wantInventory(), "")
}

// checkToday compares the figures of every day the books have facts on
// (and today) with them.
func (m *model) checkToday(a *mAccount) {
	first, last := a.localDate(m.clk.now()), a.localDate(m.clk.now())
	for _, f := range a.facts {
		d := a.localDate(f.at)
		first, last = min(first, d), max(last, d)
	}
	m.checkSummary(a, first, last, "day")
}

// drawDate draws a report date around the books: today's or a fact's local
// date, or days to a year either side; or "" (left out).
func (m *model) drawDate(t *rapid.T, a *mAccount, label string) string {
	if rapid.IntRange(0, 4).Draw(t, label+"LeftOut") == 0 {
		return ""
	}
	dates := []string{a.localDate(m.clk.now())}
	for _, f := range a.facts {
		dates = append(dates, a.localDate(f.at))
	}
	slices.Sort(dates)
	d, _ := time.Parse(business.DateFormat, rapid.SampledFrom(slices.Compact(dates)).Draw(t, label))
	shift := rapid.SampledFrom([]int{0, 0, -1, 1, -6, 7, -31, 40, -400, 366}).Draw(t, label+"Shift")
	return d.AddDate(0, 0, shift).Format(business.DateFormat)
}

// summary asks for a summary around the books, by a drawn grouping (or
// the default), and compares it with them.
func (m *model) summary(t *rapid.T) {
	a := m.drawAccount(t)
	from, to := m.drawDate(t, a, "from"), m.drawDate(t, a, "to")
	if from != "" && to != "" && to < from {
		from, to = to, from
	}
	m.checkSummary(a, from, to, rapid.SampledFrom([]string{"", "day", "week", "month"}).Draw(t, "groupBy"))
}

// agingEdges are the days after a due date receivables are asked on: long
// before and the day before it, on it, and either side of each edge of a
// bucket (1, 30, 31, 60, 61, 90, 91 days late), and long after.
var agingEdges = []int{-400, -1, 0, 1, 30, 31, 60, 61, 90, 91, 400}

// receivables asks for the receivables today, then on each of agingEdges
// around a due date: an open sale's, most times.
func (m *model) receivables(t *rapid.T) {
	a := m.drawAccount(t)
	m.checkReceivables(a, "")
	var open []string
	for _, s := range a.sales {
		if s.status == business.StatusDraft || s.status == business.StatusPartial {
			open = append(open, s.dueDate)
		}
	}
	slices.Sort(open)
	dues := slices.Compact(open)
	if len(dues) == 0 || rapid.IntRange(0, 3).Draw(t, "anyDue") == 0 {
		dues = m.dueDates()
	}
	d, _ := time.Parse(business.DateFormat, rapid.SampledFrom(dues).Draw(t, "due"))
	for _, late := range agingEdges {
		m.checkReceivables(a, d.AddDate(0, 0, late).Format(business.DateFormat))
	}
}

func (m *model) inventoryReport(t *rapid.T) { m.checkInventory(m.drawAccount(t)) }

// midnightZones are the zones an account moves to for its receivables to
// age across a local midnight: none of them UTC.
var midnightZones = []string{"Africa/Nairobi", "America/New_York", "Asia/Kathmandu", "Pacific/Chatham", "America/St_Johns", "Etc/GMT+3"}

// nextMidnight is the first local midnight of zone after t.
func nextMidnight(zone string, t time.Time) time.Time {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		panic(err)
	}
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, loc)
}

// midnightAging moves the clock across a local midnight of the account's
// timezone (not UTC: moved to a zone whose midnight comes before the
// sequence ends when it must) with sales open that are due that day, and
// 30, 60 or 90 days before it: receivables asked without as_of just before
// the midnight age them on that day, and just after it on the next, each
// such sale then a bucket older.
func (m *model) midnightAging(t *rapid.T) {
	a := m.drawAccount(t)
	m.advance(zoneDelay + time.Second) // a change of zone still waiting takes effect
	before := rapid.SampledFrom([]time.Duration{time.Second, 500 * time.Millisecond, 2 * time.Minute}).Draw(t, "beforeMidnight")
	after := rapid.SampledFrom([]time.Duration{0, time.Millisecond, time.Second, 90 * time.Second}).Draw(t, "afterMidnight")
	reach := func(zone string, from time.Time) bool {
		return zone != "UTC" && !nextMidnight(zone, from).Add(after).After(m.end)
	}
	now := m.clk.now()
	zone := a.zoneAt(now).String()
	if !reach(zone, now) || rapid.IntRange(0, 3).Draw(t, "moveZone") == 0 {
		from := now.Add(zoneDelay + time.Second)
		var fits []string
		for _, z := range midnightZones {
			if reach(z, from) && nextMidnight(z, from).Sub(from) > 5*time.Minute {
				fits = append(fits, z)
			}
		}
		if len(fits) == 0 {
			return // the sequence ends before any zone's next midnight
		}
		zone = rapid.SampledFrom(fits).Draw(t, "zone")
		m.putSettings(a, map[string]any{"timezone": zone}, "")
		m.advance(zoneDelay + time.Second)
	}
	midnight := nextMidnight(zone, m.clk.now())
	if d := midnight.Add(-before).Sub(m.clk.now()); d > 0 {
		m.advance(d)
	}
	today, _ := time.Parse(business.DateFormat, a.localDate(m.clk.now()))
	for _, late := range rapid.SliceOfNDistinct(rapid.SampledFrom([]int{0, 30, 60, 90}), 1, 4, rapid.ID[int]).Draw(t, "dueDaysAgo") {
		cust := m.buyer(t, a)
		due := today.AddDate(0, 0, -late).Format(business.DateFormat)
		total := money.MustAmount(rapid.SampledFrom([]string{"25.00", "0.02", "99999999.99"}).Draw(t, "openTotal"))
		paid := rapid.SampledFrom([]money.Amount{money.Zero, money.MustAmount("0.01")}).Draw(t, "openPaid")
		m.keepOpenSale(a, m.send("POST", "/api/v1/sales/add", a.key, openSaleBody(cust, due, total, paid), nil), cust, due, "", total, paid)
	}
	wantBefore := a.wantReceivables("", m.clk.now())
	m.checkReceivables(a, "")
	m.advance(midnight.Add(after).Sub(m.clk.now()))
	if canonical(a.wantReceivables("", m.clk.now())["buckets"]) == canonical(wantBefore["buckets"]) {
		m.t.Fatalf("the model's receivables did not age across the midnight of %s at %s", zone, midnight)
	}
	m.checkReceivables(a, "")
}

// manyDebtors, one time in three, makes customers, each owing on one sale
// (amounts that tie), till more customers owe than a receivables report
// names, or exactly as many: it names the 20 who owe most, ties by id.
func (m *model) manyDebtors(t *rapid.T) {
	if rapid.IntRange(0, 2).Draw(t, "manyDebtors") > 0 {
		return
	}
	a := m.drawAccount(t)
	owing := map[int64]bool{}
	for _, s := range a.sales {
		if s.status == business.StatusDraft || s.status == business.StatusPartial {
			owing[s.customer] = true
		}
	}
	n := business.MaxDebtors + rapid.IntRange(-1, 2).Draw(t, "beyond") - len(owing)
	if n <= 0 {
		return
	}
	dues, totals := make([]string, n), make([]money.Amount, n)
	for i := range n {
		dues[i] = rapid.SampledFrom(m.dueDates()).Draw(t, "due")
		totals[i] = money.MustAmount(rapid.SampledFrom([]string{"5.00", "5.00", "7.50", "0.01"}).Draw(t, "owes"))
	}
	made := inParallel(n, func(i int) reply {
		return m.send("POST", "/api/v1/customers/add", a.full.secret, map[string]any{"name": fmt.Sprintf("Debtor %d", i)}, nil)
	})
	m.sortByID(made, "customers", "add customer")
	custs := make([]int64, n)
	for i, r := range made {
		custs[i] = m.keepCustomer(a, r)
	}
	sold := inParallel(n, func(i int) reply {
		return m.send("POST", "/api/v1/sales/add", a.full.secret, openSaleBody(custs[i], dues[i], totals[i], money.Zero), nil)
	})
	at := map[string]int{}
	for i, c := range custs {
		at[fmt.Sprint(c)] = i
	}
	m.sortByID(sold, "sales", "add sale")
	for _, r := range sold {
		i := at[fmt.Sprint(r.obj("sales")["customer_id"])]
		m.keepOpenSale(a, r, custs[i], dues[i], "", totals[i], money.Zero)
	}
	m.checkReceivables(a, "")
}

// manyAlerts, one time in six, adds items low or out of stock (quantities
// that tie) till 100 to 102 are, then brings those past 100 back in stock:
// the inventory report lists 100 (truncated when more are short), out of
// stock first, then low, each by quantity and then item code.
func (m *model) manyAlerts(t *rapid.T) {
	if rapid.IntRange(0, 5).Draw(t, "manyAlerts") > 0 {
		return
	}
	a := m.drawAccount(t)
	short := 0
	for _, x := range a.items {
		if x.status() != business.StockIn {
			short++
		}
	}
	extra := rapid.IntRange(0, 2).Draw(t, "extra")
	n := business.MaxStockAlerts + extra - short
	if n <= 0 {
		return
	}
	cat := m.stockCategory(a)
	codes, qtys := make([]string, n), make([]string, n)
	for i := range n {
		codes[i] = fmt.Sprintf("ALERT-%d-%03d", a.lastID["item"], (i*103)%n) // made out of their order
		qtys[i] = rapid.SampledFrom([]string{"0", "0.5", "1", "1", "9.999"}).Draw(t, "alertQty")
	}
	made := inParallel(n, func(i int) reply {
		return m.send("POST", "/api/v1/inventory/items/add", a.full.secret, map[string]any{"item_code": codes[i], "item_name": "Low " + codes[i],
			"category_id": cat, "item_price": "0.05", "unit_cost": "0.99", "quantity": qtys[i], "minimum_qty_alert": "10"}, nil)
	})
	at := map[string]int{}
	for i, c := range codes {
		at[c] = i
	}
	m.sortByID(made, "items", "add item")
	for _, r := range made {
		q := decimal.RequireFromString(qtys[at[r.obj("items")["item_code"].(string)]])
		m.keepItem(a, r, &mItem{category: cat, qty: q, price: "0.05", cost: decimal.RequireFromString("0.99"), minAlert: decimal.NewFromInt(10)})
	}
	m.checkInventory(a)
	for range extra {
		var low []string
		for code, x := range a.items {
			if x.status() != business.StockIn && x.minAlert.LessThan(decimal.NewFromInt(1000)) {
				low = append(low, code)
			}
		}
		slices.Sort(low)
		code := rapid.SampledFrom(low).Draw(t, "restock")
		x := a.items[code]
		r := m.send("PUT", "/api/v1/inventory/items/"+code, a.full.secret, map[string]any{"quantity": "1000"}, nil)
		m.expect(r, 200, "restock item")
		a.setQuantity(x, decimal.NewFromInt(1000))
		m.checkInventory(a)
	}
}

// badReport asks for reports with queries they refuse: 400 naming the
// parameter.
func (m *model) badReport(t *rapid.T) {
	a := m.drawAccount(t)
	q := rapid.SampledFrom([]struct{ path, param string }{
		{"/api/v1/reports/summary?from=2026-02-30", "from"},
		{"/api/v1/reports/summary?from=2026-1-05&to=2026-03-01", "from"},
		{"/api/v1/reports/summary?from=2026-11-01&to=2026-13-01", "to"},
		{"/api/v1/reports/summary?to=2026-02-30", "to"},
		{"/api/v1/reports/summary?from=2026-12-10&to=2026-12-01", "to"},
		{"/api/v1/reports/summary?group_by=year", "group_by"},
		{"/api/v1/reports/summary?group_by=day&group_by=week", "group_by"},
		{"/api/v1/reports/summary?from=", "from"},
		{"/api/v1/reports/summary?colour=red", "colour"},
		{"/api/v1/reports/summary?from=2025-01-01&to=2026-02-05&group_by=day", "to"},
		{"/api/v1/reports/summary?from=2020-01-01&to=2026-01-01&group_by=week", "to"},
		{"/api/v1/reports/summary?from=2010-01-01&to=2026-01-01", "to"},
		{"/api/v1/reports/receivables?as_of=2026-02-30", "as_of"},
		{"/api/v1/reports/receivables?from=2026-01-01", "from"},
		{"/api/v1/reports/inventory?as_of=2026-01-01", "as_of"},
	}).Draw(t, "query")
	r := m.send("GET", q.path, a.key, nil, nil)
	m.expectRefused(r, q.param, q.path)
}

// sideReport is nil, or a report to ask during a burst: it must answer (the
// books are compared after the burst).
func (m *model) sideReport(t *rapid.T, a *mAccount) func() {
	if !rapid.Bool().Draw(t, "sideReport") {
		return nil
	}
	path := rapid.SampledFrom([]string{summaryPath("", "", "day"), receivablesPath(""), "/api/v1/reports/inventory"}).Draw(t, "sidePath")
	return func() {
		if r := m.sendAllowing("GET", path, a.key, nil, nil, true); r.code != 200 && r.code != http.StatusServiceUnavailable {
			m.t.Fatalf("%s during a burst: %d %s", path, r.code, r.raw)
		}
	}
}

// concurrentReports asks two to four reports at once: each applies the
// changes still waiting, and each must answer the books (every change
// counted once, whoever applied it).
func (m *model) concurrentReports(t *rapid.T) {
	a := m.drawAccount(t)
	type ask struct {
		path string
		want map[string]any
		r    reply
	}
	asks := make([]*ask, rapid.IntRange(2, 4).Draw(t, "n"))
	now := m.clk.now()
	for i := range asks {
		switch rapid.SampledFrom([]string{"summary", "summary", "receivables", "inventory"}).Draw(t, "report") {
		case "summary":
			group := rapid.SampledFrom([]string{"day", "week", "month"}).Draw(t, "groupBy")
			want, _ := a.wantSummary("", "", group, now)
			asks[i] = &ask{path: summaryPath("", "", group), want: want}
		case "receivables":
			asks[i] = &ask{path: receivablesPath(""), want: a.wantReceivables("", now)}
		default:
			asks[i] = &ask{path: "/api/v1/reports/inventory", want: a.wantInventory()}
		}
	}
	var wg sync.WaitGroup
	for _, x := range asks {
		wg.Add(1)
		go func() { defer wg.Done(); x.r = m.sendAllowing("GET", x.path, a.key, nil, nil, true) }()
	}
	wg.Wait()
	for _, x := range asks {
		if x.r.code == http.StatusServiceUnavailable { // busy applying, or more than 100 waited: ask again
			x.r = m.report(a, x.path)
		}
		m.checkReport(a, x.r, x.path, x.want, "")
	}
}

// manyChanges, one time in five, makes 100 to 250 expenses without a
// report between them, then asks for one: the report applies them all at
// once (it answers 503 only past 1,000 waiting) and counts each change once.
func (m *model) manyChanges(t *rapid.T) {
	if rapid.IntRange(0, 4).Draw(t, "many") > 0 {
		return
	}
	a := m.drawAccount(t)
	m.checkToday(a) // nothing waits
	n := rapid.SampledFrom([]int{100, 101, 250}).Draw(t, "n")
	answers := inParallel(n, func(int) reply {
		return m.send("POST", "/api/v1/expenses/add", a.full.secret, map[string]any{"expense_type": "Stock count",
			"expense_amount": "0.01", "payment_method": "Cash", "created_by": "Ama"}, nil)
	})
	m.sortByID(answers, "expense", "add expense")
	for _, r := range answers {
		m.keepExpense(a, r, "Stock count", "0.01")
	}
	path := summaryPath("", "", "day")
	busy := 0
	r := m.sendAllowing("GET", path, a.key, nil, nil, true)
	for ; r.code == http.StatusServiceUnavailable && busy <= n/25; busy++ {
		if !strings.Contains(string(r.raw), reportBusyMessage) {
			m.t.Fatalf("%s: %s", path, r.raw)
		}
		r = m.sendAllowing("GET", path, a.key, nil, nil, true)
	}
	// A report applies up to 1,000 waiting changes: a few hundred (a
	// busy account's second) never make it answer 503.
	if busy > 0 {
		m.t.Fatalf("%d changes waiting: %d asks answered 503 before the report: %s", n, busy, shortened(string(r.raw)))
	}
	want, _ := a.wantSummary("", "", "day", m.clk.now())
	m.checkReport(a, r, path, want, "")
}

// consumer applies the account's waiting report figures as the stream's
// consumer does (store.ApplyFigures), at once with a report and, now and
// then, with the same batch handed again (a stream hands a batch again when
// its answer is lost): together they apply each change once, and the
// reports then answer the books.
func (m *model) consumer(t *rapid.T) {
	a := m.drawAccount(t)
	ctx := context.Background()
	items, err := m.st.WaitingFigures(ctx, a.id)
	if err != nil {
		m.t.Fatal(err)
	}
	appliers := rapid.IntRange(1, 2).Draw(t, "appliers")
	side := m.sideReport(t, a)
	applied := make([]int, appliers)
	errs := make([]error, appliers)
	var wg sync.WaitGroup
	for i := range appliers {
		wg.Add(1)
		go func() { defer wg.Done(); applied[i], errs[i] = m.st.ApplyFigures(ctx, a.id, items) }()
	}
	if side != nil {
		wg.Add(1)
		go func() { defer wg.Done(); side() }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		m.t.Fatalf("applying %d waiting figures items: %v", len(items), err)
	}
	n := 0
	for _, x := range applied {
		n += x
	}
	if n > len(items) || side == nil && n != len(items) {
		m.t.Fatalf("%d waiting figures items, applied %v", len(items), applied)
	}
	if left, err := m.st.WaitingFigures(ctx, a.id); err != nil || len(left) > 0 {
		m.t.Fatalf("after the consumer: %d figures items wait (%v)", len(left), err)
	}
	m.checkToday(a)
}
