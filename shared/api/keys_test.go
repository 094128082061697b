package api_test

// Contract tests of API keys, by outcome, against DynamoDB Local, over HTTP
// and through the Lambda path: key management (the 20-key limit, no
// escalation, test keys, the last managing key, rotation), revocation on
// another warm process within the key cache's 5 s, and last_used_at's
// writes; and the helpers the scope and test mode tests share
// (scopes_test.go, testmode_test.go).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
)

// kc sends requests with one API key to one process: an HTTP server, or a
// set of Lambda function handlers sharing one api.Server (as the harness's
// lambdaCaller does).
type kc struct {
	srv *httptest.Server
	lc  *lambdaCaller
	key string
}

// as is the same process with another key.
func (c kc) as(key string) kc { c.key = key; return c }

func (c kc) do(t *testing.T, method, path string, body any, headers ...string) resp {
	t.Helper()
	if c.lc == nil {
		return (&env{t: t, srv: c.srv}).req(method, path, c.key, body, headers...)
	}
	return (&client{e: &env{t: t, key: c.key}, lc: c.lc}).do(t, method, path, body, headers...)
}

func (c kc) get(t *testing.T, path string) resp { t.Helper(); return c.do(t, "GET", path, nil) }

func (c kc) post(t *testing.T, path string, body any) resp {
	t.Helper()
	return c.do(t, "POST", path, body)
}

func (c kc) put(t *testing.T, path string, body any) resp {
	t.Helper()
	return c.do(t, "PUT", path, body)
}

// keyPaths runs f over HTTP and through the Lambda path, each on a fresh
// env whose API keeps keys for keyTTL; c sends with the account's live "*"
// key.
func keyPaths(t *testing.T, keyTTL time.Duration, f func(t *testing.T, e *env, c kc)) {
	for _, path := range []string{"HTTP", "Lambda"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			e := newEnvTTL(t, keyTTL)
			c := kc{srv: e.srv, key: e.key}
			if path == "Lambda" {
				c = kc{lc: newLambdaCallerTTL(t, e.store, keyTTL), key: e.key}
			}
			f(t, e, c)
		})
	}
}

// anotherProcess is a second process over e's table, of c's kind (an HTTP
// server, or Lambda handlers), with a cold key cache of keyTTL.
func anotherProcess(t *testing.T, e *env, c kc, keyTTL time.Duration) kc {
	t.Helper()
	if c.lc != nil {
		return kc{lc: newLambdaCallerTTL(t, e.store, keyTTL), key: c.key}
	}
	srv := httptest.NewServer(api.NewServer(e.store, testdb.Quiet(), keyTTL).Handler(api.Routes))
	t.Cleanup(srv.Close)
	return kc{srv: srv, key: c.key}
}

// keyWire is a key as the API shows it.
type keyWire struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Scopes     []string `json:"scopes"`
	Mode       string   `json:"mode"`
	Prefix     *string  `json:"prefix"`
	CreatedAt  string   `json:"created_at"`
	LastUsedAt *string  `json:"last_used_at"`
}

// keyCreated is the create's answer: the key and its secret.
type keyCreated struct {
	keyWire
	Key string `json:"key"`
}

var keyIDRE = regexp.MustCompile(`^key_[0-9a-f]{16}$`)

// mkKey creates a key with c's key (mode "" leaves the field out) and
// returns it with its secret.
func mkKey(t *testing.T, c kc, name, mode string, scopes ...string) keyCreated {
	t.Helper()
	body := map[string]any{"name": name, "scopes": scopes}
	if mode != "" {
		body["mode"] = mode
	}
	return dataAs[keyCreated](t, c.post(t, "/api/v1/api-keys", body), "API key created", "api_key")
}

// keysListed is GET /api-keys with c's key.
func keysListed(t *testing.T, c kc) []keyWire {
	t.Helper()
	return dataAs[[]keyWire](t, c.get(t, "/api/v1/api-keys"), "API keys found", "api_keys")
}

// lastUsedAt is the last_used_at the key id is listed with.
func lastUsedAt(t *testing.T, c kc, id string) *string {
	t.Helper()
	for _, x := range keysListed(t, c) {
		if x.ID == id {
			return x.LastUsedAt
		}
	}
	t.Fatalf("key %s is not listed", id)
	return nil
}

func keyIDs(ks []keyWire) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.ID
	}
	return out
}

// wantExact fails the test unless r is status code with exactly the body
// {"status":code,"error":text}.
func wantExact(t *testing.T, r resp, code int, text string) {
	t.Helper()
	if d := cmp.Diff(map[string]any{"status": float64(code), "error": text}, r.body); d != "" || r.code != code {
		t.Errorf("%s %s: %d %s, want exactly %d {\"status\":%d,\"error\":%q}", r.method, r.path, r.code, r.raw, code, code, text)
	}
}

// Texts of the 403s.
const (
	msgLiveOnly     = "This route takes a live key (bk_live_…); test keys act on test data only"
	msgTestOnly     = "This route takes a test key (bk_test_…); it never acts on live data"
	msgTestKeysOnly = `A test key can create only test keys (mode "test")`
	msgKeyLimit     = "This account has 20 active API keys, the most it may have; revoke one first"
)

func msgLacksScope(scope string) string { return "This API key lacks the scope " + scope }

// TestKeyRevokeOtherProcess: a key revoked through one process stops there
// at once, and on another warm process (which had just accepted it from its
// cache) within the key cache's 5 s; so does the old secret of a rotated
// key.
func TestKeyRevokeOtherProcess(t *testing.T) {
	keyPaths(t, api.DefaultKeyCacheTTL, func(t *testing.T, e *env, a kc) {
		b := anotherProcess(t, e, a, api.DefaultKeyCacheTTL)
		k := mkKey(t, a, "till", "live", "sales:read")
		rot := mkKey(t, a, "rotating", "test", "sales:read")
		for _, p := range []kc{a, b} {
			want(t, p.as(k.Key).get(t, "/api/v1/sales"), 200, "")
			want(t, p.as(rot.Key).get(t, "/api/v1/sales"), 200, "")
		}
		// Warm on B just now: its cache holds both keys.
		want(t, b.as(k.Key).get(t, "/api/v1/sales"), 200, "")
		want(t, b.as(rot.Key).get(t, "/api/v1/sales"), 200, "")

		want(t, a.post(t, "/api/v1/api-keys/"+k.ID+"/revoke", nil), 200, "API key revoked")
		r := a.as(rot.Key).post(t, "/api/v1/user/api-key/rotate", nil)
		want(t, r, 200, "API key rotated")
		changed := time.Now()
		fresh, _ := r.data()["api_key"].(string)
		wantExact(t, a.as(k.Key).get(t, "/api/v1/sales"), 401, "Unauthorized: Invalid API Key")
		wantExact(t, a.as(rot.Key).get(t, "/api/v1/sales"), 401, "Unauthorized: Invalid API Key")
		want(t, a.as(fresh).get(t, "/api/v1/sales"), 200, "")

		for _, old := range []string{k.Key, rot.Key} {
			var r resp
			for {
				r = b.as(old).get(t, "/api/v1/sales")
				if r.code != 200 || time.Since(changed) > 5500*time.Millisecond {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			took := time.Since(changed)
			wantExact(t, r, 401, "Unauthorized: Invalid API Key")
			if took > 5500*time.Millisecond {
				t.Errorf("the other process still accepted a revoked or rotated key %v after the change", took)
			}
			wantExact(t, b.as(old).get(t, "/api/v1/sales"), 401, "Unauthorized: Invalid API Key")
		}
		want(t, b.as(fresh).get(t, "/api/v1/sales"), 200, "")
	})
}

// TestKeyCreateAndList: a created key's answer (shown once with its
// secret), its scopes in canonical order, and bad requests naming the
// field, creating nothing.
func TestKeyCreateAndList(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, c kc) {
		before := time.Now().UTC().Add(-time.Second).Truncate(time.Second)
		r := c.post(t, "/api/v1/api-keys", map[string]any{"name": "  Till 1  ", "scopes": []string{"customers:read", "sales:write", "sales:write"}})
		k := dataAs[keyCreated](t, r, "API key created", "api_key")
		at, err := time.Parse(business.TimeFormat, k.CreatedAt)
		if !keyIDRE.MatchString(k.ID) || k.Name != "Till 1" || k.Mode != "live" || k.LastUsedAt != nil || err != nil ||
			at.Before(before) || at.After(time.Now().Add(time.Second)) || !strings.HasPrefix(k.Key, "bk_live_") || len(k.Key) < 40 ||
			k.Prefix == nil || *k.Prefix != k.Key[:12] {
			t.Fatalf("%s", r.raw)
		}
		same(t, r, []string{"sales:write", "customers:read"}, k.Scopes)
		tk := mkKey(t, c, "Tests", "test", "*")
		if tk.Mode != "test" || !strings.HasPrefix(tk.Key, "bk_test_") || *tk.Prefix != tk.Key[:12] {
			t.Fatalf("%+v", tk)
		}
		// (The order of keys made within one second is TestKeyListOldestFirst's.)
		ks := map[string]keyWire{}
		for _, x := range keysListed(t, c) {
			ks[x.ID] = x
		}
		if def := ks[e.acct.Key.ID]; len(ks) != 3 || def.Name != "Default key" || def.Mode != "live" || !slices.Equal(def.Scopes, []string{"*"}) {
			t.Fatalf("%+v", ks)
		}
		same(t, resp{method: "GET", path: "/api/v1/api-keys"}, []keyWire{k.keyWire, tk.keyWire}, []keyWire{ks[k.ID], ks[tk.ID]})
		if strings.Contains(fmt.Sprint(ks), k.Key) || strings.Contains(fmt.Sprint(ks), tk.Key) {
			t.Fatal("the list shows a secret")
		}
		// The key works, with its scopes only.
		want(t, c.as(k.Key).get(t, "/api/v1/sales"), 200, "")
		want(t, c.as(k.Key).get(t, "/api/v1/customers"), 200, "")
		wantExact(t, c.as(k.Key).post(t, "/api/v1/customers/add", map[string]any{"name": "Kojo"}), 403, msgLacksScope("customers:write"))

		for _, bad := range []struct {
			body  any
			field string
		}{
			{map[string]any{"scopes": []string{"sales:read"}}, "name"},
			{map[string]any{"name": " ", "scopes": []string{"sales:read"}}, "name"},
			{map[string]any{"name": strings.Repeat("n", 101), "scopes": []string{"sales:read"}}, "name"},
			{map[string]any{"name": "x"}, "scopes"},
			{map[string]any{"name": "x", "scopes": []string{}}, "scopes"},
			{map[string]any{"name": "x", "scopes": []string{"sales:delete"}}, "scopes"},
			{map[string]any{"name": "x", "scopes": []string{"sales:read"}, "mode": "prod"}, "mode"},
			{map[string]any{"name": "x", "scopes": []string{"sales:read"}, "secret": "mine"}, "secret"},
		} {
			wantRefused(t, c.post(t, "/api/v1/api-keys", bad.body), bad.field)
		}
		wantRefused(t, c.get(t, "/api/v1/api-keys?limit=5"), "limit")
		if n := len(keysListed(t, c)); n != 3 {
			t.Fatalf("refused creates made keys: %d keys", n)
		}
		want(t, c.post(t, "/api/v1/api-keys/nope/revoke", nil), 404, "API key not found")
		want(t, c.post(t, "/api/v1/api-keys/key_0000000000000000/revoke", nil), 404, "API key key_0000000000000000 not found")
	})
}

// TestKeyListOldestFirst: GET /api-keys lists the keys oldest first, as
// the contract says, also when they were made within one second (the
// store's clock is stopped here, so every key is made at the same second).
// It found the list ordered by created_at (to the second) and then by the
// random id; the registry now keeps each key's place.
func TestKeyListOldestFirst(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, c kc) {
		e.clock.set(t, time.Now().UTC().Format(business.TimeFormat))
		made := []string{e.acct.Key.ID}
		for i := range 5 {
			made = append(made, mkKey(t, c, fmt.Sprintf("key %d", i), "live", "sales:read").ID)
		}
		same(t, resp{method: "GET", path: "/api/v1/api-keys"}, made, keyIDs(keysListed(t, c)))
	})
}

// TestKeyLimit: 20 active keys of both modes together; the 21st, of
// either mode and from either mode, is 409; a revoke frees a place.
func TestKeyLimit(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, c kc) {
		var test []keyCreated
		for i := range 11 {
			mkKey(t, c, fmt.Sprintf("live %d", i), "live", "sales:read")
		}
		for i := range 8 {
			test = append(test, mkKey(t, c, fmt.Sprintf("test %d", i), "test", "*"))
		}
		tc := c.as(test[0].Key)
		for _, r := range []resp{
			c.post(t, "/api/v1/api-keys", map[string]any{"name": "21st", "scopes": []string{"sales:read"}}),
			c.post(t, "/api/v1/api-keys", map[string]any{"name": "21st", "scopes": []string{"sales:read"}, "mode": "test"}),
			tc.post(t, "/api/v1/api-keys", map[string]any{"name": "21st", "scopes": []string{"sales:read"}, "mode": "test"}),
		} {
			wantExact(t, r, 409, msgKeyLimit)
		}
		if ks := keysListed(t, c); len(ks) != 20 {
			t.Fatalf("%d keys, want 20", len(ks))
		}
		if ks := keysListed(t, tc); len(ks) != 8 {
			t.Fatalf("a test key sees %d keys, want its 8 test keys", len(ks))
		}
		want(t, c.post(t, "/api/v1/api-keys/"+test[7].ID+"/revoke", nil), 200, "API key revoked")
		mkKey(t, tc, "the 20th again", "test", "sales:read")
		wantExact(t, c.post(t, "/api/v1/api-keys", map[string]any{"name": "21st", "scopes": []string{"sales:read"}}), 409, msgKeyLimit)

		// Four places free, eight creates at once: four keys, four 409s.
		for _, k := range test[3:7] {
			want(t, c.post(t, "/api/v1/api-keys/"+k.ID+"/revoke", nil), 200, "API key revoked")
		}
		codes := make([]int, 8)
		var wg sync.WaitGroup
		for i := range codes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mode := []string{"live", "test"}[i%2]
				codes[i] = c.post(t, "/api/v1/api-keys", map[string]any{"name": "racer", "scopes": []string{"sales:read"}, "mode": mode}).code
			}()
		}
		wg.Wait()
		slices.Sort(codes)
		same(t, resp{method: "POST", path: "/api/v1/api-keys x8 at once"}, []int{200, 200, 200, 200, 409, 409, 409, 409}, codes)
		if ks := keysListed(t, c); len(ks) != 20 {
			t.Fatalf("%d keys after the race, want 20", len(ks))
		}
	})
}

// TestKeyNoEscalation: a key creates keys with scopes it has only; a key
// without keys:write creates none; nothing is created by a refusal.
func TestKeyNoEscalation(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, c kc) {
		grant := func(s string) string {
			return "This API key lacks the scope " + s + ", so it cannot grant it: a key creates keys only with scopes it has itself"
		}
		create := func(by kc, mode string, scopes ...string) resp {
			t.Helper()
			body := map[string]any{"name": "k", "scopes": scopes}
			if mode != "" {
				body["mode"] = mode
			}
			return by.post(t, "/api/v1/api-keys", body)
		}
		salesOnly := c.as(mkKey(t, c, "sales", "", "sales:write").Key)
		for _, scopes := range [][]string{{"*"}, {"customers:read"}, {"keys:write"}, {"sales:read"}} {
			wantExact(t, create(salesOnly, "", scopes...), 403, msgLacksScope("keys:write"))
		}
		salesMgr := c.as(mkKey(t, c, "sales manager", "", "sales:write", "keys:write").Key)
		wantExact(t, create(salesMgr, "", "*"), 403, grant("*"))
		wantExact(t, create(salesMgr, "", "customers:read"), 403, grant("customers:read"))
		wantExact(t, create(salesMgr, "", "sales:read", "customers:read"), 403, grant("customers:read"))
		wantExact(t, create(salesMgr, "test", "expenses:write"), 403, grant("expenses:write"))
		mgr := c.as(mkKey(t, c, "key manager", "", "keys:write").Key)
		wantExact(t, create(mgr, "", "*"), 403, grant("*"))
		wantExact(t, create(mgr, "", "sales:read"), 403, grant("sales:read"))
		wantExact(t, create(mgr, "", "keys:write", "events:read"), 403, grant("events:read"))
		if n := len(keysListed(t, c)); n != 4 {
			t.Fatalf("refused creates made keys: %d keys, want 4", n)
		}
		// What a key has, it may grant; a write scope grants its read.
		for _, k := range []keyCreated{
			mkKey(t, salesMgr, "till", "", "sales:read"),
			mkKey(t, salesMgr, "till", "test", "sales:write", "keys:write"),
			mkKey(t, mgr, "manager 2", "", "keys:write"),
		} {
			if k.Mode == "" || len(k.Scopes) == 0 {
				t.Fatalf("%+v", k)
			}
		}
		child := c.as(mkKey(t, mgr, "manager 3", "", "keys:write").Key)
		want(t, child.get(t, "/api/v1/api-keys"), 200, "API keys found")
		wantExact(t, child.get(t, "/api/v1/sales"), 403, msgLacksScope("sales:read"))
	})
}

// TestKeyTestModeKeys: a test key creates only test keys, sees only test
// keys, and cannot revoke a live key (404, as an unknown one).
func TestKeyTestModeKeys(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, c kc) {
		live := mkKey(t, c, "live till", "live", "sales:read")
		tk := mkKey(t, c, "test all", "test", "*")
		tc := c.as(tk.Key)
		wantExact(t, tc.post(t, "/api/v1/api-keys", map[string]any{"name": "x", "scopes": []string{"sales:read"}, "mode": "live"}), 403, msgTestKeysOnly)
		wantExact(t, tc.post(t, "/api/v1/api-keys", map[string]any{"name": "x", "scopes": []string{"sales:read"}}), 403, msgTestKeysOnly)
		made := mkKey(t, tc, "test till", "test", "sales:read")
		if made.Mode != "test" || !strings.HasPrefix(made.Key, "bk_test_") {
			t.Fatalf("%+v", made)
		}
		ks := keysListed(t, tc)
		same(t, resp{method: "GET", path: "/api/v1/api-keys (test key)"}, slices.Sorted(slices.Values([]string{tk.ID, made.ID})), slices.Sorted(slices.Values(keyIDs(ks))))
		for _, k := range ks {
			if k.Mode != "test" {
				t.Errorf("a test key sees %+v", k)
			}
		}
		same(t, resp{method: "GET", path: "/api/v1/api-keys (live key)"}, slices.Sorted(slices.Values([]string{e.acct.Key.ID, live.ID, tk.ID, made.ID})),
			slices.Sorted(slices.Values(keyIDs(keysListed(t, c)))))
		for _, id := range []string{live.ID, e.acct.Key.ID} {
			wantExact(t, tc.post(t, "/api/v1/api-keys/"+id+"/revoke", nil), 404, "API key "+id+" not found")
		}
		want(t, c.as(live.Key).get(t, "/api/v1/sales"), 200, "")
		r := tc.post(t, "/api/v1/api-keys/"+made.ID+"/revoke", nil)
		same(t, r, made.keyWire, dataAs[keyWire](t, r, "API key revoked", "api_key"))
		wantExact(t, c.as(made.Key).get(t, "/api/v1/sales"), 401, "Unauthorized: Invalid API Key")
		wantExact(t, tc.post(t, "/api/v1/api-keys/"+made.ID+"/revoke", nil), 404, "API key "+made.ID+" not found")
	})
}

// TestKeyLastManager: the last live key that may manage keys cannot be
// revoked (409, and it still works); test keys do not count; once another
// exists it can, and a revoked key is 401 on every route.
func TestKeyLastManager(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, c kc) {
		def := e.acct.Key.ID
		mkKey(t, c, "test all", "test", "*")
		mkKey(t, c, "live sales", "live", "sales:write")
		last := func(id string) string {
			return "API key " + id + " is the last live key with the scope keys:write; create another before revoking it"
		}
		wantExact(t, c.post(t, "/api/v1/api-keys/"+def+"/revoke", nil), 409, last(def))
		want(t, c.get(t, "/api/v1/user/authenticate"), 200, "Authenticated")
		wantExact(t, c.as(mkKey(t, c, "key manager", "live", "keys:write").Key).post(t, "/api/v1/api-keys/"+def+"/revoke", nil), 403,
			"This API key cannot revoke API key "+def+": that key has scopes this one lacks")
		mgr := mkKey(t, c, "manager", "live", "*")
		r := c.as(mgr.Key).post(t, "/api/v1/api-keys/"+def+"/revoke", nil)
		if got := dataAs[keyWire](t, r, "API key revoked", "api_key"); got.ID != def || got.Name != "Default key" {
			t.Fatalf("%s", r.raw)
		}
		for _, p := range []string{"/api/v1/user/authenticate", "/api/v1/sales", "/api/v1/customers", "/api/v1/api-keys", "/api/v1/user/settings"} {
			wantExact(t, c.get(t, p), 401, "Unauthorized: Invalid API Key")
		}
		for _, k := range keysListed(t, c.as(mgr.Key)) {
			if k.Name == "key manager" {
				want(t, c.as(mgr.Key).post(t, "/api/v1/api-keys/"+k.ID+"/revoke", nil), 200, "API key revoked")
			}
		}
		wantExact(t, c.as(mgr.Key).post(t, "/api/v1/api-keys/"+mgr.ID+"/revoke", nil), 409, last(mgr.ID))
		want(t, c.as(mgr.Key).get(t, "/api/v1/api-keys"), 200, "API keys found")
		if ids := keyIDs(keysListed(t, c.as(mgr.Key))); slices.Contains(ids, def) || len(ids) != 3 {
			t.Fatalf("keys after the revoke: %v", ids)
		}
	})
}

// TestKeyRotateKeeps: rotating gives the calling key a new secret and
// keeps its id, name, scopes and mode; the old secret stops at once.
func TestKeyRotateKeeps(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, c kc) {
		for _, mode := range []string{"live", "test"} {
			k := mkKey(t, c, "POS "+mode, mode, "sales:write", "customers:read")
			r := c.as(k.Key).post(t, "/api/v1/user/api-key/rotate", nil)
			want(t, r, 200, "API key rotated")
			fresh, _ := r.data()["api_key"].(string)
			if !strings.HasPrefix(fresh, "bk_"+mode+"_") || fresh == k.Key {
				t.Fatalf("%s", r.raw)
			}
			wantExact(t, c.as(k.Key).get(t, "/api/v1/user/authenticate"), 401, "Unauthorized: Invalid API Key")
			r = c.as(fresh).get(t, "/api/v1/user/authenticate")
			want(t, r, 200, "Authenticated")
			var got struct {
				Data struct {
					APIKey keyWire `json:"api_key"`
				} `json:"data"`
			}
			if err := json.Unmarshal(r.raw, &got); err != nil {
				t.Fatal(err)
			}
			exp := k.keyWire
			exp.Prefix = ptr(fresh[:12])
			exp.LastUsedAt = got.Data.APIKey.LastUsedAt
			same(t, r, exp, got.Data.APIKey)
			var listed keyWire
			for _, x := range keysListed(t, c) {
				if x.ID == k.ID {
					listed = x
				}
			}
			exp.LastUsedAt = listed.LastUsedAt
			same(t, resp{method: "GET", path: "/api/v1/api-keys"}, exp, listed)
			want(t, c.as(fresh).get(t, "/api/v1/sales"), 200, "")
			wantExact(t, c.as(fresh).get(t, "/api/v1/expenses"), 403, msgLacksScope("expenses:read"))
		}
	})
}

// TestKeyLastUsed: a fresh key was never used (null); its first request
// stamps it; a request within a minute writes nothing (a warm one makes no
// DynamoDB call at all, a cold one only the key's read); a stale stamp is
// written again.
func TestKeyLastUsed(t *testing.T) {
	keyPaths(t, api.DefaultKeyCacheTTL, func(t *testing.T, e *env, c kc) {
		k := mkKey(t, c, "till", "live", "sales:read")
		if k.LastUsedAt != nil {
			t.Fatalf("a new key has last_used_at %q", *k.LastUsedAt)
		}
		stamp := func() *string { t.Helper(); return lastUsedAt(t, c, k.ID) }
		if s := stamp(); s != nil {
			t.Fatalf("an unused key has last_used_at %q", *s)
		}
		calls := func(p kc) int64 {
			t.Helper()
			n := e.calls.Load()
			want(t, p.as(k.Key).get(t, "/api/v1/user/authenticate"), 200, "Authenticated")
			return e.calls.Load() - n
		}
		start := time.Now().UTC().Truncate(time.Second)
		if n := calls(c); n != 2 {
			t.Errorf("the key's first request made %d DynamoDB calls, want 2 (its read and its stamp)", n)
		}
		s := stamp()
		if s == nil {
			t.Fatal("a used key has last_used_at null")
		}
		at, err := time.Parse(business.TimeFormat, *s)
		if err != nil || at.Before(start) || at.After(time.Now().Add(time.Second)) {
			t.Fatalf("last_used_at %q, want the time of the request (%s)", *s, start.Format(business.TimeFormat))
		}
		if n := calls(c); n != 0 {
			t.Errorf("a request with a warm key made %d DynamoDB calls, want 0", n)
		}
		if n := calls(anotherProcess(t, e, c, api.DefaultKeyCacheTTL)); n != 1 {
			t.Errorf("a cold request within a minute of the stamp made %d DynamoDB calls, want 1 (the key's read, no write)", n)
		}
		if again := stamp(); again == nil || *again != *s {
			t.Errorf("last_used_at %v after a request within a minute, want %s kept", again, *s)
		}
		// A stamp older than a minute is written again by the next cold request.
		old := time.Now().UTC().Add(-2 * time.Minute).Format(business.TimeFormat)
		if _, err := e.store.Client().UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
			TableName: aws.String(e.store.Table()),
			Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "KEY#" + business.HashAPIKey(k.Key)},
				"SK": &types.AttributeValueMemberS{Value: "KEY"}},
			UpdateExpression:          aws.String("SET last_used_at = :t"),
			ConditionExpression:       aws.String("attribute_exists(PK)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberS{Value: old}},
		}); err != nil {
			t.Fatal(err)
		}
		if s := stamp(); s == nil || *s != old {
			t.Fatalf("last_used_at %v, want the %s just set", s, old)
		}
		start = time.Now().UTC().Truncate(time.Second)
		if n := calls(anotherProcess(t, e, c, api.DefaultKeyCacheTTL)); n != 2 {
			t.Errorf("a cold request after a stale stamp made %d DynamoDB calls, want 2 (its read and its stamp)", n)
		}
		if s := stamp(); s == nil || *s < start.Format(business.TimeFormat) {
			t.Errorf("last_used_at %v after a request, want at least %s", s, start.Format(business.TimeFormat))
		}
	})
}

// TestKeyForbiddenStampsNothing: a request refused 403 for a scope its key
// lacks leaves the key's last_used_at as it was (null for a key never
// used), on a cold read of the key and on a warm one; the key's next
// permitted request, served from the cache, stamps it.
func TestKeyForbiddenStampsNothing(t *testing.T) {
	keyPaths(t, api.DefaultKeyCacheTTL, func(t *testing.T, e *env, c kc) {
		k := mkKey(t, c, "till", "live", "sales:read")
		lastUsed := func() *string { t.Helper(); return lastUsedAt(t, c, k.ID) }
		for _, when := range []string{"cold", "warm"} {
			wantExact(t, c.as(k.Key).post(t, "/api/v1/customers/add", map[string]any{"name": "Kojo"}), 403, msgLacksScope("customers:write"))
			if s := lastUsed(); s != nil {
				t.Fatalf("a %s request refused for its scope stamped last_used_at %q", when, *s)
			}
		}
		want(t, c.as(k.Key).get(t, "/api/v1/user/authenticate"), 200, "Authenticated")
		if lastUsed() == nil {
			t.Fatal("a permitted request after the refused ones left last_used_at null")
		}
	})
}

// TestKeyStaleSecretChangesNothing: a secret revoked or rotated away on one
// process, still cached on another, cannot use that window to manage keys:
// the old secret of a rotated key cannot rotate it back (and lock the new
// holder out), and a revoked key cannot make or revoke keys. Each is 401, as
// the key is everywhere once the cache expires. (Found in review.)
func TestKeyStaleSecretChangesNothing(t *testing.T) {
	keyPaths(t, api.DefaultKeyCacheTTL, func(t *testing.T, e *env, a kc) {
		b := anotherProcess(t, e, a, api.DefaultKeyCacheTTL)
		admin := mkKey(t, a, "admin", "live", "keys:write")
		till := mkKey(t, a, "till", "live", "sales:read")
		want(t, b.as(admin.Key).get(t, "/api/v1/api-keys"), 200, "") // cached on B now

		r := a.as(admin.Key).post(t, "/api/v1/user/api-key/rotate", nil)
		want(t, r, 200, "API key rotated")
		fresh := r.data()["api_key"].(string)
		wantExact(t, b.as(admin.Key).post(t, "/api/v1/user/api-key/rotate", nil), 401, "Unauthorized: Invalid API Key")
		wantExact(t, b.as(admin.Key).post(t, "/api/v1/api-keys", map[string]any{"name": "x", "scopes": []string{"keys:write"}}), 401, "Unauthorized: Invalid API Key")
		wantExact(t, b.as(admin.Key).post(t, "/api/v1/api-keys/"+till.ID+"/revoke", nil), 401, "Unauthorized: Invalid API Key")
		want(t, a.as(fresh).get(t, "/api/v1/api-keys"), 200, "") // the new holder keeps the key

		want(t, b.as(fresh).get(t, "/api/v1/api-keys"), 200, "") // cached on B
		want(t, a.post(t, "/api/v1/api-keys/"+admin.ID+"/revoke", nil), 200, "API key revoked")
		wantExact(t, b.as(fresh).post(t, "/api/v1/api-keys", map[string]any{"name": "x", "scopes": []string{"keys:write"}}), 401, "Unauthorized: Invalid API Key")
		same(t, resp{method: "GET", path: "/api/v1/api-keys"}, []string{e.acct.Key.ID, till.ID}, keyIDs(keysListed(t, a)))
	})
}

// TestKeyRevokesOnlyWhatItCouldGrant: a key revokes only keys whose scopes
// it could give, so a keys:write key cannot take away the account's "*"
// key (which no key short of "*" could make again). (Found in review.)
func TestKeyRevokesOnlyWhatItCouldGrant(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, a kc) {
		mgr := mkKey(t, a, "manager", "live", "keys:write", "sales:read")
		till := mkKey(t, a, "till", "live", "sales:read")
		other := mkKey(t, a, "other", "live", "sales:write")
		m := a.as(mgr.Key)
		wantExact(t, m.post(t, "/api/v1/api-keys/"+e.acct.Key.ID+"/revoke", nil), 403,
			"This API key cannot revoke API key "+e.acct.Key.ID+": that key has scopes this one lacks")
		wantExact(t, m.post(t, "/api/v1/api-keys/"+other.ID+"/revoke", nil), 403,
			"This API key cannot revoke API key "+other.ID+": that key has scopes this one lacks")
		want(t, m.post(t, "/api/v1/api-keys/"+till.ID+"/revoke", nil), 200, "API key revoked")
		want(t, a.get(t, "/api/v1/user/authenticate"), 200, "")
		same(t, resp{method: "GET", path: "/api/v1/api-keys"}, []string{e.acct.Key.ID, mgr.ID, other.ID}, keyIDs(keysListed(t, a)))
	})
}
