package main

// The init step: each function's init against a floor's.

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// initStarts is how many times the init step starts each function (and the
// floor).
var initStarts = 5

// initFunctions, when set, limits the init step to these functions (the
// -init-functions flag), to measure a few on their own.
var initFunctions string

// initFloor is the fixture every function's init is set against: a Lambda
// program that imports only the runtime client and starts a handler.
const (
	initFloor    = "initfloor"
	initFloorPkg = "./infra/bench/initfloor"
)

// initFigure is one function's init: the median time from exec to its
// first request for an event, and the median peak resident set by then.
type initFigure struct {
	name  string
	init  time.Duration
	rssMB float64
}

// initTimes reports every function's init: the time from exec to its first
// GET .../invocation/next under a Runtime API that never answers, and its
// peak RSS by then, each against the floor's (initfloor) rather than another
// function's, so a cost they all pay shows. Ratios, as times move with a
// shared machine's load; the floor and the functions start in turn, so a
// burst of load falls on all alike.
func (b *bench) initTimes() error {
	names, err := functionNames(initFunctions)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "initstart")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := initBuild(tmp, names...); err != nil {
		return err
	}
	// send-notices will not start without the hosted invoices' base URL;
	// without a mail setting its sender fails only when it sends.
	env := []string{"TABLE_NAME=" + b.cfg.TableName, "DYNAMODB_ENDPOINT=" + b.cfg.Endpoint, "CURSOR_SECRET=" + b.cfg.CursorSecret,
		"PUBLIC_BASE_URL=https://invoices.bench.example.com"}
	floor, figures, err := measureInits(tmp, names, env, initStarts)
	if err != nil {
		return err
	}
	b.printf("## Init time per function\n\n")
	b.printf("Each function built for this machine (`-tags lambda.norpc -trimpath -ldflags \"-s -w\"`) and started %d times under a local Lambda Runtime API: the time from exec to its first request for an event, and its peak RSS by then (VmHWM; medians), each against the floor's: `infra/bench/initfloor`, a Lambda program that imports only the runtime client and starts a handler, built alike and started in turn with the functions. Above the floor is what this repository's code costs a cold start; a package-level variable that computes something, in a package every function imports, shows here as every function's ratio rising. Absolute times are this machine's, not Lambda's.\n\n", initStarts)
	b.printf("%s\n", initTable(floor, figures))
	return nil
}

// initBuild builds the functions names and the floor into dir, as
// hostBuild builds functions: for this machine, with Lambda's tags and
// flags, so the floor differs from them only in its code.
func initBuild(dir string, names ...string) error {
	if err := hostBuild(dir, names...); err != nil {
		return err
	}
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(dir, initFloor), initFloorPkg)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %v\n%s", initFloor, err, out)
	}
	return nil
}

// against is f's init time and peak RSS as multiples of floor's.
func (f initFigure) against(floor initFigure) (init, rss float64) {
	return float64(f.init) / float64(floor.init), f.rssMB / floor.rssMB
}

// initTable is the floor and figures as a Markdown table, each against the
// floor.
func initTable(floor initFigure, figures []initFigure) string {
	var s strings.Builder
	s.WriteString("| function | init (median) | × floor | peak RSS MB | × floor |\n|---|---|---|---|---|\n")
	row := func(f initFigure) {
		t, m := f.against(floor)
		fmt.Fprintf(&s, "| %s | %s | %.2f | %.1f | %.2f |\n", f.name, f.init.Round(time.Millisecond/10), t, f.rssMB, m)
	}
	row(floor)
	lightest, heaviest := figures[0], figures[0]
	for _, f := range figures {
		row(f)
		if f.init > heaviest.init {
			heaviest = f
		}
		if f.init < lightest.init {
			lightest = f
		}
	}
	lt, _ := lightest.against(floor)
	ht, _ := heaviest.against(floor)
	fmt.Fprintf(&s, "\nFloor init %s; the lightest function %s, %.2f times it; the slowest %s, %.2f times it.\n",
		floor.init.Round(time.Millisecond/10), lightest.name, lt, heaviest.name, ht)
	return s.String()
}

// functionNames is the functions of functions/ (only those of the
// comma-separated list only, when it is set).
func functionNames(only string) ([]string, error) {
	mains, err := filepath.Glob(filepath.Join("functions", "*", "main.go"))
	if err != nil || len(mains) == 0 {
		return nil, fmt.Errorf("no functions/*/main.go (run from the repository's root): %v", err)
	}
	var all, names []string
	for _, m := range mains {
		all = append(all, filepath.Base(filepath.Dir(m)))
	}
	if only == "" {
		return all, nil
	}
	for _, n := range strings.Split(only, ",") {
		if n = strings.TrimSpace(n); !slices.Contains(all, n) {
			return nil, fmt.Errorf("no function %q in functions/", n)
		}
		names = append(names, n)
	}
	return names, nil
}

// measureInits starts the floor and each of the functions built in dir
// (by initBuild) starts times, the floor and the functions in turn, with env
// added to their environment, and returns the floor's medians and each
// function's.
func measureInits(dir string, names, env []string, starts int) (initFigure, []initFigure, error) {
	all := append([]string{initFloor}, names...)
	times := make([][]time.Duration, len(all))
	rss := make([][]float64, len(all))
	for range starts {
		for i, n := range all {
			d, mb, err := initOnce(filepath.Join(dir, n), n, env)
			if err != nil {
				return initFigure{}, nil, fmt.Errorf("%s: %w", n, err)
			}
			times[i], rss[i] = append(times[i], d), append(rss[i], mb)
		}
	}
	figures := make([]initFigure, len(all))
	for i, n := range all {
		slices.Sort(rss[i])
		figures[i] = initFigure{name: n, init: median(times[i]), rssMB: rss[i][len(rss[i])/2]}
	}
	return figures[0], figures[1:], nil
}

// initOnce starts the function bin (name for the runtime) under a Lambda
// Runtime API that notes when the first GET .../invocation/next arrives and
// never answers it, then stops the process. It returns the time from just
// before exec to that request, and the process's peak RSS by then (VmHWM,
// MB).
func initOnce(bin, name string, env []string) (time.Duration, float64, error) {
	asked := make(chan time.Time, 1)
	failed := make(chan string, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- time.Now():
		default:
		}
		<-r.Context().Done()
	})
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 500)
		n, _ := r.Body.Read(b)
		w.WriteHeader(http.StatusAccepted)
		select {
		case failed <- string(b[:n]):
		default:
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	rt := &http.Server{Handler: mux}
	go rt.Serve(ln)
	defer rt.Close()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "AWS_LAMBDA_RUNTIME_API="+ln.Addr().String(), "AWS_LAMBDA_FUNCTION_NAME="+name, "AWS_REGION=us-east-1")
	cmd.Env = append(cmd.Env, env...)
	exited := make(chan error, 1)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	var d time.Duration
	select {
	case at := <-asked:
		d = at.Sub(start)
	case msg := <-failed:
		stop()
		return 0, 0, fmt.Errorf("init failed: %s", msg)
	case err := <-exited:
		return 0, 0, fmt.Errorf("exited before asking for an event: %v", err)
	case <-time.After(time.Minute):
		stop()
		return 0, 0, errors.New("asked for no event within a minute")
	}
	// VmHWM, read while the process waits for its event, rather than the
	// rusage of its exit: exec hands the new program the peak of the memory
	// it replaces, which (the child is forked sharing this process's memory
	// until then) is this process's, larger than the floor's own.
	mb, err := (&lambdaProc{cmd: cmd}).peakRSS()
	stop()
	if err != nil {
		return 0, 0, err
	}
	return d, mb, nil
}
