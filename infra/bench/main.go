// Command bench measures the product's performance claims against DynamoDB
// Local in one run and writes them to docs/benchmarks.md (make bench):
// DynamoDB round trips per request for every endpoint, items read per item
// returned for every list filter and by each report, what the hosted invoice
// page and the PDFs read and take against a get-sale, handler overhead
// through the Lambda adapter, cold start and each function's init, webhook
// latency and throughput.
//
// Every step shares one harness (harness.go, requests.go, calls.go,
// lambdaproc.go): the run's table and account, the in-process API server,
// tables in DynamoDB Locals of their own, call counting and timing.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	sales := flag.Int("sales", 10000, "sales to load")
	expenses := flag.Int("expenses", 2000, "expenses to load")
	items := flag.Int("items", 2000, "inventory items to load")
	out := flag.String("out", "docs/benchmarks.md", "report file")
	bins := flag.String("bin", "bin", "folder of the arm64 bootstraps (make build)")
	only := flag.String("only", "", "comma-separated steps to run (default: all); their sections replace their namesakes in the report file (see splice), the rest of it kept")
	flag.DurationVar(&fanInterval, "fanout-interval", fanInterval, "the fanout step's time between one merchant's changes")
	flag.IntVar(&initStarts, "init-starts", initStarts, "the init step's starts of each function")
	flag.StringVar(&initFunctions, "init-functions", "", "comma-separated functions the init step measures (default: all)")
	flag.StringVar(&memoryFunctions, "memory-functions", "", "comma-separated functions the memory step measures (default: all)")
	flag.Parse()
	endpoint := os.Getenv("DYNAMODB_ENDPOINT")
	if endpoint == "" {
		return fmt.Errorf("DYNAMODB_ENDPOINT is not set (make bench starts DynamoDB Local)")
	}
	b, drop, err := newBench(endpoint)
	if err != nil {
		return err
	}
	defer drop()
	b.printHeader()
	// The load once, whichever step needs it first (the events step loads
	// the account itself when run on its own).
	b.loaded = sync.OnceValue(func() error { return b.load(*sales, *expenses, *items) })
	steps := []step{
		// Webhook latency first: DynamoDB Local keeps every table's stream
		// records in one store, and once the load has put tens of thousands
		// there its GetRecords slows to ~200 ms a call, which would measure
		// DynamoDB Local rather than the delivery path.
		{"webhook latency", "## Webhook latency", b.webhookLatency},
		{"webhooks at scale", "## Webhooks at scale", b.webhookScale},
		{"fanout", "## Events fan-out to webhook endpoints", b.eventsFanout},
		{"load", "", b.loaded},
		{"round trips", "## DynamoDB round trips per request", b.roundTrips},
		{"items read", "## Items read per item returned", b.itemsRead},
		{"events", "## Items read per item returned: events feed", b.eventsRead},
		{"invoices", "## Invoice page and PDF", b.invoicePages},
		{"handler overhead", "## Handler overhead", b.handlerOverhead},
		{"create floor", "## Creates against the floor", b.createFloor},
		{"throughput", "## Throughput", b.throughput},
		{"combined filters", "## Combined filters", b.combinedFilters},
		{"cost", "## Cost per operation", b.costPerOperation},
		{"one busy account", "## One busy account", b.writeScaling},
		{"reports", "## Reports", b.reports},
		{"memory", "## Lambda memory", b.lambdaMemory},
		{"cold start", "## Cold start", func() error { return b.coldStart(*bins) }},
		{"init", "## Init time per function", b.initTimes},
	}
	chosen := map[string]bool{}
	for _, name := range strings.Split(*only, ",") {
		if name = strings.TrimSpace(name); name != "" {
			chosen[name] = true
		}
	}
	for name := range chosen {
		if !slices.ContainsFunc(steps, func(s step) bool { return s.name == name }) {
			return fmt.Errorf("-only: no step %q", name)
		}
	}
	var written []section
	for _, s := range steps {
		if len(chosen) > 0 && !chosen[s.name] {
			continue
		}
		start, from := time.Now(), b.report.Len()
		fmt.Fprintf(os.Stderr, "bench: %s ...", s.name)
		if err := s.fn(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Fprintf(os.Stderr, " %s\n", time.Since(start).Round(time.Millisecond))
		if text := b.report.String()[from:]; text != "" {
			if len(chosen) > 0 && !strings.HasPrefix(text, s.heading+"\n") {
				return fmt.Errorf("%s: its section does not begin with its heading %q, so it cannot be spliced into %s", s.name, s.heading, *out)
			}
			written = append(written, section{s.name, text})
		}
	}
	fmt.Print(b.report.String())
	report := b.report.String()
	if len(chosen) > 0 {
		if old, err := os.ReadFile(*out); err == nil {
			report = splice(string(old), written, steps, b.partialNote(*only))
		}
	}
	return os.WriteFile(*out, []byte(report), 0o644)
}

// step is one step of the run: its name (for -only), the heading its
// section of the report begins with ("" for a step that writes none), and
// what it does.
type step struct {
	name, heading string
	fn            func() error
}

// section is what one step wrote into the report.
type section struct{ step, text string }

// partialNote is the line under each section of a partial run (-only), which
// the header's "this one run" does not describe.
func (b *bench) partialNote(only string) string {
	return fmt.Sprintf("_Measured on its own (`go run ./infra/bench -only %q`, %d CPUs, %s), not in the run the header describes._\n\n",
		only, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02 15:04 UTC"))
}

// splice returns the report old with the sections of a partial run in it:
// each replaces the section of the same heading (up to the next heading of
// its level or above), and one the report lacks goes after the section of
// the nearest step before it that the report has (else at the end). Each
// section gets note under its heading.
func splice(old string, written []section, steps []step, note string) string {
	lines := strings.SplitAfter(old, "\n")
	level := func(l string) int {
		n := len(l) - len(strings.TrimLeft(l, "#"))
		if n == 0 || !strings.HasPrefix(l[n:], " ") {
			return 0
		}
		return n
	}
	// bounds returns the lines of the section headed heading: [from, to).
	bounds := func(heading string) (int, int, bool) {
		from := slices.Index(lines, heading+"\n")
		if from < 0 {
			return 0, 0, false
		}
		to := from + 1
		for to < len(lines) && (level(lines[to]) == 0 || level(lines[to]) > level(lines[from])) {
			to++
		}
		return from, to, true
	}
	for _, w := range written {
		i := slices.IndexFunc(steps, func(s step) bool { return s.name == w.step })
		heading, body, _ := strings.Cut(w.text, "\n")
		text := strings.SplitAfter(heading+"\n\n"+note+strings.TrimLeft(body, "\n"), "\n")
		if n := len(text); text[n-1] == "" { // SplitAfter's empty last
			text = text[:n-1]
		}
		if from, to, ok := bounds(heading); ok {
			lines = slices.Concat(lines[:from], text, lines[to:])
			continue
		}
		at := len(lines)
		for j := i - 1; j >= 0; j-- {
			if _, to, ok := bounds(steps[j].heading); steps[j].heading != "" && ok {
				at = to
				break
			}
		}
		lines = slices.Concat(lines[:at], text, lines[at:])
	}
	return strings.Join(lines, "")
}

func (b *bench) printHeader() {
	host, _ := os.Hostname()
	cpu := "unknown CPU"
	if out, err := exec.Command("sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").Output(); err == nil && len(out) > 0 {
		cpu = strings.TrimSpace(string(out))
	}
	b.printf("# Benchmarks\n\nProduced by `make bench` (`go run ./infra/bench` against a DynamoDB Local that `make bench` starts)\n")
	b.printf("on %s: %d CPUs (%s), %s %s/%s, %s. Every figure below comes from this one run;\n", host, runtime.NumCPU(), cpu,
		runtime.Version(), runtime.GOOS, runtime.GOARCH, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	b.printf("times on a shared machine are noise, so the figures that matter are counts and ratios.\n\n")
}
