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
// sales on the overview chart and the sales list, a refund, a stock
// adjustment and the switch to test data. Each flow is a subtest on one
// signed-in tab, so a page that fails does not hide the others.
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
	t.Run("adjust stock", func(t *testing.T) { browseAdjustStock(t, o, br) })
	t.Run("test data only in test mode", func(t *testing.T) { browseTestMode(t, o, br) })
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
	br.mustSee(t, "GHS 7.50")
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
