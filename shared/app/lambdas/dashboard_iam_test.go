package lambdas_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app/lambdas"
	"bizdata/shared/business"
	"bizdata/shared/dashboard"
	"bizdata/shared/testdb"

	"github.com/google/go-cmp/cmp"
)

// dashFlow is the dashboard's four functions and the API on one HTTPS
// server, routed as API Gateway routes them (each dashboard route to its
// function, the fallback to the pages function), with the recorder set to
// the function each request reaches. The API itself is not recorded: the
// test makes data through it with the account's key.
type dashFlow struct {
	t   *testing.T
	srv *httptest.Server
}

func newDashFlow(t *testing.T, rec *iamRecorder, board *dashboard.Server, apiHandler http.Handler) *dashFlow {
	mux := http.NewServeMux()
	serve := func(fn string, h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec.as(fn)
			defer rec.as("")
			h.ServeHTTP(w, r)
		})
	}
	for _, fn := range dashboardFunctions {
		h, err := lambdas.DashboardHandler(board, fn)
		if err != nil {
			t.Fatal(err)
		}
		for _, rt := range dashboard.RoutesOf(fn) {
			mux.Handle(rt.Method+" "+rt.Path, serve(fn, h))
		}
		if fn == dashboard.FunctionPages {
			mux.Handle("GET /dashboard/{proxy...}", serve(fn, h))
		}
	}
	mux.Handle("/api/", apiHandler)
	f := &dashFlow{t: t, srv: httptest.NewTLSServer(mux)}
	t.Cleanup(f.srv.Close)
	return f
}

// dashBrowser is one browser: a cookie jar on the flow's server.
type dashBrowser struct {
	f      *dashFlow
	client *http.Client
}

func (f *dashFlow) browser() *dashBrowser {
	jar, _ := cookiejar.New(nil)
	c := f.srv.Client()
	c.Jar = jar
	return &dashBrowser{f: f, client: c}
}

// cookie is the browser's cookie name (the __Host- cookies of HTTPS).
func (b *dashBrowser) cookie(name string) string {
	u, _ := url.Parse(b.f.srv.URL + "/dashboard")
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == "__Host-"+name {
			return c.Value
		}
	}
	return ""
}

// get fetches path, following redirects, and returns the final status and
// path.
func (b *dashBrowser) get(path string) (int, string) {
	b.f.t.Helper()
	res, err := b.client.Get(b.f.srv.URL + path)
	if err != nil {
		b.f.t.Fatal(err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode, res.Request.URL.Path
}

// post sends form to path as the dashboard's own page would (same origin,
// the form's token: the session's CSRF token, or before a session the form
// cookie), following the redirect.
func (b *dashBrowser) post(path string, form url.Values) (int, string) {
	b.f.t.Helper()
	f := url.Values{}
	maps.Copy(f, form)
	if id := b.cookie("session"); id != "" {
		f.Set("csrf", business.CSRFToken(id))
	} else {
		f.Set("csrf", b.cookie("form"))
	}
	req, _ := http.NewRequest(http.MethodPost, b.f.srv.URL+path, strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.f.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := b.client.Do(req)
	if err != nil {
		b.f.t.Fatal(err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode, res.Request.URL.Path
}

// signIn signs the browser in as email (the sign-in page first, for its
// form cookie).
func (b *dashBrowser) signIn(email, password string) int {
	b.f.t.Helper()
	b.get("/dashboard/sign-in")
	st, _ := b.post("/dashboard/sign-in", url.Values{"email": {email}, "password": {password}})
	return st
}

// api calls the JSON API with key and returns the status and the data.
func (f *dashFlow) api(key, method, path string, body any) (int, json.RawMessage) {
	f.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = strings.NewReader(string(raw))
	}
	req, _ := http.NewRequest(method, f.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	raw, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(raw, &env)
	if res.StatusCode != http.StatusOK {
		f.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	return res.StatusCode, env.Data
}

// TestDashboardIAMMatchesCode runs the dashboard's flows through its four
// functions against DynamoDB Local (sign-up, sign-in with a wrong then the
// right password, a set-password link, every page in live and test mode,
// every form, a refused one too, sign-out) and fails when a function calls
// a DynamoDB action its policy in template.yaml does not grant, its policy
// grants one the flows never use, or a call, with its partition keys and
// attributes, would be refused by its policy's conditions.
func TestDashboardIAMMatchesCode(t *testing.T) {
	rec := &iamRecorder{used: map[string]map[string]bool{}, requests: map[string]map[string]ddbRequest{}}
	st, _ := testdb.NewStore(t, rec.option)
	ctx := context.Background()
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(receiver.Close)
	apiServer := api.NewServer(st, testdb.Quiet(), 0).AllowPrivateWebhooks(true)
	board := dashboard.New(st, apiServer, testdb.Quiet(), dashboard.Config{PlainHTTP: false, SignUp: true})
	f := newDashFlow(t, rec, board, apiServer.Handler(api.Routes))
	status := func(what string, got int) {
		t.Helper()
		if got >= 500 {
			t.Errorf("%s: answered %d", what, got)
		}
	}

	// The assets function.
	if got, _ := f.browser().get("/dashboard/assets/app.css"); got != http.StatusOK {
		t.Errorf("GET /dashboard/assets/app.css: %d", got)
	}

	// Auth: sign-up (a timezone other than the default: the API's
	// update-settings), a wrong password, an unknown email, the right
	// password, a set-password link.
	newcomer := f.browser()
	newcomer.get("/dashboard/sign-up")
	got, _ := newcomer.post("/dashboard/sign-up", url.Values{"business_name": {"IAM Dash"}, "business_code": {"IAMD1"},
		"currency": {"GHS"}, "timezone": {"Africa/Nairobi"}, "email": {"newcomer@example.com"}, "password": {"correct horse battery"}})
	if got != http.StatusOK || newcomer.cookie("session") == "" {
		t.Fatalf("sign-up: %d, session %v", got, newcomer.cookie("session") != "")
	}
	rec.as("")
	a, key := testdb.NewAccount(t, st, "IAM Dash Shop", "IAMD2")
	const email, password = "owner@example.com", "correct horse battery"
	if err := st.CreateOwner(ctx, a.ID, business.Owner{Email: email, PasswordHash: business.HashPassword(password)}); err != nil {
		t.Fatal(err)
	}
	other := f.browser() // a second session, which the password change ends
	if got := other.signIn(email, "wrong password!!"); got != http.StatusUnauthorized {
		t.Errorf("wrong password: %d, want 401", got)
	}
	if got := other.signIn("nobody@example.com", password); got != http.StatusUnauthorized {
		t.Errorf("unknown email: %d, want 401", got)
	}
	if got := other.signIn(email, password); got != http.StatusOK {
		t.Fatalf("sign-in: %d", got)
	}
	link, err := st.CreatePasswordLink(ctx, email)
	if err != nil {
		t.Fatal(err)
	}
	o := f.browser()
	o.get("/dashboard/set-password?token=" + url.QueryEscape(link))
	if got, _ := o.post("/dashboard/set-password", url.Values{"token": {link}, "password": {password}, "confirm": {password}}); got != http.StatusOK {
		t.Fatalf("set-password: %d", got)
	}
	status("sign-in again", other.signIn(email, password)) // the link ended its session

	// Data through the API, with the account's live key.
	sale := func(code string) map[string]any {
		return map[string]any{"invoice_code": code, "customer_id": 1, "sub_total_amount": "10.00", "total_amount": "10.00",
			"amount_paid": "4.00", "invoice_type": "main", "payment_type": "Cash", "due_date": "2026-12-31",
			"items": []map[string]any{{"item_code": "RICE-1", "item_name": "Rice", "unit_price": "5.00", "quantity": 2}}}
	}
	f.api(key, "POST", "/api/v1/customers/add", map[string]any{"name": "Ama"})
	f.api(key, "POST", "/api/v1/inventory/categories/add", map[string]any{"category_name": "Grains"})
	f.api(key, "POST", "/api/v1/inventory/items/add", map[string]any{"item_code": "RICE-1", "item_name": "Rice", "category_id": 1, "item_price": 5, "quantity": 10})
	f.api(key, "POST", "/api/v1/sales/add", sale("111111"))
	f.api(key, "POST", "/api/v1/sales/add", sale("222222"))
	f.api(key, "POST", "/api/v1/expenses/add", map[string]any{"expense_type": "Rent", "expense_amount": "10", "payment_method": "Cash", "created_by": "Ama"})
	f.api(key, "PUT", "/api/v1/user/webhook", map[string]any{"callback_url": receiver.URL, "callback_secret": "iam-dash-secret-0123456789"})
	_, data := f.api(key, "POST", "/api/v1/webhook-endpoints", map[string]any{"url": receiver.URL + "/e", "enabled_events": []string{"*"}})
	var ep struct {
		WebhookEndpoint struct {
			ID string `json:"id"`
		} `json:"webhook_endpoint"`
	}
	if err := json.Unmarshal(data, &ep); err != nil || ep.WebhookEndpoint.ID == "" {
		t.Fatalf("no endpoint in %s", data)
	}

	// An item out of stock, and the figures applied as the stream applies
	// them: the overview lists the debtors (their names in one more read)
	// and the stock alerts.
	f.api(key, "POST", "/api/v1/inventory/items/add", map[string]any{"item_code": "SALT-1", "item_name": "Salt", "category_id": 1, "item_price": 5, "quantity": 0})
	f.api(key, "GET", "/api/v1/reports/receivables", nil)

	// stale makes the browser's session last seen long ago, so its next
	// request touches it (one write per five minutes).
	stale := func(b *dashBrowser) {
		t.Helper()
		rec.as("")
		ss, err := st.FindSession(ctx, b.cookie("session"))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.TouchSession(ctx, ss, time.Now().Add(-10*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	pages := []string{"/dashboard", "/dashboard/sales", "/dashboard/sales/111111", "/dashboard/sales/999999", "/dashboard/sales/111111/pdf",
		"/dashboard/sales?payment_status=partial", "/dashboard/expenses", "/dashboard/inventory", "/dashboard/inventory/RICE-1",
		"/dashboard/customers", "/dashboard/developers", "/dashboard/developers/endpoints/" + ep.WebhookEndpoint.ID,
		"/dashboard/developers/events", "/dashboard/settings", "/dashboard/no-such-page"}
	browse := func(mode string) {
		t.Helper()
		stale(o)
		for _, p := range pages {
			got, _ := o.get(p)
			status(mode+" GET "+p, got)
		}
	}
	browse("live")
	// Test mode: the first switch makes the test twin (on the page the
	// switch goes back to); then test data through a test key.
	stale(o)
	got, at := o.post("/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard"}})
	status("switch to test mode", got)
	if at != "/dashboard" {
		t.Errorf("the switch went to %s", at)
	}
	_, data = f.api(key, "POST", "/api/v1/api-keys", map[string]any{"name": "Tests", "scopes": []string{"*"}, "mode": "test"})
	var created struct {
		APIKey struct {
			ID  string `json:"id"`
			Key string `json:"key"`
		} `json:"api_key"`
	}
	if err := json.Unmarshal(data, &created); err != nil || created.APIKey.Key == "" {
		t.Fatalf("no test key in %s", data)
	}
	f.api(created.APIKey.Key, "POST", "/api/v1/customers/add", map[string]any{"name": "Test Ama"})
	f.api(created.APIKey.Key, "POST", "/api/v1/inventory/categories/add", map[string]any{"category_name": "Test grains"})
	f.api(created.APIKey.Key, "POST", "/api/v1/inventory/items/add", map[string]any{"item_code": "RICE-1", "item_name": "Rice", "category_id": 1, "item_price": 5, "quantity": 10})
	f.api(created.APIKey.Key, "POST", "/api/v1/sales/add", sale("111111"))
	browse("test")
	got, _ = o.post("/dashboard/mode", url.Values{"mode": {"live"}, "back": {"/dashboard/sales"}})
	status("switch to live mode", got)

	// Every form once, in live mode: field names as the API's bodies name
	// them; a form the page names differently is refused, which still makes
	// its reads and draws its page again.
	idem := func(vals url.Values) url.Values {
		tok, _ := business.NewToken()
		vals.Set("idem", tok)
		return vals
	}
	_, data = f.api(key, "POST", "/api/v1/api-keys", map[string]any{"name": "Spare", "scopes": []string{"sales:read"}})
	var spare struct {
		APIKey struct {
			ID string `json:"id"`
		} `json:"api_key"`
	}
	if err := json.Unmarshal(data, &spare); err != nil || spare.APIKey.ID == "" {
		t.Fatalf("no key in %s", data)
	}
	// A delivery of the endpoint, for the redeliver form: a test event's.
	_, data = f.api(key, "POST", "/api/v1/webhook-endpoints/"+ep.WebhookEndpoint.ID+"/test", nil)
	var endpointTest struct {
		Delivery struct {
			EventID string `json:"event_id"`
		} `json:"delivery"`
	}
	if err := json.Unmarshal(data, &endpointTest); err != nil || endpointTest.Delivery.EventID == "" {
		t.Fatalf("no test delivery in %s", data)
	}
	unpaid := sale("333333")
	unpaid["amount_paid"] = "0"
	f.api(key, "POST", "/api/v1/sales/add", unpaid)
	unpaid = sale("444444") // its first payment is dated by the business's timezone
	unpaid["amount_paid"] = "0"
	f.api(key, "POST", "/api/v1/sales/add", unpaid)
	stale(o)
	actions := []struct {
		path string
		form url.Values
	}{
		{"/dashboard/sales/111111/payments", idem(url.Values{"amount": {"1.00"}, "payment_type": {"Cash"}, "payment_method": {"Cash"}})},
		{"/dashboard/sales/111111/payments", idem(url.Values{"amount": {"not money"}})}, // refused
		{"/dashboard/sales/444444/payments", idem(url.Values{"amount": {"1.00"}, "paid_before": {"0.00"}, "payment_type": {"Cash"}})},
		{"/dashboard/sales/111111/refunds", idem(url.Values{"amount": {"1.00"}, "reason": {"returned"}})},
		{"/dashboard/sales/333333/void", idem(url.Values{"reason": {"wrong till"}})},
		{"/dashboard/sales/222222/link", url.Values{}},
		{"/dashboard/sales/222222/link", url.Values{}}, // a new link ends the old one's lookup item
		{"/dashboard/sales/222222/link/revoke", url.Values{}},
		{"/dashboard/expenses", idem(url.Values{"expense_type": {"Fuel"}, "expense_amount": {"4.00"}, "payment_method": {"Cash"}, "created_by": {"Owner"}})},
		{"/dashboard/inventory/RICE-1/adjustments", idem(url.Values{"quantity": {"-1"}, "reason": {"damaged"}})},
		{"/dashboard/customers", idem(url.Values{"name": {"Esi"}, "phone": {"0244000000"}})},
		{"/dashboard/developers/keys", idem(url.Values{"name": {"Till"}, "scopes": {"sales:write"}, "mode": {"live"}})},
		{"/dashboard/developers/keys/" + spare.APIKey.ID + "/revoke", url.Values{"confirm": {"yes"}}},
		{"/dashboard/developers/webhook", url.Values{"callback_url": {receiver.URL + "/w"}, "callback_secret": {"iam-dash-secret-9876543210"}}},
		{"/dashboard/developers/webhook/test", url.Values{}},
		{"/dashboard/developers/deliveries/tx_unknown/redeliver", url.Values{}},
		{"/dashboard/developers/endpoints", idem(url.Values{"url": {receiver.URL + "/e2"}, "enabled_events": {"*"}, "events": {"*"}})},
		{"/dashboard/developers/endpoints/" + ep.WebhookEndpoint.ID, url.Values{"url": {receiver.URL + "/e3"}, "events": {"sale.*"}, "status": {"enabled"}}},
		{"/dashboard/developers/endpoints/" + ep.WebhookEndpoint.ID + "/test", url.Values{}},
		{"/dashboard/developers/endpoints/" + ep.WebhookEndpoint.ID + "/deliveries/" + endpointTest.Delivery.EventID + "/redeliver", url.Values{}},
		{"/dashboard/developers/endpoints/" + ep.WebhookEndpoint.ID + "/rotate", url.Values{}},
		{"/dashboard/developers/endpoints/" + ep.WebhookEndpoint.ID + "/delete", url.Values{"confirm": {"yes"}}},
		{"/dashboard/settings", url.Values{"business_name": {"IAM Dash Shop Ltd"}, "timezone": {"Africa/Accra"}}},
		{"/dashboard/settings/password", url.Values{"current": {password}, "password": {"another horse battery"}, "confirm": {"another horse battery"}}},
		{"/dashboard/sign-out", url.Values{}},
	}
	// A set-password link outstanding when the password changes: the change
	// revokes it.
	if _, err := st.CreatePasswordLink(ctx, email); err != nil {
		t.Fatal(err)
	}
	for _, a := range actions {
		got, _ := o.post(a.path, a.form)
		status("POST "+a.path, got)
	}
	// Records written before views: the overview reads the alerts' items
	// from the table.
	rec.as("")
	testdb.WithoutViews(t, st)
	late := f.browser()
	status("sign in again", late.signIn(email, "another horse battery"))
	got, _ = late.get("/dashboard")
	status("the overview of records without views", got)
	rec.as("")

	// What each function used, against what its policy grants.
	granted := templatePolicies(t)
	statements := functionStatements(t)
	for _, fn := range dashboardFunctions {
		used := slices.Collect(maps.Keys(rec.used[fn]))
		sort.Strings(used)
		if used == nil {
			used = []string{}
		}
		if d := cmp.Diff(granted[fn], used); d != "" {
			t.Errorf("%s: template.yaml's policy and the calls the dashboard makes differ (-granted +used):\n%s", fn, d)
		}
		reqs := rec.requests[fn]
		for _, k := range slices.Sorted(maps.Keys(reqs)) {
			if ok, why := permitted(t, statements[logicalID(fn)], reqs[k]); !ok {
				t.Errorf("%s: template.yaml refuses %s: %s", fn, reqs[k], why)
			}
		}
	}
	if n := len(rec.used[dashboard.FunctionAssets]); n > 0 {
		t.Errorf("%s made %d kinds of DynamoDB call, want none", dashboard.FunctionAssets, n)
	}
	storeCoverage.flowDone(t, "dashboard")
}
