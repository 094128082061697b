package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/store"
	"bizdata/shared/wire"
)

var saleCommands = []command{
	{"sale show", `sale show (--account ID | --business-code C) --invoice CODE [--json]
                         (the sale: paid, refunded, status, void; its lines, payments, refunds)`, showSale},
}

// showSale prints the sale --invoice of the account with what explains its
// money.
func showSale(ctx context.Context, o options, out io.Writer) error {
	if o.invoice == "" {
		return fmt.Errorf("%w: --invoice is required", errUsage)
	}
	st, id, err := openNamedAccount(ctx, o)
	if err != nil {
		return err
	}
	rec, err := st.FindSaleByCode(ctx, id, o.invoice)
	if err != nil {
		return err
	}
	return printSale(out, o.asJSON, rec)
}

// saleView is a sale as `sale show` prints it: the figures that explain its
// money (paid, refunded, held) and its state, with its lines, payments and
// refunds, oldest first.
type saleView struct {
	InvoiceCode    string         `json:"invoice_code"`
	InvoiceNumber  string         `json:"invoice_number"`
	CustomerID     int64          `json:"customer_id"`
	CustomerName   string         `json:"customer_name"`
	Total          money.Amount   `json:"total_amount"`
	AmountPaid     money.Amount   `json:"amount_paid"`
	AmountRefunded money.Amount   `json:"amount_refunded"`
	Held           money.Amount   `json:"held"`
	PaymentType    string         `json:"payment_type"`
	PaymentStatus  string         `json:"payment_status"`
	VoidReason     *string        `json:"void_reason"`
	VoidedAt       *string        `json:"voided_at"`
	CreatedAt      string         `json:"created_at"`
	UpdatedAt      string         `json:"updated_at"`
	Lines          []saleLineView `json:"lines"`
	Payments       []paymentView  `json:"payments"`
	Refunds        []refundView   `json:"refunds"`
}

type saleLineView struct {
	SalesItemID int            `json:"sales_item_id"`
	ItemCode    *string        `json:"item_code"`
	ItemName    string         `json:"item_name"`
	UnitPrice   money.Amount   `json:"unit_price"`
	Quantity    money.Quantity `json:"quantity"`
	Returned    money.Quantity `json:"quantity_returned"`
}

type paymentView struct {
	TransactionID string       `json:"transaction_id"`
	Amount        money.Amount `json:"amount"`
	Method        string       `json:"payment_method"`
	IssuedBy      *string      `json:"issued_by"`
	PaymentAt     string       `json:"payment_at"`
}

type refundView struct {
	RefundID   string           `json:"refund_id"`
	Amount     money.Amount     `json:"amount"`
	Method     string           `json:"refund_method"`
	Reason     *string          `json:"reason"`
	IssuedBy   *string          `json:"issued_by"`
	Lines      []refundLineView `json:"lines"`
	RefundedAt string           `json:"refunded_at"`
}

type refundLineView struct {
	SalesItemID int            `json:"sales_item_id"`
	ItemCode    *string        `json:"item_code"`
	Quantity    money.Quantity `json:"quantity"`
}

func newSaleView(rec store.SaleRecord) saleView {
	s := rec.Sale
	v := saleView{
		InvoiceCode: s.InvoiceCode, InvoiceNumber: s.InvoiceNumber, CustomerID: s.CustomerID, CustomerName: s.CustomerName,
		Total: s.Total, AmountPaid: s.AmountPaid, AmountRefunded: s.AmountRefunded, Held: s.Held(),
		PaymentType: s.PaymentType, PaymentStatus: s.PaymentStatus, VoidReason: wire.Nullable(s.VoidReason),
		CreatedAt: s.CreatedAt.Format(business.TimeFormat), UpdatedAt: s.UpdatedAt.Format(business.TimeFormat),
		Lines: []saleLineView{}, Payments: []paymentView{}, Refunds: []refundView{},
	}
	if !s.VoidedAt.IsZero() {
		v.VoidedAt = wire.Nullable(s.VoidedAt.Format(business.TimeFormat))
	}
	for i, l := range s.Lines {
		v.Lines = append(v.Lines, saleLineView{SalesItemID: i + 1, ItemCode: wire.Nullable(l.ItemCode), ItemName: l.ItemName,
			UnitPrice: l.UnitPrice, Quantity: l.Quantity, Returned: l.Returned})
	}
	for _, p := range rec.Payments {
		v.Payments = append(v.Payments, paymentView{TransactionID: p.TransactionID, Amount: p.Amount, Method: p.Method,
			IssuedBy: wire.Nullable(p.IssuedBy), PaymentAt: p.PaymentAt.Format(business.TimeFormat)})
	}
	for _, r := range rec.Refunds {
		rv := refundView{RefundID: r.RefundID, Amount: r.Amount, Method: r.Method, Reason: wire.Nullable(r.Reason),
			IssuedBy: wire.Nullable(r.IssuedBy), Lines: []refundLineView{}, RefundedAt: r.RefundedAt.Format(business.TimeFormat)}
		for _, l := range r.Lines {
			rv.Lines = append(rv.Lines, refundLineView{SalesItemID: l.LineID, ItemCode: wire.Nullable(l.ItemCode), Quantity: l.Quantity})
		}
		v.Refunds = append(v.Refunds, rv)
	}
	return v
}

// printSale prints a sale as `sale show` shows it: its figures, then one
// line for each of its lines, payments and refunds.
func printSale(out io.Writer, asJSON bool, rec store.SaleRecord) error {
	v := newSaleView(rec)
	if asJSON {
		return json.NewEncoder(out).Encode(v)
	}
	fmt.Fprintf(out, "invoice_code:    %s\ninvoice_number:  %s\ncustomer:        %d %s\ntotal_amount:    %s\namount_paid:     %s\namount_refunded: %s\nheld:            %s (paid less refunded)\npayment_type:    %s\npayment_status:  %s\n",
		v.InvoiceCode, v.InvoiceNumber, v.CustomerID, v.CustomerName, v.Total, v.AmountPaid, v.AmountRefunded, v.Held, v.PaymentType, v.PaymentStatus)
	if v.VoidedAt != nil {
		fmt.Fprintf(out, "voided_at:       %s\nvoid_reason:     %s\n", *v.VoidedAt, orDash(v.VoidReason))
	}
	fmt.Fprintf(out, "created_at:      %s\nupdated_at:      %s\n", v.CreatedAt, v.UpdatedAt)
	fmt.Fprintf(out, "lines (%d):\n", len(v.Lines))
	for _, l := range v.Lines {
		fmt.Fprintf(out, "  %3d  %-16s  sold %s  returned %s  at %s  %s\n", l.SalesItemID, orDash(l.ItemCode), l.Quantity, l.Returned, l.UnitPrice, l.ItemName)
	}
	fmt.Fprintf(out, "payments (%d):\n", len(v.Payments))
	for _, p := range v.Payments {
		fmt.Fprintf(out, "  %s  %10s  %-14s  %s  by %s\n", p.TransactionID, p.Amount, p.Method, p.PaymentAt, orDash(p.IssuedBy))
	}
	fmt.Fprintf(out, "refunds (%d):\n", len(v.Refunds))
	for _, r := range v.Refunds {
		lines := make([]string, len(r.Lines))
		for i, l := range r.Lines {
			lines[i] = fmt.Sprintf("line %d x%s", l.SalesItemID, l.Quantity)
			if l.ItemCode != nil {
				lines[i] += " (" + *l.ItemCode + " back to stock)"
			}
		}
		returned := "no goods returned"
		if len(lines) > 0 {
			returned = strings.Join(lines, ", ")
		}
		fmt.Fprintf(out, "  %s  %10s  %-14s  %s  by %s  reason %s  %s\n", r.RefundID, r.Amount, r.Method, r.RefundedAt, orDash(r.IssuedBy), orDash(r.Reason), returned)
	}
	return nil
}
