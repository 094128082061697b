package dashboard

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"bizdata/shared/webhook"
)

// devSecretRE finds the secret a page shows once.
var devSecretRE = regexp.MustCompile(`<code id="shown-secret">([^<]+)</code>`)

// devShownSecret returns the secret body shows once, or "".
func devShownSecret(body string) string {
	m := devSecretRE.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// devAuthenticate calls GET /api/v1/user/authenticate with key and returns
// the status and the key's scopes.
func devAuthenticate(t *testing.T, b *board, key string) (int, []string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.srv.URL+"/api/v1/user/authenticate", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var env struct {
		Data struct {
			Key struct {
				Scopes []string `json:"scopes"`
			} `json:"api_key"`
		} `json:"data"`
	}
	_ = json.NewDecoder(res.Body).Decode(&env)
	return res.StatusCode, env.Data.Key.Scopes
}

// devKeyID returns the id of the account's key named name, as list-api-keys
// reports it.
func devKeyID(o *owner, name string) string {
	o.t.Helper()
	st, data := o.callAPI(http.MethodGet, "/api/v1/api-keys", nil)
	var out struct {
		Keys []struct{ ID, Name string } `json:"api_keys"`
	}
	if st != http.StatusOK || json.Unmarshal(data, &out) != nil {
		o.t.Fatalf("list api keys: %d %s", st, data)
	}
	for _, k := range out.Keys {
		if k.Name == name {
			return k.ID
		}
	}
	o.t.Fatalf("no key named %q in %s", name, data)
	return ""
}

// TestDevelopersKeyLifecycle creates a key through the form, sees its secret
// once, uses it on the API with the scopes chosen, and revokes it.
func TestDevelopersKeyLifecycle(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("DEVKEY1")
	st, page, _ := o.get("/dashboard/developers")
	if st != http.StatusOK {
		t.Fatalf("developers page: %d", st)
	}
	mustContain(t, page, "API keys", "Create a live API key", `value="sales:read"`, "Full access (*)")

	form := url.Values{"name": {"Till 2"}, "scopes": {"customers:write", "sales:read"}}
	st, page, _ = o.post("/dashboard/developers/keys", form)
	secret := devShownSecret(page)
	if st != http.StatusOK || secret == "" {
		t.Fatalf("create key: %d, secret shown %q", st, secret)
	}
	mustContain(t, page, "Till 2", "not shown again")
	if _, again, _ := o.get("/dashboard/developers"); strings.Contains(again, secret) || devShownSecret(again) != "" {
		t.Error("the secret is shown again on reload")
	}

	st, scopes := devAuthenticate(t, b, secret)
	if st != http.StatusOK || !slices.Equal(scopes, []string{"sales:read", "customers:write"}) {
		t.Fatalf("new key authenticates: %d, scopes %v", st, scopes)
	}

	id := devKeyID(o, "Till 2")
	revoke := "/dashboard/developers/keys/" + id + "/revoke"
	if st, page, _ = o.post(revoke, url.Values{}); st != http.StatusBadRequest || !strings.Contains(page, "tick the box") {
		t.Errorf("revoke without confirm: %d", st)
	}
	if st, _ := devAuthenticate(t, b, secret); st != http.StatusOK {
		t.Errorf("an unconfirmed revoke stopped the key: %d", st)
	}
	st, page, path := o.post(revoke, url.Values{"confirm": {"yes"}})
	if st != http.StatusOK || path != "/dashboard/developers" {
		t.Fatalf("revoke: %d at %s", st, path)
	}
	mustContain(t, page, "API key revoked")
	if st, _ := devAuthenticate(t, b, secret); st != http.StatusUnauthorized {
		t.Errorf("revoked key answers %d, want 401", st)
	}

	// The account's own key is now its last live key that manages keys.
	last := "/dashboard/developers/keys/" + devKeyID(o, o.acct.Key.Name) + "/revoke"
	st, page, _ = o.post(last, url.Values{"confirm": {"yes"}})
	if st != http.StatusConflict || !strings.Contains(page, "last live key") {
		t.Errorf("revoking the last key: %d, want 409 with the API's message", st)
	}
	if st, _ := devAuthenticate(t, b, o.apiKey); st != http.StatusOK {
		t.Errorf("the refused revoke stopped the key: %d", st)
	}
}

// TestDevelopersTestModeKeys makes a key with the switch on test data: it
// is a test key, and a live key is not listed there.
func TestDevelopersTestModeKeys(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("DEVKEY2")
	if st, _, _ := o.post("/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard/developers"}}); st != http.StatusOK {
		t.Fatalf("switch to test: %d", st)
	}
	_, page, _ := o.get("/dashboard/developers")
	mustContain(t, page, "Create a test API key")
	if strings.Contains(page, o.acct.Key.Name) {
		t.Error("a test session lists the live key")
	}
	st, page, _ := o.post("/dashboard/developers/keys", url.Values{"name": {"Sandbox"}, "scopes": {"*"}})
	secret := devShownSecret(page)
	if st != http.StatusOK || !strings.HasPrefix(secret, "bk_test_") {
		t.Fatalf("create test key: %d, secret %q", st, secret)
	}
	if st, scopes := devAuthenticate(t, b, secret); st != http.StatusOK || !slices.Equal(scopes, []string{"*"}) {
		t.Errorf("test key: %d %v", st, scopes)
	}
}

// devReceiver is an HTTP server recording the requests it gets.
type devReceiver struct {
	*httptest.Server
	mu   sync.Mutex
	got  []http.Header
	body [][]byte
}

func devNewReceiver(t *testing.T) *devReceiver {
	rc := &devReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got, rc.body = append(rc.got, r.Header.Clone()), append(rc.body, b)
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.Close)
	return rc
}

// TestDevelopersPaymentWebhook sets the callback URL and a typed secret,
// sends a test to a real receiver, which gets it signed, and generates a
// secret shown once.
func TestDevelopersPaymentWebhook(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("DEVWH1")
	rc := devNewReceiver(t)
	const secret = "typed-secret-0123456789"

	st, page, _ := o.post("/dashboard/developers/webhook", url.Values{"callback_url": {"not a url"}, "secret_action": {"keep"}})
	if st != http.StatusBadRequest || !strings.Contains(page, `id="callback_url-err"`) {
		t.Errorf("bad callback URL: %d", st)
	}
	st, page, _ = o.post("/dashboard/developers/webhook", url.Values{"callback_url": {rc.URL}, "secret_action": {"set"}, "callback_secret": {secret}})
	if st != http.StatusOK {
		t.Fatalf("save webhook: %d", st)
	}
	mustContain(t, page, "Webhook settings saved", rc.URL, "Notifications are signed")
	if strings.Contains(page, secret) {
		t.Error("the page shows the stored secret")
	}

	st, page, _ = o.post("/dashboard/developers/webhook/test", url.Values{})
	if st != http.StatusOK {
		t.Fatalf("send a test: %d", st)
	}
	mustContain(t, page, `<span class="status delivered">delivered</span>`, "status code 200")
	rc.mu.Lock()
	if len(rc.got) != 1 || rc.got[0].Get(webhook.HeaderSignature) != webhook.Sign(rc.body[0], secret) {
		t.Errorf("the receiver got %d requests, not one signed with the secret", len(rc.got))
	}
	rc.mu.Unlock()

	st, page, _ = o.post("/dashboard/developers/webhook", url.Values{"callback_url": {rc.URL}, "secret_action": {"generate"}})
	generated := devShownSecret(page)
	if st != http.StatusOK || len(generated) < 16 {
		t.Fatalf("generate secret: %d %q", st, generated)
	}
	if _, again, _ := o.get("/dashboard/developers"); strings.Contains(again, generated) {
		t.Error("the generated secret is shown again")
	}
	o.post("/dashboard/developers/webhook/test", url.Values{})
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if n := len(rc.got); n != 2 || rc.got[1].Get(webhook.HeaderSignature) != webhook.Sign(rc.body[1], generated) {
		t.Errorf("the second test is not signed with the generated secret (%d requests)", n)
	}
}

// TestDevelopersEndpoints adds an endpoint (secret shown once), sees it with
// a sale's events in the feed, rotates its secret and deletes it.
func TestDevelopersEndpoints(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("DEVEP1")
	rc := devNewReceiver(t)
	st, page, _ := o.post("/dashboard/developers/endpoints", url.Values{"url": {rc.URL}, "events": {"sale.created", "payment.received"}})
	secret := devShownSecret(page)
	if st != http.StatusOK || !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("add endpoint: %d, secret %q", st, secret)
	}
	_, page, _ = o.get("/dashboard/developers")
	mustContain(t, page, rc.URL, "sale.created, payment.received", `status enabled`)
	if strings.Contains(page, secret) {
		t.Error("the endpoint's secret is shown again")
	}
	m := regexp.MustCompile(`href="(/dashboard/developers/endpoints/[^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no link to the endpoint's page")
	}
	endpoint := m[1]

	if st, data := o.callAPI(http.MethodPost, "/api/v1/customers/add", map[string]any{"name": "Ama Mensah"}); st != http.StatusOK {
		t.Fatalf("add customer: %d %s", st, data)
	}
	if st, data := o.callAPI(http.MethodPost, "/api/v1/sales/add", map[string]any{
		"customer_id": 1, "due_date": "2026-12-31", "sub_total_amount": "20.00", "total_amount": "20.00", "amount_paid": "20.00", "invoice_type": "main", "payment_type": "Cash",
		"items": []any{map[string]any{"item_name": "Rice 5kg", "unit_price": "10.00", "quantity": "2"}},
	}); st != http.StatusOK {
		t.Fatalf("add sale: %d %s", st, data)
	}
	st, page, _ = o.get(endpoint)
	if st != http.StatusOK {
		t.Fatalf("endpoint page: %d", st)
	}
	mustContain(t, page, rc.URL, "Rotate the signing secret", "Delete this endpoint")

	st, page, _ = o.get("/dashboard/developers/events?type=sale.created")
	if st != http.StatusOK || !regexp.MustCompile(`<a href="/dashboard/sales/[^"]+">sale `).MatchString(page) {
		t.Errorf("events feed: %d, no sale.created event linking its sale", st)
	}

	st, page, _ = o.post(endpoint+"/rotate", url.Values{})
	if rotated := devShownSecret(page); st != http.StatusOK || !strings.HasPrefix(rotated, "whsec_") || rotated == secret {
		t.Errorf("rotate: %d, new secret %q", st, rotated)
	}
	if st, _, _ = o.post(endpoint+"/delete", url.Values{}); st != http.StatusBadRequest {
		t.Errorf("delete without confirm: %d, want 400", st)
	}
	st, page, _ = o.post(endpoint+"/delete", url.Values{"confirm": {"yes"}})
	if st != http.StatusOK || strings.Contains(page, rc.URL) {
		t.Errorf("delete: %d, endpoint still listed: %v", st, strings.Contains(page, rc.URL))
	}
	if st, _, _ = o.get(endpoint); st != http.StatusNotFound {
		t.Errorf("deleted endpoint's page: %d, want 404", st)
	}
}

// TestDevelopersEventsFeed pages the events feed with the API's cursor and
// filters it by type.
func TestDevelopersEventsFeed(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("DEVEV1")
	for i := range 51 {
		if st, data := o.callAPI(http.MethodPost, "/api/v1/customers/add", map[string]any{"name": "Customer " + strconv.Itoa(i)}); st != http.StatusOK {
			t.Fatalf("add customer: %d %s", st, data)
		}
	}
	rows := regexp.MustCompile(`<td>customer\.created</td>`)
	older := regexp.MustCompile(`<a href="(/dashboard/developers/events\?[^"]+)">Older events</a>`)
	// A page holds at most 50 events, and may hold fewer with a link to
	// older ones (the feed is read from several partitions at once): the
	// links lead through all 51, each once.
	st, page, _ := o.get("/dashboard/developers/events")
	total := 0
	for pages := 1; ; pages++ {
		n := len(rows.FindAllString(page, -1))
		if st != http.StatusOK || n > 50 || n == 0 && pages == 1 {
			t.Fatalf("page %d: %d with %d events, want 1 to 50", pages, st, n)
		}
		if pages > 1 && !strings.Contains(page, "Newest events") {
			t.Errorf("page %d has no link back to the newest events", pages)
		}
		total += n
		m := older.FindStringSubmatch(page)
		if m == nil || pages == 60 {
			break
		}
		st, page, _ = o.get(html.UnescapeString(m[1]))
	}
	if total != 51 {
		t.Errorf("the pages list %d events, want 51", total)
	}
	st, page, _ = o.get("/dashboard/developers/events?type=sale.created")
	if st != http.StatusOK || rows.MatchString(page) || !strings.Contains(page, "No events of type sale.created") {
		t.Errorf("filtered by sale.created: %d, customer events listed: %v", st, rows.MatchString(page))
	}
	if st, page, _ = o.get("/dashboard/developers/events?type=bogus"); st != http.StatusBadRequest || !strings.Contains(page, "must be an event type") {
		t.Errorf("an unknown type: %d, want 400 with the API's message", st)
	}
}

// TestDevelopersEditEndpoint: the endpoint's form shows its subscription as
// it is, families included, so saving another field keeps it; a form drawn
// before the dispatcher disabled the endpoint does not enable it again;
// changing the status does.
func TestDevelopersEditEndpoint(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("DEVEP2")
	id := jsonField(t, o.mustAPI(http.MethodPost, "/api/v1/webhook-endpoints",
		map[string]any{"url": "https://hooks.example.com/orders", "enabled_events": []string{"sale.*", "payment.received"}}), "webhook_endpoint", "id")
	page := "/dashboard/developers/endpoints/" + id
	_, body, _ := o.get(page)
	for _, box := range []string{`id="event-sale-all" name="events" value="sale.*" checked`, `id="event-payment.received" name="events" value="payment.received" checked`,
		`id="status-enabled" name="status" value="enabled" checked`, `name="status_was" value="enabled"`} {
		if !strings.Contains(body, box) {
			t.Errorf("the form lacks %s", box)
		}
	}
	if strings.Contains(body, `value="sale.created" checked`) {
		t.Error("the form ticks a type the endpoint has only through its family")
	}

	// The form as drawn, sent after the dispatcher disabled the endpoint.
	if _, err := b.st.DisableEndpoint(context.Background(), o.acct.ID, id, "every attempt failed for 5 days", time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	drawn := url.Values{"url": {"https://hooks.example.com/orders/v2"}, "description": {"Orders"}, "events": {"sale.*", "payment.received"},
		"status": {"enabled"}, "status_was": {"enabled"}}
	if st, _, at := o.post(page, drawn); st != http.StatusOK || at != page {
		t.Fatalf("save: %d at %s", st, at)
	}
	got := o.mustAPI(http.MethodGet, "/api/v1/webhook-endpoints/"+id, nil)
	for _, want := range []string{`"url":"https://hooks.example.com/orders/v2"`, `"description":"Orders"`, `"enabled_events":["sale.*","payment.received"]`,
		`"status":"disabled"`, `"disabled_reason":"every attempt failed for 5 days"`} {
		if !strings.Contains(got, want) {
			t.Errorf("after the save the endpoint lacks %s: %s", want, got)
		}
	}

	// Enabling it is a change of the form's status.
	drawn.Set("status_was", "disabled")
	if st, _, _ := o.post(page, drawn); st != http.StatusOK {
		t.Fatalf("enable: %d", st)
	}
	if got := o.mustAPI(http.MethodGet, "/api/v1/webhook-endpoints/"+id, nil); !strings.Contains(got, `"status":"enabled"`) {
		t.Errorf("not enabled: %s", got)
	}
}

// TestDevelopersKeysHeadingOnce: the API keys and webhook endpoints sections
// name themselves once; their tables take their names from the headings.
func TestDevelopersKeysHeadingOnce(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("DEVHD1")
	_, page, _ := o.get("/dashboard/developers")
	if n := strings.Count(page, ">API keys<"); n != 1 {
		t.Errorf("\"API keys\" is shown %d times, want once", n)
	}
	mustContain(t, page, `<h2 id="keys">API keys</h2>`, `<table aria-labelledby="keys">`, o.acct.Key.Name)

	// The endpoints' table, once there is one, names itself by its heading too.
	rc := devNewReceiver(t)
	if st, _, _ := o.post("/dashboard/developers/endpoints", url.Values{"url": {rc.URL}, "events": {"sale.created"}}); st != http.StatusOK {
		t.Fatalf("add an endpoint: %d", st)
	}
	_, page, _ = o.get("/dashboard/developers")
	if n := strings.Count(page, ">Webhook endpoints<"); n != 1 {
		t.Errorf("\"Webhook endpoints\" is shown %d times, want once", n)
	}
	mustContain(t, page, `<table aria-labelledby="endpoints">`, rc.URL)
}

// TestDevelopersRotationTexts: every way to replace a secret says how long
// the old one keeps working, as the API applies it: an API key's within
// 5 s, the payment webhook's at once, an endpoint's for the hours chosen
// (0 to 24), which the receiver sees as one or two signatures.
func TestDevelopersRotationTexts(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("DEVROT1")
	rc := devNewReceiver(t)
	_, page, _ := o.get("/dashboard/developers")
	mustContain(t, page, "stops working within 5 seconds</label>",
		"the new secret works at once, and the old one stops working within 5 seconds",
		"the old secret stops signing at once, and every notification sent after that is signed with the new one only")
	if strings.Contains(page, "stops working at once") {
		t.Error("the revoke box says a key stops at once; it stops within 5 seconds")
	}

	st, page, _ := o.post("/dashboard/developers/webhook", url.Values{"callback_url": {rc.URL}, "secret_action": {"set"}, "callback_secret": {"typed-secret-0123456789"}})
	if st != http.StatusOK {
		t.Fatalf("set a secret: %d", st)
	}
	mustContain(t, page, "Webhook settings saved: the old secret no longer signs")
	st, page, _ = o.post("/dashboard/developers/webhook", url.Values{"callback_url": {rc.URL}, "secret_action": {"generate"}})
	if st != http.StatusOK || devShownSecret(page) == "" {
		t.Fatalf("generate a secret: %d", st)
	}
	mustContain(t, page, "The old secret no longer signs: notifications sent from now on carry this one&#39;s signature only.")

	st, page, _ = o.post("/dashboard/developers/endpoints", url.Values{"url": {rc.URL}, "events": {"sale.created"}})
	m := regexp.MustCompile(`href="(/dashboard/developers/endpoints/[^"#]+)"`).FindStringSubmatch(page)
	if st != http.StatusOK || m == nil {
		t.Fatalf("add endpoint: %d", st)
	}
	endpoint := m[1]
	_, page, _ = o.get(endpoint)
	mustContain(t, page, `<label for="overlap_hours">Hours the old secret keeps signing</label>`, `value="24"`, "0 to 24; 0 stops the old secret at once.")

	// signatures sends a test event and returns how many signatures it
	// carried.
	signatures := func() int {
		t.Helper()
		if st, _, _ := o.post(endpoint+"/test", nil); st != http.StatusOK {
			t.Fatalf("send a test event: %d", st)
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return len(strings.Fields(rc.got[len(rc.got)-1].Get("webhook-signature")))
	}
	for _, bad := range []string{"25", "-1", "two"} {
		st, page, _ := o.post(endpoint+"/rotate", url.Values{"overlap_hours": {bad}})
		if st != http.StatusBadRequest || !strings.Contains(page, `id="overlap_hours-err"`) || devShownSecret(page) != "" {
			t.Errorf("overlap_hours %q: %d, want 400 naming the field and no new secret", bad, st)
		}
	}
	if n := signatures(); n != 1 {
		t.Fatalf("before any rotation a delivery carries %d signatures, want 1", n)
	}
	st, page, _ = o.post(endpoint+"/rotate", url.Values{"overlap_hours": {"2"}})
	if st != http.StatusOK || devShownSecret(page) == "" {
		t.Fatalf("rotate with 2 hours: %d", st)
	}
	mustContain(t, page, "The old secret keeps signing beside it until ", ": every delivery until then carries both signatures.")
	if n := signatures(); n != 2 {
		t.Errorf("within the overlap a delivery carries %d signatures, want 2", n)
	}
	st, page, _ = o.post(endpoint+"/rotate", url.Values{"overlap_hours": {"0"}})
	if st != http.StatusOK || devShownSecret(page) == "" {
		t.Fatalf("rotate with 0 hours: %d", st)
	}
	mustContain(t, page, "The old secret stopped signing at once.")
	if n := signatures(); n != 1 {
		t.Errorf("after a rotation without overlap a delivery carries %d signatures, want 1", n)
	}
}

// TestOverviewTestModeSaidOnce: switching to test data from the overview,
// the page says once that test records stay apart from the live books.
func TestOverviewTestModeSaidOnce(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("DEVTM1")
	st, page, at := o.post("/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard"}})
	if st != http.StatusOK || at != "/dashboard" {
		t.Fatalf("switch to test data: %d at %s", st, at)
	}
	mustContain(t, page, `class="testbanner"`)
	if n := strings.Count(page, "touch"); n != 1 {
		t.Errorf("the overview says %d times that test data keeps off the live books, want once", n)
	}
	if _, page, _ = o.get("/dashboard"); strings.Count(page, "touch") != 1 {
		t.Error("on reload the overview says more than once that test data keeps off the live books")
	}
}
