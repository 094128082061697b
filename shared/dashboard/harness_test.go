package dashboard

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// board is a dashboard and the API on one real HTTP server over a fresh
// DynamoDB Local table, as the devserver serves them.
type board struct {
	t     *testing.T
	st    *store.Store
	srv   *httptest.Server
	board *Server
	api   *api.Server
}

// newBoard starts a dashboard (sign-up on, plain HTTP cookies) and the API.
func newBoard(t *testing.T) *board {
	t.Helper()
	st, _ := testdb.NewStore(t)
	log := testdb.Quiet()
	apiServer := api.NewServer(st, log, 0).AllowPrivateWebhooks(true)
	b := &board{t: t, st: st, api: apiServer, board: New(st, apiServer, log, Config{PlainHTTP: true, SignUp: true})}
	dash, apiH := b.board.Handler(Routes), apiServer.Handler(api.Routes)
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/dashboard" || strings.HasPrefix(r.URL.Path, "/dashboard/") {
			dash.ServeHTTP(w, r)
			return
		}
		apiH.ServeHTTP(w, r)
	}))
	t.Cleanup(b.srv.Close)
	return b
}

// owner is one signed-in browser: an account, its owner and a cookie jar.
type owner struct {
	b        *board
	t        *testing.T
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
	a, err := business.NewAccount("Shop "+code, code, "GHS", "INV")
	if err != nil {
		b.t.Fatal(err)
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
