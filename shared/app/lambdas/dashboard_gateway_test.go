package lambdas_test

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
	"bizdata/shared/dashboard"
	"bizdata/shared/hosted"
	"bizdata/shared/testdb"

	"github.com/aws/aws-lambda-go/events"
)

// gatewayRoute is one HttpApi route of template.yaml: its method (ANY for
// every method) and path, and the function it invokes.
type gatewayRoute struct{ method, path, function string }

// templateGatewayRoutes reads the HTTP API's routes from template.yaml,
// naming each function as functions/ does; the $default route is not
// among them.
func templateGatewayRoutes(t *testing.T) []gatewayRoute {
	t.Helper()
	names := map[string]string{logicalID(api.DefaultFunction): api.DefaultFunction}
	for _, rt := range api.Routes {
		names[logicalID(rt.Function)] = rt.Function
	}
	for _, fn := range dashboardFunctions {
		names[logicalID(fn)] = fn
	}
	for _, rt := range hosted.Routes {
		names[logicalID(rt.Function)] = rt.Function
	}
	var routes []gatewayRoute
	for id, r := range loadTemplate(t).Resources {
		evs, _ := r.Properties["Events"].(map[string]any)
		for _, ev := range evs {
			p, _ := ev.(map[string]any)["Properties"].(map[string]any)
			if ev.(map[string]any)["Type"] != "HttpApi" || mapString(p, "Path") == "" {
				continue
			}
			name, ok := names[id]
			if !ok {
				t.Fatalf("%s serves %s %s but is no function of the route tables", id, p["Method"], p["Path"])
			}
			routes = append(routes, gatewayRoute{strings.ToUpper(mapString(p, "Method")), mapString(p, "Path"), name})
		}
	}
	return routes
}

// gatewayFunction is the function an HTTP API invokes for method and path
// with routes, as API Gateway selects a route: a full match of the path
// before a greedy path variable ({proxy+}), and of either the route of the
// method before ANY (which takes every method the path has no route of;
// HEAD is a method of its own, which a GET route does not take), the most
// specific path first; what none matches goes to $default.
func gatewayFunction(routes []gatewayRoute, method, path string) string {
	segs := strings.Split(path, "/")
	// matches reports whether route path p matches, and how specifically
	// (its literal segments).
	matches := func(p string) (greedy bool, literal int, ok bool) {
		ps := strings.Split(p, "/")
		for i, s := range ps {
			if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "+}") {
				return true, literal, i == len(ps)-1 && len(segs) > i
			}
			if i >= len(segs) {
				return false, 0, false
			}
			if !strings.HasPrefix(s, "{") {
				if s != segs[i] {
					return false, 0, false
				}
				literal++
			} else if segs[i] == "" {
				return false, 0, false
			}
		}
		return false, literal, len(ps) == len(segs)
	}
	for _, greedyTier := range []bool{false, true} {
		for _, m := range []string{method, "ANY"} {
			best, bestLiteral := "", -1
			for _, rt := range routes {
				greedy, literal, ok := matches(rt.path)
				if ok && greedy == greedyTier && rt.method == m && literal > bestLiteral {
					best, bestLiteral = rt.function, literal
				}
			}
			if best != "" {
				return best
			}
		}
	}
	return api.DefaultFunction
}

// dashboardHeaders are the headers every dashboard answer carries, and
// those that say what the answer is; both paths must send them alike.
var dashboardHeaders = []string{"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options", "Referrer-Policy",
	"Cross-Origin-Opener-Policy", "Content-Type", "Allow", "Location", "Cache-Control"}

var htmlTitle = regexp.MustCompile(`<title>[^<]*</title>`)

// TestGatewayEdgesDashboard is TestGatewayEdges (shared/api) for the
// dashboard: each request goes to the devserver over HTTP and, routed by
// template.yaml's own HttpApi routes as API Gateway selects them, to the
// function it would reach on AWS. No request under /dashboard may reach the
// API's $default route (its JSON 404 carries none of the dashboard's
// security headers), and both must answer alike: status, the dashboard's
// headers and, but for HEAD, the page.
func TestGatewayEdgesDashboard(t *testing.T) {
	st, _ := testdb.NewStore(t)
	log := testdb.Quiet()
	srv := api.NewServer(st, log, 0)

	// The devserver: /dashboard and everything under it to the dashboard,
	// the rest to the API (infra/devserver's withDashboard).
	localBoard := dashboard.New(st, srv, log, dashboard.Config{PlainHTTP: true, SignUp: true}).Handler(dashboard.Routes)
	localAPI := srv.Handler(api.Routes)
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/dashboard" || strings.HasPrefix(r.URL.Path, "/dashboard/") {
			localBoard.ServeHTTP(w, r)
			return
		}
		localAPI.ServeHTTP(w, r)
	}))
	t.Cleanup(local.Close)

	// The functions, each as its main starts it.
	board := dashboard.New(st, srv, log, dashboard.Config{SignUp: true})
	fns := map[string]func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error){}
	for _, fn := range dashboardFunctions {
		h, err := lambdas.DashboardHandler(board, fn)
		if err != nil {
			t.Fatal(err)
		}
		fns[fn] = app.LambdaHandler(h)
	}
	h, err := lambdas.FunctionHandler(srv, api.DefaultFunction)
	if err != nil {
		t.Fatal(err)
	}
	fns[api.DefaultFunction] = app.LambdaHandler(h)
	routes := templateGatewayRoutes(t)

	for _, c := range []struct{ method, path string }{
		{"HEAD", "/dashboard/sign-in"},
		{"PUT", "/dashboard/sign-in"},
		{"GET", "/dashboard/nope"},
		{"PUT", "/dashboard"},
		{"DELETE", "/dashboard"},
		{"OPTIONS", "/dashboard"},
		{"HEAD", "/dashboard"},
		{"HEAD", "/dashboard/sign-up"},
		{"HEAD", "/dashboard/sales"},
		{"HEAD", "/dashboard/assets/app.css"},
		{"HEAD", "/dashboard/nope"},
		{"POST", "/dashboard/nope"},
		{"PATCH", "/dashboard/settings"},
		{"DELETE", "/dashboard/sales/100001/payments"},
	} {
		t.Run(c.method+strings.ReplaceAll(c.path, "/", "_"), func(t *testing.T) {
			req, _ := http.NewRequest(c.method, local.URL+c.path, nil)
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			localBody, _ := io.ReadAll(res.Body)
			res.Body.Close()

			fn := gatewayFunction(routes, c.method, c.path)
			if !slices.Contains(dashboardFunctions, fn) {
				t.Errorf("API Gateway invokes %s, no dashboard function", fn)
			}
			out, err := fns[fn](context.Background(), events.APIGatewayV2HTTPRequest{
				Version: "2.0", RouteKey: c.method + " " + c.path, RawPath: c.path, Headers: map[string]string{"host": "dash.example"},
				RequestContext: events.APIGatewayV2HTTPRequestContext{Stage: "$default", RequestID: "edge", DomainName: "dash.example",
					HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: c.method, Path: c.path, Protocol: "HTTP/1.1", SourceIP: "192.0.2.1"}},
			})
			if err != nil {
				t.Fatalf("%s returned an error (API Gateway answers 500): %v", fn, err)
			}
			got := http.Header{}
			for k, v := range out.Headers {
				got.Set(k, v)
			}
			for k, vs := range out.MultiValueHeaders {
				got[http.CanonicalHeaderKey(k)] = vs
			}
			body := []byte(out.Body)
			if out.IsBase64Encoded {
				body, _ = base64.StdEncoding.DecodeString(out.Body)
			}

			if out.StatusCode != res.StatusCode {
				t.Errorf("status: devserver %d, Lambda (%s) %d %.200s", res.StatusCode, fn, out.StatusCode, body)
			}
			if res.Header.Get("Content-Security-Policy") == "" {
				t.Errorf("the devserver's answer has no Content-Security-Policy: %v", res.Header)
			}
			for _, k := range dashboardHeaders {
				if a, b := strings.Join(res.Header.Values(k), ", "), strings.Join(got.Values(k), ", "); a != b {
					t.Errorf("%s: devserver %q, Lambda (%s) %q", k, a, fn, b)
				}
			}
			if c.method != "HEAD" {
				if a, b := htmlTitle.Find(localBody), htmlTitle.Find(body); string(a) != string(b) {
					t.Errorf("page: devserver %s, Lambda (%s) %s", a, fn, b)
				}
			}
		})
	}
}

// TestGatewayFunction: gatewayFunction takes each route of template.yaml
// (its path variables filled in) to that route's function, HEAD on a GET
// route of the API to $default, and an unrouted path to $default.
func TestGatewayFunction(t *testing.T) {
	routes := templateGatewayRoutes(t)
	vars := regexp.MustCompile(`\{[^}]*\}`)
	for _, rt := range routes {
		path := vars.ReplaceAllString(rt.path, "x1")
		method := rt.method
		if method == "ANY" {
			method = "PATCH"
		}
		if got := gatewayFunction(routes, method, path); got != rt.function {
			t.Errorf("%s %s (route %s %s): %s, want %s", method, path, rt.method, rt.path, got, rt.function)
		}
	}
	for _, c := range []struct{ method, path, want string }{
		{"HEAD", "/api/v1/sales", api.DefaultFunction},
		{"GET", "/api/v1/nowhere", api.DefaultFunction},
		{"GET", "/dashboard0", api.DefaultFunction},
		{"HEAD", "/dashboard/sign-in", dashboard.FunctionAuth},
		{"GET", "/dashboard/a/b/c", dashboard.FunctionPages},
	} {
		if got := gatewayFunction(routes, c.method, c.path); got != c.want {
			t.Errorf("%s %s: %s, want %s", c.method, c.path, got, c.want)
		}
	}
}
