package lambdas_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
	"bizdata/shared/business"
	"bizdata/shared/testdb"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// invoke feeds the API Gateway v2 fixture file, with key as bearer token, to
// the handler of function name, exactly as lambda.Start would.
func invoke(t *testing.T, srv *api.Server, name, fixture, key string) (events.APIGatewayV2HTTPResponse, map[string]any) {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + fixture)
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(raw), "{{API_KEY}}", key)), &ev); err != nil {
		t.Fatal(err)
	}
	h, err := lambdas.FunctionHandler(srv, name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := httpadapter.NewV2(h).ProxyWithContext(context.Background(), ev)
	if err != nil {
		t.Fatalf("%s: lambda error %v", name, err)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(res.Body), &body); err != nil {
		t.Fatalf("%s: body %q is not JSON", name, res.Body)
	}
	if res.Headers["Content-Type"] != "application/json" || res.Headers["X-Request-Id"] == "" {
		t.Fatalf("%s: headers %v", name, res.Headers)
	}
	return res, body
}

func TestLambdaPath(t *testing.T) {
	st, _ := testdb.NewStore(t)
	srv := api.NewServer(st, testdb.Quiet(), 0)
	a, key := testdb.NewAccount(t, st, "Lambda Shop", "LAMBDA")
	_ = a

	t.Run("AddBase64Body", func(t *testing.T) {
		res, body := invoke(t, srv, "add-customer", "apigw-v2-add-customer.json", key)
		if res.StatusCode != 200 || body["message"] != "Customer added successfully" {
			t.Fatalf("%d %s", res.StatusCode, res.Body)
		}
		again, _ := invoke(t, srv, "add-customer", "apigw-v2-add-customer.json", key)
		if again.Body != res.Body {
			t.Fatalf("idempotent replay differs:\n%s\n%s", res.Body, again.Body)
		}
	})
	t.Run("GetPathValue", func(t *testing.T) {
		res, body := invoke(t, srv, "get-customer", "apigw-v2-get-customer.json", key)
		if res.StatusCode != 200 {
			t.Fatalf("%d %s", res.StatusCode, res.Body)
		}
		if c := body["data"].(map[string]any)["customers"].(map[string]any); c["name"] != "Ama Mensah" {
			t.Fatalf("customer %v", c)
		}
	})
	t.Run("QueryWithSpacesAndColons", func(t *testing.T) {
		res, body := invoke(t, srv, "list-customers", "apigw-v2-list-customers.json", key)
		if res.StatusCode != 200 || body["message"] != "Customers found: 1" {
			t.Fatalf("%d %s", res.StatusCode, res.Body)
		}
	})
	t.Run("Unauthorized", func(t *testing.T) {
		res, body := invoke(t, srv, "get-customer", "apigw-v2-get-customer.json", "bk_live_wrong")
		if res.StatusCode != 401 || body["error"] != "Unauthorized: Invalid API Key" {
			t.Fatalf("%d %s", res.StatusCode, res.Body)
		}
	})
	t.Run("OtherRouteIsNotServed", func(t *testing.T) {
		// get-customer's function holds only its own route.
		res, _ := invoke(t, srv, "get-customer", "apigw-v2-list-customers.json", key)
		if res.StatusCode != 404 {
			t.Fatalf("%d %s", res.StatusCode, res.Body)
		}
	})
}

// event is an API Gateway HTTP API (payload v2) event for method and target
// with the given headers, as API Gateway sends it: header names in lower
// case, each header's values joined by commas in one string.
func event(method, target, body string, headers map[string]string) events.APIGatewayV2HTTPRequest {
	path, query, _ := strings.Cut(target, "?")
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "$default", RawPath: path, RawQueryString: query, Headers: headers, Body: body,
		RequestContext: events.APIGatewayV2HTTPRequestContext{Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path}},
	}
	return ev
}

func TestLambdaDefaultRoute(t *testing.T) {
	st, _ := testdb.NewStore(t)
	srv := api.NewServer(st, testdb.Quiet(), 0)
	h, err := lambdas.FunctionHandler(srv, api.DefaultFunction)
	if err != nil {
		t.Fatal(err)
	}
	fn := app.LambdaHandler(h)
	for _, c := range []struct {
		method, path string
		status       int
		msg, allow   string
	}{
		{"GET", "/api/v1/nowhere", 404, "Route not found", ""},
		{"GET", "/", 404, "Route not found", ""},
		{"DELETE", "/api/v1/sales/123456", 405, "Method not allowed", "GET"},
		{"POST", "/api/v1/customers/1", 405, "Method not allowed", "GET, PUT"},
	} {
		res, err := fn(context.Background(), event(c.method, c.path, "", map[string]string{}))
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		_ = json.Unmarshal([]byte(res.Body), &body)
		if res.StatusCode != c.status || body["error"] != c.msg || res.Headers["Allow"] != c.allow || res.Headers["Content-Type"] != "application/json" {
			t.Errorf("%s %s: %d %v %s", c.method, c.path, res.StatusCode, res.Headers, res.Body)
		}
	}
}

// TestLambdaHeadersArriveWhole sends headers holding commas through the
// Lambda path: httpadapter alone would split them into several values.
func TestLambdaHeadersArriveWhole(t *testing.T) {
	st, _ := testdb.NewStore(t)
	srv := api.NewServer(st, testdb.Quiet(), 0)
	_, key := testdb.NewAccount(t, st, "Lambda Shop", "LAMBDA")
	call := func(name, method, target, body string, headers map[string]string) (int, string) {
		t.Helper()
		h, err := lambdas.FunctionHandler(srv, name)
		if err != nil {
			t.Fatal(err)
		}
		headers["authorization"] = "Bearer " + key
		headers["content-type"] = "application/json"
		res, err := app.LambdaHandler(h)(context.Background(), event(method, target, body, headers))
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, res.Body
	}
	// One key with a comma would arrive as two keys "a" and "b": refused on
	// every path, naming the header.
	if code, body := call("add-customer", "POST", "/api/v1/customers/add", `{"name":"Ama"}`, map[string]string{"idempotency-key": "a,b"}); code != 400 || !strings.Contains(body, "Idempotency-Key") {
		t.Fatalf("%d %s", code, body)
	}
	if code, body := call("add-customer", "POST", "/api/v1/customers/add", `{"name":"Ama"}`, map[string]string{"idempotency-key": "k-1"}); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	// An If-Match list whose second entry is the current version matches.
	if code, body := call("edit-customer", "PUT", "/api/v1/customers/1", `{"phone":"1"}`, map[string]string{"if-match": `"v7", "v1"`}); code != 200 {
		t.Fatalf("If-Match list: %d %s", code, body)
	}
	if code, body := call("edit-customer", "PUT", "/api/v1/customers/1", `{"phone":"2"}`, map[string]string{"if-match": `"v7", "v9"`}); code != 412 {
		t.Fatalf("If-Match list without the version: %d %s", code, body)
	}
}

// TestLambdaSettingsRoutes runs the six self-service routes through their
// functions as API Gateway invokes them.
func TestLambdaSettingsRoutes(t *testing.T) {
	st, _ := testdb.NewStore(t)
	srv := api.NewServer(st, testdb.Quiet(), 0)
	a, key := testdb.NewAccount(t, st, "Lambda Shop", "LAMBDA")
	now := time.Now().UTC()
	if _, err := st.CreateDelivery(context.Background(), business.Delivery{AccountID: a.ID, TransactionID: "txn_l1", WebhookID: "msg_txn_l1",
		Payload: []byte(`{"amount":"1.00"}`), State: business.DeliveryFailed, NextAt: now, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		function, method, target, body string
		status                         int
		message                        string
	}{
		{"get-webhook-settings", "GET", "/api/v1/user/webhook", "", 200, "Webhook settings found"},
		{"update-webhook-settings", "PUT", "/api/v1/user/webhook", `{"callback_url":"https://hooks.example.com/x","callback_secret":"lambda-secret-0123456"}`, 200, "Webhook settings updated"},
		{"update-webhook-settings", "PUT", "/api/v1/user/webhook", `{"callback_url":"http://10.1.2.3/x"}`, 400, ""},
		{"list-webhook-deliveries", "GET", "/api/v1/user/webhook/deliveries?state=failed", "", 200, "Deliveries found: 1"},
		{"redeliver-webhook", "POST", "/api/v1/user/webhook/deliveries/txn_l1/redeliver", "", 200, "Delivery queued"},
		{"redeliver-webhook", "POST", "/api/v1/user/webhook/deliveries/txn_l1/redeliver", "{}", 409, ""},
		{"test-webhook", "POST", "/api/v1/user/webhook/test", `{"x":1}`, 400, ""},
		{"rotate-api-key", "POST", "/api/v1/user/api-key/rotate", "", 200, "API key rotated"},
		{"get-webhook-settings", "GET", "/api/v1/user/webhook", "", 401, ""}, // the rotated key
	} {
		h, err := lambdas.FunctionHandler(srv, c.function)
		if err != nil {
			t.Fatal(err)
		}
		headers := map[string]string{"authorization": "Bearer " + key}
		if c.body != "" {
			headers["content-type"] = "application/json"
		}
		res, err := app.LambdaHandler(h)(context.Background(), event(c.method, c.target, c.body, headers))
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		_ = json.Unmarshal([]byte(res.Body), &body)
		if res.StatusCode != c.status || (c.message != "" && body["message"] != c.message) {
			t.Fatalf("%s %s: %d %s", c.method, c.target, res.StatusCode, res.Body)
		}
	}
}
