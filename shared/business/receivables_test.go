package business

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestMoveReceivables: a payment moves a sale's debt from its old amount to
// its new one (on its due day, in its year and in its customer's debt), a
// new sale with no due date moves what is owed with none, and a rename that
// owes nothing still names the customer's debt.
func TestMoveReceivables(t *testing.T) {
	got := MoveReceivables([]ReceivableChange{
		{Old: Owed{CustomerID: 7, CustomerName: "Ama", DueDate: "2026-03-05", Cents: 1000},
			New: Owed{CustomerID: 7, CustomerName: "Ama", DueDate: "2026-03-05", Cents: 400}},
		{New: Owed{CustomerID: 7, CustomerName: "Ama M.", Cents: 250}},
		{Old: Owed{CustomerID: 9, CustomerName: "Kofi"}, New: Owed{CustomerID: 9, CustomerName: "Kofi A."}},
	})
	want := ReceivablesMove{
		ByDay:  map[string]int64{"2026-03-05": -600},
		ByYear: map[string]OwedCount{"2026": {Owed: -600, Open: 0}},
		NoDue:  OwedCount{Owed: 250, Open: 1},
		Debts: map[int64]*DebtMove{
			7: {Due: map[string]int64{"2026-03-05": -600, NoDueDate: 250}, Open: 1, Name: "Ama M."},
			9: {Due: map[string]int64{}},
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("MoveReceivables (-want +got):\n%s", d)
	}
}

// TestDebtMove: a move adds by due date and drops what comes to nothing,
// sums Owed, counts open sales, and names the debt as its customer is now,
// else as the latest sale owing; the debt moved from is left as it was.
func TestDebtMove(t *testing.T) {
	was := Debt{CustomerID: 7, Name: "Ama", Owed: 1500, Open: 2, Due: map[string]int64{"2026-03-05": 1000, NoDueDate: 500}}
	m := DebtMove{Due: map[string]int64{"2026-03-05": -1000, "2026-04-01": 300, "2026-05-01": 0}, Open: -1, Name: "Ama M."}
	got, moved := was.Move(m, nil)
	want := Debt{CustomerID: 7, Name: "Ama M.", Owed: 800, Open: 1, Due: map[string]int64{"2026-04-01": 300, NoDueDate: 500}}
	if d := cmp.Diff(want, got); d != "" || !moved {
		t.Fatalf("moved %v (-want +got):\n%s", moved, d)
	}
	if was.Due["2026-03-05"] != 1000 || len(was.Due) != 2 {
		t.Fatalf("the debt moved from changed: %+v", was)
	}
	if got, moved := was.Move(m, &Customer{Name: "Ama Mensah"}); got.Name != "Ama Mensah" || !moved {
		t.Fatalf("named %q (moved %v), want the customer's name now", got.Name, moved)
	}
	if got, moved := was.Move(DebtMove{Due: map[string]int64{"2026-03-05": 0}}, nil); moved || got.Name != "Ama" || got.Owed != 1500 {
		t.Fatalf("a move of nothing: %+v, moved %v", got, moved)
	}
	if _, moved := was.Move(DebtMove{}, &Customer{Name: "Ama Mensah"}); !moved {
		t.Fatal("a rename alone did not move the debt")
	}
}

// TestTopDebtors: largest first, ties by customer id, at most MaxDebtors.
func TestTopDebtors(t *testing.T) {
	var ds []Debtor
	for i := range MaxDebtors + 5 {
		ds = append(ds, Debtor{CustomerID: int64(100 - i), Outstanding: int64(i % 7)})
	}
	got := TopDebtors(ds)
	if len(got) != MaxDebtors {
		t.Fatalf("%d debtors, want %d", len(got), MaxDebtors)
	}
	if got[0].Outstanding != 6 || got[0].CustomerID != 80 || got[1].CustomerID != 87 {
		t.Fatalf("first debtors %+v %+v, want customers 80 then 87, owing 6", got[0], got[1])
	}
	for i := 1; i < len(got); i++ {
		if a, b := got[i-1], got[i]; a.Outstanding < b.Outstanding || a.Outstanding == b.Outstanding && a.CustomerID > b.CustomerID {
			t.Fatalf("debtor %d %+v before %+v", i, a, b)
		}
	}
}

// TestOwedSumsReceivables: the sums aged on the date, the debts that owe
// something named as given and aged by due date, largest first.
func TestOwedSumsReceivables(t *testing.T) {
	sums := OwedSums{Outstanding: 4500, Open: 3, ByYear: map[string]int64{"2026": 4000}, ByDay: map[string]int64{"2026-02-20": 1000, "2026-03-10": 3000}}
	got := sums.Receivables("2026-03-01", []Debt{
		{CustomerID: 1, Name: "Ama", Owed: 1000, Due: map[string]int64{"2026-02-20": 1000}},
		{CustomerID: 2, Name: "Paid up", Owed: 0, Due: map[string]int64{}},
		{CustomerID: 3, Name: "Kofi", Owed: 3500, Due: map[string]int64{"2026-03-10": 3000, NoDueDate: 500}},
	})
	want := Receivables{AsOf: "2026-03-01", Outstanding: 4500, Open: 3, Aging: Aging{Current: 3500, Days1To30: 1000},
		Debtors: []Debtor{{CustomerID: 3, Name: "Kofi", Outstanding: 3500, Aging: Aging{Current: 3500}},
			{CustomerID: 1, Name: "Ama", Outstanding: 1000, Aging: Aging{Days1To30: 1000}}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("Receivables (-want +got):\n%s", d)
	}
}

// TestFiguresByDate: changes land on the local date of their instant in the
// zone then in effect, and each date's sums in its month.
func TestFiguresByDate(t *testing.T) {
	switched := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	hist := TimezoneHistory{{Name: DefaultTimezone}, {Name: "Pacific/Auckland", From: switched}}
	days, months := FiguresByDate(hist, []FigureChange{
		{At: time.Date(2026, 2, 28, 20, 0, 0, 0, time.UTC), Figures: Figures{SalesCount: 1, Invoiced: 1000}},
		{At: time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC), Figures: Figures{Collected: 500, ByMethod: map[string]int64{"Cash": 500}}},
		{At: time.Date(2026, 3, 2, 1, 0, 0, 0, time.UTC), Figures: Figures{SalesCount: 1, Invoiced: 200}},
	})
	wantDays := map[string]Figures{
		"2026-02-28": {SalesCount: 1, Invoiced: 1000},
		"2026-03-02": {SalesCount: 1, Invoiced: 200, Collected: 500, ByMethod: map[string]int64{"Cash": 500}},
	}
	wantMonths := map[string]Figures{
		"2026-02": {SalesCount: 1, Invoiced: 1000},
		"2026-03": {SalesCount: 1, Invoiced: 200, Collected: 500, ByMethod: map[string]int64{"Cash": 500}},
	}
	if d := cmp.Diff(wantDays, days); d != "" {
		t.Errorf("days (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantMonths, months); d != "" {
		t.Errorf("months (-want +got):\n%s", d)
	}
}
