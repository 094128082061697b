package dashboard

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzDashboard sends the signed-in dashboard any method, path, query and
// form body, with or without the session's CSRF token. Whatever arrives, it
// must never answer a 5xx other than 503, must send the security headers,
// must redirect only within the site, and a form without the session's
// token must change nothing. make test runs the seeds; make fuzz-dashboard
// explores for FUZZTIME.
func FuzzDashboard(f *testing.F) {
	for _, s := range []struct {
		method, path, query, form string
		token                     bool
	}{
		{"GET", "/dashboard/sales", "status=paid&limit=2", "", false},
		{"GET", "/dashboard/sales", "cursor=not-a-cursor", "", false},
		{"GET", "/dashboard/sales/100001", "", "", false},
		{"GET", "/dashboard/sales/%2e%2e", "", "", false},
		{"GET", "/dashboard/inventory/RICE%00", "", "", false},
		{"GET", "/dashboard/developers/events", "type=sale.*&cursor=x", "", false},
		{"GET", "/dashboard/expenses", "created_at=2026-13-45", "", false},
		{"GET", "/dashboard/sign-in", "next=https://evil.example/", "", false},
		{"GET", "/dashboard/assets/..%2fdashboard.go", "", "", false},
		{"POST", "/dashboard/sales/100001/refunds", "", "amount=1e309&lines[0].quantity=-1", true},
		{"POST", "/dashboard/sales/100001/payments", "", "amount=99999999999999999999&paid_before=x", true},
		{"POST", "/dashboard/sales/100001/void", "", "confirm=yes", true},
		{"POST", "/dashboard/developers/keys", "", "name=%00&scopes=*&scopes=nope", true},
		{"POST", "/dashboard/developers/endpoints", "", "url=javascript:alert(1)&events=*", true},
		{"POST", "/dashboard/developers/endpoints/ep_aaaaaaaaaaaaaaaaaaaa", "", "url=https://x.example&events=sale.*&status=paused&status_was=enabled", true},
		{"POST", "/dashboard/developers/endpoints/ep_aaaaaaaaaaaaaaaaaaaa/test", "", "", true},
		{"POST", "/dashboard/developers/endpoints/%2e%2e/deliveries/evt_x/redeliver", "", "", true},
		{"POST", "/dashboard/developers/endpoints/ep_aaaaaaaaaaaaaaaaaaaa/test", "", "", false},
		{"GET", "/dashboard0", "", "", false},
		{"POST", "/dashboard/settings", "", "business_name=&timezone=Mars/Olympus", true},
		{"POST", "/dashboard/settings", "", "business_name=Forged", false},
		{"POST", "/dashboard/mode", "", "mode=test&back=//evil.example", true},
		{"POST", "/dashboard/inventory/RICE/adjustments", "", "quantity=-100000&reason=count", true},
		{"POST", "/dashboard/sign-in", "", "email=a@b.c&password=x", false},
		{"PUT", "/dashboard/sales", "", "", true},
	} {
		f.Add(s.method, s.path, s.query, s.form, s.token)
	}
	b := newBoard(f)
	o := b.newOwner("FUZZDASH1")
	salesFixture(f, o, "100001", "10.00")
	noFollow := &http.Client{Jar: o.client.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	f.Fuzz(func(t *testing.T, method, path, query, form string, token bool) {
		o := o.with(t)
		// Only /dashboard and what is under it: /dashboard0 is the API's
		// (a JSON 404), as the devserver and API Gateway route it.
		if (path != "/dashboard" && !strings.HasPrefix(path, "/dashboard/")) || path == "/dashboard/sign-out" || strings.HasPrefix(path, "/dashboard/settings/password") {
			t.Skip("only the dashboard's pages, without signing out or changing the password")
		}
		u, err := url.Parse(b.srv.URL + path)
		if err != nil || u.Host != strings.TrimPrefix(b.srv.URL, "http://") {
			t.Skip("not a URL of the server")
		}
		u.RawQuery = query
		if token {
			form += "&csrf=" + o.csrfOf()
		}
		req, err := http.NewRequest(method, u.String(), strings.NewReader(form))
		if err != nil {
			t.Skip("not a request")
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		before := ""
		if !token && method == http.MethodPost {
			before = o.snapshotOwn()
		}
		res, err := noFollow.Do(req)
		if err != nil {
			t.Skip("the client refused it")
		}
		res.Body.Close()
		if res.StatusCode >= 500 && res.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s %s?%s [%s]: %d", method, path, query, form, res.StatusCode)
		}
		if !strings.Contains(res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Fatalf("%s %s: no CSP", method, path)
		}
		if loc := res.Header.Get("Location"); loc != "" {
			if l, err := url.Parse(loc); err != nil || l.Host != "" || !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") {
				t.Fatalf("%s %s redirects to %q", method, path, loc)
			}
		}
		if before != "" {
			if after := o.snapshotOwn(); after != before {
				t.Fatalf("%s %s without the session's token changed the account:\n%s\n%s", method, path, before, after)
			}
		}
		// Keep the session on live data, whatever the input switched.
		if _, err := o.client.PostForm(b.srv.URL+"/dashboard/mode", url.Values{"mode": {"live"}, "csrf": {o.csrfOf()}}); err != nil {
			t.Fatal(err)
		}
	})
}

// with is o reporting to t (a fuzz target's, not the fuzz test's).
func (o *owner) with(t testing.TB) *owner {
	c := *o
	c.t = t
	return &c
}

// snapshotOwn is the account's own records and settings as the API lists
// them.
func (o *owner) snapshotOwn() string {
	var b strings.Builder
	for _, p := range []string{"/api/v1/sales/100001", "/api/v1/inventory/items/RICE", "/api/v1/api-keys", "/api/v1/webhook-endpoints", "/api/v1/user/settings", "/api/v1/user/webhook"} {
		st, data := o.callAPI("GET", p, nil)
		b.WriteString(p + " " + http.StatusText(st) + " " + string(data) + "\n")
	}
	return lastUsedRE.ReplaceAllString(b.String(), "")
}
