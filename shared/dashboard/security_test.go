package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/testdb"
)

// saleBody is a sale the API takes: code, a line of 2 x 10.00, paid paid.
func saleBody(code, paid string) map[string]any {
	return map[string]any{"invoice_code": code, "invoice_number": code, "customer_id": 1, "sub_total_amount": "20.00", "total_amount": "20.00",
		"amount_paid": paid, "invoice_type": "main", "payment_type": "Cash", "due_date": "2099-12-31",
		"items": []map[string]any{{"item_name": "Rice 5kg", "unit_price": "10.00", "quantity": "2"}}}
}

// mustAPI calls the API and fails unless it answers 200.
func (o *owner) mustAPI(method, path string, body any) string {
	o.t.Helper()
	st, data := o.callAPI(method, path, body)
	if st != http.StatusOK {
		o.t.Fatalf("%s %s: %d %s", method, path, st, data)
	}
	return string(data)
}

// TestAnotherAccountSeesNothing: an owner signed in to one account sees
// nothing of another account on any page, and no action of the dashboard
// reaches the other account's records, even with their ids in the URL.
func TestAnotherAccountSeesNothing(t *testing.T) {
	b := newBoard(t)
	mine, theirs := b.newOwner("SECA1"), b.newOwner("SECB1")
	theirs.mustAPI("POST", "/api/v1/customers/add", map[string]any{"name": "Their Customer Kwesi"})
	theirs.mustAPI("POST", "/api/v1/sales/add", saleBody("200002", "5.00"))
	cat := theirs.mustAPI("POST", "/api/v1/inventory/categories/add", map[string]any{"category_name": "Their shelf"})
	theirs.mustAPI("POST", "/api/v1/inventory/items/add", map[string]any{"item_code": "THEIRS-1", "item_name": "Their secret item",
		"category_id": json.RawMessage(jsonField(t, cat, "categories", "id")), "item_price": "9.00", "quantity": "7"})
	theirs.mustAPI("POST", "/api/v1/expenses/add", map[string]any{"expense_type": "Their rent", "expense_amount": "300.00", "payment_method": "cash", "created_by": "Kofi"})
	theirKey := theirs.mustAPI("POST", "/api/v1/api-keys", map[string]any{"name": "Their till", "scopes": []string{"sales:read"}})
	keyID := jsonField(t, theirKey, "api_key", "id")
	endpoint := theirs.mustAPI("POST", "/api/v1/webhook-endpoints", map[string]any{"url": "https://hooks.example.com/theirs", "enabled_events": []string{"*"}})
	endpointID := jsonField(t, endpoint, "webhook_endpoint", "id")
	if keyID == "" || endpointID == "" {
		t.Fatalf("no key id in %s or endpoint id in %s", theirKey, endpoint)
	}
	before := theirs.snapshot()

	secrets := []string{"200002", "THEIRS-1", "Their shelf", "Their secret item", "Their Customer Kwesi", "Their rent", "Their till", keyID, endpointID, "hooks.example.com/theirs", "Shop SECB1", theirs.email}
	for _, rt := range Routes {
		if rt.Method != http.MethodGet || rt.public != nil {
			continue
		}
		path := strings.NewReplacer("{invoice_code}", "200002", "{item_code}", "THEIRS-1", "{id}", endpointID).Replace(rt.Path)
		st, body, _ := mine.get(path)
		if strings.Contains(rt.Path, "{") && st != http.StatusNotFound {
			t.Errorf("GET %s of the other account: %d, want 404", path, st)
		}
		for _, s := range secrets {
			// A page may repeat its own address (the switch's way back).
			if strings.Contains(body, s) && !strings.Contains(path, s) {
				t.Errorf("GET %s shows the other account's %q", path, s)
			}
		}
	}
	for _, a := range []struct {
		path string
		form url.Values
	}{
		{"/dashboard/sales/200002/payments", url.Values{"amount": {"5.00"}}},
		{"/dashboard/sales/200002/refunds", url.Values{"amount": {"5.00"}, "reason": {"x"}}},
		{"/dashboard/sales/200002/void", url.Values{"confirm": {"yes"}}},
		{"/dashboard/inventory/THEIRS-1/adjustments", url.Values{"quantity": {"-7"}, "change": {"-7"}, "reason": {"count"}}},
		{"/dashboard/developers/keys/" + keyID + "/revoke", url.Values{"confirm": {"yes"}}},
		{"/dashboard/developers/endpoints/" + endpointID + "/rotate", nil},
		{"/dashboard/developers/endpoints/" + endpointID + "/delete", url.Values{"confirm": {"yes"}}},
	} {
		if st, _, _ := mine.post(a.path, a.form); st < 400 {
			t.Errorf("POST %s on the other account's record: %d", a.path, st)
		}
	}
	if after := theirs.snapshot(); after != before {
		t.Errorf("the other account changed:\nbefore %s\nafter  %s", before, after)
	}
}

// snapshot is the account's records as the API lists them.
func (o *owner) snapshot() string {
	o.t.Helper()
	var b strings.Builder
	for _, p := range []string{"/api/v1/sales/200002", "/api/v1/inventory/items/THEIRS-1", "/api/v1/api-keys", "/api/v1/webhook-endpoints", "/api/v1/customers", "/api/v1/expenses"} {
		st, data := o.callAPI("GET", p, nil)
		b.WriteString(p + " " + http.StatusText(st) + " " + string(data) + "\n")
	}
	// last_used_at moves as the snapshot itself reads.
	return lastUsedRE.ReplaceAllString(b.String(), "")
}

// TestOldCookiesAreRefused: a session cookie stops working on sign-out, on
// expiry and, for every other browser, on a password change.
func TestOldCookiesAreRefused(t *testing.T) {
	b := newBoard(t)
	refused := func(o *owner, when string) {
		t.Helper()
		if st, _, path := o.get("/dashboard/sales"); st != http.StatusOK || !strings.HasPrefix(path, "/dashboard/sign-in") {
			t.Errorf("%s: the old cookie reached %s (%d)", when, path, st)
		}
		if st, _, _ := o.postWith("/dashboard/mode", url.Values{"mode": {"test"}}, o.csrfOf()); st == http.StatusOK {
			if _, page, path := o.get("/dashboard"); !strings.HasPrefix(path, "/dashboard/sign-in") {
				t.Errorf("%s: a form with the old cookie was served: %s", when, page[:min(200, len(page))])
			}
		}
	}

	t.Run("SignOut", func(t *testing.T) {
		o := b.newOwner("OLDC1")
		kept := o.cookies()
		if st, _, path := o.post("/dashboard/sign-out", nil); st != http.StatusOK || !strings.HasPrefix(path, "/dashboard/sign-in") {
			t.Fatalf("sign out: %d at %s", st, path)
		}
		o.setCookies(kept)
		refused(o, "after sign-out")
	})
	t.Run("PasswordChange", func(t *testing.T) {
		o := b.newOwner("OLDC2")
		other := b.browser()
		other.email, other.password = o.email, o.password
		if st, _, _ := other.signIn(o.email, o.password); st != http.StatusOK {
			t.Fatal("second sign-in failed")
		}
		st, page, _ := o.post("/dashboard/settings/password", url.Values{"current": {testPassword}, "password": {"a brand new password"}, "confirm": {"a brand new password"}})
		if st != http.StatusOK {
			t.Fatalf("password change: %d %s", st, page)
		}
		refused(other, "another browser after a password change")
		if st, _, path := o.get("/dashboard"); st != http.StatusOK || path != "/dashboard" {
			t.Errorf("the browser that changed the password was signed out: %d at %s", st, path)
		}
		if st, _, _ := b.browser().signIn(o.email, testPassword); st != http.StatusUnauthorized {
			t.Errorf("the old password still signs in: %d", st)
		}
	})
	t.Run("Expiry", func(t *testing.T) {
		o := b.newOwner("OLDC3")
		b.later(business.SessionIdle + time.Minute)
		defer b.later(-business.SessionIdle - time.Minute)
		refused(o, "after 12 idle hours")
	})
}

// TestFormsNeedTheSessionsToken: a POST without the session's CSRF token,
// with another session's, or from another site changes nothing (403).
func TestFormsNeedTheSessionsToken(t *testing.T) {
	b := newBoard(t)
	o, other := b.newOwner("CSRF1"), b.newOwner("CSRF2")
	body := url.Values{"business_name": {"Renamed by a forged form"}, "timezone": {"Africa/Lagos"}, "invoice_prefix": {"FORGE"}}
	right := o.csrfOf()
	wrong := "x" + right[1:]
	if right[0] == 'x' { // a base64url token starts with x once in 64
		wrong = "y" + right[1:]
	}
	for name, token := range map[string]string{"None": "", "Wrong": wrong, "AnotherSessions": other.csrfOf()} {
		t.Run(name, func(t *testing.T) {
			st, page, _ := o.postWith("/dashboard/settings", body, token)
			if st != http.StatusForbidden || !strings.Contains(page, "did not come from this dashboard") {
				t.Errorf("%d %s", st, page)
			}
		})
	}
	t.Run("CrossSite", func(t *testing.T) {
		f := url.Values{"csrf": {o.csrfOf()}}
		for k, v := range body {
			f[k] = v
		}
		req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/dashboard/settings", strings.NewReader(f.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		req.Header.Set("Origin", "https://evil.example")
		res, err := o.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("a cross-site POST: %d", res.StatusCode)
		}
	})
	if data := o.mustAPI("GET", "/api/v1/user/settings", nil); strings.Contains(data, "Renamed") || strings.Contains(data, "FORGE") {
		t.Errorf("a refused form changed the settings: %s", data)
	}
	t.Run("SignInForm", func(t *testing.T) {
		st, _, _ := b.browser().postWith("/dashboard/sign-in", url.Values{"email": {o.email}, "password": {testPassword}}, "forged")
		if st != http.StatusForbidden {
			t.Errorf("a sign-in form without its cookie's token: %d", st)
		}
	})
}

// TestSignInLockout: five wrong passwords for an email within 15 minutes
// refuse the sixth try, the right password included (429, Retry-After);
// another email still signs in.
func TestSignInLockout(t *testing.T) {
	b := newBoard(t)
	o, other := b.newOwner("LOCK1"), b.newOwner("LOCK2")
	br := b.browser()
	for i := range business.SignInFailures {
		if st, page, _ := br.signIn(o.email, "wrong password "+string(rune('a'+i))); st != http.StatusUnauthorized || !strings.Contains(page, "do not match") {
			t.Fatalf("wrong password %d: %d", i+1, st)
		}
	}
	_, page, _ := br.get("/dashboard/sign-in")
	res, err := br.client.PostForm(b.srv.URL+"/dashboard/sign-in", url.Values{"email": {o.email}, "password": {testPassword}, "csrf": {formCSRF(page)}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("the sixth try: %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if st, _, path := b.browser().signIn(other.email, testPassword); st != http.StatusOK || path != "/dashboard" {
		t.Fatalf("another email was locked out too: %d at %s", st, path)
	}
}

// TestSignInLockoutHoldsUnderRacing: wrong passwords sent all at once are
// checked no more than five times; the rest are refused 429 unchecked.
func TestSignInLockoutHoldsUnderRacing(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("LOCK3")
	br := b.browser()
	_, page, _ := br.get("/dashboard/sign-in")
	csrf := formCSRF(page)
	statuses := make([]int, 20)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], _, _ = br.postWith("/dashboard/sign-in", url.Values{"email": {o.email}, "password": {"guess " + strconv.Itoa(i)}}, csrf)
		}()
	}
	wg.Wait()
	checked := 0
	for _, st := range statuses {
		switch st {
		case http.StatusUnauthorized:
			checked++
		case http.StatusTooManyRequests:
		default:
			t.Errorf("a racing sign-in answered %d", st)
		}
	}
	if checked > business.SignInFailures {
		t.Fatalf("%d of 20 racing guesses were checked (%v)", checked, statuses)
	}
}

// TestCurrentPasswordGuessesAreLimited: a session cannot guess the owner's
// current password on the Settings page beyond the sign-in lockout.
func TestCurrentPasswordGuessesAreLimited(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("LOCK4")
	form := url.Values{"password": {"a new password!"}, "confirm": {"a new password!"}}
	for i := range business.SignInFailures {
		form.Set("current", "guess "+strconv.Itoa(i))
		if st, _, _ := o.post("/dashboard/settings/password", form); st != http.StatusBadRequest {
			t.Fatalf("wrong current password %d: %d", i+1, st)
		}
	}
	form.Set("current", testPassword)
	if st, _, _ := o.post("/dashboard/settings/password", form); st != http.StatusTooManyRequests {
		t.Fatalf("the sixth try, with the right password: %d", st)
	}
	if st, _, _ := b.browser().signIn(o.email, "a new password!"); st == http.StatusOK {
		t.Fatal("the password changed while locked out")
	}
}

// TestPagesCannotBeFramed: every dashboard response, signed in or not,
// forbids framing and inline script.
func TestPagesCannotBeFramed(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("FRAME1")
	anon := b.browser()
	for _, rt := range Routes {
		if rt.Method != http.MethodGet {
			continue
		}
		path := strings.NewReplacer("{invoice_code}", "100001", "{item_code}", "NONE", "{id}", "x", "{file}", "app.css").Replace(rt.Path)
		for _, who := range []*owner{o, anon} {
			res, err := who.client.Get(b.srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			csp := res.Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'self'") ||
				strings.Contains(csp, "unsafe-inline") || res.Header.Get("X-Frame-Options") != "DENY" {
				t.Errorf("GET %s: CSP %q, X-Frame-Options %q", path, csp, res.Header.Get("X-Frame-Options"))
			}
		}
	}
}

// TestOtherMethodsOnTheOverview: a method /dashboard does not take (PUT,
// DELETE, OPTIONS, PATCH, an unknown one) answers what it answers on any
// other dashboard path: the dashboard's 404 page with its security
// headers, not a redirect; signed in or not, on the whole dashboard and on
// the pages function's share of it.
func TestOtherMethodsOnTheOverview(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("METH1")
	pages := httptest.NewServer(b.board.Handler(RoutesOf(FunctionPages)))
	defer pages.Close()
	noFollow := func(jar http.CookieJar) *http.Client {
		return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	answer := func(c *http.Client, base, method, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if !strings.Contains(res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") || res.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s %s%s: no security headers", method, base, path)
		}
		return res.StatusCode, res.Header.Get("Location")
	}
	for _, base := range []string{b.srv.URL, pages.URL} {
		for _, c := range []*http.Client{noFollow(o.client.Jar), noFollow(nil)} {
			for _, method := range []string{http.MethodPut, http.MethodDelete, http.MethodOptions, http.MethodPatch, "BREW"} {
				other, _ := answer(c, base, method, "/dashboard/sales")
				st, loc := answer(c, base, method, "/dashboard")
				if st != other || st != http.StatusNotFound || loc != "" {
					t.Errorf("%s %s/dashboard: %d (Location %q); /dashboard/sales answers %d", method, base, st, loc, other)
				}
			}
		}
	}
}

// TestSessionCookieAttributes: on HTTPS the session cookie is
// __Host-session, Secure, HttpOnly, SameSite=Lax and Path=/.
func TestSessionCookieAttributes(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("COOK1")
	secure := New(b.st, b.api, testdb.Quiet(), Config{})
	h := secure.Handler(Routes)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://dash.example.com/dashboard/sign-in", nil))
	form := rec.Result().Cookies()[0]
	req := httptest.NewRequest(http.MethodPost, "https://dash.example.com/dashboard/sign-in",
		strings.NewReader(url.Values{"email": {o.email}, "password": {testPassword}, "csrf": {form.Value}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(form)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var session *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == "__Host-session" {
			session = c
		}
	}
	if rec.Code != http.StatusSeeOther || session == nil {
		t.Fatalf("sign-in: %d, cookies %v", rec.Code, rec.Result().Cookies())
	}
	if !session.Secure || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Path != "/" || session.Domain != "" {
		t.Fatalf("session cookie %+v", session)
	}
	if form.Name != "__Host-form" || !form.Secure || !form.HttpOnly {
		t.Fatalf("form cookie %+v", form)
	}
}

// TestKeysAndSessionsDoNotMix: an API key does not sign in to the
// dashboard, and a dashboard session does not call the API.
func TestKeysAndSessionsDoNotMix(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("MIX1")
	req, _ := http.NewRequest(http.MethodGet, b.srv.URL+"/dashboard/sales", nil)
	req.Header.Set("Authorization", "Bearer "+o.apiKey)
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/dashboard/sign-in") {
		t.Errorf("an API key on the dashboard: %d to %s", res.StatusCode, res.Header.Get("Location"))
	}
	res, err = o.client.Get(b.srv.URL + "/api/v1/sales")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a session cookie on the API: %d", res.StatusCode)
	}
}

// TestSignUpCanBeTurnedOff: with sign-up off, its page and form answer 404
// and make nothing.
func TestSignUpCanBeTurnedOff(t *testing.T) {
	b := newBoard(t)
	closed := httptest.NewServer(New(b.st, b.api, testdb.Quiet(), Config{PlainHTTP: true}).Handler(Routes))
	defer closed.Close()
	res, err := http.Get(closed.URL + "/dashboard/sign-up")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("GET sign-up: %d", res.StatusCode)
	}
	res, err = http.PostForm(closed.URL+"/dashboard/sign-up", url.Values{"business_name": {"X"}, "business_code": {"OFF1"}, "currency": {"GHS"},
		"email": {"off@example.com"}, "password": {"long enough password"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("POST sign-up: %d", res.StatusCode)
	}
	if _, err := b.st.FindAccountByCode(context.Background(), "OFF1"); business.ErrorCode(err) != business.ENOTFOUND {
		t.Errorf("sign-up while off made an account: %v", err)
	}
}

// TestNothingSecretIsLogged: the log of sign-up, sign-in, a failed sign-in,
// pages and forms holds no password, session id, CSRF token or API key.
func TestNothingSecretIsLogged(t *testing.T) {
	b := newBoard(t)
	var buf testdb.Buffer
	logged := New(b.st, api.NewServer(b.st, testdb.Quiet(), 0), slogTo(&buf), Config{PlainHTTP: true, SignUp: true})
	b.srv.Config.Handler = withAPI(logged.Handler(Routes), b.api, b.st)
	br := b.browser()
	_, page, _ := br.get("/dashboard/sign-up")
	st, page, _ := br.postWith("/dashboard/sign-up", url.Values{"business_name": {"Logged Shop"}, "business_code": {"LOG1"}, "currency": {"GHS"},
		"timezone": {"Africa/Accra"}, "email": {"log@example.com"}, "password": {"sign-up password"}}, formCSRF(page))
	if st != http.StatusOK {
		t.Fatalf("sign-up: %d %s", st, page)
	}
	key := secretShownRE.FindStringSubmatch(page)
	if key == nil {
		t.Fatalf("sign-up showed no API key: %s", page)
	}
	br.signIn("log@example.com", "a wrong password")
	br.signIn("log@example.com", "sign-up password")
	br.post("/dashboard/settings", url.Values{"business_name": {"Logged Shop 2"}})
	sessionID := ""
	for _, c := range br.cookies() {
		if c.Name == "bizdata_session" {
			sessionID = c.Value
		}
	}
	log := buf.String()
	if !strings.Contains(log, `"function":"dashboard-auth"`) {
		t.Fatalf("nothing was logged: %s", log)
	}
	for _, secret := range []string{"sign-up password", "a wrong password", key[1], sessionID, business.CSRFToken(sessionID)} {
		if secret == "" || strings.Contains(log, secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
}

// TestSigningInAgainEndsTheOldSession: a browser that signs in again (as
// the same or another owner) ends the session its cookie held, so the old
// cookie, if copied, no longer works.
func TestSigningInAgainEndsTheOldSession(t *testing.T) {
	b := newBoard(t)
	o, other := b.newOwner("AGAIN1"), b.newOwner("AGAIN2")
	old := o.cookies()
	if st, _, path := o.signIn(other.email, testPassword); st != http.StatusOK || path != "/dashboard" {
		t.Fatalf("sign in as another owner: %d at %s", st, path)
	}
	copied := b.browser()
	copied.setCookies(old)
	if _, _, path := copied.get("/dashboard"); !strings.HasPrefix(path, "/dashboard/sign-in") {
		t.Fatalf("the replaced session's cookie still reaches %s", path)
	}
}
