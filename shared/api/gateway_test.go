package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// TestGatewayEdges holds what running every function under AWS's Lambda
// Runtime Interface Emulator, behind payload 2.0 events, answered differently
// from the devserver. Each case goes to the local server over HTTP and, as API
// Gateway hands it over, to the function API Gateway would invoke; both must
// answer alike, with the API's envelope, and no function may return an error
// (API Gateway would answer its own 500).
func TestGatewayEdges(t *testing.T) {
	e := newEnv(t)
	lc := newLambdaCaller(t, e)
	invoke := func(t *testing.T, function, method, rawPath string, headers map[string]string, body string, base64Body bool) (int, http.Header, map[string]any) {
		t.Helper()
		ev := events.APIGatewayV2HTTPRequest{
			Version: "2.0", RouteKey: "$default", RawPath: rawPath, Headers: headers, Body: body, IsBase64Encoded: base64Body,
			RequestContext: events.APIGatewayV2HTTPRequestContext{Stage: "$default", RequestID: "edge",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: rawPath, Protocol: "HTTP/1.1", SourceIP: "192.0.2.1"}},
		}
		res, err := lc.fns[function](context.Background(), ev)
		if err != nil {
			t.Fatalf("%s %q: the function returned an error (API Gateway answers 500): %v", method, rawPath, err)
		}
		h := http.Header{}
		for k, v := range res.Headers {
			h.Set(k, v)
		}
		var env map[string]any
		if err := json.Unmarshal([]byte(res.Body), &env); err != nil {
			t.Fatalf("%s %q: body is not the envelope: %q", method, rawPath, res.Body)
		}
		return res.StatusCode, h, env
	}
	bearer := map[string]string{"authorization": "Bearer " + e.key}

	// An HTTP API hands the path over decoded: "%25" as "%", "%00" as NUL.
	// The route still matches (get-item) and answers its own 404; a path
	// escaped twice is decoded once, as on the devserver, and names no item
	// (RICE%2D5 is not RICE-5).
	if r := e.req("POST", "/api/v1/inventory/categories/add", e.key, map[string]any{"category_name": "Grains"}); r.code != 200 {
		t.Fatalf("add category: %d %s", r.code, r.raw)
	}
	if r := e.req("POST", "/api/v1/inventory/items/add", e.key, map[string]any{"item_code": "RICE-5", "item_name": "Rice", "category_id": 1, "item_price": 1}); r.code != 200 {
		t.Fatalf("add item: %d %s", r.code, r.raw)
	}
	for _, c := range []struct{ sent, decoded string }{
		{"/api/v1/inventory/items/%25", "/api/v1/inventory/items/%"},
		{"/api/v1/inventory/items/%00", "/api/v1/inventory/items/\x00"},
		{"/api/v1/inventory/items/a%3Fb%23c", "/api/v1/inventory/items/a?b#c"},
		{"/api/v1/inventory/items/RICE%252D5", "/api/v1/inventory/items/RICE%2D5"},
	} {
		t.Run("DecodedPath"+c.sent[len("/api/v1/inventory/items/"):], func(t *testing.T) {
			local := e.req("GET", c.sent, e.key, nil)
			code, _, env := invoke(t, "get-item", "GET", c.decoded, bearer, "", false)
			if local.code != 404 || code != local.code || env["error"] != local.body["error"] {
				t.Fatalf("devserver %d %v; Lambda %d %v", local.code, local.body, code, env)
			}
		})
	}

	// HEAD matches no route on the HTTP API (the template routes GET only):
	// $default answers 405 with Allow, and so does the devserver.
	t.Run("HeadOnGetRoute", func(t *testing.T) {
		r, _ := http.NewRequest("HEAD", e.srv.URL+"/api/v1/sales", nil)
		r.Header.Set("Authorization", "Bearer "+e.key)
		local, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		local.Body.Close()
		code, h, env := invoke(t, lc.function("HEAD", "/api/v1/sales"), "HEAD", "/api/v1/sales", bearer, "", false)
		if local.StatusCode != 405 || local.Header.Get("Allow") != "GET" || code != 405 || h.Get("Allow") != "GET" || env["error"] != "Method not allowed" {
			t.Fatalf("devserver %d Allow %q; Lambda %d %v %v", local.StatusCode, local.Header.Get("Allow"), code, h, env)
		}
	})

	// A header sent twice reaches a function once, its values joined by a
	// comma: two Authorization headers are no bearer token.
	t.Run("AuthorizationTwice", func(t *testing.T) {
		r, _ := http.NewRequest("GET", e.srv.URL+"/api/v1/user/authenticate", nil)
		r.Header.Add("Authorization", "Bearer "+e.key)
		r.Header.Add("Authorization", "Bearer "+e.key)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		var local map[string]any
		_ = json.NewDecoder(res.Body).Decode(&local)
		res.Body.Close()
		code, _, env := invoke(t, "authenticate", "GET", "/api/v1/user/authenticate",
			map[string]string{"authorization": "Bearer " + e.key + ",Bearer " + e.key}, "", false)
		if res.StatusCode != 401 || code != 401 || env["error"] != local["error"] || env["error"] != "Unauthorized: Missing Bearer Token" {
			t.Fatalf("devserver %d %v; Lambda %d %v", res.StatusCode, local, code, env)
		}
	})

	// A body API Gateway marks base64 that is not: 400, not a function error.
	t.Run("BodyNotBase64", func(t *testing.T) {
		code, _, env := invoke(t, "add-customer", "POST", "/api/v1/customers/add",
			map[string]string{"authorization": "Bearer " + e.key, "content-type": "application/json"}, "{not base64", true)
		if code != 400 || env["error"] == nil {
			t.Fatalf("%d %v", code, env)
		}
	})
}
