package dashboard

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/hosted"
	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// board is a dashboard and the API on one real HTTP server over a fresh
// DynamoDB Local table, as the devserver serves them.
type board struct {
	skew  atomic.Int64 // nanoseconds the clock runs ahead
	t     testing.TB
	st    *store.Store
	srv   *httptest.Server
	board *Server
	api   *api.Server
}

// newBoard starts a dashboard (sign-up on, plain HTTP cookies) and the API.
// optFns configure its DynamoDB client (store.CountCalls).
func newBoard(t testing.TB, optFns ...func(*dynamodb.Options)) *board {
	t.Helper()
	st, _ := testdb.NewStore(t, optFns...)
	log := testdb.Quiet()
	b := &board{t: t, st: st}
	// The clock runs skew ahead of the real one (see later): set before
	// any request, so that no server goroutine races its setting.
	st.SetClock(func() time.Time { return time.Now().Add(time.Duration(b.skew.Load())) })
	b.api = api.NewServer(st, log, 0).AllowPrivateWebhooks(true)
	b.board = New(st, b.api, log, Config{PlainHTTP: true, SignUp: true})
	b.srv = httptest.NewServer(withAPI(b.board.Handler(Routes), b.api, st))
	t.Cleanup(b.srv.Close)
	return b
}

// later moves the store's clock (and so the dashboard's) d ahead.
func (b *board) later(d time.Duration) { b.skew.Add(int64(d)) }

// withAPI serves /dashboard and below with dash, the hosted invoices
// (/invoices/) with shared/hosted over st, the rest with the API, as the
// devserver does.
func withAPI(dash http.Handler, apiServer *api.Server, st *store.Store) http.Handler {
	apiH := apiServer.Handler(api.Routes)
	invoices := hosted.NewServer(st, testdb.Quiet()).Handler(hosted.Routes)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/dashboard" || strings.HasPrefix(r.URL.Path, "/dashboard/"):
			dash.ServeHTTP(w, r)
		case strings.HasPrefix(r.URL.Path, "/invoices/"):
			invoices.ServeHTTP(w, r)
		default:
			apiH.ServeHTTP(w, r)
		}
	})
}

// slogTo is a JSON logger writing to w.
func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }

// cookies are the browser's cookies for the server.
func (o *owner) cookies() []*http.Cookie {
	u, _ := url.Parse(o.b.srv.URL)
	return o.client.Jar.Cookies(u)
}

// setCookies puts cs back into the browser (as a saved cookie replayed).
func (o *owner) setCookies(cs []*http.Cookie) {
	u, _ := url.Parse(o.b.srv.URL)
	o.client.Jar.SetCookies(u, cs)
}

// csrfOf is the CSRF token of the browser's session (as its forms carry
// it), computed from its cookie.
func (o *owner) csrfOf() string {
	for _, c := range o.cookies() {
		if c.Name == "bizdata_session" {
			return business.CSRFToken(c.Value)
		}
	}
	return ""
}

// secretShownRE finds a secret shown once on a page.
var secretShownRE = regexp.MustCompile(`<code id="shown-secret">([^<]+)</code>`)

// lastUsedRE matches a key's last use in API JSON, which moves as a test
// reads.
var lastUsedRE = regexp.MustCompile(`"last_used_at":("[^"]*"|null)`)

// jsonField digs path out of the JSON object raw; "" when it is missing.
func jsonField(t *testing.T, raw string, path ...string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// owner is one signed-in browser: an account, its owner and a cookie jar.
type owner struct {
	b        *board
	t        testing.TB
	client   *http.Client
	email    string
	password string
	acct     business.Account
	apiKey   string // the account's live "*" API key
}

// testPassword is every test owner's password.
const testPassword = "correct horse battery"

// newOwner makes an account (business code code) with an owner and signs
// the owner in.
func (b *board) newOwner(code string) *owner {
	b.t.Helper()
	return b.newOwnerIn(code, "")
}

// newOwnerIn is newOwner for an account whose timezone is tz from the start
// ("" for a new account's own).
func (b *board) newOwnerIn(code, tz string) *owner {
	b.t.Helper()
	a, err := business.NewAccount("Shop "+code, code, "GHS", "INV")
	if err != nil {
		b.t.Fatal(err)
	}
	if tz != "" {
		a.Timezone = tz
	}
	email := strings.ToLower(code) + "@example.com"
	a, key, err := b.st.CreateAccountWithOwner(context.Background(), a, business.Owner{Email: email, PasswordHash: business.HashPassword(testPassword)})
	if err != nil {
		b.t.Fatal(err)
	}
	o := b.browser()
	o.email, o.password, o.acct, o.apiKey = email, testPassword, a, key
	if st, body, _ := o.signIn(email, testPassword); st != http.StatusOK {
		b.t.Fatalf("sign in: %d %s", st, body)
	}
	return o
}

// browser is a new browser with no session.
func (b *board) browser() *owner {
	jar, _ := cookiejar.New(nil)
	return &owner{b: b, t: b.t, client: &http.Client{Jar: jar}}
}

// signIn posts the sign-in form (following the redirect) and returns the
// final status, body and URL path.
func (o *owner) signIn(email, password string) (int, string, string) {
	o.t.Helper()
	_, page, _ := o.get("/dashboard/sign-in")
	return o.postWith("/dashboard/sign-in", url.Values{"email": {email}, "password": {password}}, formCSRF(page))
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// formCSRF is the CSRF token of the first form in page.
func formCSRF(page string) string {
	m := csrfRE.FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return m[1]
}

// get fetches path (following redirects) and returns the status, the body
// and the final path.
func (o *owner) get(path string) (int, string, string) {
	o.t.Helper()
	res, err := o.client.Get(o.b.srv.URL + path)
	if err != nil {
		o.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body), res.Request.URL.RequestURI()
}

// post sends form to path with the session's CSRF token (read from the
// overview page), as a browser on the same site does, following the
// redirect.
func (o *owner) post(path string, form url.Values) (int, string, string) {
	o.t.Helper()
	_, page, _ := o.get("/dashboard")
	return o.postWith(path, form, formCSRF(page))
}

// postWith sends form to path with csrf as its token.
func (o *owner) postWith(path string, form url.Values, csrf string) (int, string, string) {
	o.t.Helper()
	f := url.Values{}
	for k, v := range form {
		f[k] = v
	}
	if csrf != "" {
		f.Set("csrf", csrf)
	}
	req, _ := http.NewRequest(http.MethodPost, o.b.srv.URL+path, strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", o.b.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := o.client.Do(req)
	if err != nil {
		o.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body), res.Request.URL.RequestURI()
}

// callAPI calls the JSON API with the account's live key and returns the
// status and the envelope's data.
func (o *owner) callAPI(method, path string, body any) (int, json.RawMessage) {
	o.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, o.b.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+o.apiKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		o.t.Fatal(err)
	}
	defer res.Body.Close()
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	raw, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(raw, &env)
	if env.Data == nil {
		env.Data = raw
	}
	return res.StatusCode, env.Data
}

// mustContain fails unless body contains every one of wants.
func mustContain(t *testing.T, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("page lacks %q", w)
		}
	}
}
