package invoice

import (
	"net/http"
	"strings"
)

// WritePDF answers r with the PDF of v: inline, named after the invoice
// number, with its ETag; 304 when r's If-None-Match already names it.
func WritePDF(w http.ResponseWriter, r *http.Request, v View) error {
	tag := ETag(v)
	h := w.Header()
	h.Set("ETag", tag)
	h.Set("Cache-Control", "private, no-cache")
	if NotModified(r, tag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	b, err := PDF(v)
	if err != nil {
		return err
	}
	h.Set("Content-Type", "application/pdf")
	h.Set("Content-Disposition", `inline; filename="`+fileName(v.InvoiceNumber)+`.pdf"`)
	_, err = w.Write(b)
	return err
}

// NotModified reports whether r's If-None-Match names tag (or is "*"), so
// the client's copy is current.
func NotModified(r *http.Request, tag string) bool {
	for _, t := range strings.Split(r.Header.Get("If-None-Match"), ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == tag || t == "*" {
			return true
		}
	}
	return false
}

// fileName keeps the letters, digits and dashes of an invoice number.
func fileName(number string) string {
	name := strings.Map(func(r rune) rune {
		if r == '-' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' {
			return r
		}
		return -1
	}, number)
	if name == "" {
		return "invoice"
	}
	return name
}
