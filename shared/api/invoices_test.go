package api_test

// Contract tests of a sale's invoice link and PDF, against DynamoDB Local,
// over HTTP and through the Lambda path. The links the API makes are opened
// on the public pages' handler over the same table.

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"bizdata/shared/business"
	"bizdata/shared/hosted"
	"bizdata/shared/testdb"
)

// invoiceSale is the code of the sale invoiceEnv adds.
const invoiceSale = "400001"

// internalNote is the sale's payment_internal_note, which no customer sees.
const internalNote = "INTERNAL-ONLY staff price agreed"

func linkPath(code string) string { return "/api/v1/sales/" + code + "/link" }
func pdfPath(code string) string  { return "/api/v1/sales/" + code + "/pdf" }

// invoiceEnv is a sale env with sale 400001 (saleBody's, with an internal
// note, an invoice note and terms).
func invoiceEnv(t *testing.T) *env {
	t.Helper()
	e := newSaleEnv(t)
	want(t, e.post("/api/v1/sales/add", saleBody(map[string]any{"invoice_code": invoiceSale, "invoice_number": "INV-400001",
		"payment_internal_note": internalNote, "invoice_note": "Thanks for your custom", "invoice_terms": "Net 30"})), 200, "")
	return e
}

// linkWire is data.link.
type linkWire struct {
	URL       string `json:"url"`
	CreatedAt string `json:"created_at"`
}

var tokenRE = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// createLink makes the sale's link and returns its token, checking the
// answer's shape.
func createLink(t *testing.T, c *client, code string) string {
	t.Helper()
	r := c.post(t, linkPath(code), nil)
	l := dataAs[linkWire](t, r, "Invoice link created", "link")
	u, err := url.Parse(l.URL)
	token, ok := strings.CutPrefix(u.Path, "/invoices/")
	if err != nil || !ok || !tokenRE.MatchString(token) || !stampRE.MatchString(l.CreatedAt) {
		t.Fatalf("%s %s: link %+v", r.method, r.path, l)
	}
	if c.lc == nil && !strings.HasPrefix(l.URL, c.e.srv.URL+"/invoices/") {
		t.Errorf("link %s is not on the API's host %s", l.URL, c.e.srv.URL)
	}
	return token
}

// openPublic answers GET /invoices/{token} on the public pages' handler.
func openPublic(e *env, token string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	hosted.NewServer(e.store, testdb.Quiet()).Handler(hosted.Routes).ServeHTTP(w, httptest.NewRequest("GET", "/invoices/"+token, nil))
	return w
}

// opens returns the status the public page of token answers with.
func opens(t *testing.T, e *env, token string) int { t.Helper(); return openPublic(e, token).Code }

// publicPage returns the public page of token, failing unless it opens.
func publicPage(t *testing.T, e *env, token string) string {
	t.Helper()
	w := openPublic(e, token)
	if w.Code != 200 {
		t.Fatalf("the page of a link: %d %s", w.Code, w.Body)
	}
	return w.Body.String()
}

// linkActive is the sale's invoice_link_active, as its GET shows it.
func linkActive(t *testing.T, c *client, code string, secrets ...string) bool {
	t.Helper()
	r := c.get(t, "/api/v1/sales/"+code)
	want(t, r, 200, "Sale found")
	noneOf(t, r, secrets...)
	active, ok := saleOf(r)["invoice_link_active"].(bool)
	if !ok {
		t.Fatalf("no invoice_link_active: %s", r.raw)
	}
	return active
}

// noneOf fails the test if r's body holds any of secrets.
func noneOf(t *testing.T, r resp, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if bytes.Contains(r.raw, []byte(s)) {
			t.Errorf("%s %s shows %q: %s", r.method, r.path, s, r.raw)
		}
	}
}

// TestInvoiceLink: a link is made, shown only as invoice_link_active,
// replaced (the old one stops opening) and revoked.
func TestInvoiceLink(t *testing.T) {
	t.Parallel()
	onBothPaths(t, invoiceEnv, func(t *testing.T, c *client) {
		if linkActive(t, c, invoiceSale) {
			t.Fatal("a new sale has an active link")
		}
		first := createLink(t, c, invoiceSale)
		secrets := []string{first, business.InvoiceTokenHash(first)}
		if !linkActive(t, c, invoiceSale, secrets...) {
			t.Error("invoice_link_active false after the link was made")
		}
		noneOf(t, c.get(t, "/api/v1/sales"), secrets...)
		noneOf(t, c.get(t, "/api/v1/events"), secrets...)
		if code := opens(t, c.e, first); code != 200 {
			t.Fatalf("the new link: %d", code)
		}

		// An edit keeps the link; the page shows the new version.
		want(t, c.put(t, "/api/v1/sales/edit/"+invoiceSale, saleBody(map[string]any{"invoice_code": invoiceSale, "invoice_number": "INV-400001",
			"invoice_note": "Edited note"})), 200, "")
		if page := publicPage(t, c.e, first); !strings.Contains(page, "Edited note") || !linkActive(t, c, invoiceSale) {
			t.Errorf("after an edit, the link's page:\n%s", page)
		}

		second := createLink(t, c, invoiceSale)
		if second == first || opens(t, c.e, first) != 404 || opens(t, c.e, second) != 200 {
			t.Fatalf("after a new link: the old opens %d, the new %d", opens(t, c.e, first), opens(t, c.e, second))
		}

		r := c.do(t, "DELETE", linkPath(invoiceSale), nil)
		want(t, r, 200, "Invoice link revoked")
		if saleOf(r)["invoice_link_active"] != false || r.header.Get("ETag") == "" {
			t.Errorf("%s %s: %v %s", r.method, r.path, r.header, r.raw)
		}
		if linkActive(t, c, invoiceSale) || opens(t, c.e, second) != 404 {
			t.Error("the revoked link is still active")
		}
		want(t, c.do(t, "DELETE", linkPath(invoiceSale), nil), 404, "Sale has no invoice link")
	})
}

// TestInvoiceLinkRefused: unknown and malformed sales are 404 on every
// route; a void sale gets no link (409, saying why); a body with
// fields is 400 and changes nothing.
func TestInvoiceLinkRefused(t *testing.T) {
	t.Parallel()
	onBothPaths(t, invoiceEnv, func(t *testing.T, c *client) {
		for _, code := range []string{"999999", "12ab56", "0123456", "12345"} {
			want(t, c.post(t, linkPath(code), nil), 404, "")
			want(t, c.do(t, "DELETE", linkPath(code), nil), 404, "")
			want(t, c.get(t, pdfPath(code)), 404, "")
		}

		before := c.get(t, "/api/v1/sales/"+invoiceSale).header.Get("ETag")
		for _, body := range []any{map[string]any{"expires_at": "2027-01-01"}, "[]", "{"} {
			wantRefused(t, c.post(t, linkPath(invoiceSale), body))
		}
		if after := c.get(t, "/api/v1/sales/"+invoiceSale).header.Get("ETag"); after != before || linkActive(t, c, invoiceSale) {
			t.Errorf("a refused link changed the sale: ETag %s -> %s", before, after)
		}
		token := createLink(t, c, invoiceSale)
		wantRefused(t, c.do(t, "DELETE", linkPath(invoiceSale), map[string]any{"reason": "leaked"}))
		if opens(t, c.e, token) != 200 || !linkActive(t, c, invoiceSale) {
			t.Error("a refused revoke ended the link")
		}

		want(t, c.post(t, "/api/v1/sales/add", saleBody(map[string]any{"invoice_code": "400002", "amount_paid": "0.00", "payment_type": "None"})), 200, "")
		want(t, c.post(t, voidPath("400002"), map[string]any{"reason": "ordered twice"}), 200, "Sale voided")
		r := c.post(t, linkPath("400002"), nil)
		want(t, r, 409, "")
		if msg := errText(r); !strings.Contains(msg, "void") || !strings.Contains(msg, "invoice link") {
			t.Errorf("the 409 of a void sale's link does not say why: %q", msg)
		}
	})
}

// TestInvoiceLinkScopes: making and revoking a link takes sales:write, the
// PDF sales:read; a test key's link opens its test sale only.
func TestInvoiceLinkScopes(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, c kc) {
		for _, mode := range []struct{ name, customer, item string }{{"live", "Ama Mensah", "Rice 5kg"}, {"test", "Test Customer", "Test widget"}} {
			k := c
			if mode.name == "test" {
				k = c.as(mkKey(t, c, "test all", "test", business.ScopeAll).Key)
			}
			want(t, k.post(t, "/api/v1/customers/add", map[string]any{"name": mode.customer}), 200, "")
			items := []any{map[string]any{"item_name": mode.item, "unit_price": "12.50", "quantity": "2", "tax": "3.00"}}
			want(t, k.post(t, "/api/v1/sales/add", saleBody(map[string]any{"invoice_code": invoiceSale, "items": items})), 200, "")
		}
		reader := mkKey(t, c, "reader", "live", "sales:read")
		other := mkKey(t, c, "customers", "live", "customers:read", "customers:write")
		wantExact(t, c.as(reader.Key).post(t, linkPath(invoiceSale), nil), 403, msgLacksScope("sales:write"))
		wantExact(t, c.as(reader.Key).do(t, "DELETE", linkPath(invoiceSale), nil), 403, msgLacksScope("sales:write"))
		wantExact(t, c.as(other.Key).get(t, pdfPath(invoiceSale)), 403, msgLacksScope("sales:read"))

		writer := mkKey(t, c, "writer", "live", "sales:write")
		testKey := mkKey(t, c, "test writer", "test", business.ScopeAll).Key
		live := createLinkAs(t, c.as(writer.Key), invoiceSale)
		test := createLinkAs(t, c.as(testKey), invoiceSale)
		livePage, testPage := publicPage(t, e, live), publicPage(t, e, test)
		if !strings.Contains(livePage, "Rice 5kg") || strings.Contains(livePage, "Test widget") || strings.Contains(livePage, "Test Customer") {
			t.Errorf("the live link's page:\n%s", livePage)
		}
		if !strings.Contains(testPage, "Test widget") || !strings.Contains(testPage, "Test Customer") || strings.Contains(testPage, "Rice 5kg") {
			t.Errorf("the test link's page:\n%s", testPage)
		}
		// Clearing the test data ends the test sale's link, not the live one.
		want(t, c.as(testKey).post(t, "/api/v1/test-data/clear", nil), 200, "")
		if opens(t, e, test) != 404 || opens(t, e, live) != 200 {
			t.Errorf("after clearing the test data: the test link opens %d, the live one %d", opens(t, e, test), opens(t, e, live))
		}
	})
}

// createLinkAs is createLink with key c.
func createLinkAs(t *testing.T, c kc, code string) string {
	t.Helper()
	l := dataAs[linkWire](t, c.post(t, linkPath(code), nil), "Invoice link created", "link")
	_, token, _ := strings.Cut(l.URL, "/invoices/")
	if !tokenRE.MatchString(token) {
		t.Fatalf("link %+v", l)
	}
	return token
}

// getPDF is GET path with c's key, its answer's bytes as they are.
func getPDF(t *testing.T, c *client, path string, headers ...string) (int, http.Header, []byte) {
	t.Helper()
	if c.lc != nil {
		h := map[string]string{}
		for i := 0; i+1 < len(headers); i += 2 {
			h[headers[i]] = headers[i+1]
		}
		return c.lc.call("GET", path, c.e.key, nil, h)
	}
	req, err := http.NewRequest("GET", c.e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.e.key)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

// TestInvoiceSalePDF: the sale's PDF, its ETag and 304, the same bytes for
// the same version, and what pdftotext reads in it.
func TestInvoiceSalePDF(t *testing.T) {
	t.Parallel()
	onBothPaths(t, invoiceEnv, func(t *testing.T, c *client) {
		code, h, pdf := getPDF(t, c, pdfPath(invoiceSale))
		tag := h.Get("ETag")
		if code != 200 || h.Get("Content-Type") != "application/pdf" || tag == "" || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
			t.Fatalf("GET pdf: %d %v %.40q", code, h, pdf)
		}
		if d := h.Get("Content-Disposition"); d != `inline; filename="INV-400001.pdf"` {
			t.Errorf("Content-Disposition %q", d)
		}
		if code, h2, again := getPDF(t, c, pdfPath(invoiceSale)); code != 200 || h2.Get("ETag") != tag || !bytes.Equal(again, pdf) {
			t.Errorf("the same version again: %d, ETag %q (was %q), same bytes %v", code, h2.Get("ETag"), tag, bytes.Equal(again, pdf))
		}
		if code, _, body := getPDF(t, c, pdfPath(invoiceSale), "If-None-Match", tag); code != 304 || len(body) != 0 {
			t.Errorf("If-None-Match %s: %d, %d bytes", tag, code, len(body))
		}
		createLink(t, c, invoiceSale) // a new version of the sale
		if code, h3, _ := getPDF(t, c, pdfPath(invoiceSale), "If-None-Match", tag); code != 200 || h3.Get("ETag") == tag {
			t.Errorf("a new version: %d, ETag %q (was %q)", code, h3.Get("ETag"), tag)
		}

		text := strings.Join(strings.Fields(pdfToText(t, pdf)), " ")
		for _, s := range []string{"INV-400001", "Kofi Stores", "Ama Mensah", "Rice 5kg", "bag", "Salt", "Sub-total GHS 25.00",
			"Discount GHS 0.50", "Total GHS 27.50", "Amount paid GHS 10.00", "Balance due GHS 17.50", "Thanks for your custom", "Net 30", "Kwame"} {
			if !strings.Contains(text, s) {
				t.Errorf("the PDF does not read %q:\n%s", s, text)
			}
		}
		for _, s := range []string{"INTERNAL", "staff price"} {
			if strings.Contains(text, s) {
				t.Errorf("the PDF shows the internal note (%q)", s)
			}
		}
	})
}

// pdfToText is the text of a PDF as poppler's pdftotext reads it. Without
// pdftotext the test is skipped, or fails when INVOICE_PDF_REQUIRED=1 (CI).
func pdfToText(t *testing.T, pdf []byte) string {
	t.Helper()
	tool, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("INVOICE_PDF_REQUIRED") == "1" {
			t.Fatal("pdftotext not found (apt-get install poppler-utils) and INVOICE_PDF_REQUIRED=1")
		}
		t.Skip("pdftotext not found: apt-get install poppler-utils to read the PDF")
	}
	file := filepath.Join(t.TempDir(), "sale.pdf")
	if err := os.WriteFile(file, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "-layout", "-enc", "UTF-8", file, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v: %s", err, out)
	}
	return string(out)
}
