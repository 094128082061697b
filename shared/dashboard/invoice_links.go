package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/invoice"
	"bizdata/shared/store"
)

// The customer's side of a sale, on its page: the invoice link (made,
// replaced or revoked through the API), the PDF, and the reminders sent and
// planned.

// invoiceData is what templates/sale.html draws of the customer's side.
type invoiceData struct {
	Active bool   // the sale has a link that opens its invoice
	Made   string // the URL of the link just made, shown this once ("": none)
	Void   bool   // a void sale gets no link; its active one can still be revoked
	// Sent says what was sent, oldest first ("Reminder sent on 2026-12-20").
	Sent []string
	// Planned is the reminder date still to come ("" when none is), and
	// Email where it goes ("": the customer has none, so it is not sent).
	Planned string
	Email   string
}

// invoiceDataOf is the customer's side of rec, whose customer's address is
// email, on the business's date at now in zone tz.
func invoiceDataOf(rec store.SaleRecord, email, made, tz string, now time.Time) invoiceData {
	loc, err := business.LoadTimezone(tz)
	if err != nil {
		loc = time.UTC
	}
	sale := rec.Sale
	d := invoiceData{Active: sale.Link != nil, Made: made, Void: sale.Void(), Email: email}
	reminded := false
	sent := slices.Clone(rec.Notices)
	slices.SortFunc(sent, func(a, b store.SentNotice) int { return a.At.Compare(b.At) })
	for _, n := range sent {
		day := n.At.In(loc).Format(business.DateFormat)
		switch {
		case n.Kind == business.NoticeOverdue:
			d.Sent = append(d.Sent, "Overdue notice on "+day)
		case n.Sending:
			d.Sent = append(d.Sent, "Reminder being sent since "+day)
		default:
			d.Sent = append(d.Sent, "Reminder sent on "+day)
		}
		reminded = reminded || n.Kind == business.NoticeReminder && n.Date == sale.ReminderDate
	}
	if date := sale.ReminderDate; date != "" && !reminded && sale.Owes() && date >= now.In(loc).Format(business.DateFormat) {
		d.Planned = date
	}
	return d
}

// errNoSale is the API's answer to a code that cannot be a sale's.
var errNoSale = business.Errorf(business.ENOTFOUND, "Sale not found")

// findSale reads the sale as get-sale reads it, with what get-sale does not
// answer: the notices sent and whether its link is active.
func (s *Server) findSale(ctx context.Context, acct business.Account, code string) (store.SaleRecord, error) {
	if !business.ValidInvoiceCode(code) {
		return store.SaleRecord{}, errNoSale
	}
	return s.store.FindSaleByCode(ctx, acct.ID, code)
}

// createLink makes the sale a new invoice link through create-invoice-link
// (ending the one it had) and shows its URL, this once: only its hash is
// kept.
func createLink(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	// The link is on the host the dashboard was reached at, as a client
	// calling the API there gets it (unless PUBLIC_BASE_URL names another):
	// the hosted pages are served beside the dashboard.
	scheme := "https"
	if r.TLS == nil && s.cfg.PlainHTTP {
		scheme = "http"
	}
	link, err := s.api.CreateInvoiceLink(api.WithOrigin(r.Context(), scheme, r.Host), v.acct, r.PathValue("invoice_code"))
	if err != nil {
		return err
	}
	v.notice = "Invoice link created"
	return drawSale(s, w, r, v, link.URL)
}

// revokeLink ends the sale's invoice link through revoke-invoice-link.
func revokeLink(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	code := r.PathValue("invoice_code")
	if err := s.api.RevokeInvoiceLink(r.Context(), v.acct, code); err != nil {
		return err
	}
	return s.done(w, r, "/dashboard/sales/"+url.PathEscape(code), "Invoice link revoked: it no longer opens the invoice")
}

// salePDF answers the sale's invoice PDF, the one get-sale-pdf and the
// hosted link answer (the same bytes for the same version).
func salePDF(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	code := r.PathValue("invoice_code")
	if !business.ValidInvoiceCode(code) {
		return errNoSale
	}
	doc, err := s.store.FindInvoice(r.Context(), v.acct.ID, code)
	if err != nil {
		return err
	}
	return invoice.WritePDF(w, r, invoice.ViewOf(doc.Sale.Sale, doc.Account, doc.Timezones, s.now()))
}
