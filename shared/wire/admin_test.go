package wire

import (
	"encoding/json"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/money"
)

// A voided sale shows when and why, what it holds after its refund, and the
// goods the refund took back; a refund of money alone lists no lines ([],
// not null).
func TestSaleViewOfVoidedSale(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	s := business.Sale{InvoiceCode: "123456", Total: money.MustAmount("20.00"), AmountPaid: money.MustAmount("20.00"),
		AmountRefunded: money.MustAmount("5.00"), VoidReason: "entered twice", VoidedAt: at,
		Lines: []business.SaleLine{{ItemCode: "KENTE-1", ItemName: "Kente"}, {ItemName: "Wrapping"}}}
	refunds := []business.Refund{
		{RefundID: "rf_1", Lines: []business.RefundLine{{LineID: 1, ItemCode: "KENTE-1"}}},
		{RefundID: "rf_2"},
	}
	v := NewSaleView(s, nil, refunds)
	if v.Held.String() != "15.00" || v.VoidedAt == nil || *v.VoidedAt != "2026-03-04 05:06:07" || *v.VoidReason != "entered twice" {
		t.Fatalf("held %s, voided %+v", v.Held, v)
	}
	if v.Lines[1].SalesItemID != 2 || v.Lines[1].ItemCode != nil || *v.Refunds[0].Lines[0].ItemCode != "KENTE-1" {
		t.Fatalf("lines %+v, refunds %+v", v.Lines, v.Refunds)
	}
	b, _ := json.Marshal(v.Refunds[1])
	if want := `{"refund_id":"rf_2","amount":"0.00","refund_method":"","reason":null,"issued_by":null,"lines":[],"refunded_at":"0001-01-01 00:00:00"}`; string(b) != want {
		t.Fatalf("refund without goods: %s, want %s", b, want)
	}
}

// A sale that stands has no voided_at, and no payments is [] rather than
// null.
func TestSaleViewOfStandingSale(t *testing.T) {
	b, _ := json.Marshal(NewSaleView(business.Sale{}, nil, nil))
	var v map[string]json.RawMessage
	_ = json.Unmarshal(b, &v)
	if string(v["voided_at"]) != "null" || string(v["payments"]) != "[]" || string(v["refunds"]) != "[]" {
		t.Fatalf("standing sale: %s", b)
	}
}
