package main

// The cost step's invoice rows: the link routes, and what the notice
// schedule adds to a sale's add and edit.

import (
	"fmt"
	"net/http"
	"slices"
)

// Sales of the cost step's invoice rows, in its account.
const (
	costUnpaid = 510001 // an unpaid sale of 1 line: its add schedules a notice; then linked, relinked, revoked
	costPaid   = 510002 // the same sale paid in full: its add schedules none
)

// costInvoiceCases are the cases of costInvoices' rows, which the report
// also shows item by item.
var costInvoiceCases = []string{
	"unpaid 1-line sale (one notice scheduled)",
	"paid 1-line sale (no notice)",
	"reminder_date set on an unpaid sale (its next notice moves)",
	"reminder_date moved again",
	"payment edit (unpaid -> partial) of an unpaid sale (no notice moves)",
	"a sale's first link",
	"replacing the sale's link",
	"the sale's link",
}

// costInvoices measures, in the cost step's account, an unpaid and a paid
// add of the same 1-line sale, edits of the unpaid one that move its next
// notice (and one that does not), and the invoice link routes on it.
func (b *bench) costInvoices(measure func(route, method, kase, target string, body any) (costRow, error)) ([]costRow, error) {
	unpaid, paid := invoiceSaleBody(costUnpaid, 1), invoiceSaleBody(costPaid, 1)
	paid["amount_paid"], paid["payment_type"], paid["payment_date"] = paid["total_amount"], "Cash", invoiceDue(0)
	edited := func(change map[string]any) map[string]any {
		body := invoiceSaleBody(costUnpaid, 1)
		for k, v := range change {
			body[k] = v
		}
		return body
	}
	code := fmt.Sprint(costUnpaid)
	edit, link := "/api/v1/sales/edit/"+code, "/api/v1/sales/"+code+"/link"
	reqs := []struct{ route, method, target string }{
		{"add-sale", http.MethodPost, "/api/v1/sales/add"},
		{"add-sale", http.MethodPost, "/api/v1/sales/add"},
		{"edit-sale", http.MethodPut, edit},
		{"edit-sale", http.MethodPut, edit},
		{"edit-sale", http.MethodPut, edit},
		{"create-invoice-link", http.MethodPost, link},
		{"create-invoice-link", http.MethodPost, link},
		{"revoke-invoice-link", http.MethodDelete, link},
	}
	bodies := []any{unpaid, paid, edited(map[string]any{"reminder_date": invoiceDue(20)}), edited(map[string]any{"reminder_date": invoiceDue(25)}),
		edited(map[string]any{"reminder_date": invoiceDue(25), "amount_paid": "5.00", "payment_type": "Cash"}), nil, nil, nil}
	var rows []costRow
	for i, r := range reqs {
		row, err := measure(r.route, r.method, costInvoiceCases[i], r.target, bodies[i])
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// invoiceCostRows are the rows of costInvoices among rows.
func invoiceCostRows(rows []costRow) []costRow {
	var out []costRow
	for _, r := range rows {
		if slices.Contains(costInvoiceCases, r.Case) {
			out = append(out, r)
		}
	}
	return out
}
