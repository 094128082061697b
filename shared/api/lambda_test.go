package api_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/aws/aws-lambda-go/events"
)

// lambdaCaller sends requests as API Gateway would: it picks the route the
// HTTP API would match, builds the payload v2 event and invokes that route's
// function handler (the one lambda.Start runs); what no route matches goes to
// the $default route's function.
type lambdaCaller struct {
	t      testing.TB
	routes *http.ServeMux // pattern -> the function's name in a header
	fns    map[string]func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
}

func newLambdaCaller(t testing.TB, e *env) *lambdaCaller { return newLambdaCallerTTL(t, e.store, 0) }

// newLambdaCallerTTL is newLambdaCaller over st, its functions keeping keys
// for keyTTL as warm functions do.
func newLambdaCallerTTL(t testing.TB, st *store.Store, keyTTL time.Duration) *lambdaCaller {
	srv := api.NewServer(st, testdb.Quiet(), keyTTL)
	c := newEmptyLambdaCaller(t)
	for _, rt := range api.Routes {
		h, err := lambdas.FunctionHandler(srv, rt.Function)
		if err != nil {
			t.Fatal(err)
		}
		c.serve(rt.Function, rt.Method, rt.Path, h)
	}
	c.fns[api.DefaultFunction] = app.LambdaHandler(srv.FallbackHandler())
	return c
}

// newEmptyLambdaCaller is a lambdaCaller of no route yet.
func newEmptyLambdaCaller(t testing.TB) *lambdaCaller {
	return &lambdaCaller{t: t, routes: http.NewServeMux(), fns: map[string]func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error){}}
}

// serve has the function name, whose handler is h, serve the route of
// method and path.
func (c *lambdaCaller) serve(name, method, path string, h http.Handler) {
	c.routes.HandleFunc(method+" "+path, func(w http.ResponseWriter, _ *http.Request) { w.Header().Set("Function", name) })
	c.fns[name] = app.LambdaHandler(h)
}

// function returns the function API Gateway would invoke for method and path.
func (c *lambdaCaller) function(method, path string) string {
	r := httptest.NewRequest(method, "http://api.example"+path, nil)
	w := httptest.NewRecorder()
	if _, pattern := c.routes.Handler(r); pattern == "" {
		return api.DefaultFunction
	}
	c.routes.ServeHTTP(w, r)
	if name := w.Header().Get("Function"); name != "" {
		return name
	}
	return api.DefaultFunction
}

func (c *lambdaCaller) call(method, target, key string, body []byte, headers map[string]string) (int, http.Header, []byte) {
	u, err := url.Parse(target)
	if err != nil {
		c.t.Fatal(err)
	}
	h := map[string]string{}
	if body != nil {
		h["content-type"] = "application/json"
	}
	if key != "" {
		h["authorization"] = "Bearer " + key
	}
	for k, v := range headers {
		h[strings.ToLower(k)] = v
	}
	ev := events.APIGatewayV2HTTPRequest{
		// An HTTP API hands the path over decoded (rawPath as path).
		Version: "2.0", RouteKey: "$default", RawPath: u.Path, RawQueryString: u.RawQuery, Headers: h,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			Stage: "$default", RequestID: "test-request", DomainName: "api.example",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: u.Path, Protocol: "HTTP/1.1", SourceIP: "192.0.2.1"},
		},
	}
	if body != nil {
		ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
	}
	res, err := c.fns[c.function(method, u.Path)](context.Background(), ev)
	if err != nil {
		c.t.Fatalf("%s %s: Lambda error %v", method, target, err)
	}
	out := http.Header{}
	for k, v := range res.Headers {
		out.Set(k, v)
	}
	for k, vs := range res.MultiValueHeaders {
		for _, v := range vs {
			out.Add(k, v)
		}
	}
	raw := []byte(res.Body)
	if res.IsBase64Encoded {
		if raw, err = base64.StdEncoding.DecodeString(res.Body); err != nil {
			c.t.Fatal(err)
		}
	}
	return res.StatusCode, out, raw
}
