package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

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

// printSale prints a sale as `sale show` shows it: its figures, then one
// line for each of its lines, payments and refunds.
func printSale(out io.Writer, asJSON bool, rec store.SaleRecord) error {
	v := wire.NewSaleView(rec.Sale, rec.Payments, rec.Refunds)
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
