package api_test

// Contract tests of scopes and modes, against DynamoDB Local, over HTTP and
// through the Lambda path: every route's scope boundary (403 with its exact
// text) and that a refused request changes nothing.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/store"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
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
				wantExact(t, c.as(key(mode, scopes...)).do(t, rt.Method, path, body), 403, msgLacksScope(rt.Scope))
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
			"create-invoice-link":         {"POST", "/api/v1/sales/100001/link", nil, 200},
			"revoke-invoice-link":         {"DELETE", "/api/v1/sales/100001/link", nil, 200},
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
			wantExact(t, r, 403, msgLacksScope(rt.Scope))
			check(rt.Function + " refused")
		}
		wantExact(t, tc.put(t, "/api/v1/user/settings", fixtures["update-settings"].body), 403, msgLiveOnly)
		check("update-settings with a test key")
		wantExact(t, c.post(t, "/api/v1/test-data/clear", nil), 403, msgTestOnly)
		check("clear-test-data with a live key")

		// The same requests from keys that may make them: valid, they succeed.
		sequence := []string{"add-customer", "edit-customer", "add-category", "edit-category", "add-item", "edit-item", "adjust-stock",
			"add-expense", "edit-expense", "add-sale", "edit-sale", "refund-sale", "void-sale", "create-invoice-link", "revoke-invoice-link",
			"add-webhook-endpoint", "edit-webhook-endpoint", "rotate-endpoint-secret", "replay-webhook-endpoint", "test-webhook-endpoint", "redeliver-endpoint-delivery", "delete-webhook-endpoint", "update-webhook-settings", "test-webhook",
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
