package lambdas_test

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"bizdata/shared/api"
	"bizdata/shared/business"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// openAPIOperation is what the checks read of an operation of
// docs/openapi.yaml.
type openAPIOperation struct {
	OperationID string `yaml:"operationId"`
	Parameters  []any  `yaml:"parameters"`
	// Security lists the bearer scheme with the scope the operation needs:
	// [{apiKey: ["sales:write"]}], or [{apiKey: []}] for any valid key.
	Security []map[string][]string `yaml:"security"`
	// KeyMode is "live" or "test" on an operation that takes keys of that
	// mode only; absent, any key.
	KeyMode   string         `yaml:"x-key-mode"`
	Responses map[string]any `yaml:"responses"`
}

func readOpenAPI(t *testing.T) (paths map[string]map[string]openAPIOperation, scopes []string) {
	t.Helper()
	b, err := os.ReadFile("../../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Paths      map[string]map[string]openAPIOperation `yaml:"paths"`
		Components struct {
			Schemas struct {
				Scope struct {
					Enum []string `yaml:"enum"`
				} `yaml:"Scope"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	return spec.Paths, spec.Components.Schemas.Scope.Enum
}

// declaredScope is the scope op's security requirement names: "none" for an
// empty list (any valid key), or, in parentheses, why it names none.
func (op openAPIOperation) declaredScope() string {
	if len(op.Security) != 1 {
		return fmt.Sprintf("(nothing: %d security requirements, want one such as [{apiKey: [sales:read]}])", len(op.Security))
	}
	scopes, ok := op.Security[0]["apiKey"]
	switch {
	case !ok || len(op.Security[0]) != 1:
		return "(nothing: the requirement names a scheme other than apiKey)"
	case len(scopes) == 0:
		return "none"
	case len(scopes) > 1:
		return "(" + strings.Join(scopes, " and ") + ": a route needs one scope)"
	}
	return scopes[0]
}

func (op openAPIOperation) declaredMode() string {
	if op.KeyMode == "" {
		return "any"
	}
	return op.KeyMode
}

// TestOpenAPIMatchesRouteTable fails when docs/openapi.yaml and the route
// table differ in any path, method, operation (the function name), scope
// (the operation's security requirement against Route.Scope) or key mode
// (x-key-mode against Route.Mode), or when an operation declares no scope.
func TestOpenAPIMatchesRouteTable(t *testing.T) {
	paths, _ := readOpenAPI(t)
	var inSpec, inRoutes []string
	for path, ops := range paths {
		for method, op := range ops {
			inSpec = append(inSpec, strings.ToUpper(method)+" "+path+" "+op.OperationID)
		}
	}
	for _, rt := range api.Routes {
		inRoutes = append(inRoutes, rt.Method+" "+rt.Path+" "+rt.Function)
	}
	sort.Strings(inSpec)
	sort.Strings(inRoutes)
	if d := cmp.Diff(inRoutes, inSpec); d != "" {
		t.Errorf("docs/openapi.yaml and the route table differ (-routes +spec):\n%s", d)
	}
	for _, rt := range api.Routes {
		op, ok := paths[rt.Path][strings.ToLower(rt.Method)]
		if !ok {
			continue // the diff above names it
		}
		if got := op.declaredScope(); got != rt.Scope {
			t.Errorf("%s (%s %s): docs/openapi.yaml declares scope %s, the route table %s", rt.Function, rt.Method, rt.Path, got, rt.Scope)
		}
		if got := op.declaredMode(); got != rt.Mode.String() {
			t.Errorf("%s (%s %s): docs/openapi.yaml declares x-key-mode %s, the route table %s", rt.Function, rt.Method, rt.Path, got, rt.Mode)
		}
	}
}

// TestRouteScopes fails when a route of the route table names no scope or
// one that is not a key's, and when the scopes the OpenAPI document lists
// (components.schemas.Scope) are not business.Scopes.
func TestRouteScopes(t *testing.T) {
	for _, rt := range api.Routes {
		if rt.Scope != "none" && !slices.Contains(business.Scopes, rt.Scope) {
			t.Errorf("route %s: scope %q is neither \"none\" nor one of business.Scopes %v", rt.Function, rt.Scope, business.Scopes)
		}
	}
	_, scopes := readOpenAPI(t)
	if d := cmp.Diff(business.Scopes, scopes); d != "" {
		t.Errorf("docs/openapi.yaml's Scope enum is not business.Scopes (-code +spec):\n%s", d)
	}
}

// TestOpenAPIForbidden fails when an operation a key can be refused (it
// needs a scope or a mode) lists no 403 answer.
func TestOpenAPIForbidden(t *testing.T) {
	paths, _ := readOpenAPI(t)
	for path, ops := range paths {
		for method, op := range ops {
			if op.declaredScope() == "none" && op.declaredMode() == "any" {
				continue
			}
			if _, ok := op.Responses["403"]; !ok {
				t.Errorf("%s %s (%s): needs scope %s, mode %s, but lists no 403", strings.ToUpper(method), path, op.OperationID, op.declaredScope(), op.declaredMode())
			}
		}
	}
}
