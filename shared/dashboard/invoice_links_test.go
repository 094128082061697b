package dashboard

import (
	"bytes"
	"context"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"bizdata/shared/business"
)

// madeLinkRE finds the invoice link a page shows once, just made.
var madeLinkRE = regexp.MustCompile(`id="invoice-link" type="text" readonly value="([^"]+)"`)

// linkMade posts the sale page's link form and returns the link shown.
func linkMade(t *testing.T, o *owner, code string) string {
	t.Helper()
	st, body, path := o.post("/dashboard/sales/"+code+"/link", url.Values{})
	if st != http.StatusOK || path != "/dashboard/sales/"+code+"/link" {
		t.Fatalf("create link: %d at %s: %s", st, path, body)
	}
	mustContain(t, body, "Invoice link created", "it is not shown again", `data-copy="invoice-link"`, "Link active")
	m := madeLinkRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no link shown: %s", body)
	}
	return html.UnescapeString(m[1])
}

// openPublic GETs u as a customer would, without a session, and returns
// the status, Content-Type and body.
func openPublic(t *testing.T, u string) (int, string, []byte) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Content-Type"), body
}

// TestInvoiceLinkFromTheSalePage: the sale page's forms make a link that
// the public page opens (shown once), replace it (the old one then 404s)
// and revoke it (404); a form without the session's token is refused and
// makes nothing; a void sale offers no link and the API's refusal shows.
func TestInvoiceLinkFromTheSalePage(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("LINK1")
	salesFixture(t, o, "300001", "0")

	page := salesSalePage(t, o, "300001")
	mustContain(t, page, "No link opens this invoice", `action="/dashboard/sales/300001/link"`, ">Create link</button>",
		`href="/dashboard/sales/300001/pdf"`, "Download PDF", `<script src="/dashboard/assets/app.js" defer></script>`)
	if strings.Contains(page, "Revoke link") || strings.Contains(page, `id="invoice-link"`) {
		t.Error("a sale without a link offers to revoke one, or shows one")
	}

	// Refused without the session's token, or with another: nothing made.
	for _, csrf := range []string{"", "forged"} {
		if st, body, _ := o.postWith("/dashboard/sales/300001/link", url.Values{}, csrf); st != http.StatusForbidden {
			t.Errorf("create link with token %q: %d, want 403: %s", csrf, st, body)
		}
	}
	if got := jsonField(t, o.mustAPI("GET", "/api/v1/sales/300001", nil), "sales", "invoice_link_active"); got != "false" {
		t.Fatalf("a refused form made a link: invoice_link_active %s", got)
	}

	first := linkMade(t, o, "300001")
	if !strings.HasPrefix(first, b.srv.URL+"/invoices/") {
		t.Fatalf("the link %q is not on the dashboard's host %s", first, b.srv.URL)
	}
	st, ctype, body := openPublic(t, first)
	if st != http.StatusOK || !strings.HasPrefix(ctype, "text/html") {
		t.Fatalf("the link opens %d %s", st, ctype)
	}
	mustContain(t, string(body), "Shop LINK1", "Rice 5kg", "Gift bag", "25.00")

	// Drawn again, the page says a link is active but no longer shows it.
	page = salesSalePage(t, o, "300001")
	token := strings.TrimPrefix(first, b.srv.URL+"/invoices/")
	mustContain(t, page, "Link active", ">Create new link</button>", "the old link stops working", ">Revoke link</button>")
	if strings.Contains(page, token) {
		t.Error("the sale page shows the link again")
	}

	second := linkMade(t, o, "300001")
	if second == first {
		t.Fatal("a new link is the old one")
	}
	if st, _, _ := openPublic(t, first); st != http.StatusNotFound {
		t.Errorf("the replaced link answers %d, want 404", st)
	}
	if st, _, _ := openPublic(t, second); st != http.StatusOK {
		t.Errorf("the new link answers %d, want 200", st)
	}

	if st, body, _ := o.postWith("/dashboard/sales/300001/link/revoke", url.Values{}, ""); st != http.StatusForbidden {
		t.Errorf("revoke without a token: %d, want 403: %s", st, body)
	}
	st, page, path := o.post("/dashboard/sales/300001/link/revoke", url.Values{})
	if st != http.StatusOK || path != "/dashboard/sales/300001" {
		t.Fatalf("revoke: %d at %s: %s", st, path, page)
	}
	mustContain(t, page, "Invoice link revoked", "No link opens this invoice", ">Create link</button>")
	if st, _, _ := openPublic(t, second); st != http.StatusNotFound {
		t.Errorf("the revoked link answers %d, want 404", st)
	}

	// A void sale: no link forms; a forged post gets the API's 409.
	salesAdd(t, o, "300002", "0")
	o.mustAPI("POST", "/api/v1/sales/300002/void", map[string]any{"reason": "typo"})
	page = salesSalePage(t, o, "300002")
	if strings.Contains(page, `action="/dashboard/sales/300002/link"`) {
		t.Error("a void sale offers a link")
	}
	mustContain(t, page, "Download PDF")
	st, page, _ = o.post("/dashboard/sales/300002/link", url.Values{})
	if st != http.StatusConflict {
		t.Errorf("a void sale's link: %d, want 409: %s", st, page)
	}
}

// TestSalePDFDownload: the sale page's PDF is the owner's sale's, the bytes
// the API's get-sale-pdf answers; signed out it is the sign-in page, and
// another account's owner gets 404.
func TestSalePDFDownload(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("PDF1")
	salesFixture(t, o, "300011", "5.00")

	res, err := o.client.Get(b.srv.URL + "/dashboard/sales/300011/pdf")
	if err != nil {
		t.Fatal(err)
	}
	pdf, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Fatalf("PDF: %d %q, %d bytes starting %q", res.StatusCode, res.Header.Get("Content-Type"), len(pdf), pdf[:min(8, len(pdf))])
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("the PDF lacks the dashboard's headers: CSP %q", csp)
	}
	req, _ := http.NewRequest(http.MethodGet, b.srv.URL+"/api/v1/sales/300011/pdf", nil)
	req.Header.Set("Authorization", "Bearer "+o.apiKey)
	apiRes, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	fromAPI, _ := io.ReadAll(apiRes.Body)
	apiRes.Body.Close()
	if apiRes.StatusCode != http.StatusOK || !bytes.Equal(fromAPI, pdf) {
		t.Errorf("the API's PDF (%d, %d bytes) is not the dashboard's (%d bytes)", apiRes.StatusCode, len(fromAPI), len(pdf))
	}

	st, body, path := b.browser().get("/dashboard/sales/300011/pdf")
	if !strings.HasPrefix(path, "/dashboard/sign-in") || strings.HasPrefix(body, "%PDF") {
		t.Errorf("signed out, the PDF answers %d at %s", st, path)
	}
	if st, body, _ := b.newOwner("PDF2").get("/dashboard/sales/300011/pdf"); st != http.StatusNotFound || strings.HasPrefix(body, "%PDF") {
		t.Errorf("another account's owner gets %d", st)
	}
	if st, _, _ := o.get("/dashboard/sales/12/pdf"); st != http.StatusNotFound {
		t.Errorf("a code that is no sale's: %d, want 404", st)
	}
}

// TestSalePageShowsReminders: a sale whose reminder date is today shows it
// planned, to the customer's address; once the scheduler's store calls
// claim and record it (and the overdue notice of a due date yesterday),
// the page says what was sent, and on which day.
func TestSalePageShowsReminders(t *testing.T) {
	b := newBoard(t)
	o := b.newOwnerIn("REMIND1", "Pacific/Kiritimati")
	loc, err := time.LoadLocation("Pacific/Kiritimati")
	if err != nil {
		t.Fatal(err)
	}
	today := b.st.Now().In(loc)
	day, yesterday := today.Format(business.DateFormat), today.AddDate(0, 0, -1).Format(business.DateFormat)
	o.mustAPI("POST", "/api/v1/customers/add", map[string]any{"name": "Kofi Boateng", "email": "kofi@example.com"})
	sale := saleBody("300021", "0")
	sale["due_date"], sale["reminder_date"] = yesterday, day
	o.mustAPI("POST", "/api/v1/sales/add", sale)

	page := salesSalePage(t, o, "300021")
	mustContain(t, page, "Reminder planned for "+day+", by email to kofi@example.com")

	ctx := context.Background()
	due := func() []string {
		t.Helper()
		ns, err := b.st.DueNotices(ctx, b.st.Now(), 50)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, n := range ns {
			if n.Account != o.acct.ID || n.InvoiceCode != "300021" {
				continue
			}
			kinds = append(kinds, n.Kind)
			if n.Kind == business.NoticeReminder {
				if _, err := b.st.ClaimNotice(ctx, n); err != nil {
					t.Fatal(err)
				}
				mustContain(t, salesSalePage(t, o, "300021"), "Reminder being sent since "+day)
			}
			c, err := b.st.FindNoticeCase(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.st.RecordNotice(ctx, n, c); err != nil {
				t.Fatal(err)
			}
		}
		return kinds
	}
	// One notice is planned at a time: the second once the first is done.
	got := strings.Join(append(due(), due()...), " ")
	if !strings.Contains(got, business.NoticeReminder) || !strings.Contains(got, business.NoticeOverdue) {
		t.Fatalf("notices due: %q, want a reminder and an overdue notice", got)
	}
	page = salesSalePage(t, o, "300021")
	mustContain(t, page, "Reminder sent on "+day, "Overdue notice on "+day)
	if strings.Contains(page, "Reminder planned") || strings.Contains(page, "being sent") {
		t.Error("a sent reminder still shows as planned or being sent")
	}

	// A paid sale plans none.
	o.mustAPI("POST", "/api/v1/sales/add", saleBody("300022", "20.00"))
	mustContain(t, salesSalePage(t, o, "300022"), "No reminder sent or planned.")
}
