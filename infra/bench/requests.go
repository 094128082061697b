package main

// Requests to the API as the steps make them: through the devserver's
// handler, or through a route's Lambda function as API Gateway delivers it.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	"bizdata/shared/api"
	"bizdata/shared/app/lambdas"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// apiRequest is a request to the API's handler with key (none when "") and
// body as JSON (none when nil).
func apiRequest(method, target, key string, body []byte) *http.Request {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// serveRequest serves req through h and returns what h answered.
func serveRequest(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// jsonBody is body as JSON, nil for none.
func jsonBody(body any) []byte {
	if body == nil {
		return nil
	}
	j, _ := json.Marshal(body)
	return j
}

// request serves one request through the devserver's handler (all routes)
// with the bench's key.
func (b *bench) request(method, path string, body any) (int, map[string]any, error) {
	rec := serveRequest(b.allRoutes(), apiRequest(method, path, b.key, jsonBody(body)))
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		return rec.Code, nil, fmt.Errorf("%s %s: %s", method, path, rec.Body.String())
	}
	if rec.Code != 200 {
		return rec.Code, out, fmt.Errorf("%s %s: %d %s", method, path, rec.Code, rec.Body.String())
	}
	return rec.Code, out, nil
}

// post is request's POST, for the load's helpers.
func (b *bench) post(path string, body any) error {
	_, _, err := b.request("POST", path, body)
	return err
}

var (
	allRoutesOnce sync.Once
	allRoutes     http.Handler
)

// allRoutes is the devserver's handler of the bench's server.
func (b *bench) allRoutes() http.Handler {
	allRoutesOnce.Do(func() { allRoutes = b.srv.Handler(api.Routes) })
	return allRoutes
}

// serve sends one request through h with the bench's key and returns the
// response body; anything but a 200 is an error.
func (b *bench) serve(h http.Handler, method, target string, body any) (string, error) {
	rec := serveRequest(h, apiRequest(method, target, b.key, jsonBody(body)))
	if rec.Code != http.StatusOK {
		return "", fmt.Errorf("%s %s: %d %s", method, target, rec.Code, rec.Body.String())
	}
	return rec.Body.String(), nil
}

// gatewayEvent is a request as API Gateway's HTTP API (v2) hands it to a
// route's function.
func gatewayEvent(method, path, query string) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RawPath: path, RawQueryString: query, Headers: map[string]string{},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			DomainName: "bench.execute-api.local", Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path},
		},
	}
}

// invoke serves one request through the Lambda function of the route, as API
// Gateway would deliver it: an HTTP API v2 event through httpadapter.
func (b *bench) invoke(function, method, rawPath, rawQuery string, body any) (events.APIGatewayV2HTTPResponse, error) {
	return b.invokeWith(function, method, rawPath, rawQuery, body, nil)
}

// invokeWith is invoke with further request headers.
func (b *bench) invokeWith(function, method, rawPath, rawQuery string, body any, headers map[string]string) (events.APIGatewayV2HTTPResponse, error) {
	h, err := lambdas.FunctionHandler(b.srv, function)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	ev := gatewayEvent(method, rawPath, rawQuery)
	ev.Headers["authorization"] = "Bearer " + b.key
	for k, v := range headers {
		ev.Headers[k] = v
	}
	if body != nil {
		ev.Body = string(jsonBody(body))
		ev.Headers["content-type"] = "application/json"
	}
	res, err := adapters.get(function, h).ProxyWithContext(context.Background(), ev)
	if err == nil && res.StatusCode != 200 {
		err = fmt.Errorf("%s %s?%s: %d %s", method, rawPath, rawQuery, res.StatusCode, res.Body)
	}
	return res, err
}

// adapterCache builds each function's adapter once, as a warm Lambda would.
type adapterCache struct {
	mu sync.Mutex
	m  map[string]*httpadapter.HandlerAdapterV2
}

// adapters are the bench's server's functions' adapters.
var adapters adapterCache

// get returns the adapter of function name, made of h the first time.
func (c *adapterCache) get(name string, h http.Handler) *httpadapter.HandlerAdapterV2 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.m[name]; ok {
		return a
	}
	if c.m == nil {
		c.m = map[string]*httpadapter.HandlerAdapterV2{}
	}
	a := httpadapter.NewV2(h)
	c.m[name] = a
	return a
}

type statusError int

func (e statusError) Error() string { return fmt.Sprintf("status %d", int(e)) }

// sendOverHTTP sends one request with key (and body as JSON, when not nil)
// and returns a statusError for anything but 200.
func sendOverHTTP(client *http.Client, method, url, key string, body any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(jsonBody(body))
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		return statusError(res.StatusCode)
	}
	return nil
}

// answerField returns data.<obj>.<name> of an API answer as a string ("" if
// absent).
func answerField(body []byte, obj, name string) string {
	var env struct {
		Data map[string]map[string]any `json:"data"`
	}
	if json.Unmarshal(body, &env) != nil {
		return ""
	}
	s, _ := env.Data[obj][name].(string)
	return s
}
