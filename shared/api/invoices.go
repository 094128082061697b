package api

import (
	"net/http"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/invoice"
	"bizdata/shared/wire"
)

// The invoice the customer sees: a sale's link to its hosted page, and its
// PDF. The public pages themselves are shared/hosted's.

// SetPublicBaseURL sets where the hosted invoice pages are served
// ("https://invoices.example.com"), for the links the API makes. Unset, a
// link is on the host the request came to (the HTTP API's own domain, or
// its custom domain), as the client reached it.
func (s *Server) SetPublicBaseURL(base string) *Server {
	s.publicBase = strings.TrimRight(base, "/")
	return s
}

// publicBaseURL is the base of the links made for request r.
func (s *Server) publicBaseURL(r *http.Request) string {
	if s.publicBase != "" {
		return s.publicBase
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func createInvoiceLink(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	code, err := pathCode(r, "invoice_code", business.ValidInvoiceCode, "Sale not found")
	if err != nil {
		return err
	}
	if err := readNoFields(r); err != nil {
		return err
	}
	rec, err := s.store.CreateInvoiceLink(r.Context(), acct.ID, code)
	if err != nil {
		return err
	}
	link := rec.Sale.Link
	setETag(w, rec.Sale.Version)
	return writeOK(w, "Invoice link created", map[string]any{"link": wire.InvoiceLink{
		URL: s.publicBaseURL(r) + "/invoices/" + link.Token, CreatedAt: link.CreatedAt.Format(business.TimeFormat),
	}})
}

func revokeInvoiceLink(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	code, err := pathCode(r, "invoice_code", business.ValidInvoiceCode, "Sale not found")
	if err != nil {
		return err
	}
	if err := readNoFields(r); err != nil {
		return err
	}
	rec, err := s.store.RevokeInvoiceLink(r.Context(), acct.ID, code)
	if err != nil {
		return err
	}
	setETag(w, rec.Sale.Version)
	return writeOK(w, "Invoice link revoked", saleData(rec))
}

func getSalePDF(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	code, err := pathCode(r, "invoice_code", business.ValidInvoiceCode, "Sale not found")
	if err != nil {
		return err
	}
	doc, err := s.store.FindInvoice(r.Context(), acct.ID, code)
	if err != nil {
		return err
	}
	return invoice.WritePDF(w, r, invoice.ViewOf(doc.Sale.Sale, doc.Account, doc.Timezones, s.store.Now()))
}
