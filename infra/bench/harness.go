package main

// The harness every step uses: the run's table, account and API server,
// tables of their own in DynamoDB Locals of their own, the DynamoDB client
// middlewares that count and capture calls, and the figures' arithmetic.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// bench holds the system under test and the report being written.
type bench struct {
	ctx      context.Context
	cfg      app.Config
	store    *store.Store
	db       *dynamodb.Client
	srv      *api.Server
	key      string
	acct     business.Account
	seq      atomic.Int64 // see benchCalls
	spans    store.Calls
	capture  atomic.Bool
	mu       sync.Mutex
	captured []any
	report   strings.Builder
	quiet    *slog.Logger
	loaded   func() error // the load, made once (see run)
}

// newBench makes the run's table on the DynamoDB Local at endpoint, its API
// server and its account; drop deletes the table.
func newBench(endpoint string) (b *bench, drop func(), err error) {
	b = &bench{ctx: context.Background(), quiet: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	b.cfg = app.Config{TableName: fmt.Sprintf("bench%d", time.Now().UnixNano()), Endpoint: endpoint, CursorSecret: "bench-cursor-secret"}
	st, err := app.NewStore(b.ctx, b.cfg, b.spans.Option(), b.captureInputs)
	if err != nil {
		return nil, nil, err
	}
	b.store, b.db = st, st.Client()
	if err := st.EnsureTable(b.ctx); err != nil {
		return nil, nil, err
	}
	drop = func() {
		_, _ = b.db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(b.cfg.TableName)})
	}
	// A warm container's key cache outlives the whole run, as it would
	// between requests a few seconds apart.
	b.srv = api.NewServer(st, b.quiet, time.Hour)
	if b.acct, b.key, err = createAccount(b.ctx, st, "Bench Shop", "BENCH1"); err != nil {
		drop()
		return nil, nil, err
	}
	return b, drop, nil
}

func (b *bench) printf(format string, args ...any) { fmt.Fprintf(&b.report, format, args...) }

// createAccount makes an account on st and returns it with its first key.
func createAccount(ctx context.Context, st *store.Store, name, code string) (business.Account, string, error) {
	a, _ := business.NewAccount(name, code, "GHS", "")
	return st.CreateAccount(ctx, a)
}

// actAs has the bench's requests carry key until restore is called.
func (b *bench) actAs(key string) (restore func()) {
	saved := b.key
	b.key = key
	return func() { b.key = saved }
}

// actAsNewAccount makes an account of its own on the run's table and has
// the bench's requests act as it until restore is called.
func (b *bench) actAsNewAccount(name, code string) (restore func(), err error) {
	_, key, err := createAccount(b.ctx, b.store, name, code)
	if err != nil {
		return nil, err
	}
	return b.actAs(key), nil
}

// ownTable makes a table named after the run's with suffix, in a DynamoDB
// Local of its own, on a store with opts; stop ends that DynamoDB Local.
// DynamoDB Local keeps the stream records of all its tables in one store
// and slows as it fills: after the load the run's answers a write in tens
// of milliseconds, one at a time, where DynamoDB takes a few side by side.
func (b *bench) ownTable(ctx context.Context, suffix string, opts ...func(*dynamodb.Options)) (*store.Store, app.Config, func(), error) {
	cfg := b.cfg
	cfg.TableName += suffix
	endpoint, stop, err := startDynamoDB()
	if err != nil {
		return nil, cfg, nil, err
	}
	cfg.Endpoint = endpoint
	st, err := app.NewStore(ctx, cfg, opts...)
	if err == nil {
		err = st.EnsureTable(ctx)
	}
	if err != nil {
		stop()
		return nil, cfg, nil, err
	}
	return st, cfg, stop, nil
}

// startDynamoDB starts a DynamoDB Local in memory on a free port of
// 127.0.0.1 (infra/dynamodb-local/start.sh, as make bench starts the run's
// own) and returns its endpoint and what stops it.
func startDynamoDB() (string, func(), error) {
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	stop, err := startScript("infra/dynamodb-local/start.sh", strconv.Itoa(port))
	if err != nil {
		return "", nil, fmt.Errorf("start DynamoDB Local: %w", err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port), stop, nil
}

// freePort is a port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startScript runs one of infra's start scripts, which starts a server,
// waits until it answers and prints its process id, and returns what stops
// that server.
func startScript(script string, args ...string) (func(), error) {
	out, err := exec.Command(script, args...).Output()
	if err != nil {
		return nil, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return nil, fmt.Errorf("pid %q", out)
	}
	return func() {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Signal(syscall.SIGTERM) // Mailpit deletes its temporary database on it
		}
	}, nil
}

// aroundCall is what a client middleware does around one DynamoDB call.
type aroundCall = func(context.Context, middleware.InitializeInput, middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error)

// clientMiddleware is a DynamoDB client option that runs fn around every
// call the client makes (retries of one call pass through it once).
func clientMiddleware(name string, fn aroundCall) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc(name, fn), middleware.After)
		})
	}
}

// captureInputs records each DynamoDB operation's input while capture is on,
// so the overhead benchmark can replay exactly the calls a handler made.
func (b *bench) captureInputs(o *dynamodb.Options) {
	clientMiddleware("Capture", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		if b.capture.Load() {
			b.mu.Lock()
			b.captured = append(b.captured, in.Parameters)
			b.mu.Unlock()
		}
		return next.HandleInitialize(ctx, in)
	})(o)
}

// captureCalls runs fn, timing it, and returns the inputs of the DynamoDB
// calls it made.
func (b *bench) captureCalls(fn func() error) ([]any, time.Duration, error) {
	b.mu.Lock()
	b.captured = nil
	b.mu.Unlock()
	b.capture.Store(true)
	start := time.Now()
	err := fn()
	d := time.Since(start)
	b.capture.Store(false)
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]any(nil), b.captured...), d, err
}

// replay makes the captured DynamoDB calls again, bare, on the same client.
func (b *bench) replay(inputs []any) error {
	for _, in := range inputs {
		var err error
		switch in := in.(type) {
		case *dynamodb.GetItemInput:
			c := *in // each call its own input, as each request has
			_, err = b.db.GetItem(b.ctx, &c)
		case *dynamodb.QueryInput:
			c := *in
			_, err = b.db.Query(b.ctx, &c)
		case *dynamodb.BatchGetItemInput:
			c := *in
			_, err = b.db.BatchGetItem(b.ctx, &c)
		default:
			return fmt.Errorf("cannot replay %T", in)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// countReads is a DynamoDB client option that adds to n the items each read
// read: a Query's (or Scan's) ScannedCount, the item a GetItem found, the
// items a BatchGetItem returned.
func countReads(n *atomic.Int64) func(*dynamodb.Options) {
	return clientMiddleware("CountReads", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		out, md, err := next.HandleInitialize(ctx, in)
		switch r := out.Result.(type) {
		case *dynamodb.QueryOutput:
			n.Add(int64(r.ScannedCount))
		case *dynamodb.ScanOutput:
			n.Add(int64(r.ScannedCount))
		case *dynamodb.GetItemOutput:
			if r.Item != nil {
				n.Add(1)
			}
		case *dynamodb.BatchGetItemOutput:
			for _, items := range r.Responses {
				n.Add(int64(len(items)))
			}
		}
		return out, md, err
	})
}

// parallel runs fn(0..n-1) on 8 goroutines and returns the first error.
func parallel(n int, fn func(i int) error) error {
	var next atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || first.Load() != nil {
					return
				}
				if err := fn(i); err != nil {
					first.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	return nil
}

// untilDeadline has clients goroutines each call fn(its index) back to back
// until deadline; it returns the first error (which stops its goroutine).
func untilDeadline(clients int, deadline time.Time, fn func(client int) error) error {
	var first atomic.Value
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if err := fn(c); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	return nil
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// percentile is the p-th (0 to 1) of d; 0 for none.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(float64(len(s)-1)*p)]
}

// thousands formats n with a comma between each group of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// plainNumber prints a figure without trailing zeros.
func plainNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// dollars formats a difference in dollars, to the cent.
func dollars(d float64) string {
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	if d < 0.005 {
		return "$0.00"
	}
	return fmt.Sprintf("%s$%.2f", sign, d)
}

// verdict is a "met" column's answer.
func verdict(met bool) string {
	if met {
		return "yes"
	}
	return "**no**"
}
