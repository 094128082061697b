package main

import (
	"math"
	"os/exec"
	"strings"
	"testing"
)

// TestInitMeasured runs the init step's measure on three functions and the
// floor, built as the step builds them: each asks the local Runtime API for
// an event and is measured (a time and a peak RSS), and the table has the
// floor's row and sets each function against it, as a positive finite
// ratio. A function that cannot start is an error naming it, not a figure.
// (make bench measures every function: go run ./infra/bench -only init, or
// -init-functions for a few.)
func TestInitMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three functions")
	}
	t.Chdir("../..")
	names := []string{"route-not-found", "authenticate", "dashboard-assets"}
	dir := t.TempDir()
	if err := initBuild(dir, names...); err != nil {
		t.Fatal(err)
	}
	// No DynamoDB call is made before the first event, so no table is needed.
	env := []string{"TABLE_NAME=init", "DYNAMODB_ENDPOINT=http://127.0.0.1:9", "CURSOR_SECRET=init"}
	floor, figures, err := measureInits(dir, names, env, 3)
	if err != nil {
		t.Fatal(err)
	}
	if floor.name != initFloor || floor.init <= 0 || floor.rssMB <= 0 {
		t.Errorf("floor %+v", floor)
	}
	if len(figures) != len(names) {
		t.Fatalf("%d figures for %d functions: %+v", len(figures), len(names), figures)
	}
	for i, f := range figures {
		if f.name != names[i] || f.init <= 0 || f.rssMB <= 0 {
			t.Errorf("figure %+v for %s", f, names[i])
		}
		// !(r > 0) is also true of NaN.
		if tr, mr := f.against(floor); !(tr > 0) || !(mr > 0) || math.IsInf(tr, 0) || math.IsInf(mr, 0) {
			t.Errorf("%s against the floor: init %v, RSS %v", f.name, tr, mr)
		}
	}
	table := initTable(floor, figures)
	t.Log("\n" + table)
	if !strings.Contains(table, "| "+initFloor+" | ") || !strings.Contains(table, " | 1.00 | ") {
		t.Errorf("no row for the floor at 1.00 times itself:\n%s", table)
	}
	for _, n := range names {
		if !strings.Contains(table, "| "+n+" | ") {
			t.Errorf("no row for %s:\n%s", n, table)
		}
	}

	// Without a cursor secret or a local endpoint the function refuses to
	// start: measured as an error naming it (the floor, which reads no
	// configuration, starts).
	_, _, err = measureInits(dir, names[:1], []string{"DYNAMODB_ENDPOINT=", "CURSOR_SECRET="}, 1)
	if err == nil || !strings.Contains(err.Error(), "route-not-found: exited before asking for an event") {
		t.Fatalf("a function that cannot start: %v", err)
	}
}

// TestInitFloorImportsNothingOfOurs checks the floor stays a floor: it
// imports no package of this module, so a cost any of them adds to a cold
// start shows in the functions' ratios rather than in the floor too.
func TestInitFloorImportsNothingOfOurs(t *testing.T) {
	t.Chdir("../..")
	out, err := exec.Command("go", "list", "-tags", "lambda.norpc", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", initFloorPkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var ours []string
	deps := strings.Fields(string(out))
	for _, p := range deps {
		if strings.HasPrefix(p, "bizdata/") && p != "bizdata/infra/bench/initfloor" {
			ours = append(ours, p)
		}
	}
	if len(ours) > 0 || !strings.Contains(string(out), "github.com/aws/aws-lambda-go/lambda") {
		t.Errorf("the floor imports %v (all: %v); it should import only the Lambda runtime client", ours, deps)
	}
}
