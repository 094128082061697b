package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// start runs the devserver on a free port over a fresh table and returns its
// base URL and a function that stops it.
func start(t *testing.T, cfg app.Config, dataDir string) (string, func()) {
	t.Helper()
	return startWithOutput(t, cfg, dataDir, io.Discard)
}

// startWithOutput is start, writing what the devserver prints to out.
func startWithOutput(t *testing.T, cfg app.Config, dataDir string, out io.Writer) (string, func()) {
	t.Helper()
	t.Setenv("DYNAMODB_ENDPOINT", cfg.Endpoint)
	t.Setenv("TABLE_NAME", cfg.TableName)
	t.Setenv("DATA_DIR", dataDir)
	t.Setenv("PORT", "0")
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, out, ready) }()
	select {
	case addr := <-ready:
		return "http://" + addr, func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("devserver: %v", err)
			}
		}
	case err := <-done:
		t.Fatalf("devserver did not start: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("devserver did not start in 60s")
	}
	return "", nil
}

func call(t *testing.T, method, url, key, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("not JSON: %s", raw)
	}
	return res.StatusCode, out
}

func TestDevserver(t *testing.T) {
	dir := t.TempDir()
	cfg := testdb.Config(t)
	base, stop := start(t, cfg, dir)
	b, err := os.ReadFile(filepath.Join(dir, "demo-account.json"))
	if err != nil {
		t.Fatal(err)
	}
	var demo demoAccount
	if err := json.Unmarshal(b, &demo); err != nil || demo.APIKey == "" || demo.TestAPIKey == "" {
		t.Fatalf("demo account file: %s", b)
	}
	code, body := call(t, "GET", base+"/api/v1/user/authenticate", demo.APIKey, "")
	if code != 200 || body["message"] != "Authenticated" || body["data"].(map[string]any)["livemode"] != true {
		t.Fatalf("%d %v", code, body)
	}
	// The test key acts on the demo account's test data: what it adds, the
	// live key never sees.
	code, body = call(t, "GET", base+"/api/v1/user/authenticate", demo.TestAPIKey, "")
	if code != 200 || body["data"].(map[string]any)["livemode"] != false {
		t.Fatalf("test key: %d %v", code, body)
	}
	if code, body := call(t, "POST", base+"/api/v1/customers/add", demo.TestAPIKey, `{"name":"Test Kofi"}`); code != 200 {
		t.Fatalf("test key: %d %v", code, body)
	}
	code, body = call(t, "POST", base+"/api/v1/customers/add", demo.APIKey, `{"name":"Esi"}`)
	if code != 200 {
		t.Fatalf("%d %v", code, body)
	}
	code, body = call(t, "GET", base+"/api/v1/customers?created_at=2020-01-01%2000:00:00", demo.APIKey, "")
	if code != 200 || body["message"] != "Customers found: 1" {
		t.Fatalf("%d %v", code, body)
	}
	code, body = call(t, "GET", base+"/api/v1/unknown", demo.APIKey, "")
	if code != 404 || body["error"] != "Route not found" {
		t.Fatalf("%d %v", code, body)
	}
	stop()

	// A second start keeps the same demo account and key.
	base, stop = start(t, cfg, dir)
	defer stop()
	b2, _ := os.ReadFile(filepath.Join(dir, "demo-account.json"))
	if !bytes.Equal(b, b2) {
		t.Fatalf("demo account changed across restarts:\n%s\n%s", b, b2)
	}
	if code, _ := call(t, "GET", base+"/api/v1/customers/1", demo.APIKey, ""); code != 200 {
		t.Fatalf("after restart: %d", code)
	}
}

// TestHalfSentBodyIsCut: a client that sends headers and part of its body,
// then stalls, does not keep its connection open for good.
func TestHalfSentBodyIsCut(t *testing.T) {
	saved := timeouts
	timeouts.read, timeouts.readHeader = 500*time.Millisecond, 500*time.Millisecond
	t.Cleanup(func() { timeouts = saved })
	base, stop := start(t, testdb.Config(t), t.TempDir())
	defer stop()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/customers/add HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"name\":")
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	_, err = io.ReadAll(conn) // returns once the server closes the connection
	if err != nil {
		t.Fatalf("connection still open after %v: %v", time.Since(start), err)
	}
}

// TestPrintedKeysWorkAfterRotation: after either demo key is rotated over
// the API, the next start prints (and saves) the key the client was given;
// after rotations the devserver did not see (the admin CLI), the next start
// makes the account new keys, named "make dev" and "make dev (test)", in
// place of the earlier ones of those names. Either way the printed keys
// work, and restarts do not pile keys up.
func TestPrintedKeysWorkAfterRotation(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := testdb.Config(t)
	saved := func() demoAccount {
		t.Helper()
		var d demoAccount
		b, err := os.ReadFile(filepath.Join(dir, "demo-account.json"))
		if err != nil || json.Unmarshal(b, &d) != nil || d.APIKey == "" || d.TestAPIKey == "" {
			t.Fatalf("demo account file: %v %s", err, b)
		}
		return d
	}
	works := func(base string, d demoAccount) {
		t.Helper()
		for key, live := range map[string]bool{d.APIKey: true, d.TestAPIKey: false} {
			code, body := call(t, "GET", base+"/api/v1/user/authenticate", key, "")
			if data, _ := body["data"].(map[string]any); code != 200 || data["livemode"] != live || data["account"].(map[string]any)["id"] != d.AccountID {
				t.Fatalf("the printed key %.12s… answers %d %v", key, code, body)
			}
		}
	}
	base, stop := start(t, cfg, dir)
	first := saved()
	works(base, first)
	rotate := func(key string) string {
		t.Helper()
		code, body := call(t, "POST", base+"/api/v1/user/api-key/rotate", key, "")
		if code != 200 {
			t.Fatalf("rotate: %d %v", code, body)
		}
		return body["data"].(map[string]any)["api_key"].(string)
	}
	given, givenTest := rotate(first.APIKey), rotate(first.TestAPIKey)
	stop()

	var out testdb.Buffer
	base, stop = startWithOutput(t, cfg, dir, &out)
	if d := saved(); d.APIKey != given || d.TestAPIKey != givenTest || d.AccountID != first.AccountID {
		t.Fatalf("after API rotations the file keeps %+v, want the keys the client was given", d)
	}
	if !strings.Contains(out.String(), "API key: "+given+"\n") || !strings.Contains(out.String(), "Test API key: "+givenTest) {
		t.Fatalf("start printed %q, want the rotated keys", out.String())
	}
	works(base, saved())
	stop()

	st, err := app.NewStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	keys := func() []business.APIKey {
		t.Helper()
		ks, err := st.ListKeys(ctx, first.AccountID)
		if err != nil {
			t.Fatal(err)
		}
		return ks
	}
	named := func(name string, live bool) int {
		n := 0
		for _, k := range keys() {
			if k.Name == name && k.Live == live {
				n++
			}
		}
		return n
	}
	// Rotations behind the devserver's back, as `admin key rotate` makes
	// them, at two starts. Before the second, the account's first key is
	// revoked: the "make dev" key is then its last live key that manages
	// keys, revoked only once its successor exists.
	for round := range 2 {
		prev := saved()
		for _, key := range []string{prev.APIKey, prev.TestAPIKey} {
			a, err := st.FindAccountByKeyHash(ctx, business.HashAPIKey(key))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.RotateKey(ctx, first.AccountID, nil, a.Key.ID); err != nil {
				t.Fatal(err)
			}
			if round == 1 && a.Key.Name == "Default key" {
				t.Fatalf("the saved live key is still the account's first key")
			}
		}
		if round == 1 {
			if _, err := st.RevokeKey(ctx, first.AccountID, nil, keys()[0].ID); err != nil {
				t.Fatal(err)
			}
		}
		base, stop = start(t, cfg, dir)
		d := saved()
		if d.AccountID != first.AccountID || d.APIKey == prev.APIKey || d.TestAPIKey == prev.TestAPIKey {
			t.Fatalf("after admin rotations the file holds %+v", d)
		}
		works(base, d)
		stop()
		if n, m := named(liveKeyName, true), named(testKeyName, false); n != 1 || m != 1 {
			t.Fatalf("round %d: %d live keys named %q and %d test keys named %q, want one each", round, n, liveKeyName, m, testKeyName)
		}
	}
	if n := len(keys()); n != 2 {
		t.Fatalf("the demo account has %d keys, want its two make dev keys: %+v", n, keys())
	}

	// Without the file, the table's demo account (its business code is
	// taken) gets new keys rather than a second account, in place of the
	// earlier ones.
	prev := saved()
	if err := os.Remove(filepath.Join(dir, "demo-account.json")); err != nil {
		t.Fatal(err)
	}
	base, stop = start(t, cfg, dir)
	defer stop()
	again := saved()
	if again.AccountID != first.AccountID || again.APIKey == prev.APIKey || again.TestAPIKey == prev.TestAPIKey {
		t.Fatalf("after the file was removed: %+v", again)
	}
	works(base, again)
	if n := len(keys()); n != 2 {
		t.Fatalf("the demo account has %d keys, want 2: %+v", n, keys())
	}
}
