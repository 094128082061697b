package invoice

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The browser test opens the hosted page in a real headless Chromium under
// its Content-Security-Policy: the style hash must admit the page's styles
// (and, without it, the browser must refuse them), the page must fit a
// phone's width, and axe-core must find nothing.

// browserRequiredEnv turns a missing Chromium or axe-core from a skip into a
// failure; it is the switch the dashboard's browser tests use too.
const browserRequiredEnv = "DASHBOARD_BROWSER_REQUIRED"

// axePath is axe-core's script, installed by make test-deps.
const axePath = "../../infra/conformance/node_modules/axe-core/axe.min.js"

func TestBrowserPage(t *testing.T) {
	var chromium string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			chromium = p
			break
		}
	}
	if chromium == "" {
		if os.Getenv(browserRequiredEnv) == "1" {
			t.Fatalf("no Chromium found and %s=1: install it (apt-get install chromium)", browserRequiredEnv)
		}
		t.Skipf("no Chromium found; install it (apt-get install chromium), or set %s=1 to fail instead", browserRequiredEnv)
	}
	page := must(Page(sampleView(4), "pdf"))
	serve := func(body []byte, csp string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Security-Policy", csp)
			w.Write(body)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/invoice", serve(page, PageCSP(page)))
	mux.Handle("/without-hash", serve(page, BasePolicy))
	mux.Handle("/missing", serve(NotFoundPage(), PageCSP(NotFoundPage())))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	// The first Run starts the browser and must not carry a step's timeout;
	// the tab then acts as a phone 360 pixels wide.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile)); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	// evaluate loads path and evaluates expr in it, within a step's timeout.
	evaluate := func(t *testing.T, path, expr string) string {
		t.Helper()
		stepCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if err := chromedp.Do(stepCtx, chromedp.Navigate(srv.URL+path)); err != nil {
			t.Fatalf("load %s: %v", path, err)
		}
		v, err := chromedp.Run(stepCtx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("evaluate in %s: %v", path, err)
		}
		return v
	}
	barStyle := `(() => { const s = getComputedStyle(document.querySelector(".bar")); return s.backgroundColor + " / " + s.color })()`

	t.Run("StyleHashAdmitsTheStyles", func(t *testing.T) {
		if colours := evaluate(t, "/invoice", barStyle); colours != "rgb(11, 122, 117) / rgb(255, 255, 255)" {
			t.Errorf("header colours = %q, want the accent #0b7a75 with white text", colours)
		}
		if widths := evaluate(t, "/invoice", `document.documentElement.scrollWidth + " <= " + document.documentElement.clientWidth`); widths != "360 <= 360" {
			t.Errorf("page width %s: wider than a phone's screen", widths)
		}
	})

	t.Run("WithoutTheHashTheBrowserRefusesThem", func(t *testing.T) {
		if colours := evaluate(t, "/without-hash", barStyle); strings.HasPrefix(colours, "rgb(11, 122, 117)") {
			t.Errorf("header colours = %q: the style applied without its hash, so the policy is not enforced", colours)
		}
	})

	t.Run("Accessibility", func(t *testing.T) {
		axe, err := os.ReadFile(filepath.FromSlash(axePath))
		if err != nil {
			if os.Getenv(browserRequiredEnv) == "1" {
				t.Fatalf("axe-core is not installed (run make test-deps): %v", err)
			}
			t.Skipf("axe-core is not installed (run make test-deps): %v", err)
		}
		// axe reports as JSON: how many rules ran (none would mean it
		// checked nothing) and each violation with its first node.
		run := string(axe) + `;axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify({
  rules: r.passes.length + r.violations.length + r.incomplete.length + r.inapplicable.length,
  violations: r.violations.map(v => v.id + " " + JSON.stringify(v.nodes[0].target))}))`
		for _, path := range []string{"/invoice", "/missing"} {
			var res struct {
				Rules      int      `json:"rules"`
				Violations []string `json:"violations"`
			}
			if err := json.Unmarshal([]byte(evaluate(t, path, run)), &res); err != nil {
				t.Fatal(err)
			}
			if res.Rules == 0 {
				t.Errorf("%s: axe ran no rules", path)
			}
			for _, v := range res.Violations {
				t.Errorf("%s: axe: %s", path, v)
			}
		}
	})
}
