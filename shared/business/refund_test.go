package business

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"bizdata/shared/money"
)

// wantError checks that err is an *Error with code and exactly fields
// (nil: none), or that err is nil when code is "".
func wantError(t *testing.T, err error, code string, fields map[string]string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("err %v, want none", err)
		}
		return
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("err %v, want code %s", err, code)
	}
	if fields != nil && !maps.Equal(e.Fields, fields) {
		t.Fatalf("fields %v, want %v", e.Fields, fields)
	}
}

// wantMoves checks moves against want (item code -> signed delta).
func wantMoves(t *testing.T, moves map[string]money.Delta, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for code, d := range moves {
		got[code] = d.String()
	}
	if !maps.Equal(got, want) {
		t.Fatalf("moves %v, want %v", got, want)
	}
}

// paidSale is a sale of two lines (the first stocked), paid 30.00 of 40.00
// and refunded 5.00, with 1 of its first line returned.
func paidSale() Sale {
	return Sale{
		InvoiceCode: "100001", InvoiceNumber: "INV-100001", CustomerName: "Ama", PaymentType: "Cash", PaymentStatus: StatusPartial,
		Total: money.MustAmount("40"), AmountPaid: money.MustAmount("30"), AmountRefunded: money.MustAmount("5"), Refunds: 1, Version: 4,
		Lines: []SaleLine{
			{ItemCode: "RICE", ItemName: "Rice", Quantity: money.MustQuantity("3"), Returned: money.MustQuantity("1")},
			{ItemName: "Delivery", Quantity: money.MustQuantity("1")},
		},
	}
}

func TestRefundSale(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	line := func(id int, q string) RefundLine { return RefundLine{LineID: id, Quantity: money.MustQuantity(q)} }
	voided := paidSale()
	voided.PaymentStatus = StatusVoid
	unpaid := paidSale()
	unpaid.AmountPaid, unpaid.AmountRefunded = money.Zero, money.Zero
	for _, c := range []struct {
		name   string
		sale   Sale
		in     NewRefund
		code   string
		fields map[string]string
	}{
		{name: "ErrVoid", sale: voided, in: NewRefund{Amount: money.MustAmount("1")}, code: ECONFLICT},
		{name: "ErrNothingPaid", sale: unpaid, in: NewRefund{Amount: money.MustAmount("1")}, code: EINVALID,
			fields: map[string]string{"amount": "nothing can be refunded: nothing has been paid on this sale"}},
		{name: "ErrAboveHeld", sale: paidSale(), in: NewRefund{Amount: money.MustAmount("25.01")}, code: EINVALID,
			fields: map[string]string{"amount": "must be at most 25.00, the most that can still be refunded (paid 30.00, refunded 5.00)"}},
		{name: "ErrNoSuchLine", sale: paidSale(), in: NewRefund{Amount: money.MustAmount("1"), Lines: []RefundLine{line(1, "1"), line(3, "1")}}, code: EINVALID,
			fields: map[string]string{"lines[1].sales_item_id": "no line with id 3 in this sale (its lines are 1 to 2)"}},
		{name: "ErrReturnAboveLeft", sale: paidSale(), in: NewRefund{Amount: money.MustAmount("1"), Lines: []RefundLine{line(1, "1.5"), line(1, "1")}}, code: EINVALID,
			fields: map[string]string{"lines[1].quantity": "must be at most 0.5: line 1 sold 3, and 2.5 of it is returned already or by this refund's earlier lines"}},
		{name: "ErrEveryField", sale: paidSale(), in: NewRefund{Amount: money.MustAmount("26"), Lines: []RefundLine{line(0, "1"), line(2, "2")}}, code: EINVALID,
			fields: map[string]string{
				"amount":                 "must be at most 25.00, the most that can still be refunded (paid 30.00, refunded 5.00)",
				"lines[0].sales_item_id": "no line with id 0 in this sale (its lines are 1 to 2)",
				"lines[1].quantity":      "must be at most 1: line 2 sold 1, and 0 of it is returned already or by this refund's earlier lines",
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := RefundSale(c.sale, c.in, now)
			wantError(t, err, c.code, c.fields)
		})
	}

	t.Run("OK", func(t *testing.T) {
		sale := paidSale()
		got, err := RefundSale(sale, NewRefund{Amount: money.MustAmount("25"), Reason: "damaged", IssuedBy: "Kofi",
			Lines: []RefundLine{line(1, "1"), line(2, "1"), line(1, "1")}}, now)
		wantError(t, err, "", nil)
		next, r := got.Sale, got.Refund
		if next.AmountRefunded.String() != "30.00" || next.Refunds != 2 || !next.UpdatedAt.Equal(now) || next.Version != 4 {
			t.Fatalf("sale refunded %s in %d refunds at %v, version %d", next.AmountRefunded, next.Refunds, next.UpdatedAt, next.Version)
		}
		if next.Lines[0].Returned.String() != "3" || next.Lines[1].Returned.String() != "1" {
			t.Fatalf("returned %s and %s", next.Lines[0].Returned, next.Lines[1].Returned)
		}
		if sale.Lines[0].Returned.String() != "1" {
			t.Fatalf("the sale as read changed: returned %s", sale.Lines[0].Returned)
		}
		if r.Seq != 2 || !strings.HasPrefix(r.RefundID, "ref_") || r.Method != "Cash" || r.Reason != "damaged" || r.IssuedBy != "Kofi" ||
			r.PaymentStatus != StatusPartial || !r.RefundedAt.Equal(now) || r.InvoiceNumber != "INV-100001" || r.CustomerName != "Ama" {
			t.Fatalf("refund %+v", r)
		}
		if len(r.Lines) != 3 || r.Lines[0].ItemCode != "RICE" || r.Lines[1].ItemCode != "" {
			t.Fatalf("refund lines %+v", r.Lines)
		}
		wantMoves(t, got.Moves, map[string]string{"RICE": "-2"})
	})

	t.Run("OKMethodGiven", func(t *testing.T) {
		got, err := RefundSale(paidSale(), NewRefund{Amount: money.MustAmount("1"), Method: "Mobile Money"}, now)
		wantError(t, err, "", nil)
		if got.Refund.Method != "Mobile Money" || len(got.Moves) != 0 {
			t.Fatalf("method %q, moves %v", got.Refund.Method, got.Moves)
		}
	})
}

func TestVoidSale(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	held := paidSale()
	voided := paidSale()
	voided.PaymentStatus = StatusVoid
	for _, c := range []struct {
		name    string
		sale    Sale
		code    string
		message string
	}{
		{name: "ErrVoid", sale: voided, code: ECONFLICT, message: "Sale is void"},
		{name: "ErrRefundFirst", sale: held, code: ECONFLICT,
			message: "Refund 25.00 first: the sale holds 25.00 of the customer's money (paid 30.00, refunded 5.00), and only a sale that holds none can be voided"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := VoidSale(c.sale, "mistake", now)
			wantError(t, err, c.code, nil)
			if err.Error() != c.message {
				t.Fatalf("message %q, want %q", err.Error(), c.message)
			}
		})
	}

	t.Run("OK", func(t *testing.T) {
		sale := paidSale()
		sale.AmountRefunded = sale.AmountPaid
		sale.Lines = append(sale.Lines, SaleLine{ItemCode: "RICE", Quantity: money.MustQuantity("0.5")},
			SaleLine{ItemCode: "SALT", Quantity: money.MustQuantity("2"), Returned: money.MustQuantity("2")})
		got, err := VoidSale(sale, "mistake", now)
		wantError(t, err, "", nil)
		if next := got.Sale; next.PaymentStatus != StatusVoid || next.VoidReason != "mistake" || !next.VoidedAt.Equal(now) || !next.UpdatedAt.Equal(now) || next.Version != 4 {
			t.Fatalf("sale %+v", next)
		}
		if sale.PaymentStatus != StatusPartial {
			t.Fatal("the sale as read changed")
		}
		wantMoves(t, got.Moves, map[string]string{"RICE": "-2.5"})
	})
}

func TestCheckNotVoid(t *testing.T) {
	for _, c := range []struct {
		status string
		code   string
	}{{StatusDraft, ""}, {StatusPartial, ""}, {StatusPaid, ""}, {StatusVoid, ECONFLICT}} {
		t.Run(c.status, func(t *testing.T) {
			s := Sale{PaymentStatus: c.status}
			wantError(t, s.CheckNotVoid(), c.code, nil)
		})
	}
}

func TestCheckGiveBack(t *testing.T) {
	moves := func(n int) map[string]money.Delta {
		m := map[string]money.Delta{}
		for i := range n {
			m[string(rune('A'+i))] = money.MustQuantity("1").Delta().Neg()
		}
		return m
	}
	for _, c := range []struct {
		name string
		n    int
		code string
	}{{"OKNone", 0, ""}, {"OKAtTheBound", 3, ""}, {"ErrAboveTheBound", 4, ECONFLICT}} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckGiveBack(moves(c.n), 3)
			wantError(t, err, c.code, nil)
			if err != nil && err.Error() != "this would give back 4 distinct inventory items, more than the 3 one change can move: return the goods in refunds of at most 3 items each, or adjust the stock of the items" {
				t.Fatalf("message %q", err)
			}
		})
	}
}
