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

// WorthOf is what item it adds to the inventory report: its value at cost
// and at its price, exact (rounded only where the report sums them), and
// its stock status.
func WorthOf(it Item) StockWorth {
	return StockWorth{Counted: true, Cost: money.Value(it.Quantity, it.UnitCost).String(),
		Retail: money.Value(it.Quantity, it.ItemPrice).String(), Status: it.Status()}
}

// NoDueDate is the key, among a debt's amounts by due date, of what is
// owed with no due date (current on any date).
const NoDueDate = "none"

// Debt is one customer's debt as kept: cents owed by due date (or
// NoDueDate), Owed their sum, Open how many open sales owe them, and the
// name the debt shows.
type Debt struct {
	CustomerID int64
	Name       string
	Owed, Open int64
	Due        map[string]int64
}

// DebtMove is what changes move in one customer's debt.
type DebtMove struct {
	Due  map[string]int64 // by due date, or NoDueDate
	Open int64
	Name string // of the latest sale owing under the customer; "" when none
}

// OwedCount is cents owed and how many open sales owe them.
type OwedCount struct{ Owed, Open int64 }

// ReceivablesMove is what changes move in the receivables kept as the
// books change.
type ReceivablesMove struct {
	ByDay  map[string]int64     // yyyy-mm-dd: cents owed by open sales due that day
	ByYear map[string]OwedCount // yyyy: open sales due that year
	NoDue  OwedCount            // open sales with no due date
	Debts  map[int64]*DebtMove  // by customer id
}

// MoveReceivables is what cs move in the receivables: each takes its Old
// out and puts its New in. A change that owes nothing before and after
// (its customer renamed) still names the customer's debt, so that the
// debt takes the customer's name.
func MoveReceivables(cs []ReceivableChange) ReceivablesMove {
	m := ReceivablesMove{ByDay: map[string]int64{}, ByYear: map[string]OwedCount{}, Debts: map[int64]*DebtMove{}}
	for _, c := range cs {
		if c.Old.Cents == 0 && c.New.Cents == 0 {
			m.debt(c.New.CustomerID)
		}
		m.move(c.Old, -1)
		m.move(c.New, 1)
	}
	return m
}

// debt is the move of customer's debt, made when first named.
func (m *ReceivablesMove) debt(customer int64) *DebtMove {
	d := m.Debts[customer]
	if d == nil {
		d = &DebtMove{Due: map[string]int64{}}
		m.Debts[customer] = d
	}
	return d
}

// move adds o (sign 1) or takes it out (sign -1).
func (m *ReceivablesMove) move(o Owed, sign int64) {
	if o.Cents == 0 {
		return
	}
	c := sign * o.Cents
	due := NoDueDate
	if o.DueDate == "" {
		m.NoDue = OwedCount{m.NoDue.Owed + c, m.NoDue.Open + sign}
	} else {
		due = o.DueDate
		m.ByDay[due] += c
		y := m.ByYear[due[:4]]
		m.ByYear[due[:4]] = OwedCount{y.Owed + c, y.Open + sign}
	}
	d := m.debt(o.CustomerID)
	d.Due[due] += c
	d.Open += sign
	if sign > 0 {
		d.Name = o.CustomerName
	}
}

// Move returns d moved by m and whether that changed it: amounts that come
// to nothing leave Due, and Owed is Due's sum. The debt is named as its
// customer is now when the customer exists (customer not nil), else as
// the latest sale owing under it, else as before.
func (d Debt) Move(m DebtMove, customer *Customer) (Debt, bool) {
	due := make(map[string]int64, len(d.Due)+len(m.Due))
	for k, c := range d.Due {
		due[k] = c
	}
	moved := false
	for k, c := range m.Due {
		if c == 0 {
			continue
		}
		moved = true
		if due[k] += c; due[k] == 0 {
			delete(due, k)
		}
	}
	d.Due, d.Open = due, d.Open+m.Open
	moved = moved || m.Open != 0
	name := d.Name
	if m.Name != "" {
		name = m.Name
	}
	if customer != nil {
		name = customer.Name
	}
	if name != d.Name {
		d.Name, moved = name, true
	}
	d.Owed = 0
	for _, c := range d.Due {
		d.Owed += c
	}
	return d, moved
}
