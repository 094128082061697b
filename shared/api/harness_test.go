package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/google/go-cmp/cmp"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// env is one API over a fresh table, served by a real HTTP server, with one
// account and its key.
type env struct {
	t     testing.TB
	store *store.Store
	srv   *httptest.Server
	key   string
	acct  business.Account
	calls atomic.Int64
	spans store.Calls
	clock clock
}

// clock is the store's clock in tests: the real time until set, then the
// instant set (reports date what happens around a local midnight).
type clock struct{ at atomic.Pointer[time.Time] }

func (c *clock) now() time.Time {
	if t := c.at.Load(); t != nil {
		return *t
	}
	return time.Now().UTC()
}

// set stops the clock at t (a "YYYY-MM-DD HH:MM:SS" UTC time).
func (c *clock) set(tb testing.TB, t string) {
	tb.Helper()
	at, err := time.Parse(business.TimeFormat, t)
	if err != nil {
		tb.Fatal(err)
	}
	c.at.Store(&at)
}

func newEnv(t *testing.T) *env { t.Helper(); return newEnvTTL(t, 0) }

// newEnvTTL is newEnv with an API key cache of keyTTL.
func newEnvTTL(t testing.TB, keyTTL time.Duration) *env {
	t.Helper()
	e := &env{t: t}
	st, _ := testdb.NewStore(t, store.CountCalls(&e.calls), e.spans.Option())
	st.SetEventSettle(0) // catching up sees each event at once (TestCatchUpSettles checks the delay)
	st.SetClock(e.clock.now)
	e.store = st
	log := testdb.Quiet()
	e.srv = httptest.NewServer(api.NewServer(st, log, keyTTL).Handler(api.Routes))
	t.Cleanup(e.srv.Close)
	e.acct, e.key = e.newAccount("Kofi Stores", "KOFI01")
	return e
}

func (e *env) newAccount(name, code string) (business.Account, string) {
	e.t.Helper()
	a, err := business.NewAccount(name, code, "GHS", "INV")
	if err != nil {
		e.t.Fatal(err)
	}
	a, key, err := e.store.CreateAccount(context.Background(), a)
	if err != nil {
		e.t.Fatal(err)
	}
	return a, key
}

// resp is a decoded response, and the request it answers.
type resp struct {
	method string
	path   string
	code   int
	header http.Header
	raw    []byte
	body   map[string]any
}

// data returns body.data.
func (r resp) data() map[string]any {
	d, _ := r.body["data"].(map[string]any)
	return d
}

// req sends a request with key as bearer token; body is JSON-encoded unless
// it is a string or []byte, which is sent as is.
func (e *env) req(method, path, key string, body any, headers ...string) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	r, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	if rd != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			r.Header.Del(headers[i])
		} else {
			r.Header.Set(headers[i], headers[i+1])
		}
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := resp{method: method, path: path, code: res.StatusCode, header: res.Header, raw: raw}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		e.t.Fatalf("%s %s: Content-Type %q, body %s", method, path, ct, raw)
	}
	if err := json.Unmarshal(raw, &out.body); err != nil {
		e.t.Fatalf("%s %s: body is not JSON: %s", method, path, raw)
	}
	if got := int(out.body["status"].(float64)); got != res.StatusCode {
		e.t.Fatalf("%s %s: body status %d != HTTP status %d", method, path, got, res.StatusCode)
	}
	if res.Header.Get("X-Request-Id") == "" {
		e.t.Fatalf("%s %s: no X-Request-Id", method, path)
	}
	return out
}

func (e *env) get(path string) resp { e.t.Helper(); return e.req("GET", path, e.key, nil) }

func (e *env) post(path string, body any, headers ...string) resp {
	e.t.Helper()
	return e.req("POST", path, e.key, body, headers...)
}

func (e *env) put(path string, body any, headers ...string) resp {
	e.t.Helper()
	return e.req("PUT", path, e.key, body, headers...)
}

// want fails the test unless r has the status code and, when msg is not
// empty, the message (success) or error (failure) text. Failures name the
// request.
func want(t *testing.T, r resp, code int, msg string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s %s: status %d, want %d: %s", r.method, r.path, r.code, code, r.raw)
	}
	if msg == "" {
		return
	}
	got, _ := r.body["message"].(string)
	if code >= 400 {
		got, _ = r.body["error"].(string)
	}
	if got != msg {
		t.Fatalf("%s %s: message %q, want %q: %s", r.method, r.path, got, msg, r.raw)
	}
}

// dataAs decodes data.<key> of a 200 answer with message msg into a T,
// refusing fields T does not declare, so a typed comparison covers the whole
// record on the wire.
func dataAs[T any](t *testing.T, r resp, msg, key string) T {
	t.Helper()
	want(t, r, 200, msg)
	var env struct {
		Data map[string]json.RawMessage `json:"data"`
	}
	var v T
	if err := json.Unmarshal(r.raw, &env); err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	raw, ok := env.Data[key]
	if !ok {
		t.Fatalf("%s %s: no data.%s: %s", r.method, r.path, key, r.raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s %s: data.%s: %v: %s", r.method, r.path, key, err, raw)
	}
	return v
}

// same fails the test unless got equals want, naming the request.
func same[T any](t *testing.T, r resp, want, got T, opts ...cmp.Option) {
	t.Helper()
	if d := cmp.Diff(want, got, opts...); d != "" {
		t.Errorf("%s %s (-want +got):\n%s", r.method, r.path, d)
	}
}

// wantList fails the test unless r is a page of n records T under key,
// announced by msg (a format with one %d for n).
func wantList[T any](t *testing.T, r resp, msg, key string, n int) {
	t.Helper()
	if got := dataAs[[]T](t, r, fmt.Sprintf(msg, n), key); len(got) != n {
		t.Errorf("%s %s: %d records, want %d", r.method, r.path, len(got), n)
	}
}

// wantRefused fails the test unless r is 400 naming each of fields.
func wantRefused(t *testing.T, r resp, fields ...string) {
	t.Helper()
	want(t, r, 400, "")
	for _, f := range fields {
		if field(r, f) == "" {
			t.Errorf("%s %s: field %s not named: %s", r.method, r.path, f, r.raw)
		}
	}
}

// field returns the per-field error message of a validation failure.
func field(r resp, name string) string {
	f, _ := r.body["fields"].(map[string]any)
	s, _ := f[name].(string)
	return s
}
