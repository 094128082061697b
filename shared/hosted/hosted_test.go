package hosted_test

// Contract tests of the public invoice pages against DynamoDB Local: the
// sales are made through the API's real HTTP server, the pages are read
// from the hosted handler's.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
	"bizdata/shared/business"
	"bizdata/shared/hosted"
	"bizdata/shared/invoice"
	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// site is the API and the public pages over one fresh table, with the
// store's clock (the real time until set) and a record of its DynamoDB
// calls.
type site struct {
	t     *testing.T
	store *store.Store
	api   *httptest.Server
	pages http.Handler
	calls testdb.Requests
	at    atomic.Pointer[time.Time]
}

func newSite(t *testing.T) *site {
	t.Helper()
	s := &site{t: t}
	st, _ := testdb.NewStore(t, s.calls.Option())
	st.SetClock(func() time.Time {
		if at := s.at.Load(); at != nil {
			return *at
		}
		return time.Now().UTC()
	})
	s.store = st
	s.api = httptest.NewServer(api.NewServer(st, testdb.Quiet(), 0).Handler(api.Routes))
	t.Cleanup(s.api.Close)
	s.pages = hosted.NewServer(st, testdb.Quiet()).Handler(hosted.Routes)
	return s
}

// setClock stops the store's clock at t ("YYYY-MM-DD HH:MM:SS" UTC).
func (s *site) setClock(t string) {
	s.t.Helper()
	at, err := time.Parse(business.TimeFormat, t)
	if err != nil {
		s.t.Fatal(err)
	}
	s.at.Store(&at)
}

// merchant is an account's API key, with one customer (id 1) named customer.
func (s *site) merchant(name, code, customer string) string {
	s.t.Helper()
	_, key := testdb.NewAccount(s.t, s.store, name, code)
	s.call(key, "POST", "/api/v1/customers/add", map[string]any{"name": customer}, 200)
	return key
}

// call sends an API request and returns its body's data, failing the test
// unless the answer has status code.
func (s *site) call(key, method, path string, body any, code int) map[string]any {
	s.t.Helper()
	status, _, raw := s.send(key, method, path, body)
	if status != code {
		s.t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, code, raw)
	}
	var out struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		s.t.Fatalf("%s %s: %v: %s", method, path, err, raw)
	}
	return out.Data
}

// send sends an API request with key and returns its answer as it came.
func (s *site) send(key, method, path string, body any) (int, http.Header, []byte) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, s.api.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return res.StatusCode, res.Header, raw
}

// addSale adds a sale of the merchant with key: the fields of sale over
// every field a customer may see, and an internal note it must not.
func (s *site) addSale(key string, over map[string]any) {
	s.t.Helper()
	b := map[string]any{
		"customer_id": 1, "sub_total_amount": "25.00", "total_amount": "27.50", "amount_paid": "10.00", "discount": "0.50",
		"invoice_type": "main", "payment_type": "Cash", "due_date": "2026-12-31", "issued_by": "Kwame Asante",
		"invoice_note": "Thank you for shopping with us", "invoice_terms": "Pay within thirty days",
		"payment_internal_note": "INTERNAL-ONLY gave a staff discount", "invoice_colour": "#1F4E79",
		"items": []any{
			map[string]any{"item_name": "Rice 5kg", "description": "jasmine bag", "unit_price": "10.00", "quantity": "2", "tax": "2.00"},
			map[string]any{"item_name": "Table salt", "description": "fine grain", "unit_price": "2.50", "quantity": "2", "tax": "1.00"},
		},
	}
	for k, v := range over {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	s.call(key, "POST", "/api/v1/sales/add", b, 200)
}

// link makes the sale's invoice link and returns its token.
func (s *site) link(key, code string) string {
	s.t.Helper()
	d := s.call(key, "POST", "/api/v1/sales/"+code+"/link", nil, 200)
	l, _ := d["link"].(map[string]any)
	url, _ := l["url"].(string)
	_, token, ok := strings.Cut(url, "/invoices/")
	if !ok || len(token) != business.InvoiceTokenLength {
		s.t.Fatalf("link of sale %s: %v", code, d)
	}
	return token
}

// linkedSale makes a merchant (Kofi Stores, customer Ama Mensah) with sale
// code, linked, and returns the merchant's key and the link's token.
func (s *site) linkedSale(code string) (key, token string) {
	s.t.Helper()
	key = s.merchant("Kofi Stores", "KOFI01", "Ama Mensah")
	s.addSale(key, map[string]any{"invoice_code": code, "invoice_number": "INV-" + code})
	return key, s.link(key, code)
}

// page is one answer of the public handler.
type page struct {
	code   int
	header http.Header
	body   []byte
}

func (s *site) open(path string, headers ...string) page {
	s.t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	s.pages.ServeHTTP(w, req)
	return page{code: w.Code, header: w.Header(), body: w.Body.Bytes()}
}

// wantPage fails the test unless p is a 200 HTML page showing each of
// shown and none of hidden.
func wantPage(t *testing.T, p page, shown, hidden []string) {
	t.Helper()
	if p.code != 200 || p.header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("status %d, Content-Type %q: %s", p.code, p.header.Get("Content-Type"), p.body)
	}
	for _, s := range shown {
		if !bytes.Contains(p.body, []byte(s)) {
			t.Errorf("the page does not show %q:\n%s", s, p.body)
		}
	}
	for _, s := range hidden {
		if bytes.Contains(p.body, []byte(s)) {
			t.Errorf("the page shows %q", s)
		}
	}
}

// wantSecurityHeaders fails the test unless p carries the pages' headers,
// its policy allowing exactly its own style.
func wantSecurityHeaders(t *testing.T, p page) {
	t.Helper()
	csp := p.header.Get("Content-Security-Policy")
	if csp != invoice.PageCSP(p.body) || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "style-src 'sha256-") {
		t.Errorf("Content-Security-Policy %q, want %q", csp, invoice.PageCSP(p.body))
	}
	for name, value := range map[string]string{"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer",
		"X-Content-Type-Options": "nosniff", "X-Robots-Tag": "noindex, nofollow"} {
		if got := p.header.Get(name); got != value {
			t.Errorf("%s %q, want %q", name, got, value)
		}
	}
}

// TestHostedPageShowsTheInvoice: the page shows every field the customer
// should see and never the internal note, under the pages' headers.
func TestHostedPageShowsTheInvoice(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	s.setClock("2026-11-20 12:00:00")
	key, token := s.linkedSale("731904")
	p := s.open("/invoices/" + token)
	wantPage(t, p, []string{
		"Kofi Stores", "INV-731904", "2026-11-20", "2026-12-31", "Ama Mensah",
		"Rice 5kg", "jasmine bag", "10.00", "Table salt", "fine grain", "2.50", "1.00",
		"GHS 25.00", "Discount", "GHS 0.50", "GHS 27.50", "Amount paid", "GHS 10.00", "Balance due", "GHS 17.50",
		"Partially paid", "Thank you for shopping with us", "Pay within thirty days", "Kwame Asante", "#1f4e79",
	}, []string{"INTERNAL-ONLY", "staff discount", "731904\"", "Refunded"})
	wantSecurityHeaders(t, p)

	// A paid sale, part refunded, shows its refund.
	s.addSale(key, map[string]any{"invoice_code": "731905", "amount_paid": "27.50"})
	code := "731905"
	s.call(key, "POST", "/api/v1/sales/"+code+"/refunds", map[string]any{"amount": "5.00", "reason": "damaged", "refund_method": "Cash"}, 200)
	wantPage(t, s.open("/invoices/"+s.link(key, code)), []string{"Paid", "Refunded", "GHS 5.00", "GHS 0.00"}, []string{"INTERNAL-ONLY", "Partially paid"})
}

// TestHostedStatus: the status the page shows: unpaid, overdue from the
// merchant's local day after the due date (here UTC+14, a day ahead of
// UTC), paid, and void (a voided sale's page still opens).
func TestHostedStatus(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	s.setClock("2026-11-20 12:00:00")
	key := s.merchant("Kofi Stores", "KOFI01", "Ama Mensah")
	s.call(key, "PUT", "/api/v1/user/settings", map[string]any{"timezone": "Pacific/Kiritimati"}, 200)
	unpaid := map[string]any{"amount_paid": "0.00", "payment_type": "None", "due_date": "2026-11-27"}
	s.addSale(key, withCode(unpaid, "500001"))
	s.addSale(key, withCode(unpaid, "500002"))
	s.addSale(key, map[string]any{"invoice_code": "500003", "amount_paid": "27.50", "due_date": "2026-11-27"})
	links := map[string]string{}
	for _, c := range []string{"500001", "500002", "500003"} {
		links[c] = "/invoices/" + s.link(key, c)
	}
	s.call(key, "POST", "/api/v1/sales/500002/void", map[string]any{"reason": "ordered twice"}, 200)

	statusOf := func(code string) string {
		t.Helper()
		p := s.open(links[code])
		if p.code != 200 {
			t.Fatalf("sale %s: status %d: %s", code, p.code, p.body)
		}
		for _, label := range []string{"Partially paid", "Unpaid", "Overdue", "Paid", "Void"} {
			if bytes.Contains(p.body, []byte(`">`+label+`</p>`)) {
				return label
			}
		}
		t.Fatalf("sale %s: no status on the page:\n%s", code, p.body)
		return ""
	}
	// 23:59 on the due date in Kiritimati; 10:00 is midnight there.
	for _, c := range []struct{ at, unpaid string }{{"2026-11-27 09:59:59", "Unpaid"}, {"2026-11-27 10:00:00", "Overdue"}} {
		s.setClock(c.at)
		for code, want := range map[string]string{"500001": c.unpaid, "500002": "Void", "500003": "Paid"} {
			if got := statusOf(code); got != want {
				t.Errorf("at %s UTC, sale %s shows %q, want %q", c.at, code, got, want)
			}
		}
	}
}

func withCode(over map[string]any, code string) map[string]any {
	out := map[string]any{"invoice_code": code}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// TestHostedNotFoundIsOnePage: every token that opens nothing (unknown,
// malformed, revoked, replaced) gets the same bytes and headers, with the
// pages' security headers.
func TestHostedNotFoundIsOnePage(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	key := s.merchant("Kofi Stores", "KOFI01", "Ama Mensah")
	s.addSale(key, map[string]any{"invoice_code": "600001"})
	s.addSale(key, map[string]any{"invoice_code": "600002"})
	revoked := s.link(key, "600001")
	s.call(key, "DELETE", "/api/v1/sales/600001/link", nil, 200)
	replaced := s.link(key, "600002")
	current := s.link(key, "600002")
	unknown, _ := business.NewInvoiceToken()
	tokens := map[string]string{
		"unknown": unknown, "revoked": revoked, "replaced": replaced,
		"short": current[:42], "long": current + "A", "not base64url": "!" + current[1:], "padded": current[:41] + "==",
		"bad final bits": current[:42] + "B", "empty-looking": "%20",
	}
	want := invoice.NotFoundPage()
	for name, token := range tokens {
		for _, path := range []string{"/invoices/" + token, "/invoices/" + token + "/pdf"} {
			p := s.open(path)
			if p.code != 404 || !bytes.Equal(p.body, want) || p.header.Get("Content-Type") != "text/html; charset=utf-8" || p.header.Get("ETag") != "" {
				t.Errorf("%s token, GET %s: %d %v %s", name, path, p.code, p.header, p.body)
			}
			wantSecurityHeaders(t, p)
		}
	}
	if p := s.open("/invoices/" + current); p.code != 200 {
		t.Fatalf("the current link: %d %s", p.code, p.body)
	}
}

// TestHostedTokenOpensOnlyItsSale: two accounts with two sales each, the
// same invoice codes in both: each link opens its own sale and shows
// nothing of the other three.
func TestHostedTokenOpensOnlyItsSale(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	type sale struct{ key, code, number, item, customer, business string }
	var sales []sale
	for _, m := range []struct{ name, code, customer, numbers string }{{"Kofi Stores", "KOFI01", "Ama Mensah", "41"}, {"Adwoa Fabrics", "ADWO02", "Yaw Boateng", "42"}} {
		key := s.merchant(m.name, m.code, m.customer)
		for i, code := range []string{"810001", "810002"} {
			sl := sale{key: key, code: code, number: "INV-" + m.numbers + code[2:], item: m.code + []string{" kettle", " lamp"}[i], customer: m.customer, business: m.name}
			price := []string{"10.00", "12.50"}[i]
			s.addSale(key, map[string]any{"invoice_code": code, "invoice_number": sl.number,
				"sub_total_amount": []string{"20.00", "25.00"}[i], "total_amount": []string{"21.50", "26.50"}[i],
				"items": []any{map[string]any{"item_name": sl.item, "unit_price": price, "quantity": "2", "tax": "2.00"}}})
			sales = append(sales, sl)
		}
	}
	tokens := make([]string, len(sales))
	for i, sl := range sales {
		tokens[i] = s.link(sl.key, sl.code)
	}
	for i, sl := range sales {
		var hidden []string
		for j, other := range sales {
			if j == i {
				continue
			}
			hidden = append(hidden, other.number, other.item, tokens[j])
			if other.key != sl.key {
				hidden = append(hidden, other.customer, other.business)
			}
		}
		wantPage(t, s.open("/invoices/"+tokens[i]), []string{sl.number, sl.item, sl.customer, sl.business}, append(hidden, sl.code))
	}
}

// TestHostedRandomTokensCostOneRead: 10,000 random well-formed tokens each
// get the 404 page after exactly the calls a revoked token costs: one
// GetItem of the token's own lookup key.
func TestHostedRandomTokensCostOneRead(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	key, revoked := s.linkedSale("700001")
	s.call(key, "DELETE", "/api/v1/sales/700001/link", nil, 200)

	mark := s.calls.Mark()
	if p := s.open("/invoices/" + revoked); p.code != 404 {
		t.Fatalf("revoked: %d", p.code)
	}
	known := s.calls.Since(mark)
	if len(known) != 1 || known[0].Operation != "GetItem" || lookupHash(t, known[0]) != business.InvoiceTokenHash(revoked) {
		t.Fatalf("a revoked token cost %d calls: %+v", len(known), known)
	}

	const n, workers = 10000, 16
	tokens := make([]string, n)
	pending := map[string]bool{}
	for i := range tokens {
		var hash string
		tokens[i], hash = business.NewInvoiceToken()
		pending[hash] = true
	}
	start := time.Now()
	mark = s.calls.Mark()
	next := make(chan string)
	failed := make(chan string, n)
	done := make(chan struct{})
	notFound := invoice.NotFoundPage()
	for range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for token := range next {
				w := httptest.NewRecorder()
				s.pages.ServeHTTP(w, httptest.NewRequest("GET", "/invoices/"+token, nil))
				if w.Code != 404 || !bytes.Equal(w.Body.Bytes(), notFound) {
					failed <- token
				}
			}
		}()
	}
	for _, token := range tokens {
		next <- token
	}
	close(next)
	for range workers {
		<-done
	}
	close(failed)
	if len(failed) > 0 {
		t.Fatalf("%d of %d random tokens did not get the 404 page", len(failed), n)
	}
	calls := s.calls.Since(mark)
	if len(calls) != n {
		t.Fatalf("%d random tokens cost %d calls, want %d (one each)", n, len(calls), n)
	}
	for _, c := range calls {
		h := lookupHash(t, c)
		if c.Operation != "GetItem" || !pending[h] {
			t.Fatalf("unexpected call %s of %s", c.Operation, h)
		}
		delete(pending, h) // each token read once, so each request made exactly one call
	}
	t.Logf("%d random tokens: %d GetItem calls in %v", n, len(calls), time.Since(start).Round(time.Millisecond))
}

// lookupHash is the token hash a GetItem of a link's lookup item reads.
func lookupHash(t *testing.T, c testdb.Request) string {
	t.Helper()
	in, ok := c.Input.(*dynamodb.GetItemInput)
	if !ok {
		t.Fatalf("%s is not a GetItem", c.Operation)
	}
	pk, _ := in.Key["PK"].(*types.AttributeValueMemberS)
	if pk == nil {
		t.Fatalf("GetItem without a PK: %v", in.Key)
	}
	return strings.TrimPrefix(pk.Value, "LINK#")
}

// TestHostedPDFIsTheAPIsPDF: the public PDF of a sale's version is the
// API's PDF of it, byte for byte, with the same ETag.
func TestHostedPDFIsTheAPIsPDF(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	key, token := s.linkedSale("900001")
	code, header, fromAPI := s.send(key, "GET", "/api/v1/sales/900001/pdf", nil)
	p := s.open("/invoices/" + token + "/pdf")
	if code != 200 || p.code != 200 || p.header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("API %d, public %d %v", code, p.code, p.header)
	}
	if !bytes.Equal(p.body, fromAPI) || !bytes.HasPrefix(p.body, []byte("%PDF-")) {
		t.Errorf("the public PDF (%d bytes) differs from the API's (%d bytes)", len(p.body), len(fromAPI))
	}
	if tag := p.header.Get("ETag"); tag == "" || tag != header.Get("ETag") {
		t.Errorf("ETag %q, the API's %q", tag, header.Get("ETag"))
	}
	if again := s.open("/invoices/"+token+"/pdf", "If-None-Match", p.header.Get("ETag")); again.code != 304 || len(again.body) != 0 {
		t.Errorf("If-None-Match: %d, %d bytes", again.code, len(again.body))
	}
	if again := s.open("/invoices/"+token, "If-None-Match", p.header.Get("ETag")); again.code != 304 {
		t.Errorf("If-None-Match on the page: %d", again.code)
	}
}

// TestHostedLambdaPath: each public function, invoked as API Gateway
// invokes it, answers what the handler answers in process: the page, the
// PDF (base64 in the event's answer, the same bytes) and the 404 page.
func TestHostedLambdaPath(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	_, token := s.linkedSale("910001")
	unknown, _ := business.NewInvoiceToken()
	srv := hosted.NewServer(s.store, testdb.Quiet())
	for _, c := range []struct {
		function, path string
		code           int
	}{
		{"invoice-page", "/invoices/" + token, 200},
		{"invoice-pdf", "/invoices/" + token + "/pdf", 200},
		{"invoice-page", "/invoices/" + unknown, 404},
		{"invoice-pdf", "/invoices/" + unknown + "/pdf", 404},
	} {
		h, err := lambdas.HostedHandler(srv, c.function)
		if err != nil {
			t.Fatal(err)
		}
		ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: "$default", RawPath: c.path, Headers: map[string]string{"host": "invoices.example.com"},
			RequestContext: events.APIGatewayV2HTTPRequestContext{Stage: "$default",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: c.path}}}
		res, err := app.LambdaHandler(h)(context.Background(), ev)
		if err != nil {
			t.Fatalf("%s: Lambda error %v", c.function, err)
		}
		body := []byte(res.Body)
		if res.IsBase64Encoded {
			if body, err = base64.StdEncoding.DecodeString(res.Body); err != nil {
				t.Fatal(err)
			}
		}
		want := s.open(c.path)
		if res.StatusCode != c.code || want.code != c.code || !bytes.Equal(body, want.body) ||
			res.Headers["Content-Type"] != want.header.Get("Content-Type") || res.Headers["Content-Security-Policy"] != want.header.Get("Content-Security-Policy") {
			t.Errorf("%s GET %s: %d %v, %d bytes; in process %d %v, %d bytes", c.function, c.path, res.StatusCode, res.Headers, len(body), want.code, want.header, len(want.body))
		}
	}
	if _, err := lambdas.HostedHandler(srv, "get-sale-pdf"); err == nil {
		t.Error("an API function is served as a public one")
	}
}
