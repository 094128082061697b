package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The browser tests drive a real Chromium through the DevTools protocol, so
// what they check is what an owner's browser does with the pages: forms,
// redirects, cookies, the CSP. Each page visited is checked with axe-core
// and saved as a full-page PNG.

// browserStepTimeout bounds one step (a navigation, a submit, a check): a page
// that never arrives fails the step instead of hanging the suite.
const browserStepTimeout = 60 * time.Second

// browserNames are the executables tried, in order, to find Chromium.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"}

// browserRequiredEnv is the environment variable that turns a missing browser
// from a skip into a failure, so CI cannot pass without running these tests.
const browserRequiredEnv = "DASHBOARD_BROWSER_REQUIRED"

// browserShotSeq numbers the screenshots of one run across tests, so their names
// sort in the order the pages were seen.
var browserShotSeq atomic.Int32

// browserCleanShots removes the numbered screenshots of an earlier run once per
// run, so the folder shows only this run's pages.
var browserCleanShots sync.Once

// browserTab is one browser tab over a board's server, with what its checks need.
type browserTab struct {
	ctx   context.Context
	base  string // the server's URL, such as http://127.0.0.1:1234 (set by the test)
	axe   string // axe.min.js
	shots string // the folder the screenshots go to
}

// newBrowserTab starts a headless Chromium (its own profile, no sandbox since CI
// runs as root) on a 1280-wide window and opens a tab. It skips the test
// when there is no Chromium, unless DASHBOARD_BROWSER_REQUIRED=1; a test
// calls it first, so a skip costs no table.
func newBrowserTab(t *testing.T) *browserTab {
	t.Helper()
	path := browserFind()
	if path == "" {
		if os.Getenv(browserRequiredEnv) == "1" {
			t.Fatalf("no Chromium found (tried %s) and %s=1: install it (apt-get install chromium)", strings.Join(browserNames, ", "), browserRequiredEnv)
		}
		t.Skipf("no Chromium found (tried %s); install it (apt-get install chromium) to run the browser tests, or set %s=1 to fail instead", strings.Join(browserNames, ", "), browserRequiredEnv)
	}
	root := browserModuleRoot(t)
	axe, err := os.ReadFile(filepath.Join(root, "infra/conformance/node_modules/axe-core/axe.min.js"))
	if err != nil {
		t.Fatalf("axe-core is not installed (run make test-deps): %v", err)
	}
	profile := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 900))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	// Cleanups run last-in first-out: the browser stops before the
	// profile folder is removed.
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	// The first Run starts the browser; it must not run under a step's
	// timeout, whose end would stop the browser too.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return &browserTab{ctx: ctx, axe: string(axe), shots: browserShotDir(t, root)}
}

// browserFind returns the path of the first Chromium on PATH, or "".
func browserFind() string {
	for _, name := range browserNames {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browserModuleRoot is the folder holding go.mod, above the package's folder.
func browserModuleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = filepath.Dir(dir)
	}
}

// browserShotDir is DASHBOARD_SCREENSHOTS or <repo>/.artifacts/screenshots,
// created, and emptied of an earlier run's numbered PNGs.
func browserShotDir(t *testing.T, root string) string {
	t.Helper()
	dir := os.Getenv("DASHBOARD_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(root, ".artifacts", "screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	browserCleanShots.Do(func() {
		old, _ := filepath.Glob(filepath.Join(dir, "[0-9][0-9]-*.png"))
		for _, f := range old {
			_ = os.Remove(f)
		}
	})
	return dir
}

// run runs actions within one step's time, failing t with what when they
// fail.
func (b *browserTab) run(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	browserGet(t, b, what, chromedp.Steps(actions...))
}

// browserGet runs action within one step's time and returns its value,
// failing t with what when it fails. (A method cannot have a type
// parameter, so this is a function.)
func browserGet[T any](t *testing.T, b *browserTab, what string, action chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserStepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, action)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// navigate runs actions that load a page (a link, a submit) and returns
// the final document's HTTP status (after redirects) and path.
func (b *browserTab) navigate(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserStepTimeout)
	defer cancel()
	res, err := chromedp.RunResponse(ctx, actions...)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if res == nil {
		t.Fatalf("%s: no page loaded", what)
	}
	return int(res.Status), b.path(t)
}

// open loads path and returns its status and final path.
func (b *browserTab) open(t *testing.T, path string) (int, string) {
	t.Helper()
	return b.navigate(t, "open "+path, chromedp.Navigate(b.base+path))
}

// submit clicks the submit button of the form whose action is action (as
// a person does) and returns the resulting status and path.
func (b *browserTab) submit(t *testing.T, action string) (int, string) {
	t.Helper()
	return b.navigate(t, "submit "+action, chromedp.Click(chromedp.CSS(browserForm(action)+` button[type=submit]`)))
}

// browserForm selects the form posting to action.
func browserForm(action string) string { return `form[action="` + action + `"]` }

// fill types value into the field name of the form posting to action,
// after clearing what it held.
func (b *browserTab) fill(t *testing.T, action, name, value string) {
	t.Helper()
	sel := browserForm(action) + ` [name="` + name + `"]`
	// Script empties it (chromedp's Clear fails on an empty textarea, its
	// SetValue on ""); SendKeys then types as a person does.
	b.run(t, "fill "+name, chromedp.WaitReady(chromedp.CSS(sel)),
		chromedp.Evaluate[chromedp.Void](`document.querySelector(`+browserJS(sel)+`).value = ""`),
		chromedp.SendKeys(chromedp.CSS(sel), value))
}

// set sets the value of the field name (a select, a hidden input) of the
// form posting to action.
func (b *browserTab) set(t *testing.T, action, name, value string) {
	t.Helper()
	b.run(t, "set "+name, chromedp.SetValue(chromedp.CSS(browserForm(action)+` [name="`+name+`"]`), value))
}

// has reports whether the page has an element matching sel.
func (b *browserTab) has(t *testing.T, sel string) bool {
	t.Helper()
	return browserGet(t, b, "look for "+sel, chromedp.Evaluate[bool](`document.querySelector(`+browserJS(sel)+`) !== null`))
}

// text is the visible text of the element matching sel ("" when none).
func (b *browserTab) text(t *testing.T, sel string) string {
	t.Helper()
	return browserGet(t, b, "read "+sel, chromedp.Evaluate[string](`(document.querySelector(`+browserJS(sel)+`)||{}).innerText||""`))
}

// path is the tab's path and query.
func (b *browserTab) path(t *testing.T) string {
	t.Helper()
	return browserGet(t, b, "read the location", chromedp.Evaluate[string](`location.pathname + location.search`))
}

// cookie is the value of the browser's cookie name for the server.
func (b *browserTab) cookie(t *testing.T, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserStepTimeout)
	defer cancel()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{b.base}})
	if err != nil {
		t.Fatalf("read cookies: %v", err)
	}
	for _, c := range res.Cookies {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// setCookie puts cookie name back into the browser, as a copied cookie
// would be.
func (b *browserTab) setCookie(t *testing.T, name, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserStepTimeout)
	defer cancel()
	httpOnly := true
	if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: name, Value: value, URL: b.base, Path: "/", HTTPOnly: &httpOnly}); err != nil {
		t.Fatalf("set cookie: %v", err)
	}
}

// browserJS quotes s as a JavaScript string literal.
func browserJS(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// browserAxeViolation is what a failing check reports of one axe violation.
type browserAxeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  int    `json:"nodes"`
	Target string `json:"target"`
	HTML   string `json:"html"`
}

// browserAxeResult is what browserAxeRun gives back: the violations and
// how many rules ran (none would mean axe checked nothing).
type browserAxeResult struct {
	Rules      int                   `json:"rules"`
	Version    string                `json:"version"`
	Violations []browserAxeViolation `json:"violations"`
}

// browserAxeRun runs axe on the page and returns its violations, with the
// first node of each.
const browserAxeRun = `axe.run(document, {resultTypes: ['violations']}).then(r => ({
  rules: r.passes.length + r.violations.length + r.incomplete.length + r.inapplicable.length,
  version: r.testEngine.version,
  violations: r.violations.map(v => ({
    id: v.id, impact: v.impact || '', help: v.help, nodes: v.nodes.length,
    target: v.nodes.length ? JSON.stringify(v.nodes[0].target) : '',
    html: v.nodes.length ? v.nodes[0].html : ''}))}))`

// check runs axe-core in the page and saves a full-page screenshot named
// NN-name.png. A serious or critical violation fails t; lesser ones are
// logged. It returns every violation.
func (b *browserTab) check(t *testing.T, name string) []browserAxeViolation {
	t.Helper()
	b.run(t, "inject axe-core into "+name, chromedp.Evaluate[chromedp.Void](b.axe+"\n;undefined"))
	res := browserGet(t, b, "run axe-core on "+name, chromedp.Evaluate[browserAxeResult](browserAxeRun, chromedp.EvalAwaitPromise))
	if res.Rules == 0 {
		t.Errorf("axe-core %s ran no rules on %s", res.Version, name)
	}
	png := browserGet(t, b, "screenshot "+name, chromedp.FullScreenshot(100))
	file := filepath.Join(b.shots, fmt.Sprintf("%02d-%s.png", browserShotSeq.Add(1), name))
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Errorf("save screenshot: %v", err)
	}
	for _, v := range res.Violations {
		msg := fmt.Sprintf("axe %s on %s (%s, %d node(s)): %s; first: %s %s", v.ID, name, v.Impact, v.Nodes, v.Help, v.Target, v.HTML)
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Error(msg)
		} else {
			t.Log(msg)
		}
	}
	return res.Violations
}

// mustSee fails t unless the text of the page's main contains every one of
// wants.
func (b *browserTab) mustSee(t *testing.T, wants ...string) {
	t.Helper()
	page := b.text(t, "main")
	for _, w := range wants {
		if !strings.Contains(page, w) {
			t.Errorf("%s lacks %q; it shows:\n%s", b.path(t), w, browserClip(page, 600))
		}
	}
}

// browserClip shortens s to n bytes for a failure message.
func browserClip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// browserJSONField is the first string value of key in raw JSON ("" when none).
func browserJSONField(raw []byte, key string) string {
	m := regexp.MustCompile(`"` + regexp.QuoteMeta(key) + `"\s*:\s*"([^"]*)"`).FindSubmatch(raw)
	if m == nil {
		return ""
	}
	return string(m[1])
}
