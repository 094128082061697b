// Command bench measures the product's performance claims against DynamoDB
// Local in one run and writes them to docs/benchmarks.md (make bench):
// DynamoDB round trips per request for every endpoint, items read per item
// returned for every list filter, handler overhead through the Lambda
// adapter, cold start, webhook latency and throughput.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// bench holds the system under test and the report being written.
type bench struct {
	ctx      context.Context
	cfg      app.Config
	store    *store.Store
	db       *dynamodb.Client
	srv      *api.Server
	key      string
	acct     business.Account
	calls    atomic.Int64
	seq      atomic.Int64 // see benchCalls
	spans    store.Calls
	capture  atomic.Bool
	mu       sync.Mutex
	captured []any
	report   strings.Builder
	quiet    *slog.Logger
}

func run() error {
	sales := flag.Int("sales", 10000, "sales to load")
	expenses := flag.Int("expenses", 2000, "expenses to load")
	items := flag.Int("items", 2000, "inventory items to load")
	out := flag.String("out", "docs/benchmarks.md", "report file")
	bins := flag.String("bin", "bin", "folder of the arm64 bootstraps (make build)")
	only := flag.String("only", "", "comma-separated steps to run (default: all); the report then holds only those")
	flag.Parse()
	endpoint := os.Getenv("DYNAMODB_ENDPOINT")
	if endpoint == "" {
		return fmt.Errorf("DYNAMODB_ENDPOINT is not set (make bench starts DynamoDB Local)")
	}
	b := &bench{ctx: context.Background(), quiet: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	b.cfg = app.Config{TableName: fmt.Sprintf("bench%d", time.Now().UnixNano()), Endpoint: endpoint, CursorSecret: "bench-cursor-secret"}
	st, err := app.NewStore(b.ctx, b.cfg, store.CountCalls(&b.calls), b.spans.Option(), b.captureInputs)
	if err != nil {
		return err
	}
	b.store, b.db = st, st.Client()
	if err := st.EnsureTable(b.ctx); err != nil {
		return err
	}
	defer b.db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(b.cfg.TableName)})
	// A warm container's key cache outlives the whole run, as it would
	// between requests a few seconds apart.
	b.srv = api.NewServer(st, b.quiet, time.Hour)
	a, _ := business.NewAccount("Bench Shop", "BENCH1", "GHS", "")
	if b.acct, b.key, err = st.CreateAccount(b.ctx, a); err != nil {
		return err
	}
	b.header()
	steps := []struct {
		name string
		fn   func() error
	}{
		// Webhook latency first: DynamoDB Local keeps every table's stream
		// records in one store, and once the load has put tens of thousands
		// there its GetRecords slows to ~200 ms a call, which would measure
		// DynamoDB Local rather than the delivery path.
		{"webhook latency", b.webhookLatency},
		{"webhooks at scale", b.webhookScale},
		{"load", func() error { return b.load(*sales, *expenses, *items) }},
		{"round trips", b.roundTrips},
		{"items read", b.itemsRead},
		{"handler overhead", b.overhead},
		{"create floor", b.createFloor},
		{"throughput", b.throughput},
		{"combined filters", b.combinedFilters},
		{"cost", b.cost},
		{"one busy account", b.writeScaling},
		{"memory", b.memory},
		{"cold start", func() error { return b.coldStart(*bins) }},
	}
	chosen := map[string]bool{}
	for _, name := range strings.Split(*only, ",") {
		if name = strings.TrimSpace(name); name != "" {
			chosen[name] = true
		}
	}
	for _, s := range steps {
		if len(chosen) > 0 && !chosen[s.name] {
			continue
		}
		start := time.Now()
		fmt.Fprintf(os.Stderr, "bench: %s ...", s.name)
		if err := s.fn(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Fprintf(os.Stderr, " %s\n", time.Since(start).Round(time.Millisecond))
	}
	fmt.Print(b.report.String())
	return os.WriteFile(*out, []byte(b.report.String()), 0o644)
}

// captureInputs records each DynamoDB operation's input while capture is on,
// so the overhead benchmark can replay exactly the calls a handler made.
func (b *bench) captureInputs(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("Capture",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if b.capture.Load() {
					b.mu.Lock()
					b.captured = append(b.captured, in.Parameters)
					b.mu.Unlock()
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	})
}

func (b *bench) printf(format string, args ...any) { fmt.Fprintf(&b.report, format, args...) }

func (b *bench) header() {
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
