package lambdas_test

import (
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"

	"bizdata/shared/app/lambdas"
	"bizdata/shared/dashboard"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// dashboardFunctions are the dashboard's Lambda functions, each serving its
// share of dashboard.Routes.
var dashboardFunctions = []string{dashboard.FunctionAssets, dashboard.FunctionAuth, dashboard.FunctionPages, dashboard.FunctionActions}

// dashboardFallback is the routes that send every other request on
// /dashboard and under it to the pages function (any method: an HTTP API's
// route takes its own method only, HEAD not for GET), so an unknown path or
// method gets the dashboard's own answer rather than the API's JSON one.
var dashboardFallback = []string{"ANY /dashboard", "ANY /dashboard/{proxy+}"}

// dashboardGatewayRoutes is the template's routes of dashboard function fn:
// its share of dashboard.Routes, HEAD with each of its GET routes unless
// the pages function's fallback takes that HEAD to the function serving
// it, and the fallback for the pages function.
func dashboardGatewayRoutes(fn string) []string {
	var out []string
	for _, rt := range dashboard.RoutesOf(fn) {
		out = append(out, rt.Method+" "+rt.Path)
		if rt.Method == "GET" && fn != dashboard.FunctionPages {
			out = append(out, "HEAD "+rt.Path)
		}
	}
	if fn == dashboard.FunctionPages {
		out = append(out, dashboardFallback...)
	}
	return out
}

// isDashboardFunction reports whether the template's resource id is one of
// the dashboard's functions.
func isDashboardFunction(id string) bool {
	return slices.ContainsFunc(dashboardFunctions, func(f string) bool { return logicalID(f) == id })
}

// TestDashboardTemplateMatchesRoutes: each dashboard function of
// template.yaml has one HttpApi event per route of its share of
// dashboard.Routes (with HEAD, and the pages function the fallback: see
// dashboardGatewayRoutes), is built by the
// makefile builder from its own folder, whose main starts it; no other
// function serves a dashboard path.
func TestDashboardTemplateMatchesRoutes(t *testing.T) {
	tpl := loadTemplate(t)
	for _, fn := range dashboardFunctions {
		id := logicalID(fn)
		r, ok := tpl.Resources[id]
		if !ok {
			t.Errorf("template.yaml has no %s", id)
			continue
		}
		if r.Metadata["BuildMethod"] != "makefile" {
			t.Errorf("%s: BuildMethod %v, want makefile", id, r.Metadata["BuildMethod"])
		}
		var inTemplate, inRoutes []string
		events, _ := r.Properties["Events"].(map[string]any)
		for name, ev := range events {
			ev := ev.(map[string]any)
			p, _ := ev["Properties"].(map[string]any)
			if ev["Type"] != "HttpApi" || p["Path"] == nil || p["ApiId"] == nil {
				t.Errorf("%s: event %s is no HttpApi route of the API: %v", id, name, ev)
				continue
			}
			inTemplate = append(inTemplate, p["Method"].(string)+" "+p["Path"].(string))
		}
		inRoutes = dashboardGatewayRoutes(fn)
		sort.Strings(inTemplate)
		sort.Strings(inRoutes)
		if d := cmp.Diff(inRoutes, inTemplate); d != "" {
			t.Errorf("%s: template.yaml and dashboard.RoutesOf(%q) differ (-routes +template):\n%s", id, fn, d)
		}
		src, err := os.ReadFile("../../../functions/" + fn + "/main.go")
		if err != nil || !strings.Contains(string(src), `lambdas.RunDashboardFunction("`+fn+`")`) {
			t.Errorf("functions/%s/main.go does not start lambdas.RunDashboardFunction(%q) (%v)", fn, fn, err)
		}
		out, err := exec.Command("make", "-s", "-n", "-C", "../../..", "build-"+id, "ARTIFACTS_DIR=/tmp/x").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "./functions/"+fn+"\n") {
			t.Errorf("make build-%s does not build ./functions/%s (%v):\n%s", id, fn, err, out)
		}
	}
	for _, rt := range dashboard.Routes {
		if !slices.Contains(dashboardFunctions, rt.Function) {
			t.Errorf("route %s %s: function %q is none of the template's dashboard functions", rt.Method, rt.Path, rt.Function)
		}
	}
	for id, r := range tpl.Resources {
		if r.Type != "AWS::Serverless::Function" || isDashboardFunction(id) {
			continue
		}
		events, _ := r.Properties["Events"].(map[string]any)
		for _, ev := range events {
			if p, _ := ev.(map[string]any)["Properties"].(map[string]any); strings.HasPrefix(mapString(p, "Path"), "/dashboard") {
				t.Errorf("%s serves %v, a dashboard path", id, p["Path"])
			}
		}
	}
}

// mapString is m[key] when it is a string, else "".
func mapString(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// TestDashboardSignUpParameter: the template's DashboardSignUp parameter
// (on or off, on by default) reaches every dashboard function as
// DASHBOARD_SIGNUP, which lambdas.DashboardSignUp reads the same way.
func TestDashboardSignUpParameter(t *testing.T) {
	b, err := os.ReadFile("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Parameters map[string]struct {
			Type          string   `yaml:"Type"`
			Default       string   `yaml:"Default"`
			AllowedValues []string `yaml:"AllowedValues"`
		} `yaml:"Parameters"`
	}
	if err := yaml.Unmarshal(b, &tpl); err != nil {
		t.Fatal(err)
	}
	p, ok := tpl.Parameters["DashboardSignUp"]
	if !ok || p.Type != "String" || p.Default != "on" || !slices.Equal(p.AllowedValues, []string{"on", "off"}) {
		t.Errorf("parameter DashboardSignUp %+v: want a String, AllowedValues [on off], Default on", p)
	}
	for _, fn := range dashboardFunctions {
		id := logicalID(fn)
		env, _ := mapOf(mapOf(loadTemplate(t).Resources[id].Properties["Environment"])["Variables"])["DASHBOARD_SIGNUP"].(string)
		if env != "DashboardSignUp" { // the YAML decoder drops the !Ref tag
			t.Errorf("%s: DASHBOARD_SIGNUP %q, want !Ref DashboardSignUp", id, env)
		}
	}
	for v, want := range map[string]bool{"": true, "on": true, "off": false} {
		t.Setenv("DASHBOARD_SIGNUP", v)
		if got := lambdas.DashboardSignUp(); got != want {
			t.Errorf("DASHBOARD_SIGNUP=%q: sign-up %v, want %v", v, got, want)
		}
	}
}

// TestDashboardAssetsHasNoTableAccess: the assets function serves embedded
// files and may do nothing with DynamoDB: it has no policy at all.
func TestDashboardAssetsHasNoTableAccess(t *testing.T) {
	id := logicalID(dashboard.FunctionAssets)
	if p := loadTemplate(t).Resources[id].Properties["Policies"]; p != nil {
		t.Errorf("%s has policies %v, want none", id, p)
	}
	if stmts := functionStatements(t)[id]; len(stmts) != 0 {
		t.Errorf("%s has policy statements %v, want none", id, stmts)
	}
}

// TestDashboardHandlerNames: lambdas.DashboardHandler serves the dashboard's
// four functions and refuses any other name (an API route's included).
func TestDashboardHandlerNames(t *testing.T) {
	board := dashboard.New(nil, nil, nil, dashboard.Config{})
	for _, fn := range dashboardFunctions {
		if _, err := lambdas.DashboardHandler(board, fn); err != nil {
			t.Errorf("%s: %v", fn, err)
		}
	}
	for _, fn := range []string{"list-sales", "dashboard", ""} {
		if _, err := lambdas.DashboardHandler(board, fn); err == nil {
			t.Errorf("%q: served, want an error", fn)
		}
	}
}
