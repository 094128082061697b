package api_test

// Contract tests of API keys, scopes and test mode (issue 24), by outcome,
// against DynamoDB Local, over HTTP and through the Lambda path: every
// route's scope boundary (403 with its exact text, and nothing changed), key
// management (the 20-key limit, no escalation, test keys, the last managing
// key, rotation), revocation on another warm process within the key cache's
// 5 s, live/test isolation of every family of records, events, webhooks and
// reports, clearing the test data, and last_used_at's writes.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"bizdata/infra/streampoll"
	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"

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

func lacks(scope string) string { return "This API key lacks the scope " + scope }

const (
	msgLiveOnly = "This route takes a live key (bk_live_…); test keys act on test data only"
	msgTestOnly = "This route takes a test key (bk_test_…); it never acts on live data"
)

// allowing returns every scope a key may hold that lets it call a route of
// scope: the scope, its family's write scope for a read scope, and "*".
func allowing(scope string) []string {
	out := []string{scope, business.ScopeAll}
	if fam, ok := strings.CutSuffix(scope, ":read"); ok && slices.Contains(business.Scopes, fam+":write") {
		out = append(out, fam+":write")
	}
	return out
}

// allBut returns every scope but those that allow scope: the widest key
// that still may not call a route of scope.
func allBut(scope string) []string {
	var out []string
	for _, s := range business.Scopes {
		if !slices.Contains(allowing(scope), s) {
			out = append(out, s)
		}
	}
	return out
}

// otherFamily returns one scope of another family than scope's.
func otherFamily(scope string) string {
	if strings.HasPrefix(scope, "events:") {
		return "customers:read"
	}
	return "events:read"
}

var pathParam = regexp.MustCompile(`\{[a-z_]+\}`)

func routeMode(rt api.Route) string {
	if rt.Mode.String() == "test" {
		return "test"
	}
	return "live"
}

// TestScopeRouteTable: every route names a scope a key can be given (or
// "none"), and a mode; the scopes of the routes are those the contract
// names.
func TestScopeRouteTable(t *testing.T) {
	t.Parallel()
	var none, all []string
	for _, rt := range api.Routes {
		if rt.Scope == "" || rt.Scope != "none" && !slices.Contains(business.Scopes, rt.Scope) {
			t.Errorf("route %s has scope %q: want one of %v or \"none\"", rt.Function, rt.Scope, business.Scopes)
		}
		switch rt.Mode.String() {
		case "any", "live", "test":
		default:
			t.Errorf("route %s has mode %q", rt.Function, rt.Mode)
		}
		switch {
		case rt.Scope == "none":
			none = append(none, rt.Function)
		case rt.Scope == business.ScopeAll:
			all = append(all, rt.Function)
		case rt.Method == http.MethodGet && strings.HasSuffix(rt.Scope, ":write") && rt.Scope != "webhooks:write" && rt.Scope != business.ScopeKeyWrite:
			t.Errorf("read route %s needs the write scope %s", rt.Function, rt.Scope)
		case rt.Method != http.MethodGet && strings.HasSuffix(rt.Scope, ":read"):
			t.Errorf("write route %s needs only the read scope %s", rt.Function, rt.Scope)
		}
		if strings.Contains(rt.Path, "/api-keys") && rt.Scope != business.ScopeKeyWrite ||
			(strings.Contains(rt.Path, "/webhook") && rt.Scope != "webhooks:write") {
			t.Errorf("route %s (%s) has scope %s", rt.Function, rt.Path, rt.Scope)
		}
		if wantMode := map[string]string{"update-settings": "live", "clear-test-data": "test"}[rt.Function]; wantMode == "" && rt.Mode.String() != "any" ||
			wantMode != "" && rt.Mode.String() != wantMode {
			t.Errorf("route %s has mode %s", rt.Function, rt.Mode)
		}
	}
	sort.Strings(none)
	sort.Strings(all)
	same(t, resp{method: "table", path: "scope none"}, []string{"authenticate", "get-settings", "rotate-api-key"}, none)
	same(t, resp{method: "table", path: "scope *"}, []string{"clear-test-data", "update-settings"}, all)
}

// TestScopeEveryRoute: for every route, keys holding its scope (or a scope
// that implies it, or "*") are not refused with 403, and keys without it
// (the widest such key, and one of another family) are refused with exactly
// 403 naming the scope. A route of scope "none" takes any key.
func TestScopeEveryRoute(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, c kc) {
		// Keys are made once per mode and scopes and revoked in batches
		// (an account holds at most 20); a route of scope "none" gets keys of
		// its own (rotate-api-key changes the calling key's secret).
		cache := map[string]keyCreated{}
		flush := func() {
			for id, k := range cache {
				want(t, c.post(t, "/api/v1/api-keys/"+k.ID+"/revoke", nil), 200, "API key revoked")
				delete(cache, id)
			}
		}
		key := func(mode string, scopes ...string) string {
			id := mode + " " + strings.Join(scopes, " ")
			if k, ok := cache[id]; ok {
				return k.Key
			}
			if len(cache) >= 15 {
				flush()
			}
			cache[id] = mkKey(t, c, fmt.Sprintf("%s key of %d scopes", mode, len(scopes)), mode, scopes...)
			return cache[id].Key
		}
		for _, rt := range api.Routes {
			path := pathParam.ReplaceAllString(rt.Path, "1")
			mode := routeMode(rt)
			var body any
			if rt.Method != http.MethodGet && rt.Method != http.MethodDelete {
				body = "{}"
			}
			if rt.Scope == "none" {
				for _, scopes := range [][]string{{business.ScopeAll}, {"events:read"}, {"sales:write"}} {
					for _, m := range []string{"live", "test"} {
						k := mkKey(t, c, rt.Function, m, scopes...)
						if r := c.as(k.Key).do(t, rt.Method, path, body); r.code == 403 || r.code >= 500 {
							t.Errorf("%s (scope none) with a %s key of %v: %d %s", rt.Function, m, scopes, r.code, r.raw)
						}
						want(t, c.post(t, "/api/v1/api-keys/"+k.ID+"/revoke", nil), 200, "API key revoked")
					}
				}
				continue
			}
			for _, s := range allowing(rt.Scope) {
				if r := c.as(key(mode, s)).do(t, rt.Method, path, body); r.code == 403 || r.code >= 500 {
					t.Errorf("%s (scope %s) with a %s key of [%s]: %d %s", rt.Function, rt.Scope, mode, s, r.code, r.raw)
				}
			}
			for _, scopes := range [][]string{allBut(rt.Scope), {otherFamily(rt.Scope)}} {
				wantExact(t, c.as(key(mode, scopes...)).do(t, rt.Method, path, body), 403, lacks(rt.Scope))
			}
		}
		flush()
	})
}

// avPlain turns an attribute value into plain Go values that print and
// compare by content.
func avPlain(v types.AttributeValue) any {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return "S:" + v.Value
	case *types.AttributeValueMemberN:
		return "N:" + v.Value
	case *types.AttributeValueMemberBOOL:
		return v.Value
	case *types.AttributeValueMemberNULL:
		return nil
	case *types.AttributeValueMemberB:
		return "B:" + base64.StdEncoding.EncodeToString(v.Value)
	case *types.AttributeValueMemberSS:
		s := slices.Clone(v.Value)
		sort.Strings(s)
		return map[string]any{"SS": s}
	case *types.AttributeValueMemberNS:
		s := slices.Clone(v.Value)
		sort.Strings(s)
		return map[string]any{"NS": s}
	case *types.AttributeValueMemberL:
		out := make([]any, len(v.Value))
		for i, x := range v.Value {
			out[i] = avPlain(x)
		}
		return out
	case *types.AttributeValueMemberM:
		out := map[string]any{}
		for k, x := range v.Value {
			out[k] = avPlain(x)
		}
		return out
	}
	return fmt.Sprintf("%T", v)
}

// tableState returns every item of the table whose PK and SK keep accepts,
// as JSON by "PK | SK", without last_used_at (a key's stamp of its own use,
// which any authenticated request may write).
func tableState(t *testing.T, st *store.Store, keep func(pk, sk string) bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	pages := dynamodb.NewScanPaginator(st.Client(), &dynamodb.ScanInput{TableName: aws.String(st.Table()), ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			pk := it["PK"].(*types.AttributeValueMemberS).Value
			sk := it["SK"].(*types.AttributeValueMemberS).Value
			if keep != nil && !keep(pk, sk) {
				continue
			}
			m := map[string]any{}
			for k, v := range it {
				if k != "last_used_at" {
					m[k] = avPlain(v)
				}
			}
			b, _ := json.Marshal(m)
			out[pk+" | "+sk] = string(b)
		}
	}
	return out
}

// ownedBy reports whether partition key pk holds an item of account
// (exactly: not of an account whose id merely begins with it).
func ownedBy(pk, account string) bool {
	return pk == "A#"+account || strings.HasPrefix(pk, "A#"+account+"#") || pk == store.SecretKeyPrefix+account
}

// writeFixture is a valid request of a write route, and what it answers
// with a key that may make it.
type writeFixture struct {
	method, path string
	body         any
	ok           int // 0: not sent with an allowed key (it would reach the network)
}

// TestKeyForbiddenWritesNothing: a key lacking a write route's scope (the
// widest such key: every other scope) sending a valid request is refused
// with exactly 403, and the table is unchanged, item by item; so is a key
// of the wrong mode on the live-only and test-only routes. The same
// requests with a key that may make them succeed, so they were valid.
func TestKeyForbiddenWritesNothing(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, c kc) {
		ctx := context.Background()
		for _, r := range []resp{
			c.post(t, "/api/v1/customers/add", map[string]any{"name": "Ama Mensah"}),
			c.post(t, "/api/v1/inventory/categories/add", map[string]any{"category_name": "Shop"}),
			c.post(t, "/api/v1/inventory/items/add", map[string]any{"item_code": "SOAP", "item_name": "Soap", "category_id": 1, "item_price": "5.00", "quantity": "10"}),
			c.post(t, "/api/v1/sales/add", corrSale("100001", 2, "10.00")),
			c.post(t, "/api/v1/sales/add", corrSale("100003", 1, "0")),
			c.post(t, "/api/v1/expenses/add", map[string]any{"expense_type": "Rent", "expense_amount": "100.00", "payment_method": "Cash", "created_by": "Ama"}),
			c.put(t, "/api/v1/user/webhook", map[string]any{"callback_url": "https://shop.example.com/h"}),
		} {
			want(t, r, 200, "")
		}
		ep := dataAs[createdEndpoint](t, c.post(t, endpointsPath, map[string]any{"url": "https://hooks.example.com/a", "enabled_events": []string{"*"}}),
			"Webhook endpoint created", "webhook_endpoint")
		if _, err := e.store.CreateDelivery(ctx, business.Delivery{AccountID: e.acct.ID, TransactionID: "txn_1", WebhookID: "msg_txn_1",
			Payload: []byte(`{"amount":"10.00"}`), State: business.DeliveryDelivered, CreatedAt: time.Now().UTC()}); err != nil {
			t.Fatal(err)
		}
		ended := business.NewEventIDs(time.Now()).Next() // a delivery of the endpoint, ended, to redeliver
		if _, err := e.store.CreateDelivery(ctx, business.Delivery{AccountID: store.EndpointQueue(e.acct.ID, ep.ID), TransactionID: ended, WebhookID: ended,
			Payload: []byte(`{"type":"webhook_endpoint.test"}`), State: business.DeliveryFailed, CreatedAt: time.Now().UTC()}); err != nil {
			t.Fatal(err)
		}
		testAll := mkKey(t, c, "test all", "test", "*")
		tc := c.as(testAll.Key)
		want(t, tc.post(t, "/api/v1/customers/add", map[string]any{"name": "Test Ama"}), 200, "")
		spare := mkKey(t, c, "spare", "live", "sales:read")
		one := endpointsPath + "/" + ep.ID
		fixtures := map[string]writeFixture{
			"add-customer":                {"POST", "/api/v1/customers/add", map[string]any{"name": "Kojo"}, 200},
			"edit-customer":               {"PUT", "/api/v1/customers/1", map[string]any{"phone": "0244000001"}, 200},
			"add-category":                {"POST", "/api/v1/inventory/categories/add", map[string]any{"category_name": "Drinks"}, 200},
			"edit-category":               {"PUT", "/api/v1/inventory/categories/1", map[string]any{"description": "Everything"}, 200},
			"add-item":                    {"POST", "/api/v1/inventory/items/add", map[string]any{"item_code": "OIL", "item_name": "Oil", "category_id": 1, "item_price": "30", "quantity": "5"}, 200},
			"edit-item":                   {"PUT", "/api/v1/inventory/items/SOAP", map[string]any{"minimum_qty_alert": "3"}, 200},
			"adjust-stock":                {"POST", "/api/v1/inventory/items/SOAP/adjustments", map[string]any{"quantity": "5", "reason": "received"}, 200},
			"add-expense":                 {"POST", "/api/v1/expenses/add", map[string]any{"expense_type": "Fuel", "expense_amount": "10.00", "payment_method": "Cash", "created_by": "Ama"}, 200},
			"edit-expense":                {"PUT", "/api/v1/expenses/1", map[string]any{"expense_type": "Rent", "expense_amount": "120.00", "payment_method": "Cash", "created_by": "Ama"}, 200},
			"add-sale":                    {"POST", "/api/v1/sales/add", corrSale("100002", 1, "0"), 200},
			"edit-sale":                   {"PUT", "/api/v1/sales/edit/100001", corrSale("100001", 2, "15.00"), 200},
			"refund-sale":                 {"POST", refundPath("100001"), map[string]any{"amount": "5.00", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "1"}}}, 200},
			"void-sale":                   {"POST", voidPath("100003"), map[string]any{"reason": "entered twice"}, 200},
			"add-webhook-endpoint":        {"POST", endpointsPath, map[string]any{"url": "https://hooks.example.com/b", "enabled_events": []string{"*"}}, 200},
			"edit-webhook-endpoint":       {"PUT", one, map[string]any{"description": "orders"}, 200},
			"rotate-endpoint-secret":      {"POST", one + "/rotate-secret", nil, 200},
			"replay-webhook-endpoint":     {"POST", one + "/replay", recentSince(), 200},
			"test-webhook-endpoint":       {"POST", one + "/test", nil, 0},
			"redeliver-endpoint-delivery": {"POST", one + "/deliveries/" + ended + "/redeliver", nil, 200},
			"delete-webhook-endpoint":     {"DELETE", one, nil, 200},
			"update-webhook-settings":     {"PUT", "/api/v1/user/webhook", map[string]any{"callback_url": "https://shop.example.com/other"}, 200},
			"test-webhook":                {"POST", "/api/v1/user/webhook/test", nil, 0},
			"redeliver-webhook":           {"POST", "/api/v1/user/webhook/deliveries/txn_1/redeliver", nil, 200},
			"update-settings":             {"PUT", "/api/v1/user/settings", map[string]any{"business_name": "Kofi Stores Ltd"}, 200},
			"create-api-key":              {"POST", "/api/v1/api-keys", map[string]any{"name": "POS", "scopes": []string{"sales:write"}}, 200},
			"revoke-api-key":              {"POST", "/api/v1/api-keys/" + spare.ID + "/revoke", nil, 200},
			"clear-test-data":             {"POST", "/api/v1/test-data/clear", nil, 200},
		}
		// The keys that lack each write route's scope, made before the
		// table is read.
		denied := map[string]string{}
		var order []api.Route
		for _, rt := range api.Routes {
			if rt.Method == http.MethodGet || rt.Scope == "none" {
				continue
			}
			if _, ok := fixtures[rt.Function]; !ok {
				t.Errorf("write route %s has no fixture in this test", rt.Function)
				continue
			}
			order = append(order, rt)
			id := routeMode(rt) + " " + rt.Scope
			if denied[id] == "" {
				denied[id] = mkKey(t, c, "lacks "+rt.Scope, routeMode(rt), allBut(rt.Scope)...).Key
			}
		}
		before := tableState(t, e.store, nil)
		check := func(what string) {
			t.Helper()
			if d := cmp.Diff(before, tableState(t, e.store, nil)); d != "" {
				t.Fatalf("%s changed the table (-before +after):\n%s", what, d)
			}
		}
		for _, rt := range order {
			f := fixtures[rt.Function]
			r := c.as(denied[routeMode(rt)+" "+rt.Scope]).do(t, f.method, f.path, f.body)
			wantExact(t, r, 403, lacks(rt.Scope))
			check(rt.Function + " refused")
		}
		wantExact(t, tc.put(t, "/api/v1/user/settings", fixtures["update-settings"].body), 403, msgLiveOnly)
		check("update-settings with a test key")
		wantExact(t, c.post(t, "/api/v1/test-data/clear", nil), 403, msgTestOnly)
		check("clear-test-data with a live key")

		// The same requests from keys that may make them: valid, they succeed.
		sequence := []string{"add-customer", "edit-customer", "add-category", "edit-category", "add-item", "edit-item", "adjust-stock",
			"add-expense", "edit-expense", "add-sale", "edit-sale", "refund-sale", "void-sale", "add-webhook-endpoint", "edit-webhook-endpoint",
			"rotate-endpoint-secret", "replay-webhook-endpoint", "test-webhook-endpoint", "redeliver-endpoint-delivery", "delete-webhook-endpoint", "update-webhook-settings", "test-webhook",
			"redeliver-webhook", "update-settings", "create-api-key", "revoke-api-key", "clear-test-data"}
		if len(sequence) != len(fixtures) {
			t.Fatalf("the sequence has %d routes, the fixtures %d", len(sequence), len(fixtures))
		}
		for _, fn := range sequence {
			f := fixtures[fn]
			if f.ok == 0 {
				continue
			}
			by := c
			if fn == "clear-test-data" {
				by = tc
			}
			if r := by.do(t, f.method, f.path, f.body); r.code != f.ok {
				t.Errorf("%s with a \"*\" key: %d %s, want %d", fn, r.code, r.raw, f.ok)
			}
		}
	})
}

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
		wantExact(t, c.as(k.Key).post(t, "/api/v1/customers/add", map[string]any{"name": "Kojo"}), 403, lacks("customers:write"))

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
		const full = "This account has 20 active API keys, the most it may have; revoke one first"
		tc := c.as(test[0].Key)
		for _, r := range []resp{
			c.post(t, "/api/v1/api-keys", map[string]any{"name": "21st", "scopes": []string{"sales:read"}}),
			c.post(t, "/api/v1/api-keys", map[string]any{"name": "21st", "scopes": []string{"sales:read"}, "mode": "test"}),
			tc.post(t, "/api/v1/api-keys", map[string]any{"name": "21st", "scopes": []string{"sales:read"}, "mode": "test"}),
		} {
			wantExact(t, r, 409, full)
		}
		if ks := keysListed(t, c); len(ks) != 20 {
			t.Fatalf("%d keys, want 20", len(ks))
		}
		if ks := keysListed(t, tc); len(ks) != 8 {
			t.Fatalf("a test key sees %d keys, want its 8 test keys", len(ks))
		}
		want(t, c.post(t, "/api/v1/api-keys/"+test[7].ID+"/revoke", nil), 200, "API key revoked")
		mkKey(t, tc, "the 20th again", "test", "sales:read")
		wantExact(t, c.post(t, "/api/v1/api-keys", map[string]any{"name": "21st", "scopes": []string{"sales:read"}}), 409, full)

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
			wantExact(t, create(salesOnly, "", scopes...), 403, lacks("keys:write"))
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
		wantExact(t, child.get(t, "/api/v1/sales"), 403, lacks("sales:read"))
	})
}

// TestKeyTestModeKeys: a test key creates only test keys, sees only test
// keys, and cannot revoke a live key (404, as an unknown one).
func TestKeyTestModeKeys(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, c kc) {
		live := mkKey(t, c, "live till", "live", "sales:read")
		tk := mkKey(t, c, "test all", "test", "*")
		tc := c.as(tk.Key)
		const testOnlyKeys = "A test key can create only test keys (mode \"test\")"
		wantExact(t, tc.post(t, "/api/v1/api-keys", map[string]any{"name": "x", "scopes": []string{"sales:read"}, "mode": "live"}), 403, testOnlyKeys)
		wantExact(t, tc.post(t, "/api/v1/api-keys", map[string]any{"name": "x", "scopes": []string{"sales:read"}}), 403, testOnlyKeys)
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
			wantExact(t, c.as(fresh).get(t, "/api/v1/expenses"), 403, lacks("expenses:read"))
		}
	})
}

// listed returns data.<key> of a 200 list answer.
func listed(t *testing.T, c kc, path, key string) []map[string]any {
	t.Helper()
	r := c.get(t, path)
	want(t, r, 200, "")
	raw, ok := r.data()[key].([]any)
	if !ok {
		t.Fatalf("%s: no list data.%s: %s", path, key, r.raw)
	}
	out := make([]map[string]any, len(raw))
	for i, x := range raw {
		out[i], _ = x.(map[string]any)
	}
	return out
}

// values returns field name of each record, as text.
func values(rs []map[string]any, name string) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprint(r[name])
	}
	return out
}

// sameList fails the test unless field name of the records at path is want.
func sameList(t *testing.T, c kc, path, key, name string, want ...string) {
	t.Helper()
	if got := values(listed(t, c, path, key), name); !slices.Equal(got, want) {
		t.Errorf("GET %s: %s %q, want %q", path, name, got, want)
	}
}

// reportOf returns data.report of a 200 report answer.
func reportOf(t *testing.T, c kc, path string) map[string]any {
	t.Helper()
	r := c.get(t, path)
	want(t, r, 200, "Report ready")
	rep, _ := r.data()["report"].(map[string]any)
	return rep
}

// TestTestModeIsolation: with a live and a test key of one account, the
// same requests make records of each mode that the other never sees: ids
// and invoice numbers start over in test mode; lists, gets, reports,
// events (each with its livemode), webhook settings and endpoints show
// their own mode's only; settings are the business's, the same in both.
func TestTestModeIsolation(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, c kc) {
		tk := mkKey(t, c, "test all", "test", "*")
		type mode struct {
			name   string
			c      kc
			live   bool
			tag    string
			soap   int    // units sold
			stock  string // units in stock at first
			total  string
			spent  string
			epURL  string
			hookTo string
		}
		modes := []mode{
			{"live", c, true, "Live", 2, "10", "15.00", "100.00", "https://hooks.example.com/live", "https://live.example.com/h"},
			{"test", c.as(tk.Key), false, "Test", 3, "50", "20.00", "7.00", "https://hooks.example.com/test", "https://test.example.com/h"},
		}
		for _, m := range modes {
			r := m.c.get(t, "/api/v1/user/authenticate")
			want(t, r, 200, "Authenticated")
			d := r.data()
			acct, _ := d["account"].(map[string]any)
			k, _ := d["api_key"].(map[string]any)
			if d["livemode"] != m.live || acct["id"] != e.acct.ID || acct["name"] != "Kofi Stores" || acct["business_code"] != "KOFI01" || k["mode"] != m.name {
				t.Errorf("%s key: %s", m.name, r.raw)
			}
		}
		eps := map[string]string{}
		for _, m := range modes {
			r := m.c.post(t, "/api/v1/customers/add", map[string]any{"name": m.tag + " Ama"})
			if got := dataAs[customerWire](t, r, "Customer added successfully", "customers"); got.ID != 1 {
				t.Errorf("%s: the first customer has id %d", m.name, got.ID)
			}
			r = m.c.post(t, "/api/v1/inventory/categories/add", map[string]any{"category_name": m.tag + " Shop"})
			if got := dataAs[categoryWire](t, r, "Category added successfully", "categories"); got.ID != 1 {
				t.Errorf("%s: the first category has id %d", m.name, got.ID)
			}
			r = m.c.post(t, "/api/v1/inventory/items/add", map[string]any{"item_code": "SOAP", "item_name": m.tag + " Soap", "category_id": 1, "item_price": "5.00", "quantity": m.stock})
			if got := dataAs[itemWire](t, r, "Item added successfully", "items"); got.ID != 1 {
				t.Errorf("%s: the first item has id %d", m.name, got.ID)
			}
			want(t, m.c.post(t, "/api/v1/inventory/items/SOAP/adjustments", map[string]any{"quantity": "-1", "reason": "damaged"}), 200, "")
			// The same invoice code and number in both modes: each its first.
			r = m.c.post(t, "/api/v1/sales/add", corrSale("100001", m.soap, "10.00"))
			if got := dataAs[saleWire](t, r, "Sale added successfully", "sales"); got.ID != 1 || got.InvoiceNumber != "INV-100001" || got.Total != m.total {
				t.Errorf("%s: the first sale: %s", m.name, r.raw)
			}
			want(t, m.c.post(t, refundPath("100001"), map[string]any{"amount": "5.00", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "1"}}}), 200, "")
			r = m.c.post(t, "/api/v1/expenses/add", map[string]any{"expense_type": m.tag + " Rent", "expense_amount": m.spent, "payment_method": "Cash", "created_by": "Ama"})
			if got := dataAs[expenseWire](t, r, "Expense added successfully", "expenses"); got.ID != 1 {
				t.Errorf("%s: the first expense has id %d", m.name, got.ID)
			}
			want(t, m.c.put(t, "/api/v1/user/webhook", map[string]any{"callback_url": m.hookTo}), 200, "")
			eps[m.name] = dataAs[createdEndpoint](t, m.c.post(t, endpointsPath, map[string]any{"url": m.epURL, "enabled_events": []string{"*"}}),
				"Webhook endpoint created", "webhook_endpoint").ID
		}
		evIDs := map[string][]string{}
		evTypes := map[string][]string{}
		keyEvents := map[string][]string{}
		for i, m := range modes {
			other := modes[1-i]
			sameList(t, m.c, "/api/v1/customers", "customers", "name", m.tag+" Ama")
			if r := m.c.get(t, "/api/v1/customers/1"); dataAs[customerWire](t, r, "Customer found", "customers").Name != m.tag+" Ama" {
				t.Errorf("%s: %s", m.name, r.raw)
			}
			sameList(t, m.c, "/api/v1/inventory/categories", "categories", "category_name", m.tag+" Shop")
			sameList(t, m.c, "/api/v1/inventory/items", "items", "item_name", m.tag+" Soap")
			left := thou(t, m.stock) - 1000 - int64(m.soap)*1000 + 1000
			if got := thou(t, dataAs[itemWire](t, m.c.get(t, "/api/v1/inventory/items/SOAP"), "Item found", "items").Quantity); got != left {
				t.Errorf("%s: SOAP quantity %d/1000, want %d/1000", m.name, got, left)
			}
			var sum int64
			for _, mv := range listed(t, m.c, "/api/v1/inventory/items/SOAP/movements?limit=200", "movements") {
				sum += thou(t, fmt.Sprint(mv["quantity"]))
			}
			if sum != left {
				t.Errorf("%s: SOAP's movements add up to %d/1000, its quantity is %d/1000", m.name, sum, left)
			}
			sameList(t, m.c, "/api/v1/sales", "sales", "total_amount", m.total)
			r := m.c.get(t, "/api/v1/sales/100001")
			want(t, r, 200, "Sale found")
			if s, _ := r.data()["sales"].(map[string]any); s["total_amount"] != m.total || s["amount_refunded"] != "5.00" ||
				len(r.data()["sales-payment"].([]any)) != 1 || len(r.data()["sales-refund"].([]any)) != 1 {
				t.Errorf("%s: %s", m.name, r.raw)
			}
			sameList(t, m.c, "/api/v1/expenses", "expenses", "expense_amount", m.spent)
			if wh, _ := m.c.get(t, "/api/v1/user/webhook").data()["webhook"].(map[string]any); wh["callback_url"] != m.hookTo {
				t.Errorf("%s: webhook settings %v", m.name, wh)
			}
			sameList(t, m.c, endpointsPath, "webhook_endpoints", "url", m.epURL)
			want(t, m.c.get(t, endpointsPath+"/"+eps[m.name]), 200, "Webhook endpoint found")
			want(t, m.c.get(t, endpointsPath+"/"+eps[other.name]), 404, "Webhook endpoint not found")

			sum1 := reportOf(t, m.c, "/api/v1/reports/summary")
			if tot, _ := sum1["totals"].(map[string]any); tot["sales_count"] != float64(1) || tot["invoiced"] != m.total || tot["refunded"] != "5.00" ||
				tot["expenses"] != m.spent || tot["collected"] != "10.00" {
				t.Errorf("%s: summary totals %v", m.name, tot)
			}
			rec := reportOf(t, m.c, "/api/v1/reports/receivables")
			if cs, _ := rec["customers"].([]any); len(cs) != 1 || cs[0].(map[string]any)["name"] != m.tag+" Ama" {
				t.Errorf("%s: receivables %v", m.name, rec)
			}
			if inv := reportOf(t, m.c, "/api/v1/reports/inventory"); inv["items_count"] != float64(1) {
				t.Errorf("%s: inventory report %v", m.name, inv)
			}

			evs := listed(t, m.c, "/api/v1/events?limit=100", "events")
			for _, ev := range evs {
				evIDs[m.name] = append(evIDs[m.name], fmt.Sprint(ev["id"]))
				res, _ := ev["resource"].(map[string]any)
				switch res["type"] {
				case business.ResourceAPIKey:
					// The key events of the key made for the test data: in
					// its feed alone.
					keyEvents[m.name] = append(keyEvents[m.name], fmt.Sprintf("%v %v", ev["type"], res["id"]))
				case business.ResourceEndpoint, business.ResourceSettings:
					// Endpoint ids are random; the settings' id is the mode's account.
					evTypes[m.name] = append(evTypes[m.name], fmt.Sprintf("%v %v", ev["type"], res["type"]))
				default:
					evTypes[m.name] = append(evTypes[m.name], fmt.Sprintf("%v %v/%v", ev["type"], res["type"], res["id"]))
				}
				if lm, ok := ev["livemode"].(bool); !ok || lm != m.live {
					t.Errorf("%s: event %v %v has livemode %v", m.name, ev["id"], ev["type"], ev["livemode"])
				}
				if ev["type"] == business.EventCustomerCreated {
					d, _ := ev["data"].(map[string]any)
					if cu, _ := d["customers"].(map[string]any); cu["name"] != m.tag+" Ama" {
						t.Errorf("%s: customer.created event of another mode's customer: %v", m.name, d)
					}
				}
			}
			if len(evs) == 0 {
				t.Fatalf("%s: no events", m.name)
			}
			r = m.c.get(t, "/api/v1/events/"+evIDs[m.name][0])
			if ev, _ := r.data()["event"].(map[string]any); r.code != 200 || ev["livemode"] != m.live {
				t.Errorf("%s: %s", m.name, r.raw)
			}
		}
		for i, m := range modes {
			for _, id := range evIDs[modes[1-i].name] {
				if slices.Contains(evIDs[m.name], id) {
					t.Errorf("event %s is in both feeds", id)
				}
				want(t, m.c.get(t, "/api/v1/events/"+id), 404, "Event not found")
			}
		}
		same(t, resp{method: "GET", path: "/api/v1/events (live -want, test +got)"}, evTypes["live"], evTypes["test"])
		same(t, resp{method: "GET", path: "/api/v1/events (the api_key events by mode)"},
			map[string][]string{"test": {"api_key.created " + tk.ID}}, keyEvents)

		// Settings are the business's: the same in both modes.
		settings := func(c kc) any {
			r := c.get(t, "/api/v1/user/settings")
			want(t, r, 200, "Settings found")
			return r.data()["settings"]
		}
		same(t, resp{method: "GET", path: "/api/v1/user/settings (live -want, test +got)"}, settings(modes[0].c), settings(modes[1].c))
	})
}

// TestTestModeSettingsMirrored: update-settings takes a live key (a test
// key is 403 and changes nothing); what the live key changes, test mode
// shows at once, in its settings and in what authenticate answers.
func TestTestModeSettingsMirrored(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, c kc) {
		tc := c.as(mkKey(t, c, "test all", "test", "*").Key)
		want(t, tc.get(t, "/api/v1/user/authenticate"), 200, "")
		wantExact(t, tc.put(t, "/api/v1/user/settings", map[string]any{"business_name": "Test Name"}), 403, msgLiveOnly)
		r := c.put(t, "/api/v1/user/settings", map[string]any{"business_name": "Kofi Stores Ltd", "timezone": "Africa/Nairobi"})
		want(t, r, 200, "Settings updated")
		for _, p := range []kc{c, tc} {
			r := p.get(t, "/api/v1/user/settings")
			want(t, r, 200, "Settings found")
			s, _ := r.data()["settings"].(map[string]any)
			if s["business_name"] != "Kofi Stores Ltd" || fmt.Sprint(s["timezone_history"]) == "[]" {
				t.Errorf("%s", r.raw)
			}
			r = p.get(t, "/api/v1/user/authenticate")
			if acct, _ := r.data()["account"].(map[string]any); acct["name"] != "Kofi Stores Ltd" || acct["id"] != e.acct.ID {
				t.Errorf("authenticate after the settings change: %s", r.raw)
			}
		}
		live, test := c.get(t, "/api/v1/user/settings"), tc.get(t, "/api/v1/user/settings")
		same(t, test, live.data()["settings"], test.data()["settings"])
	})
}

// clearAll clears the test data with c (a test "*" key), calling again
// while the purge continues, and returns the first answer.
func clearAll(t *testing.T, c kc) resp {
	t.Helper()
	var first resp
	for call := 1; ; call++ {
		r := c.post(t, "/api/v1/test-data/clear", nil)
		if call == 1 {
			first = r
		}
		switch {
		case r.code == 200:
			if r.body["message"] != "Test data cleared" || r.data()["purge_complete"] != true {
				t.Fatalf("%s", r.raw)
			}
			return first
		case r.code == 202:
			if r.body["message"] != "Test data cleared; deleting the old records continues" || r.data()["purge_complete"] != false {
				t.Fatalf("%s", r.raw)
			}
		default:
			t.Fatalf("clear %d: %d %s", call, r.code, r.raw)
		}
		if call > 20 {
			t.Fatal("the purge is not complete after 20 calls")
		}
	}
}

// TestTestModeClear: clearing takes a test "*" key (a live key, or a test
// key without "*", is 403); the test records are gone at once, the test
// keys keep working on an empty test mode whose ids start over, the live
// data is untouched, and no item of the retired test data remains.
func TestTestModeClear(t *testing.T) {
	keyPaths(t, 0, func(t *testing.T, e *env, c kc) {
		tk := mkKey(t, c, "test all", "test", "*")
		tc := c.as(tk.Key)
		tsales := c.as(mkKey(t, c, "test sales", "test", "sales:write").Key)
		wantExact(t, c.post(t, "/api/v1/test-data/clear", nil), 403, msgTestOnly)
		wantExact(t, tsales.post(t, "/api/v1/test-data/clear", nil), 403, lacks("*"))

		var ep string
		for _, p := range []kc{c, tc} {
			for _, r := range []resp{
				p.post(t, "/api/v1/customers/add", map[string]any{"name": "Ama"}),
				p.post(t, "/api/v1/inventory/categories/add", map[string]any{"category_name": "Shop"}),
				p.post(t, "/api/v1/inventory/items/add", map[string]any{"item_code": "SOAP", "item_name": "Soap", "category_id": 1, "item_price": "5.00", "quantity": "10"}),
				p.post(t, "/api/v1/inventory/items/SOAP/adjustments", map[string]any{"quantity": "-1", "reason": "damaged"}),
				p.post(t, "/api/v1/sales/add", corrSale("100001", 2, "10.00")),
				p.post(t, refundPath("100001"), map[string]any{"amount": "5.00", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "1"}}}),
				p.post(t, "/api/v1/expenses/add", map[string]any{"expense_type": "Rent", "expense_amount": "100.00", "payment_method": "Cash", "created_by": "Ama"}),
				p.put(t, "/api/v1/user/webhook", map[string]any{"callback_url": "https://shop.example.com/h", "callback_secret": "merchant-secret-0123456789"}),
			} {
				want(t, r, 200, "")
			}
			ep = dataAs[createdEndpoint](t, p.post(t, endpointsPath, map[string]any{"url": "https://hooks.example.com/h", "enabled_events": []string{"*"}}),
				"Webhook endpoint created", "webhook_endpoint").ID
			want(t, p.post(t, endpointsPath+"/"+ep+"/replay", recentSince()), 200, "")
			want(t, p.get(t, "/api/v1/reports/summary"), 200, "")
		}
		testEvent := listed(t, tc, "/api/v1/events?limit=1", "events")[0]["id"].(string)
		lists := []struct{ path, key string }{
			{"/api/v1/customers", "customers"}, {"/api/v1/inventory/categories", "categories"}, {"/api/v1/inventory/items", "items"},
			{"/api/v1/sales", "sales"}, {"/api/v1/expenses", "expenses"}, {endpointsPath, "webhook_endpoints"}, {"/api/v1/events?limit=100", "events"},
		}
		liveViews := func() map[string]string {
			out := map[string]string{}
			for _, l := range lists {
				out[l.path] = string(c.get(t, l.path).raw)
			}
			for _, p := range []string{"/api/v1/sales/100001", "/api/v1/customers/1", "/api/v1/user/webhook", "/api/v1/inventory/items/SOAP/movements", endpointsPath + "/" + ep} {
				out[p] = string(c.get(t, p).raw)
			}
			rep := reportOf(t, c, "/api/v1/reports/summary")
			b, _ := json.Marshal(rep["totals"])
			out["summary totals"] = string(b)
			return out
		}
		live := business.LiveID(e.acct.ID)
		retired := business.TwinID(live, 1)
		liveItems := func() map[string]string {
			return tableState(t, e.store, func(pk, sk string) bool { return ownedBy(pk, live) && sk != "ACCOUNT" })
		}
		viewsBefore, itemsBefore := liveViews(), liveItems()
		if n := len(tableState(t, e.store, func(pk, _ string) bool { return ownedBy(pk, retired) })); n < 20 {
			t.Fatalf("the test data holds only %d items", n)
		}

		r := tc.post(t, "/api/v1/test-data/clear", nil)
		if r.code != 200 && r.code != 202 {
			t.Fatalf("%s", r.raw)
		}
		// At once: test mode is empty; its keys work.
		for _, l := range lists {
			sameList(t, tc, l.path, l.key, "id")
		}
		for _, p := range []struct{ path, msg string }{
			{"/api/v1/customers/1", "Customer not found"}, {"/api/v1/sales/100001", "Sale not found"}, {"/api/v1/expenses/1", "Expense not found"},
			{"/api/v1/inventory/items/SOAP", "Item not found"}, {endpointsPath + "/" + ep, "Webhook endpoint not found"}, {"/api/v1/events/" + testEvent, "Event not found"},
		} {
			want(t, tc.get(t, p.path), 404, p.msg)
		}
		if wh, _ := tc.get(t, "/api/v1/user/webhook").data()["webhook"].(map[string]any); wh["callback_url"] != nil || wh["signed"] != false {
			t.Errorf("test webhook settings after the clear: %v", wh)
		}
		if tot, _ := reportOf(t, tc, "/api/v1/reports/summary")["totals"].(map[string]any); tot["sales_count"] != float64(0) || tot["invoiced"] != "0.00" {
			t.Errorf("test summary after the clear: %v", tot)
		}
		want(t, tsales.get(t, "/api/v1/sales"), 200, "Sales found: 0")
		if r := tc.get(t, "/api/v1/user/authenticate"); r.code != 200 || r.data()["livemode"] != false {
			t.Fatalf("%s", r.raw)
		}
		if r.code == 202 {
			clearAll(t, tc)
		}
		// Nothing of the retired test data is left; live data is as it was.
		if left := tableState(t, e.store, func(pk, _ string) bool { return ownedBy(pk, retired) }); len(left) != 0 {
			keys := slices.Sorted(func(yield func(string) bool) {
				for k := range left {
					if !yield(k) {
						return
					}
				}
			})
			t.Errorf("%d items of the retired test data %s are left after the purge completed: %v", len(left), retired, keys)
		}
		if d := cmp.Diff(viewsBefore, liveViews()); d != "" {
			t.Errorf("clearing the test data changed what the live key reads (-before +after):\n%s", d)
		}
		if d := cmp.Diff(itemsBefore, liveItems()); d != "" {
			t.Errorf("clearing the test data changed live items (-before +after):\n%s", d)
		}
		// Ids start over; the new test data clears as well.
		if got := dataAs[customerWire](t, tc.post(t, "/api/v1/customers/add", map[string]any{"name": "Kojo"}), "Customer added successfully", "customers"); got.ID != 1 {
			t.Errorf("the first customer after a clear has id %d", got.ID)
		}
		// A test key rotated, or made, after the clear acts on the fresh test
		// data too.
		r = tc.post(t, "/api/v1/user/api-key/rotate", nil)
		want(t, r, 200, "API key rotated")
		tc = c.as(r.data()["api_key"].(string))
		sameList(t, tc, "/api/v1/customers", "customers", "name", "Kojo")
		sameList(t, c.as(mkKey(t, c, "after the clear", "test", "customers:read").Key), "/api/v1/customers", "customers", "name", "Kojo")
		sameList(t, tsales.as(mkKey(t, tc, "made by a test key", "test", "customers:read").Key), "/api/v1/customers", "customers", "name", "Kojo")
		clearAll(t, tc)
		sameList(t, tc, "/api/v1/customers", "customers", "id")
		if left := tableState(t, e.store, func(pk, _ string) bool { return ownedBy(pk, business.TwinID(live, 2)) }); len(left) != 0 {
			t.Errorf("%d items of the second retired test data are left", len(left))
		}
		if d := cmp.Diff(viewsBefore, liveViews()); d != "" {
			t.Errorf("the second clear changed what the live key reads (-before +after):\n%s", d)
		}
	})
}

// TestTestModeClearOtherProcess: a test key warm on another process acts
// on the fresh test data within the key cache's 5 s of a clear: it sees
// what was made there since.
func TestTestModeClearOtherProcess(t *testing.T) {
	keyPaths(t, api.DefaultKeyCacheTTL, func(t *testing.T, e *env, a kc) {
		b := anotherProcess(t, e, a, api.DefaultKeyCacheTTL)
		tk := mkKey(t, a, "test all", "test", "*")
		want(t, a.as(tk.Key).post(t, "/api/v1/customers/add", map[string]any{"name": "Ama"}), 200, "")
		sameList(t, b.as(tk.Key), "/api/v1/customers", "customers", "name", "Ama")
		clearAll(t, a.as(tk.Key))
		cleared := time.Now()
		want(t, a.as(tk.Key).post(t, "/api/v1/customers/add", map[string]any{"name": "Fresh"}), 200, "")
		var names []string
		for {
			names = values(listed(t, b.as(tk.Key), "/api/v1/customers", "customers"), "name")
			if slices.Equal(names, []string{"Fresh"}) || time.Since(cleared) > 5500*time.Millisecond {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if took := time.Since(cleared); !slices.Equal(names, []string{"Fresh"}) {
			t.Fatalf("%v after the clear, another warm process's test key still lists %q, not the fresh test data's customer", took, names)
		}
		t.Logf("the other process saw the fresh test data %v after the clear", time.Since(cleared).Round(100*time.Millisecond))
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
		stamp := func() *string {
			t.Helper()
			for _, x := range keysListed(t, c) {
				if x.ID == k.ID {
					return x.LastUsedAt
				}
			}
			t.Fatalf("key %s is not listed", k.ID)
			return nil
		}
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
		lastUsed := func() *string {
			t.Helper()
			for _, x := range keysListed(t, c) {
				if x.ID == k.ID {
					return x.LastUsedAt
				}
			}
			t.Fatalf("key %s is not listed", k.ID)
			return nil
		}
		for _, when := range []string{"cold", "warm"} {
			wantExact(t, c.as(k.Key).post(t, "/api/v1/customers/add", map[string]any{"name": "Kojo"}), 403, lacks("customers:write"))
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

// keyInbox is a receiver that records the bodies it gets.
type keyInbox struct {
	*httptest.Server
	mu  sync.Mutex
	got [][]byte
}

func newKeyInbox(t *testing.T) *keyInbox {
	in := &keyInbox{}
	in.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		in.mu.Lock()
		in.got = append(in.got, b)
		in.mu.Unlock()
		w.WriteHeader(200)
	}))
	t.Cleanup(in.Close)
	return in
}

func (in *keyInbox) bodies() [][]byte {
	in.mu.Lock()
	defer in.mu.Unlock()
	return slices.Clone(in.got)
}

// TestTestModeWebhooks: with the table's stream fed to the webhook service
// and its dispatcher running (as in the webhook package's tests), an
// endpoint set up with a test key receives the test mode's events only,
// each with livemode false, and the live endpoint the live events only,
// with livemode true; the payment callback set in test mode gets the test
// payment with "livemode": false, the live one the live payment with true.
func TestTestModeWebhooks(t *testing.T) {
	// Not parallel: the stream poller and dispatcher need DynamoDB Local's
	// stream reads, which the package's parallel tests slow past any
	// reasonable wait on a 2-core machine.
	st, cfg := testdb.NewStore(t)
	acct, key := testdb.NewAccount(t, st, "Hook Shop", "HOOK01")
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Hour}, testdb.Quiet())
	ctx, cancel := context.WithCancel(context.Background())
	streams, err := app.NewStreams(ctx, cfg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		streampoll.Poll(ctx, st.Client(), streams, cfg.TableName, webhook.Streamed, svc.HandleStream, streampoll.MaximumRetryAttempts, testdb.Quiet())
	}()
	go func() { defer wg.Done(); svc.Dispatch(ctx, time.Now().Add(time.Hour), 50*time.Millisecond) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	srv := httptest.NewServer(api.NewServer(st, testdb.Quiet(), 0).AllowPrivateWebhooks(true).Handler(api.Routes))
	t.Cleanup(srv.Close)

	lc := kc{srv: srv, key: key}
	tc := lc.as(mkKey(t, lc, "test all", "test", "*").Key)
	type mode struct {
		name          string
		c             kc
		live          bool
		endpoint, cb  *keyInbox
		customer, pay string
	}
	modes := []mode{
		{"live", lc, true, newKeyInbox(t), newKeyInbox(t), "Live Ama", "10.00"},
		{"test", tc, false, newKeyInbox(t), newKeyInbox(t), "Test Ama", "7.00"},
	}
	for _, m := range modes {
		want(t, m.c.post(t, endpointsPath, map[string]any{"url": m.endpoint.URL, "enabled_events": []string{"*"}}), 200, "")
		want(t, m.c.put(t, "/api/v1/user/webhook", map[string]any{"callback_url": m.cb.URL}), 200, "")
	}
	for _, m := range modes {
		want(t, m.c.post(t, "/api/v1/customers/add", map[string]any{"name": m.customer}), 200, "")
		want(t, m.c.post(t, "/api/v1/sales/add", map[string]any{"customer_id": 1, "sub_total_amount": "10.00", "total_amount": "10.00",
			"amount_paid": m.pay, "invoice_type": "pos", "payment_type": "Cash", "due_date": "2026-12-01"}), 200, "")
	}
	// feeds are each mode's events, owed holds those its endpoint must get:
	// the test key's api_key.created is in the test feed from before any
	// endpoint, so the endpoint gets it only if the stream's fan-out read
	// the endpoints after it was made.
	feeds, owed := map[string][]string{}, map[string][]string{}
	for _, m := range modes {
		for _, ev := range listed(t, m.c, "/api/v1/events?limit=100", "events") {
			feeds[m.name] = append(feeds[m.name], ev["id"].(string))
			if ev["type"] != "api_key.created" {
				owed[m.name] = append(owed[m.name], ev["id"].(string))
			}
		}
	}
	type head struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Livemode *bool  `json:"livemode"`
	}
	for _, m := range modes {
		deadline := time.Now().Add(90 * time.Second)
		for {
			var got []string
			for _, b := range m.endpoint.bodies() {
				var h head
				_ = json.Unmarshal(b, &h)
				got = append(got, h.ID)
			}
			all := true
			for _, id := range owed[m.name] {
				all = all && slices.Contains(got, id)
			}
			if all && len(m.cb.bodies()) >= 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: after 90 s the endpoint got %d of the %d events (%v), the callback %d bodies", m.name, len(got), len(owed[m.name]), got, len(m.cb.bodies()))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	time.Sleep(500 * time.Millisecond) // what else would arrive, has
	for i, m := range modes {
		other := modes[1-i]
		for _, b := range m.endpoint.bodies() {
			var h head
			if err := json.Unmarshal(b, &h); err != nil {
				t.Fatalf("%s endpoint got %s", m.name, b)
			}
			if h.Livemode == nil || *h.Livemode != m.live {
				t.Errorf("%s endpoint got event %s %s with livemode %v: %s", m.name, h.ID, h.Type, h.Livemode, b)
			}
			if !slices.Contains(feeds[m.name], h.ID) || slices.Contains(feeds[other.name], h.ID) {
				t.Errorf("%s endpoint got event %s %s, which is not its mode's", m.name, h.ID, h.Type)
			}
			if strings.Contains(string(b), other.customer) {
				t.Errorf("%s endpoint got the other mode's record: %s", m.name, b)
			}
		}
		cbs := m.cb.bodies()
		var p webhook.Payload
		if len(cbs) != 1 || json.Unmarshal(cbs[0], &p) != nil || p.Message != "Payment received" || p.Amount != m.pay || p.Livemode != m.live ||
			p.BusinessCode != acct.BusinessCode || !strings.Contains(string(cbs[0]), fmt.Sprintf(`"livemode":%v`, m.live)) {
			t.Errorf("%s callback got %d bodies: %q", m.name, len(cbs), cbs)
		}
	}
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
