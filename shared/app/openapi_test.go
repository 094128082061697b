package app_test

import (
	"os"
	"sort"
	"strings"
	"testing"

	"bizdata/shared/api"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// TestOpenAPIMatchesRouteTable fails when docs/openapi.yaml and the route
// table differ in any path, method or operation (the function name).
func TestOpenAPIMatchesRouteTable(t *testing.T) {
	b, err := os.ReadFile("../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Paths map[string]map[string]struct {
			OperationID string `yaml:"operationId"`
			Parameters  []any  `yaml:"parameters"`
		} `yaml:"paths"`
	}
	if err := yaml.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	var inSpec, inRoutes []string
	for path, ops := range spec.Paths {
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
}
