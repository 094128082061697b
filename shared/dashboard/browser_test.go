package dashboard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/webhook"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The paths of the signed-out forms the browser tests submit.
const (
	brSignIn  = "/dashboard/sign-in"
	brSignUp  = "/dashboard/sign-up"
	brSignOut = "/dashboard/sign-out"
)

// brCSRFRefusal is the start of the page a form with a wrong token gets.
const brCSRFRefusal = "This form has expired or did not come from this dashboard"

// TestBrowserAuth walks the signed-out flows in a real browser: sign up
// (the first API key shown once and working), sign out (the old session
// cookie then refused), a wrong password, a forged form token, sign in, and
// the lockout after five failures.
func TestBrowserAuth(t *testing.T) {
	br := newBrowserTab(t)
	b := newBoard(t)
	br.base = b.srv.URL
	email := "brauth1@example.com"

	// Sign up.
	br.open(t, brSignUp)
	br.check(t, "sign-up")
	br.fill(t, brSignUp, "business_name", "Browser Shop")
	br.fill(t, brSignUp, "business_code", "BRAUTH1")
	br.fill(t, brSignUp, "email", email)
	br.fill(t, brSignUp, "password", testPassword)
	if st, _ := br.submit(t, brSignUp); st != http.StatusOK {
		t.Fatalf("sign-up answered %d: %s", st, br.text(t, "main"))
	}
	br.check(t, "signed-up-first-key")
	br.mustSee(t, "Welcome, Browser Shop", "Copy it now")
	key := strings.TrimSpace(br.text(t, "#shown-secret"))
	if st := browserAuthenticate(t, b.srv.URL, key); st != http.StatusOK {
		t.Errorf("the first API key shown (%d characters) answers %d on the API, want 200", len(key), st)
	}

	// Sign out; the old session cookie no longer works.
	session := br.cookie(t, "bizdata_session")
	if session == "" {
		t.Fatal("no session cookie after sign-up")
	}
	if _, p := br.submit(t, brSignOut); p != brSignIn {
		t.Fatalf("sign-out went to %s", p)
	}
	br.check(t, "signed-out")
	br.mustSee(t, "You have signed out")
	br.setCookie(t, "bizdata_session", session)
	if _, p := br.open(t, "/dashboard/developers"); !strings.HasPrefix(p, brSignIn) {
		t.Errorf("the signed-out session cookie still opens the dashboard (at %s)", p)
	}
	br.check(t, "old-session-refused")
	if st, loc := browserGetNoRedirect(t, b.srv.URL+"/dashboard", session); st != http.StatusSeeOther || loc != brSignIn {
		t.Errorf("Go client with the old cookie: %d to %q, want 303 to %s", st, loc, brSignIn)
	}

	// A wrong password.
	br.open(t, brSignIn)
	br.fill(t, brSignIn, "email", email)
	br.fill(t, brSignIn, "password", "not the password")
	if st, _ := br.submit(t, brSignIn); st != http.StatusUnauthorized {
		t.Errorf("wrong password answered %d, want 401", st)
	}
	br.check(t, "wrong-password")
	br.mustSee(t, "do not match")

	// A signed-out form with a forged token is refused.
	br.fill(t, brSignIn, "password", testPassword)
	br.set(t, brSignIn, "csrf", "forged")
	if st, _ := br.submit(t, brSignIn); st != http.StatusForbidden {
		t.Errorf("forged sign-in token answered %d, want 403", st)
	}
	br.check(t, "csrf-refused-sign-in")
	br.mustSee(t, brCSRFRefusal)

	// Sign in, by keyboard: Enter in the password field sends the form.
	br.open(t, brSignIn)
	br.fill(t, brSignIn, "email", email)
	st, p := br.navigate(t, "sign in", chromedp.SendKeys(chromedp.CSS(browserForm(brSignIn)+` [name="password"]`), testPassword+kb.Enter))
	if st != http.StatusOK || p != "/dashboard" {
		t.Fatalf("sign-in: %d at %s", st, p)
	}
	br.check(t, "signed-in-overview")

	// A signed-in form with a forged token is refused and changes nothing.
	br.set(t, brSignOut, "csrf", "forged")
	if st, _ := br.submit(t, brSignOut); st != http.StatusForbidden {
		t.Errorf("forged sign-out token answered %d, want 403", st)
	}
	br.check(t, "csrf-refused-signed-in")
	br.mustSee(t, brCSRFRefusal)
	if _, p := br.open(t, "/dashboard"); p != "/dashboard" {
		t.Errorf("the refused sign-out signed out anyway (at %s)", p)
	}

	// Five wrong passwords lock the email out, the right one included.
	lo := b.newOwner("BRLOCK1")
	br.submit(t, brSignOut)
	for i := range 5 {
		br.fill(t, brSignIn, "email", lo.email)
		br.fill(t, brSignIn, "password", "wrong password "+string(rune('a'+i)))
		if st, _ := br.submit(t, brSignIn); st != http.StatusUnauthorized {
			t.Errorf("wrong password %d answered %d, want 401", i+1, st)
		}
	}
	br.fill(t, brSignIn, "email", lo.email)
	br.fill(t, brSignIn, "password", testPassword)
	if st, _ := br.submit(t, brSignIn); st != http.StatusTooManyRequests {
		t.Errorf("sixth sign-in answered %d, want 429", st)
	}
	br.check(t, "locked-out")
	br.mustSee(t, "Too many failed sign-ins")
	if st, _, _ := b.browser().signIn(lo.email, testPassword); st != http.StatusTooManyRequests {
		t.Errorf("Go client sign-in while locked out: %d, want 429", st)
	}
}

// browserAuthenticate calls the API's authenticate route with key and returns the
// status.
func browserAuthenticate(t *testing.T, base, key string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/user/authenticate", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// browserGetNoRedirect fetches u with the session cookie and returns the status
// and the redirect's path (not followed).
func browserGetNoRedirect(t *testing.T, u, session string) (int, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.AddCookie(&http.Cookie{Name: "bizdata_session", Value: session})
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, _ := url.Parse(res.Header.Get("Location"))
	return res.StatusCode, loc.Path
}

// TestBrowserPages walks the signed-in pages in a real browser over data
// made through the API: a new API key, the payment webhook's test send,
// sales on the overview chart and the sales list, a refund, a sale's
// invoice link and the public page it opens, a stock adjustment and the
// switch to test data. Each flow is a subtest on one signed-in tab, so a
// page that fails does not hide the others.
func TestBrowserPages(t *testing.T) {
	br := newBrowserTab(t)
	b := newBoard(t)
	br.base = b.srv.URL
	o := b.newOwner("BRPAGES1")
	br.open(t, brSignIn)
	br.fill(t, brSignIn, "email", o.email)
	br.fill(t, brSignIn, "password", o.password)
	if st, p := br.submit(t, brSignIn); st != http.StatusOK || p != "/dashboard" {
		t.Fatalf("sign-in: %d at %s", st, p)
	}
	if st, _ := o.callAPI(http.MethodPost, "/api/v1/customers/add", map[string]any{"name": "Ama Mensah"}); st != http.StatusOK {
		t.Fatalf("add customer: %d", st)
	}
	t.Run("create an API key", func(t *testing.T) { browseCreateKey(t, b, br) })
	t.Run("payment webhook test send", func(t *testing.T) { browseWebhookTest(t, br) })
	t.Run("webhook endpoint test delivery", func(t *testing.T) { browseEndpointTest(t, br) })
	t.Run("sales on the overview and the list", func(t *testing.T) { browseSales(t, o, br) })
	t.Run("refund a sale", func(t *testing.T) { browseRefund(t, o, br) })
	t.Run("invoice link, public page and PDF", func(t *testing.T) { browseInvoiceLink(t, o, br) })
	t.Run("adjust stock", func(t *testing.T) { browseAdjustStock(t, o, br) })
	t.Run("test data only in test mode", func(t *testing.T) { browseTestMode(t, o, br) })
	t.Run("every page on a 390-pixel screen", func(t *testing.T) { browseSmallScreen(t, br) })
}

// The Developers page's forms.
const (
	brKeys        = "/dashboard/developers/keys"
	brWebhook     = "/dashboard/developers/webhook"
	brWebhookTest = "/dashboard/developers/webhook/test"
	brMode        = "/dashboard/mode"
)

// browseCreateKey creates an API key on the Developers page and uses the
// secret shown on the API.
func browseCreateKey(t *testing.T, b *board, br *browserTab) {
	br.open(t, "/dashboard/developers")
	br.check(t, "developers")
	br.fill(t, brKeys, "name", "Till 2")
	br.run(t, "tick sales:read", chromedp.Click(chromedp.CSS(`#scope-sales\:read`)))
	if st, _ := br.submit(t, brKeys); st != http.StatusOK {
		t.Fatalf("create key answered %d: %s", st, browserClip(br.text(t, "main"), 400))
	}
	br.check(t, "developers-key-created")
	br.mustSee(t, "Till 2")
	key := strings.TrimSpace(br.text(t, "#shown-secret"))
	if st := browserAuthenticate(t, b.srv.URL, key); st != http.StatusOK {
		t.Errorf("the new key shown (%d characters) answers %d on the API, want 200", len(key), st)
	}
}

// browseWebhookTest points the payment webhook at a real receiver, sends
// the test notification and sees the attempt's result.
func browseWebhookTest(t *testing.T, br *browserTab) {
	got := make(chan string, 4)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Method + " " + r.Header.Get("Content-Type")
		w.WriteHeader(http.StatusAccepted)
	}))
	defer recv.Close()
	br.open(t, "/dashboard/developers")
	br.fill(t, brWebhook, "callback_url", recv.URL+"/hooks/pay")
	if st, _ := br.submit(t, brWebhook); st != http.StatusOK {
		t.Fatalf("save webhook answered %d: %s", st, browserClip(br.text(t, "main"), 400))
	}
	br.check(t, "developers-webhook-saved")
	if st, _ := br.submit(t, brWebhookTest); st != http.StatusOK {
		t.Fatalf("send a test answered %d: %s", st, browserClip(br.text(t, "main"), 400))
	}
	br.check(t, "developers-webhook-test-sent")
	select {
	case req := <-got:
		if !strings.HasPrefix(req, "POST application/json") {
			t.Errorf("the receiver got %q, want a JSON POST", req)
		}
	default:
		t.Error("the receiver got no test notification")
	}
	br.mustSee(t, "delivered", "status code 202")
}

// browseEndpointTest adds a webhook endpoint on the Developers page (its
// signing secret shown once), opens its page, sends a test event and sees
// the delivery listed with its attempt, signed with that secret.
func browseEndpointTest(t *testing.T, br *browserTab) {
	got := make(chan error, 4)
	var secret atomic.Value
	secret.Store("")
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- webhook.Verifier{Secret: secret.Load().(string)}.Verify(r.Header, body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()
	const add = "/dashboard/developers/endpoints"
	br.open(t, "/dashboard/developers")
	br.fill(t, add, "url", recv.URL+"/events")
	br.run(t, "tick sale.created", chromedp.Click(chromedp.CSS(`#event-sale\.created`)))
	if st, _ := br.submit(t, add); st != http.StatusOK {
		t.Fatalf("add endpoint answered %d: %s", st, browserClip(br.text(t, "main"), 400))
	}
	br.check(t, "developers-endpoint-added")
	secret.Store(strings.TrimSpace(br.text(t, "#shown-secret")))
	link := browserGet(t, br, "find the endpoint's link", chromedp.Evaluate[string](
		`[...document.querySelectorAll('a[href^="/dashboard/developers/endpoints/"]')].map(a => a.getAttribute('href')).pop() || ""`))
	if link == "" {
		t.Fatal("the Developers page links no endpoint")
	}
	if st, p := br.open(t, link); st != http.StatusOK || p != link {
		t.Fatalf("the endpoint's page: %d at %s", st, p)
	}
	if st, p := br.submit(t, link+"/test"); st != http.StatusOK || p != link {
		t.Fatalf("send a test event: %d at %s: %s", st, p, browserClip(br.text(t, "main"), 400))
	}
	br.check(t, "endpoint-test-delivered")
	br.mustSee(t, "delivered: status code 204", "webhook_endpoint.test", "status 204")
	select {
	case err := <-got:
		if err != nil {
			t.Errorf("the test event does not verify with the secret shown: %v", err)
		}
	default:
		t.Error("the receiver got no test event")
	}
}

// browserAddSale makes a sale through the API with key (the live key when "")
// paying paid of a 50.00 total, and returns its invoice code and number.
func browserAddSale(t *testing.T, o *owner, key, code, paid string) (string, string) {
	t.Helper()
	body := map[string]any{"invoice_code": code, "invoice_number": code, "customer_id": 1,
		"sub_total_amount": "50.00", "total_amount": "50.00", "amount_paid": paid, "discount": "0",
		"invoice_type": "main", "payment_type": "Cash", "due_date": "2026-12-31", "issued_by": "Kwame",
		"items": []any{map[string]any{"item_name": "Rice 5kg", "unit_price": "25.00", "quantity": "2"}}}
	saved := o.apiKey
	if key != "" {
		o.apiKey = key
	}
	st, data := o.callAPI(http.MethodPost, "/api/v1/sales/add", body)
	o.apiKey = saved
	if st != http.StatusOK {
		t.Fatalf("add sale %s: %d %s", code, st, data)
	}
	return browserJSONField(data, "invoice_code"), browserJSONField(data, "invoice_number")
}

// browseSales makes two sales through the API and sees today's collected
// bar on the overview chart (once their figures are applied) and both
// sales in the sales list.
func browseSales(t *testing.T, o *owner, br *browserTab) {
	_, n1 := browserAddSale(t, o, "", "710001", "20.00")
	_, n2 := browserAddSale(t, o, "", "710002", "12.50")
	applied(t, o) // as the stream applies them: the overview shows them as last applied
	br.open(t, "/dashboard")
	br.check(t, "overview-with-sales")
	loc, err := time.LoadLocation(o.acct.Timezone)
	if err != nil {
		loc = time.UTC
	}
	today := time.Now().In(loc).Format(time.DateOnly)
	bars := browserGet(t, br, "read the chart's bars", chromedp.Evaluate[[]string](`[...document.querySelectorAll('svg rect > title')].map(e => e.textContent)`))
	want := today + ": collected 32.50 GHS"
	if !slices.Contains(bars, want) {
		t.Errorf("the chart has no bar %q; bars for today: %q", want, browserFilterPrefix(bars, today))
	}
	br.open(t, "/dashboard/sales")
	br.check(t, "sales")
	br.mustSee(t, n1, n2)
}

// browserFilterPrefix is the strings of all that start with prefix.
func browserFilterPrefix(all []string, prefix string) []string {
	var out []string
	for _, s := range all {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// browseRefund refunds part of a sale through its page's form and sees
// the refund listed there and on the API.
func browseRefund(t *testing.T, o *owner, br *browserTab) {
	code, _ := browserAddSale(t, o, "", "710003", "50.00")
	page := "/dashboard/sales/" + code
	action := page + "/refunds"
	br.open(t, page)
	br.check(t, "sale")
	br.fill(t, action, "amount", "7.50")
	if br.has(t, browserForm(action)+` [name="reason"]`) {
		br.set(t, action, "reason", "Damaged bag")
	}
	if st, p := br.submit(t, action); st != http.StatusOK || p != page {
		t.Fatalf("refund answered %d at %s: %s", st, p, browserClip(br.text(t, "main"), 400))
	}
	br.check(t, "sale-refunded")
	br.mustSee(t, "GHS 7.50", "Partly refunded")
	// The list says so too, beside the payment status (which stays Paid:
	// it counts what was paid).
	br.open(t, "/dashboard/sales?invoice_code="+code)
	br.check(t, "sales-refunded")
	row := br.text(t, `tbody tr`)
	for _, want := range []string{code, "Paid", "Partly refunded", "GHS 7.50"} {
		if !strings.Contains(row, want) {
			t.Errorf("the sales list's row of the refunded sale lacks %q: %q", want, row)
		}
	}
	if st, data := o.callAPI(http.MethodGet, "/api/v1/sales/"+code, nil); st != http.StatusOK || !strings.Contains(string(data), `"7.50"`) {
		t.Errorf("the API's sale after the refund: %d %s", st, browserClip(string(data), 400))
	}
}

// browseAdjustStock adjusts an item's stock on its page and sees the
// movement there and on the API.
func browseAdjustStock(t *testing.T, o *owner, br *browserTab) {
	if st, data := o.callAPI(http.MethodPost, "/api/v1/inventory/categories/add", map[string]any{"category_name": "Shop"}); st != http.StatusOK {
		t.Fatalf("add category: %d %s", st, data)
	}
	if st, data := o.callAPI(http.MethodPost, "/api/v1/inventory/items/add", map[string]any{"item_code": "SOAP", "item_name": "Bar soap",
		"category_id": 1, "item_price": "5.00", "quantity": "10"}); st != http.StatusOK {
		t.Fatalf("add item: %d %s", st, data)
	}
	page := "/dashboard/inventory/SOAP"
	action := page + "/adjustments"
	br.open(t, page)
	br.check(t, "item")
	br.fill(t, action, "quantity", "-2")
	br.set(t, action, "reason", "damaged")
	if br.has(t, browserForm(action)+` [name="note"]`) {
		br.fill(t, action, "note", "Wet in the store room")
	}
	if st, p := br.submit(t, action); st != http.StatusOK || p != page {
		t.Fatalf("adjust stock answered %d at %s: %s", st, p, browserClip(br.text(t, "main"), 400))
	}
	br.check(t, "item-adjusted")
	br.mustSee(t, "damaged", "-2")
	st, data := o.callAPI(http.MethodGet, "/api/v1/inventory/items/SOAP", nil)
	if st != http.StatusOK || browserJSONField(data, "quantity") != "8" {
		t.Errorf("the API's item after the adjustment: %d %s", st, browserClip(string(data), 400))
	}
}

// browseTestMode switches to test data and sees a sale made with a test
// key, not the live sales; then switches back.
func browseTestMode(t *testing.T, o *owner, br *browserTab) {
	st, data := o.callAPI(http.MethodPost, "/api/v1/api-keys", map[string]any{"name": "Test till", "scopes": []string{"*"}, "mode": "test"})
	testKey := browserJSONField(data, "key")
	if st != http.StatusOK || testKey == "" {
		t.Fatalf("create a test key: %d", st)
	}
	saved := o.apiKey
	o.apiKey = testKey
	st, _ = o.callAPI(http.MethodPost, "/api/v1/customers/add", map[string]any{"name": "Test Customer"})
	o.apiKey = saved
	if st != http.StatusOK {
		t.Fatalf("add a test customer: %d", st)
	}
	_, testNumber := browserAddSale(t, o, testKey, "790001", "40.00")
	_, liveNumber := browserAddSale(t, o, "", "710009", "10.00")

	br.open(t, "/dashboard/sales")
	if st, p := br.submit(t, brMode); st != http.StatusOK || p != "/dashboard/sales" {
		t.Fatalf("switch to test data: %d at %s", st, p)
	}
	br.check(t, "sales-test-mode")
	if banner := br.text(t, ".testbanner"); !strings.Contains(banner, "test data") {
		t.Errorf("no test-data banner (got %q)", banner)
	}
	br.mustSee(t, testNumber)
	if strings.Contains(br.text(t, "main"), liveNumber) {
		t.Errorf("test mode shows the live sale %s", liveNumber)
	}
	if st, _ := br.submit(t, brMode); st != http.StatusOK || br.has(t, ".testbanner") {
		t.Errorf("switch back to live data: %d, test banner still shown: %v", st, br.has(t, ".testbanner"))
	}
}

// browserSmallPages are the signed-in pages every small-screen check
// visits; the sale, item and endpoint pages are found from their lists.
var browserSmallPages = []string{"/dashboard", "/dashboard/sales", "/dashboard/expenses", "/dashboard/inventory",
	"/dashboard/customers", "/dashboard/developers", "/dashboard/developers/events", "/dashboard/settings"}

// browserOverflow lists the elements that reach past the page's right edge
// outside a box that scrolls on its own, for a failure message.
const browserOverflow = `(() => {
  const w = document.documentElement.clientWidth, out = [];
  for (const e of document.querySelectorAll('body *')) {
    if (e.closest('.scroll') || e.closest('svg')) continue;
    const r = e.getBoundingClientRect();
    if (r.right > w + 1 && r.width > 0) out.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ').join('.') : '') + ' to ' + Math.round(r.right));
  }
  return out.slice(0, 8).join(', ');
})()`

// browserChartText is the smallest size, in CSS pixels as drawn, of the
// visible chart's texts (0 when no chart is visible).
const browserChartText = `(() => {
  const svg = [...document.querySelectorAll('.chart svg')].find(s => s.getBoundingClientRect().width > 0);
  if (!svg) return 0;
  const scale = svg.getScreenCTM().a;
  return Math.min(...[...svg.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize) * scale));
})()`

// browseSmallScreen shows every page at 390 CSS pixels wide, as a phone
// does: none scrolls sideways (a wide table scrolls inside its own box)
// and the overview's chart is drawn with labels at least 10 pixels high.
func browseSmallScreen(t *testing.T, br *browserTab) {
	pages := append([]string(nil), browserSmallPages...)
	for _, list := range []struct{ page, prefix string }{
		{"/dashboard/sales", "/dashboard/sales/"}, {"/dashboard/inventory", "/dashboard/inventory/"},
		{"/dashboard/developers", "/dashboard/developers/endpoints/"}} {
		br.open(t, list.page)
		link := browserGet(t, br, "find a link to "+list.prefix, chromedp.Evaluate[string](
			`([...document.querySelectorAll('a[href^=`+browserJS(list.prefix)+`]')].map(a => a.getAttribute('href')).filter(h => !h.includes('?'))[0] || "")`))
		if link == "" {
			t.Errorf("%s links to no %s page", list.page, list.prefix)
			continue
		}
		pages = append(pages, link)
	}
	br.run(t, "a 390-pixel screen", chromedp.EmulateViewport(390, 844))
	defer br.run(t, "back to a wide screen", chromedp.EmulateViewport(1280, 900))
	browserNoSidewaysScroll(t, br, pages)
	br.open(t, "/dashboard")
	if px := browserGet(t, br, "measure the chart's text", chromedp.Evaluate[float64](browserChartText)); px < 10 {
		t.Errorf("at 390 pixels the chart's labels are %.1f pixels high, want at least 10", px)
	}
}

// browserNoSidewaysScroll opens each page and fails t for each that is
// wider than the screen, naming what sticks out; each page is checked with
// axe and saved as small-<name>.png.
func browserNoSidewaysScroll(t *testing.T, br *browserTab, pages []string) {
	t.Helper()
	for _, p := range pages {
		if st, at := br.open(t, p); st != http.StatusOK || at != p {
			t.Errorf("%s: %d at %s", p, st, at)
			continue
		}
		name := strings.Trim(strings.ReplaceAll(strings.TrimPrefix(p, "/dashboard"), "/", "-"), "-")
		if name == "" {
			name = "overview"
		}
		br.check(t, "small-"+name)
		wide := browserGet(t, br, "measure "+p, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, document.documentElement.clientWidth]`))
		if wide[0] > wide[1] {
			t.Errorf("%s at 390 pixels is %d pixels wide and scrolls sideways: %s", p, wide[0],
				browserGet(t, br, "find what sticks out", chromedp.Evaluate[string](browserOverflow)))
		}
	}
}

// TestBrowserNewcomer follows a business in Auckland through its first
// day, at 23:00 UTC (when Auckland is on the next day): the empty overview
// says where to start, with links; the first sale shows on a chart whose
// axis ends on today, labelled; the sales filter takes the business's
// local day as typed text (a date input would show the browser's own
// format) and finds the sale by it; and the signed-out and empty pages fit
// a 390-pixel screen.
func TestBrowserNewcomer(t *testing.T) {
	br := newBrowserTab(t)
	b := newBoard(t)
	br.base = b.srv.URL
	at := datesLateUTC(b)
	const tz = "Pacific/Auckland"
	loc, _ := time.LoadLocation(tz)
	localDay, nextDay := at.In(loc).Format(time.DateOnly), at.In(loc).AddDate(0, 0, 1).Format(time.DateOnly)
	o := b.newOwnerIn("BRNEW1", tz)

	br.run(t, "a 390-pixel screen", chromedp.EmulateViewport(390, 844))
	browserNoSidewaysScroll(t, br, []string{brSignIn, brSignUp})
	br.run(t, "a wide screen", chromedp.EmulateViewport(1280, 900))
	br.open(t, brSignIn)
	br.fill(t, brSignIn, "email", o.email)
	br.fill(t, brSignIn, "password", o.password)
	if st, p := br.submit(t, brSignIn); st != http.StatusOK || p != "/dashboard" {
		t.Fatalf("sign-in: %d at %s", st, p)
	}

	// Nothing yet: the overview says what to do first.
	br.check(t, "overview-empty")
	br.mustSee(t, "Nothing recorded yet", "Make an API key", "Connect your till", "Add a webhook endpoint")
	links := browserGet(t, br, "read the start's links", chromedp.Evaluate[[]string](`[...document.querySelectorAll('.start a')].map(a => a.getAttribute('href'))`))
	for _, want := range []string{"/dashboard/developers#keys", "/dashboard/sales", "/dashboard/developers#endpoints"} {
		if !slices.Contains(links, want) {
			t.Errorf("the start lacks a link to %s: %q", want, links)
		}
	}
	if st, p := br.navigate(t, "follow the key link", chromedp.Click(chromedp.CSS(`.start a[href="/dashboard/developers#keys"]`))); st != http.StatusOK || p != "/dashboard/developers" || !br.has(t, "#keys") {
		t.Errorf("the key link: %d at %s", st, p)
	}

	// The first sale: the hint is gone; today's bars are labelled with
	// today's date and stand out of a chart that starts when the account
	// opened.
	if st, _ := o.callAPI(http.MethodPost, "/api/v1/customers/add", map[string]any{"name": "Ama Mensah"}); st != http.StatusOK {
		t.Fatalf("add customer: %d", st)
	}
	code, _ := browserAddSale(t, o, "", "720001", "50.00")
	applied(t, o)
	br.open(t, "/dashboard")
	br.check(t, "overview-first-day")
	if br.has(t, ".start") {
		t.Error("the overview still says where to start after the first sale")
	}
	labels := browserGet(t, br, "read the chart's labels", chromedp.Evaluate[[]string](`[...document.querySelectorAll('svg.chart-wide text[text-anchor="middle"]')].map(e => e.textContent)`))
	if len(labels) == 0 || labels[len(labels)-1] != localDay {
		t.Errorf("the chart's date labels %q do not end on today, %s", labels, localDay)
	}
	bar := browserGet(t, br, "measure today's bar", chromedp.Evaluate[float64](`(() => {
	  const r = [...document.querySelectorAll('svg.chart-wide rect')].find(r => (r.querySelector('title')||{}).textContent === `+browserJS(localDay+": collected 50.00 GHS")+`);
	  return r ? r.getBoundingClientRect().width * r.getBoundingClientRect().height : 0; })()`))
	if bar < 1000 {
		t.Errorf("today's collected bar covers %.0f square pixels: a blank chart", bar)
	}

	// The date rules: text fields in the form the hint shows, the
	// business's timezone named, and its local day finding the sale.
	br.open(t, "/dashboard/sales")
	if n := browserGet(t, br, "count date inputs", chromedp.Evaluate[int](`document.querySelectorAll('input[type=date]').length`)); n != 0 {
		t.Errorf("the sales filter has %d date inputs, shown in the browser's format beside a YYYY-MM-DD hint", n)
	}
	if hint := br.text(t, "#f-created-hint"); !strings.Contains(hint, "YYYY-MM-DD") || !strings.Contains(hint, tz) || strings.Contains(hint, "UTC") {
		t.Errorf("the created filter's hint: %q", hint)
	}
	valid := browserGet(t, br, "check the field's format", chromedp.Evaluate[[]bool](`(() => { const f = document.querySelector('#f-created'), out = [];
	  for (const v of [`+browserJS(localDay)+`, '27/11/2026', '11/27/2026']) { f.value = v; out.push(f.checkValidity()); } f.value = ''; return out; })()`))
	if !slices.Equal(valid, []bool{true, false, false}) {
		t.Errorf("the created filter accepts YYYY-MM-DD, 27/11/2026, 11/27/2026: %v, want true, false, false", valid)
	}
	for _, c := range []struct {
		day    string
		listed bool
	}{{localDay, true}, {nextDay, false}} {
		br.fill(t, "/dashboard/sales", "created_at", c.day)
		if st, _ := br.submit(t, "/dashboard/sales"); st != http.StatusOK {
			t.Fatalf("filter by %s: %d", c.day, st)
		}
		if got := br.has(t, `a[href="/dashboard/sales/`+code+`"]`); got != c.listed {
			t.Errorf("sales made on or after %s (Auckland) list the sale made then: %v, want %v", c.day, got, c.listed)
		}
	}
	br.check(t, "sales-filtered-by-local-day")
}
