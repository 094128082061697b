package api_test

// Invoice links and PDFs in the model: a sale's link made, replaced and
// revoked (each a new version of the sale, with its sale.updated event);
// every token ever made opened on the public routes, where the current
// token of a sale still in its book shows that sale and every other token
// gets the one 404 page an unknown token gets; and the sale's PDF, the same
// bytes and ETag while the sale stays as it is.

import (
	"bytes"
	"encoding/base64"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"bizdata/shared/app/lambdas"
	"bizdata/shared/business"
	"bizdata/shared/hosted"
	"bizdata/shared/money"
	"bizdata/shared/testdb"

	"pgregory.net/rapid"
)

// newHostedHTTP serves the public routes over HTTP on e's store, beside
// the API, as the devserver mounts them.
func newHostedHTTP(t *testing.T, e *env) caller {
	srv := httptest.NewServer(hosted.NewServer(e.store, testdb.Quiet()).Handler(hosted.Routes))
	t.Cleanup(srv.Close)
	return httpCaller{srv.URL}
}

// newHostedLambdaCaller invokes the public routes' functions on e's store
// as API Gateway would.
func newHostedLambdaCaller(t testing.TB, e *env) *lambdaCaller {
	srv := hosted.NewServer(e.store, testdb.Quiet())
	c := newEmptyLambdaCaller(t)
	for _, rt := range hosted.Routes {
		h, err := lambdas.HostedHandler(srv, rt.Function)
		if err != nil {
			t.Fatal(err)
		}
		c.serve(rt.Function, rt.Method, rt.Path, h)
	}
	return c
}

// linkURL is a link's URL: the token is 32 random bytes, unpadded base64url.
var linkURL = regexp.MustCompile(`^https?://[^/]+/invoices/([A-Za-z0-9_-]{43})$`)

// unknownSale is an invoice code no book of the model has.
const unknownSale = "888888"

// drawSale draws one of a's sales, or now and then (or when a has none)
// the code of none.
func drawSale(t *rapid.T, a *mAccount) (string, *mSale) {
	code, s, ok := pick(t, a.sales, "sale")
	if !ok || rapid.IntRange(0, 9).Draw(t, "unknownSale") == 0 {
		return unknownSale, nil
	}
	return code, s
}

// invoiceLink makes, replaces or revokes a sale's invoice link. A change is
// a new version of the sale (its ETag one past the one before); the token a
// change ends opens nothing from then on. A void sale gets no new link, but
// its link can be ended (the one change a void sale takes).
func (m *model) invoiceLink(t *rapid.T) {
	a := m.drawAccount(t)
	if len(a.sales) == 0 { // most sequences have few sales: make one to link
		cust, due := m.buyer(t, a), m.day.AddDate(0, 0, 1).Format(business.DateFormat)
		total := money.MustAmount("25.00")
		m.keepOpenSale(a, m.send("POST", "/api/v1/sales/add", a.key, openSaleBody(cust, due, total, money.Zero), nil), cust, due, "", total, money.Zero)
	}
	code, s := drawSale(t, a)
	revoke := rapid.IntRange(0, 2).Draw(t, "revoke") == 0
	method, msg := http.MethodPost, "Invoice link created"
	if revoke {
		method, msg = http.MethodDelete, "Invoice link revoked"
	}
	before := int64(0)
	if s != nil {
		before = m.saleVersion(a, s)
	}
	r := m.send(method, "/api/v1/sales/"+code+"/link", a.key, nil, nil)
	switch {
	case s == nil:
		m.expectError(r, http.StatusNotFound, "Sale not found", "link of an unknown sale")
		return
	case s.void && !revoke:
		m.expect(r, http.StatusConflict, "new link of a void sale")
		return
	case revoke && s.link == "":
		m.expectError(r, http.StatusNotFound, "Sale has no invoice link", "revoke of no link")
		return
	}
	m.expect(r, 200, method+" link")
	if r.body["message"] != msg {
		m.t.Fatalf("%s link: %s", method, r.raw)
	}
	old := s.link
	if old != "" {
		m.dead = append(m.dead, old)
	}
	s.link = ""
	if !revoke {
		link := r.obj("link")
		match := linkURL.FindStringSubmatch(strOrEmpty(link["url"]))
		if match == nil || slices.Contains(m.dead, match[1]) {
			m.t.Fatalf("new link: %s", r.raw)
		}
		m.stamped("link's created_at", link["created_at"])
		s.link = match[1]
	} else if msg := checkSale(s, r); msg != "" {
		m.t.Fatalf("revoke link: %s: %s", msg, r.raw)
	} else if s.void {
		s.voidData = canonical(r.data()) // as the sale reads from now on
	}
	if v := versionOf(r.hdr.Get("ETag")); v != before+1 {
		m.t.Fatalf("%s link of a sale at version %d: ETag %q", method, before, r.hdr.Get("ETag"))
	}
	if after := m.saleVersion(a, s); after != before+1 {
		m.t.Fatalf("%s link: the sale's GET is at version %d, want %d", method, after, before+1)
	}
	// The token the change ended opens nothing now; the new one opens the
	// sale.
	if old != "" && rapid.Bool().Draw(t, "openOld") {
		m.checkOpen(old, nil, nil, rapid.Bool().Draw(t, "pdf"))
	}
	if s.link != "" {
		m.checkOpen(s.link, s, a, rapid.Bool().Draw(t, "pdf"))
	}
}

// saleVersion reads sale s, checks it against the model and returns its
// version (from its ETag).
func (m *model) saleVersion(a *mAccount, s *mSale) int64 {
	r := m.send("GET", "/api/v1/sales/"+s.code, a.key, nil, nil)
	m.expect(r, 200, "get sale "+s.code)
	if msg := checkSale(s, r); msg != "" {
		m.t.Fatalf("sale %s: %s: %s", s.code, msg, r.raw)
	}
	v := versionOf(r.hdr.Get("ETag"))
	if v <= 0 {
		m.t.Fatalf("sale %s: ETag %q", s.code, r.hdr.Get("ETag"))
	}
	return v
}

// versionOf is the version an ETag (`"v7"`, or a PDF's `"v7-<digest>"`)
// names, 0 for none.
func versionOf(tag string) int64 {
	tag = strings.TrimSuffix(strings.TrimPrefix(tag, `"v`), `"`)
	tag, _, _ = strings.Cut(tag, "-")
	v, _ := strconv.ParseInt(tag, 10, 64)
	return v
}

func (m *model) expectError(r reply, code int, text, what string) {
	m.t.Helper()
	m.expect(r, code, what)
	if r.errText() != text {
		m.t.Fatalf("%s: error %q, want %q: %s", what, r.errText(), text, r.raw)
	}
}

// openInvoice opens a token on the public routes, the page or its PDF:
// the current token of a sale of a book (live or test), one that no longer
// opens anything (replaced, revoked, or of cleared test data), a random
// one or a malformed one.
func (m *model) openInvoice(t *rapid.T) {
	var linked []*mSale
	var books []*mAccount
	for _, a := range m.accts {
		for _, code := range slices.Sorted(maps.Keys(a.sales)) {
			if s := a.sales[code]; s.link != "" {
				linked, books = append(linked, s), append(books, a)
			}
		}
	}
	var token string
	var s *mSale
	var a *mAccount
	switch kind := rapid.SampledFrom([]string{"current", "current", "dead", "random", "malformed"}).Draw(t, "token"); {
	case kind == "current" && len(linked) > 0:
		i := rapid.IntRange(0, len(linked)-1).Draw(t, "linked")
		s, a, token = linked[i], books[i], linked[i].link
	case kind == "dead" && len(m.dead) > 0:
		token = rapid.SampledFrom(m.dead).Draw(t, "dead")
	case kind == "malformed":
		token = rapid.SampledFrom([]string{"x", "AAAA", strings.Repeat("A", 44), strings.Repeat("-", 43)}).Draw(t, "malformed")
	default:
		token = base64.RawURLEncoding.EncodeToString(rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "random"))
	}
	m.checkOpen(token, s, a, rapid.Bool().Draw(t, "pdf"))
}

// checkOpen opens token on the public routes, its page or its PDF: sale s
// of book a (nil: one that opens nothing, 404).
func (m *model) checkOpen(token string, s *mSale, a *mAccount, pdf bool) {
	path := "/invoices/" + token
	if pdf {
		path += "/pdf"
	}
	code, hdr, body := m.pub.call("GET", path, "", nil, nil)
	if hdr.Get("X-Robots-Tag") == "" || hdr.Get("Referrer-Policy") != "no-referrer" {
		m.t.Fatalf("GET %s: headers %v", path, hdr)
	}
	if s == nil {
		if code != http.StatusNotFound || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
			m.t.Fatalf("a token that opens nothing (pdf %v): %d %s %.300s", pdf, code, hdr.Get("Content-Type"), body)
		}
		return
	}
	if code != http.StatusOK {
		m.t.Fatalf("the current token of sale %s (pdf %v): %d %.300s", s.code, pdf, code, body)
	}
	if pdf {
		m.checkPDF("hosted PDF of "+s.code, hdr, body)
		// The same document as the API's.
		_, apiHdr, apiBody := m.fetchPDF(a, s, nil)
		if apiHdr.Get("ETag") != hdr.Get("ETag") || !bytes.Equal(apiBody, body) {
			m.t.Fatalf("sale %s: the hosted PDF (%s) is not the API's (%s)", s.code, hdr.Get("ETag"), apiHdr.Get("ETag"))
		}
		return
	}
	page := string(body)
	if !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") || !strings.Contains(page, s.number) || !strings.Contains(page, s.total.String()) {
		m.t.Fatalf("the page of sale %s (number %s, total %s): %s %.500s", s.code, s.number, s.total, hdr.Get("Content-Type"), page)
	}
}

// salePDF gets a sale's PDF with a key of its book, twice: the same bytes
// and ETag (of the sale's version) while the sale stays as it is, and 304
// to If-None-Match of that ETag.
func (m *model) salePDF(t *rapid.T) {
	a := m.drawAccount(t)
	code, s := drawSale(t, a)
	if s == nil {
		m.expectError(m.send("GET", "/api/v1/sales/"+code+"/pdf", a.key, nil, nil), http.StatusNotFound, "Sale not found", "PDF of an unknown sale")
		return
	}
	v := m.saleVersion(a, s)
	code1, hdr, body := m.fetchPDF(a, s, nil)
	if code1 != 200 {
		m.t.Fatalf("PDF of sale %s: %d %.300s", s.code, code1, body)
	}
	m.checkPDF("PDF of "+s.code, hdr, body)
	if got := versionOf(hdr.Get("ETag")); got != v {
		m.t.Fatalf("PDF of sale %s at version %d: ETag %q", s.code, v, hdr.Get("ETag"))
	}
	if rapid.Bool().Draw(t, "ifNoneMatch") {
		code2, _, again := m.fetchPDF(a, s, map[string]string{"If-None-Match": hdr.Get("ETag")})
		if code2 != http.StatusNotModified || len(again) != 0 {
			m.t.Fatalf("PDF of sale %s with If-None-Match its ETag: %d, %d bytes", s.code, code2, len(again))
		}
		return
	}
	code2, hdr2, again := m.fetchPDF(a, s, nil)
	if code2 != 200 || hdr2.Get("ETag") != hdr.Get("ETag") || !bytes.Equal(again, body) {
		m.t.Fatalf("PDF of sale %s again: %d, ETag %q then %q, same bytes %v", s.code, code2, hdr.Get("ETag"), hdr2.Get("ETag"), bytes.Equal(again, body))
	}
}

// fetchPDF gets sale s's PDF with a's key. A key the route refuses gets its
// JSON 403 first (as sendAllowing checks), then the "*" key of its book
// sends it.
func (m *model) fetchPDF(a *mAccount, s *mSale, headers map[string]string) (int, http.Header, []byte) {
	path, key := "/api/v1/sales/"+s.code+"/pdf", a.key
	if k := m.keys[key]; k != nil && !k.revoked {
		if why, full := m.refusal("GET", path, k); why != "" {
			if r := m.sendOnce("GET", path, key, nil, headers, false); r.code != http.StatusForbidden || r.errText() != why {
				m.t.Fatalf("GET %s with a key of scopes %v: %d %s, want 403 %q", path, k.scopes, r.code, r.raw, why)
			}
			key = full.secret
		}
	}
	code, hdr, body := m.c.call("GET", path, key, nil, headers)
	m.stampKey("GET", path, key, reply{code: code})
	return code, hdr, body
}

// checkPDF checks that an answer is a PDF with the ETag of a version.
func (m *model) checkPDF(what string, hdr http.Header, body []byte) {
	if hdr.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(body, []byte("%PDF-")) || versionOf(hdr.Get("ETag")) <= 0 {
		m.t.Fatalf("%s: Content-Type %q, ETag %q, %.20q", what, hdr.Get("Content-Type"), hdr.Get("ETag"), body)
	}
}

// buryLinks notes that the links of a book's sales open nothing any more
// (its test data was cleared).
func (m *model) buryLinks(a *mAccount) {
	for _, s := range a.sales {
		if s.link != "" {
			m.dead = append(m.dead, s.link)
		}
	}
}
