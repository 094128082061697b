package lambdas_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The IAM tests judge only the calls their flows make: a store path no flow
// runs is a path whose policy nobody checked, and it fails on AWS alone.
// So the store's call sites of DynamoDB are listed from its source, each
// call the flows make marks the sites on its stack as run under the
// function being recorded, and a site no function ran fails the check,
// unless storeSitesNoFunctionReaches names its function. The check is also
// per function (reach_test.go): each site a function's code can reach must
// have run under that function, or be listed in storeSitesNotYetRun.

// storeDir is the store package's directory, from this package's.
const storeDir = "../../store"

// storeSitesNoFunctionReaches are the store functions that no deployed
// function calls, and who does: their call sites need no flow, nor do those
// of the unexported functions only they call. None may be called from the
// code of a Lambda (shared/ but the store and the tests' testdb, functions/).
var storeSitesNoFunctionReaches = map[string]string{
	"(*Store).EnsureTable":          "makes the table: the devserver, the bench, the tests; CloudFormation makes AWS's",
	"(*Store).CreateTable":          "EnsureTable's, and the tests' tables without a stream",
	"(*Store).PackLegacyRecords":    "the admin tool's pack-records, with the operator's credentials",
	"(*Store).CountLegacyRecords":   "the admin tool's legacy-records count",
	"(*Store).CountLegacyDebts":     "the admin tool's count of sales written before receivables were kept",
	"(*Store).RelayoutDebts":        "the admin tool's new layout of debts kept before their index entries carried their aging",
	"(*Store).PlanLegacyNotices":    "the admin tool's planning of notices of sales written before sales planned theirs",
	"(*Store).OpenSales":            "the tests' recount of receivables (the report reads what is kept)",
	"(*Store).CustomerNames":        "the tests' recount of receivables, naming its debtors",
	"(*Store).CountLegacyItems":     "the admin tool's count of items written before the inventory's worth was kept",
	"(*Store).AllItems":             "the tests' recount of the inventory (the report reads what is kept)",
	"(*Store).OpenLedgers":          "the admin tool's migration of stock ledgers",
	"(*Store).MoveLegacyEvents":     "the admin tool's migration of events to the sharded feed",
	"(*Store).moveLegacyEvent":      "the admin tool's migration of events to the sharded feed (one event)",
	"(*Store).MigrateLegacySecrets": "the admin tool's migration of callback secrets",
	"(*Store).IndexAccountCodes":    "the admin tool's index of business codes",
	"(*Store).ListAccounts":         "the admin tool's account list",
	"(*Store).FindAccountByCode":    "the admin tool and the devserver, by business code",
	"(*Store).CreateAccount":        "the admin tool, the devserver and the bench (sign-up makes accounts by its own path)",
	"(*Store).CreateOwner":          "the admin tool and the devserver",
	"(*Store).CreatePasswordLink":   "the admin tool's set-password link",
	"(*Store).SetWebhook":           "the admin tool and the bench (the API's is UpdateWebhook)",
	"(*Store).WaitingFigures":       "the bench and the tests, reading the figures items the stream carries",
	"(*Store).ReportDays":           "the bench's reports",
	"(*Store).SignInFailures":       "the tests' look at a count (sign-in takes its attempts by TakeSignInAttempt)",
	// A site named "caller → callee" is that call alone.
	"(*Store).transact → (*Store).single":          "a transaction of one Put, made as a PutItem: IAM judges it as the Put it stands for (dynamodb:PutItem, the same item), which the flows' transactions run",
	"(*Store).single → (*dynamodb.Client).PutItem": "the PutItem of a transaction of one Put (above)",
}

// callSite is one call, in the store's source, of a DynamoDB operation (a
// client's method, a paginator's next page, a waiter) or of a store function
// that makes one, directly or further down. A new path of the store that
// reaches DynamoDB is a new call site.
type callSite struct {
	file     string // base name, in storeDir
	from, to int    // the lines of the call expression
	caller   string // the store function it is in, as "(*Store).Name" or "name"
	callees  []string
}

func (c callSite) String() string {
	lines := strconv.Itoa(c.from)
	if c.to != c.from {
		lines += "-" + strconv.Itoa(c.to)
	}
	return fmt.Sprintf("%s:%s %s → %s", c.file, lines, c.caller, strings.Join(c.callees, ", "))
}

// storeCallSites parses and type-checks the store package (its imports from
// the build cache's export data) and returns its call sites. Calls on one
// line are one site: a stack tells lines apart, not columns.
func storeCallSites(t *testing.T) (sites []callSite, callers map[string][]string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".")
	cmd.Dir = storeDir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list the store's imports: %v", err)
	}
	exports := map[string]string{}
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		if path, export, ok := strings.Cut(sc.Text(), "\t"); ok && export != "" {
			exports[path] = export
		}
	}
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(storeDir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	if _, err := conf.Check("bizdata/shared/store", fset, files, info); err != nil {
		t.Fatalf("type-check the store: %v", err)
	}

	// Every call of a function, per store function (its closures' calls
	// are its own).
	type call struct {
		expr   *ast.CallExpr
		callee *types.Func
	}
	var decls []*types.Func
	calls := map[*types.Func][]call{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fn := info.Defs[fd.Name].(*types.Func)
			decls = append(decls, fn)
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				ce, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				fun := ast.Unparen(ce.Fun)
				switch x := fun.(type) {
				case *ast.IndexExpr:
					fun = x.X
				case *ast.IndexListExpr:
					fun = x.X
				}
				var id *ast.Ident
				switch x := fun.(type) {
				case *ast.Ident:
					id = x
				case *ast.SelectorExpr:
					id = x.Sel
				}
				if id == nil {
					return true
				}
				if callee, ok := info.Uses[id].(*types.Func); ok {
					calls[fn] = append(calls[fn], call{ce, callee.Origin()})
				}
				return true
			})
		}
	}
	// The store functions that reach DynamoDB: a fixed point over the
	// calls, from those that call the SDK.
	reaches := map[*types.Func]bool{}
	hits := func(f *types.Func) bool { return sdkRequest(f) || reaches[f] }
	for changed := true; changed; {
		changed = false
		for _, fn := range decls {
			if !reaches[fn] && slices.ContainsFunc(calls[fn], func(c call) bool { return hits(c.callee) }) {
				reaches[fn], changed = true, true
			}
		}
	}
	byLines := map[string]*callSite{}
	callers = map[string][]string{}
	for _, fn := range decls {
		for _, c := range calls[fn] {
			if !hits(c.callee) {
				continue
			}
			if reaches[c.callee] {
				callers[funcName(c.callee)] = append(callers[funcName(c.callee)], funcName(fn))
			}
			from, to := fset.Position(c.expr.Pos()), fset.Position(c.expr.End())
			k := fmt.Sprintf("%s:%d-%d", filepath.Base(from.Filename), from.Line, to.Line)
			if byLines[k] == nil {
				byLines[k] = &callSite{file: filepath.Base(from.Filename), from: from.Line, to: to.Line, caller: funcName(fn)}
			}
			byLines[k].callees = append(byLines[k].callees, funcName(c.callee))
		}
	}
	sites = []callSite{}
	for _, k := range slices.Sorted(maps.Keys(byLines)) {
		sites = append(sites, *byLines[k])
	}
	return sites, callers
}

// sdkRequest reports whether calling f sends a DynamoDB request: a method
// of the client, a paginator's NextPage or a waiter's Wait.
func sdkRequest(f *types.Func) bool {
	if f.Pkg() == nil || f.Pkg().Path() != "github.com/aws/aws-sdk-go-v2/service/dynamodb" {
		return false
	}
	recv := f.Type().(*types.Signature).Recv()
	if recv == nil {
		return false
	}
	rt := recv.Type()
	if p, ok := rt.(*types.Pointer); ok {
		rt = p.Elem()
	}
	named, ok := rt.(*types.Named)
	if !ok {
		return false
	}
	switch n := named.Obj().Name(); {
	case n == "Client":
		return true
	case strings.HasSuffix(n, "Paginator"):
		return f.Name() == "NextPage"
	case strings.HasSuffix(n, "Waiter"):
		return strings.HasPrefix(f.Name(), "Wait")
	}
	return false
}

// funcName names f as a stack trace does, without its package: "name" or
// "(*Type).Name".
func funcName(f *types.Func) string {
	recv := f.Type().(*types.Signature).Recv()
	if recv == nil {
		if f.Pkg() != nil && f.Pkg().Name() != "store" {
			return f.Pkg().Name() + "." + f.Name()
		}
		return f.Name()
	}
	rt, star := recv.Type(), ""
	if p, ok := rt.(*types.Pointer); ok {
		rt, star = p.Elem(), "*"
	}
	name := types.TypeString(rt, func(p *types.Package) string { return "" })
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	if f.Pkg() != nil && f.Pkg().Name() != "store" {
		name = f.Pkg().Name() + "." + name
	}
	return "(" + star + name + ")." + f.Name()
}

// coverage is, per function, the lines of the store's source on the stacks
// of the DynamoDB calls made under it, and which IAM flows ran to the end.
type coverage struct {
	mu    sync.Mutex
	lines map[string]map[string]bool // function -> "file.go:line"
	done  map[string]bool
}

var storeCoverage = &coverage{lines: map[string]map[string]bool{}, done: map[string]bool{}}

// record marks the store's lines on the calling goroutine's stack as run
// under function. A goroutine the store started (its parallel reads) has
// on its stack only the store's closure: its creator's stack, waiting for
// it, is taken from a dump of every goroutine.
func (c *coverage) record(function string) {
	g := parseGoroutine(stack(false))
	lines := g.lines
	if g.storeMade {
		all := map[int]goroutine{}
		for _, block := range strings.Split(string(stack(true)), "\n\n") {
			p := parseGoroutine([]byte(block))
			all[p.id] = p
		}
		for parent, seen := g.parent, 0; parent != 0 && seen < 16; seen++ {
			p, ok := all[parent]
			if !ok {
				break
			}
			lines = append(lines, p.lines...)
			if !p.storeMade {
				break
			}
			parent = p.parent
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lines[function] == nil {
		c.lines[function] = map[string]bool{}
	}
	for _, l := range lines {
		c.lines[function][l] = true
	}
}

// stack is runtime.Stack of this goroutine or of all, whole.
func stack(all bool) []byte {
	buf := make([]byte, 64<<10)
	for {
		if n := runtime.Stack(buf, all); n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// goroutine is what record needs of one goroutine's trace.
type goroutine struct {
	id        int
	lines     []string // the store's, "file.go:line"
	parent    int      // the goroutine that started it
	storeMade bool     // started by a store function
}

// parseGoroutine reads one goroutine's block of a runtime.Stack trace:
//
//	goroutine 12 [running]:
//	bizdata/shared/store.(*Store).getItem(...)
//		/…/shared/store/tx.go:35 +0x1c4
//	…
//	created by bizdata/shared/store.(*Store).batchGet in goroutine 9
//		/…/shared/store/create.go:226 +0x2a5
//
// (or "created by sync.(*WaitGroup).Go in goroutine 9", for a closure of
// the store's that WaitGroup.Go runs).
func parseGoroutine(block []byte) goroutine {
	var g goroutine
	lines := strings.Split(string(block), "\n")
	if len(lines) > 0 {
		if f := strings.Fields(lines[0]); len(f) > 1 && f[0] == "goroutine" {
			g.id, _ = strconv.Atoi(f[1])
		}
	}
	viaGroup := false // started by sync.WaitGroup.Go: by whoever's closure it runs
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "created by "); ok {
			g.storeMade = strings.HasPrefix(rest, "bizdata/shared/store.")
			viaGroup = strings.HasPrefix(rest, "sync.(*WaitGroup).Go")
			if _, n, ok := strings.Cut(rest, " in goroutine "); ok {
				g.parent, _ = strconv.Atoi(n)
			}
			continue
		}
		loc, ok := strings.CutPrefix(l, "\t")
		if !ok {
			continue
		}
		loc, _, _ = strings.Cut(loc, " +0x")
		file, line, ok := strings.Cut(loc, ".go:")
		if !ok || filepath.Base(filepath.Dir(file)) != "store" || filepath.Base(filepath.Dir(filepath.Dir(file))) != "shared" || strings.HasSuffix(file, "_test") {
			continue
		}
		g.lines = append(g.lines, filepath.Base(file)+".go:"+line)
	}
	// A closure of the store's run by WaitGroup.Go was started by the store.
	g.storeMade = g.storeMade || viaGroup && len(g.lines) > 0
	return g
}

// covered returns, per function, the call sites its calls ran: for each
// line of the store on their stacks, the narrowest site holding it.
func (c *coverage) covered(sites []callSite) map[string]map[int]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]map[int]bool{}
	for function, lines := range c.lines {
		out[function] = map[int]bool{}
		for l := range lines {
			file, n, _ := strings.Cut(l, ":")
			line, _ := strconv.Atoi(n)
			best := -1
			for i, s := range sites {
				if s.file == file && s.from <= line && line <= s.to && (best < 0 || s.to-s.from < sites[best].to-sites[best].from) {
					best = i
				}
			}
			if best >= 0 {
				out[function][best] = true
			}
		}
	}
	return out
}

// iamFlows are the tests whose calls the coverage counts: each calls
// flowDone at its end.
var iamFlows = []string{"api", "dashboard", "figures set aside", "stream failures drained", "invoices"}

// flowDone notes that the IAM flow name ran to the end (a flow that
// stopped early never calls it); once every one of iamFlows has, it checks
// that every call site of the store ran under some function, and each under
// every function that reaches it. A run of some flows alone checks nothing.
func (c *coverage) flowDone(t *testing.T, name string) {
	t.Helper()
	if !slices.Contains(iamFlows, name) {
		t.Fatalf("%q is not one of iamFlows", name)
	}
	c.mu.Lock()
	c.done[name] = true
	all := !slices.ContainsFunc(iamFlows, func(f string) bool { return !c.done[f] })
	c.mu.Unlock()
	if !all {
		t.Logf("the store's call sites are checked once every IAM flow has run (%s)", strings.Join(iamFlows, ", "))
		return
	}
	sites, callers := storeCallSites(t)
	covered := c.covered(sites)
	exempt := exemptFunctions(t, storeSitesNoFunctionReaches, callers)
	checkStoreCoverage(t, sites, covered, exempt)
	checkFunctionCoverage(t, sites, covered, reachableStoreSites(t, sites), exempt, storeSitesNotYetRun)
}

// exemptFunctions returns the functions of named and the unexported ones
// that only they call, each with why, after checking that no Lambda's code
// calls one of named.
func exemptFunctions(t *testing.T, named map[string]string, callers map[string][]string) map[string]string {
	t.Helper()
	var sources []string
	for _, root := range []string{"../..", "../../../functions"} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (path == storeDir || path == "../../testdb") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				sources = append(sources, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range sources {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for f := range named {
			if strings.Contains(f, " → ") {
				continue
			}
			_, name, _ := strings.Cut(f, ").")
			if bytes.Contains(src, []byte("."+name+"(")) {
				t.Errorf("%s calls %s, which storeSitesNoFunctionReaches says no deployed function reaches (%s)", path, f, named[f])
			}
		}
	}
	exempt := maps.Clone(named)
	for changed := true; changed; {
		changed = false
		for f, by := range callers {
			_, name, _ := strings.Cut(f, ").")
			if name == "" {
				name = f
			}
			if exempt[f] != "" || len(name) == 0 || strings.ToUpper(name[:1]) == name[:1] {
				continue
			}
			if !slices.ContainsFunc(by, func(c string) bool { return exempt[c] == "" }) {
				exempt[f] = "called only by " + strings.Join(slices.Compact(slices.Sorted(slices.Values(by))), ", ")
				changed = true
			}
		}
	}
	return exempt
}

// checkStoreCoverage fails for each site that no function ran and that
// exempt does not name the function of, and logs the sites each function
// covers.
func checkStoreCoverage(t *testing.T, sites []callSite, covered map[string]map[int]bool, exempt map[string]string) {
	t.Helper()
	run := map[int]bool{}
	for _, function := range slices.Sorted(maps.Keys(covered)) {
		t.Logf("%-28s %3d call sites of the store", function, len(covered[function]))
		maps.Copy(run, covered[function])
	}
	exempted := 0
	for i, s := range sites {
		switch {
		case run[i]:
		case exempt[s.caller] != "" || exempt[s.caller+" → "+strings.Join(s.callees, ", ")] != "":
			exempted++
		default:
			t.Errorf("no function's flow runs %s: run it in an IAM test under each function that reaches it (or, if none does, say why in storeSitesNoFunctionReaches)", s)
		}
	}
	t.Logf("%d call sites of the store: %d run by the flows, %d in functions no deployed function calls", len(sites), len(run), exempted)
	for caller, why := range exempt {
		if !slices.ContainsFunc(sites, func(s callSite) bool {
			return s.caller == caller || s.caller+" → "+strings.Join(s.callees, ", ") == caller
		}) {
			t.Errorf("%s, exempt (%s), has no call site", caller, why)
		}
	}
}
