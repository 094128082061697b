package business

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"bizdata/shared/money"

	"github.com/google/go-cmp/cmp"
)

// TestOwedBy: an open sale owes its total less what was paid; a paid or
// void one, or one paid in full, nothing; a due date that is not one counts
// as none.
func TestOwedBy(t *testing.T) {
	sale := func(status, total, paid, due string) Sale {
		return Sale{CustomerID: 7, CustomerName: "Ama", PaymentStatus: status, Total: money.MustAmount(total), AmountPaid: money.MustAmount(paid),
			AmountRefunded: money.MustAmount("1.00"), DueDate: due}
	}
	for _, c := range []struct {
		s    Sale
		want Owed
	}{
		{sale(StatusDraft, "10.00", "0", "2026-07-01"), Owed{CustomerID: 7, CustomerName: "Ama", DueDate: "2026-07-01", Cents: 1000}},
		{sale(StatusPartial, "10.00", "2.55", "2026-07-01"), Owed{CustomerID: 7, CustomerName: "Ama", DueDate: "2026-07-01", Cents: 745}},
		{sale(StatusPartial, "10.00", "2.55", "soon"), Owed{CustomerID: 7, CustomerName: "Ama", Cents: 745}},
		{sale(StatusPartial, "10.00", "10.00", "2026-07-01"), Owed{}},
		{sale(StatusDraft, "0", "0", "2026-07-01"), Owed{}},
		{sale(StatusPaid, "10.00", "10.00", "2026-07-01"), Owed{}},
		{sale(StatusVoid, "10.00", "0", "2026-07-01"), Owed{}},
	} {
		if got := OwedBy(c.s); got != c.want {
			t.Errorf("OwedBy(%s %s paid %s due %s) = %+v, want %+v", c.s.PaymentStatus, c.s.Total, c.s.AmountPaid, c.s.DueDate, got, c.want)
		}
	}
}

// TestAgingMonths: from January of the year 91 days back to the month of
// the day before.
func TestAgingMonths(t *testing.T) {
	for _, c := range []struct{ asOf, first, last string }{
		{"2026-07-01", "2026-01", "2026-06"},
		{"2026-03-31", "2025-01", "2026-03"}, // 91 days back is 2025-12-30
		{"2026-04-01", "2025-01", "2026-03"}, // 2025-12-31
		{"2026-04-02", "2026-01", "2026-04"}, // 2026-01-01
		{"2026-01-01", "2025-01", "2025-12"},
	} {
		if f, l := AgingMonths(c.asOf); f != c.first || l != c.last {
			t.Errorf("AgingMonths(%s) = %s..%s, want %s..%s", c.asOf, f, l, c.first, c.last)
		}
	}
}

// TestOwedSumsAgeLikeAgeReceivables: sums by year and day of random open
// sales, aged on dates around the years' and buckets' edges, give what
// aging the sales themselves gives, to the cent, and so does each
// customer's debt by due date.
func TestOwedSumsAgeLikeAgeReceivables(t *testing.T) {
	r := rand.New(rand.NewPCG(39, 1))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var sales []OpenSale
	sums := OwedSums{ByYear: map[string]int64{}, ByDay: map[string]int64{}}
	debts := map[int64]map[string]int64{}
	for range 3000 {
		due := base.AddDate(0, 0, r.IntN(5*366)-3*366).Format(DateFormat)
		switch r.IntN(20) {
		case 0:
			due = ""
		case 1:
			due = "1999-12-31"
		case 2:
			due = "2099-01-01"
		}
		total := int64(r.IntN(100000) + 1)
		paid := int64(r.IntN(int(total) + 1))
		s := Sale{CustomerID: int64(r.IntN(40) + 1), PaymentStatus: StatusPartial, Total: money.MustAmount(fmt.Sprintf("%d.%02d", total/100, total%100)),
			AmountPaid: money.MustAmount(fmt.Sprintf("%d.%02d", paid/100, paid%100)), DueDate: due}
		sales = append(sales, OpenSale{CustomerID: s.CustomerID, Total: s.Total, Paid: s.AmountPaid, DueDate: due})
		o := OwedBy(s)
		if o.Cents == 0 {
			continue
		}
		sums.Outstanding, sums.Open = sums.Outstanding+o.Cents, sums.Open+1
		key := "none"
		if o.DueDate != "" {
			key = o.DueDate
			sums.ByYear[due[:4]] += o.Cents
			sums.ByDay[due] += o.Cents
		}
		if debts[o.CustomerID] == nil {
			debts[o.CustomerID] = map[string]int64{}
		}
		debts[o.CustomerID][key] += o.Cents
	}
	for _, asOf := range []string{"2026-01-01", "2026-03-31", "2026-04-01", "2026-04-02", "2026-06-30", "2026-12-31", "2023-01-01", "2030-06-15", "2100-01-01"} {
		want := AgeReceivables(asOf, sales)
		if got := sums.Age(asOf); got != want.Aging {
			t.Errorf("as of %s: sums age to %+v, the sales to %+v", asOf, got, want.Aging)
		}
		if sums.Outstanding != want.Outstanding || sums.Open != want.Open {
			t.Errorf("as of %s: %d owed by %d sales, want %d by %d", asOf, sums.Outstanding, sums.Open, want.Outstanding, want.Open)
		}
		for _, d := range want.Debtors {
			if got := AgeDue(asOf, debts[d.CustomerID]); got != d.Aging {
				t.Errorf("as of %s, customer %d: %s", asOf, d.CustomerID, cmp.Diff(d.Aging, got))
			}
		}
	}
}
