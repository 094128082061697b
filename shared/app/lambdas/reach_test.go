package lambdas_test

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"bizdata/shared/api"
	"bizdata/shared/dashboard"

	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
)

// Which call sites of the store each deployed function can reach is read
// from the code: a call graph of the product's packages (SSA), walked from
// that function's own entry, not from the route tables, or every function
// would reach every route's handler.
//
//   - An API route's function: the API's handler chain (Server.Handler, with
//     its key checks and stamps) and its route's handler.
//   - route-not-found: Server.FallbackHandler.
//   - A dashboard function: the dashboard's handler chain (Server.Handler,
//     with sessions, unless all its routes are public) and each of its
//     routes' pages, forms and the pages a refused form is shown again on.
//   - Any other function (the stream consumers, the sweep): what its main
//     calls.
//
// The walk follows static calls, interface calls to every method that can
// implement them (class hierarchy), and every function or closure a reached
// function takes as a value (it may call it). It does not follow a route
// table's entries; a call of api.Server.Call or CallWith, which runs a route
// by its function's name, reaches that route's handler, for each name its
// callers spell.

// functionsDir is the directory of the deployed functions' mains.
const functionsDir = "../../../functions"

// functionEntries returns, per deployed function, the names (as
// runtime.FuncForPC gives them) of the functions its walk starts from, and,
// each prefixed by "-", those it does not enter.
func functionEntries(t *testing.T) map[string][]string {
	t.Helper()
	dirs, err := os.ReadDir(functionsDir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		name := d.Name()
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(functionsDir, name, "main.go"), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var run *ast.CallExpr
		ast.Inspect(f, func(n ast.Node) bool {
			if ce, ok := n.(*ast.CallExpr); ok && run == nil {
				if sel, ok := ce.Fun.(*ast.SelectorExpr); ok && strings.HasPrefix(sel.Sel.Name, "Run") {
					run = ce
				}
			}
			return run == nil
		})
		if run == nil {
			t.Fatalf("functions/%s/main.go starts no Run function", name)
		}
		sel := run.Fun.(*ast.SelectorExpr)
		pkg := sel.X.(*ast.Ident).Name
		switch {
		case pkg == "lambdas" && sel.Sel.Name == "RunFunction" && name == api.DefaultFunction:
			out[name] = []string{"bizdata/shared/api.(*Server).FallbackHandler"}
		case pkg == "lambdas" && sel.Sel.Name == "RunFunction":
			rt, ok := api.RouteByFunction(name)
			if !ok {
				t.Fatalf("functions/%s: no route in api.Routes", name)
			}
			out[name] = []string{"bizdata/shared/api.(*Server).Handler", unexportedFunc(t, rt, "handle")}
		case pkg == "lambdas" && sel.Sel.Name == "RunDashboardFunction":
			entries := []string{"bizdata/shared/dashboard.(*Server).Handler"}
			for _, rt := range dashboard.RoutesOf(name) {
				for _, field := range []string{"public", "page", "action", "back"} {
					if fn := unexportedFunc(t, rt, field); fn != "" {
						entries = append(entries, fn)
					}
				}
			}
			if len(entries) == 1 {
				t.Fatalf("functions/%s: no route in dashboard.Routes", name)
			}
			if !slices.ContainsFunc(dashboard.RoutesOf(name), func(rt dashboard.Route) bool { return unexportedFunc(t, rt, "public") == "" }) {
				// Only public routes: wrap never takes a session's path.
				entries = append(entries, "-bizdata/shared/dashboard.(*Server).serveSignedIn")
			}
			out[name] = entries
		case pkg == "lambdas":
			out[name] = []string{"bizdata/shared/app/lambdas." + sel.Sel.Name}
		default:
			t.Fatalf("functions/%s/main.go starts %s.%s, which the walk does not know", name, pkg, sel.Sel.Name)
		}
	}
	return out
}

// unexportedFunc names the function held in the unexported func field of v,
// or "" when it holds none.
func unexportedFunc(t *testing.T, v any, field string) string {
	t.Helper()
	f := reflect.ValueOf(v).FieldByName(field)
	if f.Kind() != reflect.Func {
		t.Fatalf("%T has no func field %s", v, field)
	}
	if f.IsNil() {
		return ""
	}
	return runtime.FuncForPC(f.Pointer()).Name()
}

// reachableStoreSites returns, per deployed function, the indexes in sites
// of the call sites its walk reaches, each with one chain of calls that
// reaches it.
func reachableStoreSites(t *testing.T, sites []callSite) map[string]map[int]string {
	t.Helper()
	entries := functionEntries(t)
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedTypes |
			packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedTypesSizes,
		Dir: "../../..",
	}
	pkgs, err := packages.Load(cfg, "./shared/...", "./functions/...")
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		t.Fatal("the product's packages do not load")
	}
	prog := ssa.NewProgram(pkgs[0].Fset, ssa.InstantiateGenerics)
	created := map[*types.Package]bool{}
	var create func(p *types.Package)
	create = func(p *types.Package) {
		if created[p] {
			return
		}
		created[p] = true
		for _, imp := range p.Imports() {
			create(imp)
		}
		prog.CreatePackage(p, nil, nil, true)
	}
	for _, p := range pkgs {
		for _, imp := range p.Types.Imports() {
			if !slices.ContainsFunc(pkgs, func(q *packages.Package) bool { return q.Types == imp }) {
				create(imp)
			}
		}
	}
	var ssaPkgs []*ssa.Package
	for _, p := range pkgs {
		created[p.Types] = true
	}
	for _, p := range pkgs {
		ssaPkgs = append(ssaPkgs, prog.CreatePackage(p.Types, p.Syntax, p.TypesInfo, true))
	}
	prog.Build()

	byName := map[string]*ssa.Function{}
	for _, p := range ssaPkgs {
		for _, m := range p.Members {
			if fn, ok := m.(*ssa.Function); ok {
				byName[fn.String()] = fn
			}
			if tn, ok := m.(*ssa.Type); ok {
				for _, typ := range []types.Type{tn.Type(), types.NewPointer(tn.Type())} {
					ms := prog.MethodSets.MethodSet(typ)
					for i := range ms.Len() {
						if fn := prog.MethodValue(ms.At(i)); fn != nil {
							byName[fn.String()] = fn
						}
					}
				}
			}
		}
	}
	lookup := func(name string) *ssa.Function {
		// runtime names a method (*T).M as ssa does, with the package path
		// before the type: "p.(*T).M" against "(*p.T).M".
		if pkg, rest, ok := strings.Cut(name, ".("); ok {
			star := strings.HasPrefix(rest, "*")
			rest = strings.TrimPrefix(rest, "*")
			typ, method, _ := strings.Cut(rest, ").")
			name = "(" + map[bool]string{true: "*"}[star] + pkg + "." + typ + ")." + method
		}
		fn := byName[name]
		if fn == nil {
			t.Fatalf("no function %s in the call graph", name)
		}
		return fn
	}

	graph := cha.CallGraph(prog)
	callNames := map[*ssa.Function]bool{
		lookup("bizdata/shared/api.(*Server).Call"):     true,
		lookup("bizdata/shared/api.(*Server).CallWith"): true,
	}
	storePath := "bizdata/shared/store"

	out := map[string]map[int]string{}
	for _, function := range slices.Sorted(maps.Keys(entries)) {
		seen := map[*ssa.Function]bool{}
		from := map[*ssa.Function]*ssa.Function{}
		var queue []*ssa.Function
		var fn *ssa.Function // the function being walked
		reach := func(to *ssa.Function) {
			if to != nil && !seen[to] {
				seen[to] = true
				from[to] = fn
				queue = append(queue, to)
			}
		}
		for _, e := range entries[function] {
			if skip, ok := strings.CutPrefix(e, "-"); ok {
				seen[lookup(skip)] = true
			}
		}
		for _, e := range entries[function] {
			if !strings.HasPrefix(e, "-") {
				reach(lookup(e))
			}
		}
		callsByName := false
		for len(queue) > 0 {
			fn = queue[0]
			queue = queue[1:]
			for _, b := range fn.Blocks {
				for _, in := range b.Instrs {
					if mc, ok := in.(*ssa.MakeClosure); ok {
						reach(mc.Fn.(*ssa.Function))
					}
					var ops []*ssa.Value
					for _, op := range in.Operands(ops) {
						if op != nil {
							if f, ok := (*op).(*ssa.Function); ok {
								reach(f)
							}
						}
					}
					call, ok := in.(ssa.CallInstruction)
					if !ok {
						continue
					}
					common := call.Common()
					if callee := common.StaticCallee(); callee != nil {
						reach(callee)
						if callNames[callee] {
							callsByName = true
						}
						continue
					}
					if common.IsInvoke() {
						if node := graph.Nodes[fn]; node != nil {
							for _, e := range node.Out {
								if e.Site == call {
									reach(e.Callee.Func)
								}
							}
						}
					}
				}
			}
			if len(queue) == 0 && callsByName {
				// The routes run by name: every route function's name a
				// reached function outside the API spells.
				callsByName, fn = false, nil
				for f := range seen {
					if f.Pkg == nil || f.Pkg.Pkg.Path() == "bizdata/shared/api" {
						continue
					}
					for _, b := range f.Blocks {
						for _, in := range b.Instrs {
							var ops []*ssa.Value
							for _, op := range in.Operands(ops) {
								c, ok := (*op).(*ssa.Const)
								if !ok || c.Value == nil || c.Value.Kind() != constant.String {
									continue
								}
								if rt, ok := api.RouteByFunction(constant.StringVal(c.Value)); ok {
									reach(lookup(unexportedFunc(t, rt, "handle")))
								}
							}
						}
					}
				}
			}
		}
		chain := func(f *ssa.Function) string {
			var names []string
			for ; f != nil && len(names) < 32; f = from[f] {
				names = append(names, strings.TrimPrefix(f.String(), "bizdata/shared/"))
			}
			slices.Reverse(names)
			return strings.Join(names, " → ")
		}
		out[function] = map[int]string{}
		for fn := range seen {
			pkg := fn.Pkg
			if pkg == nil && fn.Origin() != nil {
				pkg = fn.Origin().Pkg
			}
			if pkg == nil || pkg.Pkg.Path() != storePath {
				continue
			}
			for _, b := range fn.Blocks {
				for _, in := range b.Instrs {
					if _, ok := in.(ssa.CallInstruction); !ok {
						continue
					}
					pos := prog.Fset.Position(in.Pos())
					if i := narrowestSite(sites, filepath.Base(pos.Filename), pos.Line); i >= 0 && out[function][i] == "" {
						out[function][i] = chain(fn)
					}
				}
			}
		}
	}
	return out
}

// narrowestSite returns the index of the narrowest of sites holding line
// of file, or -1.
func narrowestSite(sites []callSite, file string, line int) int {
	best := -1
	for i, s := range sites {
		if s.file == file && s.from <= line && line <= s.to && (best < 0 || s.to-s.from < sites[best].to-sites[best].from) {
			best = i
		}
	}
	return best
}

// siteName names a call site without its lines, which other changes of
// its file move: "caller → callees", with "#n" for the n-th (from 2) site
// of that name in the file.
func siteNames(sites []callSite) []string {
	names := make([]string, len(sites))
	count := map[string]int{}
	for i, s := range sites {
		n := s.caller + " → " + strings.Join(s.callees, ", ")
		count[n]++
		if count[n] > 1 {
			n += " #" + strconv.Itoa(count[n])
		}
		names[i] = n
	}
	return names
}

// uncoveredPair is a call site a function reaches that no IAM flow runs
// under it yet: storeSitesNotYetRun lists them, and may only shrink.
type uncoveredPair struct {
	function, site, why string
}

// checkFunctionCoverage fails for each call site a function reaches that
// its flows did not run under it, unless storeSitesNotYetRun lists the
// pair; and for each listed pair that is now run, or no longer reached, so
// the list stays true. It logs, per function, the sites it reaches and
// those its flows ran.
//
// A site of exempt (storeSitesNoFunctionReaches) is not asked for: one
// named as a call needs no flow of its own, and one in a function no
// deployed function calls fails when a function reaches it.
func checkFunctionCoverage(t *testing.T, sites []callSite, covered map[string]map[int]bool, reachable map[string]map[int]string, exempt map[string]string, listed []uncoveredPair) {
	t.Helper()
	names := siteNames(sites)
	index := map[string]int{}
	for i, n := range names {
		index[n] = i
	}
	isListed := map[[2]string]bool{}
	for _, p := range listed {
		k := [2]string{p.function, p.site}
		if isListed[k] {
			t.Errorf("storeSitesNotYetRun lists %s under %s twice", p.site, p.function)
		}
		isListed[k] = true
		i, ok := index[p.site]
		switch {
		case !ok:
			t.Errorf("storeSitesNotYetRun lists %s under %s, but the store has no such call site: remove it", p.site, p.function)
		case reachable[p.function][i] == "":
			t.Errorf("storeSitesNotYetRun lists %s under %s, which no longer reaches it: remove it", p.site, p.function)
		case covered[p.function][i]:
			t.Errorf("storeSitesNotYetRun lists %s under %s, which its flows now run: remove it", p.site, p.function)
		}
	}
	pairs, run := 0, 0
	for _, function := range slices.Sorted(maps.Keys(reachable)) {
		reached, ran := 0, 0
		for i := range reachable[function] {
			if why := exempt[sites[i].caller+" → "+strings.Join(sites[i].callees, ", ")]; why != "" {
				continue
			}
			if why := exempt[sites[i].caller]; why != "" {
				t.Errorf("%s reaches %s, in %s, which storeSitesNoFunctionReaches says no deployed function reaches (%s)", function, sites[i], sites[i].caller, why)
				continue
			}
			pairs++
			reached++
			switch {
			case covered[function][i]:
				ran++
			case !isListed[[2]string{function, names[i]}]:
				t.Errorf("%s reaches %s (%s), which no IAM flow runs under it: run that path under %s's identity in an IAM test; it is reached by %s", function, names[i], sites[i], function, reachable[function][i])
			}
		}
		run += ran
		t.Logf("%-28s reaches %3d call sites of the store, its flows run %3d", function, reached, ran)
		for i := range covered[function] {
			if reachable[function][i] == "" {
				t.Errorf("%s's flows ran %s (%s), which the call graph says it cannot reach: the walk misses a path", function, names[i], sites[i])
			}
		}
	}
	t.Logf("%d (function, call site) pairs reached: %d run by the IAM flows, %d listed in storeSitesNotYetRun", pairs, run, len(listed))
}
