// Package hosted serves what a merchant's customer opens without a key: the
// hosted invoice page and its PDF, by the unguessable token of the sale's
// invoice link. Every answer carries the dashboard's security headers and
// asks not to be indexed; every token that opens nothing gets the same 404
// page after the same one read, so an answer tells nothing of why.
package hosted

import (
	"log/slog"
	"net/http"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/invoice"
	"bizdata/shared/store"
)

// Route is one public route: the Lambda function that serves it, its method
// and its ServeMux path pattern.
type Route struct {
	Function string
	Method   string
	Path     string
	serve    func(s *Server, w http.ResponseWriter, r *http.Request, doc store.InvoiceDocument) error
}

// Routes are the public routes. template.yaml declares one function per
// entry (a test keeps the two equal); the devserver serves them all.
var Routes = []Route{
	{"invoice-page", http.MethodGet, "/invoices/{token}", servePage},
	{"invoice-pdf", http.MethodGet, "/invoices/{token}/pdf", servePDF},
}

// RouteByFunction returns the route served by the named function.
func RouteByFunction(name string) (Route, bool) {
	for _, r := range Routes {
		if r.Function == name {
			return r, true
		}
	}
	return Route{}, false
}

// Server serves the public routes.
type Server struct {
	store *store.Store
	log   *slog.Logger
}

// NewServer returns a Server over st.
func NewServer(st *store.Store, log *slog.Logger) *Server { return &Server{store: st, log: log} }

// Handler serves routes, each on its method and path; the devserver asks
// its mux which requests are the routes'.
func (s *Server) Handler(routes []Route) *http.ServeMux {
	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.Handle(rt.Method+" "+rt.Path, s.wrap(rt))
	}
	return mux
}

func (s *Server) wrap(rt Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &api.StatusWriter{ResponseWriter: w}
		setHeaders(sw.Header())
		doc, err := s.store.FindInvoiceByToken(r.Context(), r.PathValue("token"))
		if err == nil {
			err = rt.serve(s, sw, r, doc)
		}
		if err != nil {
			s.writeError(sw, r, err)
		}
		// The path holds the token: the route's pattern is logged instead.
		s.log.InfoContext(r.Context(), "hosted", "function", rt.Function, "route", rt.Path,
			"status", sw.Status, "ms", float64(time.Since(start).Microseconds())/1000)
	})
}

// setHeaders sets what every answer carries: the dashboard's policy (no
// script at all here), no framing, no sniffing, no referrer (the page's URL
// is its key), not indexed, not kept by shared caches.
func setHeaders(h http.Header) {
	h.Set("Content-Security-Policy", invoice.BasePolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("X-Robots-Tag", "noindex, nofollow")
	h.Set("Cache-Control", "private, no-cache")
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Del("ETag")
	if business.ErrorCode(err) == business.ENOTFOUND {
		// The page's own style must be allowed by its hash, as the
		// invoice page's is.
		page := invoice.NotFoundPage()
		h.Set("Content-Security-Policy", invoice.PageCSP(page))
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write(page)
		return
	}
	s.log.ErrorContext(r.Context(), "hosted invoice failed", "error", err.Error())
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(unavailablePage)
}

var unavailablePage = []byte(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex"><title>Try again shortly</title></head><body><h1>Try again shortly</h1><p>This invoice cannot be shown just now. Please try again in a minute.</p></body></html>`)

func (s *Server) view(doc store.InvoiceDocument) invoice.View {
	return invoice.ViewOf(doc.Sale.Sale, doc.Account, doc.Timezones, s.store.Now())
}

func servePage(s *Server, w http.ResponseWriter, r *http.Request, doc store.InvoiceDocument) error {
	v := s.view(doc)
	tag := invoice.ETag(v)
	w.Header().Set("ETag", tag)
	if invoice.NotModified(r, tag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	page, err := invoice.Page(v, r.PathValue("token")+"/pdf")
	if err != nil {
		return err
	}
	w.Header().Set("Content-Security-Policy", invoice.PageCSP(page))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, err = w.Write(page)
	return err
}

func servePDF(s *Server, w http.ResponseWriter, r *http.Request, doc store.InvoiceDocument) error {
	return invoice.WritePDF(w, r, s.view(doc))
}
