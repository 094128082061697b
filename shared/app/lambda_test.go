package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"bizdata/shared/api"
	"bizdata/shared/app"
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
	h, err := app.FunctionHandler(srv, name)
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
	srv := api.NewServer(st, slog.New(slog.NewJSONHandler(io.Discard, nil)), 0)
	a, _ := business.NewAccount("Lambda Shop", "LAMBDA", "GHS", "")
	a, key, err := st.CreateAccount(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
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
