package main

// The reports step: what each report reads, at 10,000 and at 20,000 sales
// spread over a year, against a get-sale; and the round trips of the settings
// and report routes (part of the round trips step).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"bizdata/infra/streampoll"
	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// countReads is a DynamoDB client option that adds to n the items each read
// read: a Query's (or Scan's) ScannedCount, the item a GetItem found, the
// items a BatchGetItem returned.
func countReads(n *atomic.Int64) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("CountReads",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
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
				}), middleware.After)
		})
	}
}

// benchClock is a store clock that spreads writes over a span: each call
// moves it on by one step, wrapping after count calls, so count creates made
// in parallel are stamped evenly over the span (a create reads the clock
// once). Set between phases, never while the store writes.
type benchClock struct{ base, step, count, n atomic.Int64 }

func (c *benchClock) now() time.Time {
	i := c.n.Add(1) - 1
	if n := c.count.Load(); n > 0 {
		i %= n
	}
	return time.Unix(0, c.base.Load()+i*c.step.Load()).UTC()
}

// spread has the next count calls stamped evenly over [from, from+span).
func (c *benchClock) spread(from time.Time, span time.Duration, count int) {
	c.base.Store(from.UnixNano())
	c.step.Store(int64(span) / int64(count))
	c.count.Store(int64(count))
	c.n.Store(0)
}

// stop has every call return t.
func (c *benchClock) stop(t time.Time) { c.spread(t, 0, 1) }

// reportShop is the account the reports step measures, on a table of its own
// whose stream feeds the apply-report-figures handler as the devserver does.
type reportShop struct {
	b        *bench
	ctx      context.Context
	st       *store.Store // the API's store: clock set, reads counted
	consumer *store.Store // the stream consumer's
	srv      *api.Server
	h        http.Handler // every route, for the load
	key      string
	acct     string
	clock    benchClock
	reads    atomic.Int64
	spans    store.Calls
	adapters map[string]*httpadapter.HandlerAdapterV2
	// gate is held by the stream consumer while it handles a batch; holding
	// it pauses the consumer, as one that has fallen behind.
	gate     sync.Mutex
	consumed atomic.Int64 // figures inserts handed to the consumer
	sales    int          // sales loaded so far
	items    int          // inventory items
}

// The year the shop's sales are spread over (UTC days; the shop's timezone
// is Africa/Accra, UTC all year).
var (
	reportYear    = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	reportYearLen = reportYear.AddDate(1, 0, 0).Sub(reportYear)
	reportAfter   = time.Date(2026, 1, 20, 12, 0, 0, 0, time.UTC) // the clock while measuring
)

const (
	reportItems    = 2000
	reportExpenses = 2000 // per 10,000 sales, as the main load
	reportVolume   = 10000
	reportWaiting  = 50
	// reportItemsMore are the items the second volume adds (20,000 in all).
	reportItemsMore = 18000
)

func (b *bench) newReportShop(ctx context.Context) (*reportShop, func(), error) {
	// A DynamoDB Local of its own: by this step the run's one holds the
	// load and every earlier step's streams, and answers the shop's setup
	// bursts too slowly (503s), as one shared by the whole test suite did.
	cfg := b.cfg
	cfg.TableName += "-reports"
	endpoint, stop, err := startDynamoDB()
	if err != nil {
		return nil, nil, err
	}
	cfg.Endpoint = endpoint
	s := &reportShop{b: b, ctx: ctx, adapters: map[string]*httpadapter.HandlerAdapterV2{}}
	st, err := app.NewStore(ctx, cfg, countReads(&s.reads), s.spans.Option())
	if err != nil {
		return nil, stop, err
	}
	s.clock.stop(reportYear.Add(-time.Hour))
	st.SetClock(s.clock.now)
	if err := st.EnsureTable(ctx); err != nil {
		return nil, stop, err
	}
	cleanup := stop
	s.st = st
	// The consumer has a store (and client) of its own, as the
	// apply-report-figures function has.
	cst, err := app.NewStore(ctx, cfg)
	if err != nil {
		return nil, cleanup, err
	}
	s.consumer = cst
	streams, err := app.NewStreams(ctx, cfg.Endpoint)
	if err != nil {
		return nil, cleanup, err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	apply := app.ApplyReportFigures(cst, log)
	handle := func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		s.gate.Lock()
		defer s.gate.Unlock()
		if ctx.Err() != nil { // the step is over
			return events.DynamoDBEventResponse{}, nil
		}
		s.consumed.Add(int64(len(ev.Records)))
		return apply(ctx, ev)
	}
	go streampoll.PollMapping(ctx, cst.Client(), streams, cfg.TableName, streampoll.ApplyReportFigures, app.IsFiguresInsert, handle, log)

	s.srv = api.NewServer(st, b.quiet, time.Hour)
	s.h = s.srv.Handler(api.Routes)
	a, _ := business.NewAccount("Report Shop", fmt.Sprintf("REP%d", time.Now().UnixNano()%1e9), "GHS", "")
	acct, key, err := st.CreateAccount(ctx, a)
	if err != nil {
		return nil, cleanup, err
	}
	s.acct, s.key = acct.ID, key
	if _, err := s.do("PUT", "/api/v1/user/settings", map[string]any{"timezone": "Africa/Accra"}); err != nil {
		return nil, cleanup, err
	}
	return s, cleanup, nil
}

// do serves one request through the shop's handler (all routes) and returns
// its body.
func (s *reportShop) do(method, path string, body any) ([]byte, error) {
	var j []byte
	if body != nil {
		j, _ = json.Marshal(body)
	}
	// A 503 is retried after its Retry-After, as a client does (the setup's
	// bursts can find DynamoDB Local busy); a write carries an
	// Idempotency-Key, so a retry of one that committed is its replay.
	idem := ""
	if method == "POST" {
		idem = "bench-" + strconv.FormatUint(rand.Uint64(), 36)
	}
	for try := 1; ; try++ {
		req := httptest.NewRequest(method, path, bytes.NewReader(j))
		req.Header.Set("Authorization", "Bearer "+s.key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if idem != "" {
			req.Header.Set("Idempotency-Key", idem)
		}
		rec := httptest.NewRecorder()
		s.h.ServeHTTP(rec, req)
		if rec.Code == http.StatusServiceUnavailable && try < 5 {
			wait, _ := strconv.Atoi(rec.Header().Get("Retry-After"))
			time.Sleep(time.Duration(max(wait, 1)) * time.Second)
			continue
		}
		if rec.Code != 200 {
			return nil, fmt.Errorf("%s %s: %d %s", method, path, rec.Code, rec.Body.String())
		}
		return rec.Body.Bytes(), nil
	}
}

// setup makes the shop's customers, categories and items (at one instant).
func (s *reportShop) setup() error {
	s.clock.stop(reportYear.Add(-time.Hour))
	if err := parallel(20, func(i int) error {
		_, err := s.do("POST", "/api/v1/customers/add", map[string]any{"name": fmt.Sprintf("Customer %d", i)})
		return err
	}); err != nil {
		return err
	}
	if err := parallel(10, func(i int) error {
		_, err := s.do("POST", "/api/v1/inventory/categories/add", map[string]any{"category_name": fmt.Sprintf("Category %d", i)})
		return err
	}); err != nil {
		return err
	}
	return s.addItems(0, reportItems)
}

// addItems adds the inventory items from..from+n-1: a quarter alert at 10,
// a fortieth out of stock.
func (s *reportShop) addItems(from, n int) error {
	err := parallel(n, func(i int) error {
		i += from
		body := map[string]any{"item_code": fmt.Sprintf("ITEM-%05d", i), "item_name": fmt.Sprintf("Item %d", i),
			"category_id": i%10 + 1, "item_price": "12.50", "unit_cost": "7.25", "quantity": fmt.Sprint(i % 40)}
		if i%4 == 0 {
			body["minimum_qty_alert"] = "10"
		}
		_, err := s.do("POST", "/api/v1/inventory/items/add", body)
		return err
	})
	if err == nil {
		s.items = from + n
	}
	return err
}

// load adds expenses and sales, each stamped evenly over the year: sales a
// third draft, a third partial, a third paid, as the main load, each due 30
// days after it was made.
func (s *reportShop) load(sales, expenses int) error {
	s.clock.spread(reportYear, reportYearLen, expenses)
	if err := parallel(expenses, func(i int) error {
		_, err := s.do("POST", "/api/v1/expenses/add", map[string]any{"expense_type": expenseTypes[i%len(expenseTypes)],
			"expense_amount": "40.00", "payment_method": "Cash", "created_by": "Bench"})
		return err
	}); err != nil {
		return err
	}
	first := s.sales
	s.clock.spread(reportYear, reportYearLen, sales)
	err := parallel(sales, func(i int) error {
		n := first + i
		at := reportYear.Add(time.Duration(int64(reportYearLen) / int64(sales) * int64(i)))
		paid, pt := []string{"0", "10.00", "50.00"}[n%3], []string{"None", "Cash", "Mobile Money"}[n%3]
		body := map[string]any{
			"invoice_code": fmt.Sprint(100000 + n), "invoice_number": fmt.Sprint(100000 + n), "customer_id": n%20 + 1,
			"sub_total_amount": "50.00", "total_amount": "50.00", "amount_paid": paid, "payment_type": pt,
			"invoice_type": invoiceTypes[(n/3)%3], "due_date": at.AddDate(0, 0, 30).Format(business.DateFormat),
			"items": []any{map[string]any{"item_name": "Goods", "unit_price": "25.00", "quantity": "2"}},
		}
		if paid != "0" {
			body["payment_date"] = at.Format(business.DateFormat)
		}
		_, err := s.do("POST", "/api/v1/sales/add", body)
		return err
	})
	s.clock.stop(reportAfter)
	if err != nil {
		return err
	}
	s.sales += sales
	return nil
}

// waiting counts the shop's figures items not yet applied (read on the
// consumer's client, uncounted).
func (s *reportShop) waiting() (int, error) {
	items, err := s.consumer.WaitingFigures(s.ctx, s.acct)
	return len(items), err
}

// settle waits for the stream's consumer to apply every figures item (up to
// limit), then applies what still waits as reports do, 100 at a time. It
// returns what waited when it began, how long the consumer took (or limit),
// and how many the reports applied.
func (s *reportShop) settle(limit time.Duration) (int, time.Duration, int, error) {
	start := time.Now()
	first, err := s.waiting()
	if err != nil {
		return 0, 0, 0, err
	}
	for n := first; n > 0 && time.Since(start) < limit; {
		time.Sleep(time.Second)
		if n, err = s.waiting(); err != nil {
			return 0, 0, 0, err
		}
	}
	took := time.Since(start)
	left, err := s.waiting()
	if err != nil {
		return 0, 0, 0, err
	}
	for {
		_, _, err := s.st.ReportDays(s.ctx, s.acct, "2025-01-01", "2025-01-01")
		var be *business.Error
		if errors.As(err, &be) && be.Code == business.EBUSY {
			continue
		}
		if err != nil {
			return 0, 0, 0, err
		}
		break
	}
	// The steady state: no debt written for as long as reports read the
	// debts from the table after one is (the index may trail it).
	time.Sleep(store.DebtsSettle)
	return first, took, left, nil
}

// renameApplied renames customer 1 (the n-th time) and waits until the
// stream's consumer has applied the rename to the customer's debt.
func (s *reportShop) renameApplied(n int) error {
	if _, err := s.do("PUT", "/api/v1/customers/1", map[string]any{"name": fmt.Sprintf("Customer 1 (%d)", n)}); err != nil {
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n, err := s.waiting(); err != nil || n == 0 {
			return err
		}
	}
	return errors.New("the consumer did not apply a rename within 30s")
}

// invoke serves one request through the Lambda function of the route, as
// bench.invoke does, for the shop; it returns the body, the time it took
// and the DynamoDB items read, calls and sequential round trips.
func (s *reportShop) invoke(function, method, path, query string) (string, time.Duration, reqCost, error) {
	a, ok := s.adapters[function]
	if !ok {
		h, err := app.FunctionHandler(s.srv, function)
		if err != nil {
			return "", 0, reqCost{}, err
		}
		a = httpadapter.NewV2(h)
		s.adapters[function] = a
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RawPath: path, RawQueryString: query,
		Headers: map[string]string{"authorization": "Bearer " + s.key},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			DomainName: "bench.execute-api.local", Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path},
		},
	}
	reads, mark := s.reads.Load(), s.spans.Mark()
	start := time.Now()
	res, err := a.ProxyWithContext(context.Background(), ev)
	d := time.Since(start)
	calls, depth := s.spans.Since(mark)
	c := reqCost{reads: int(s.reads.Load() - reads), calls: calls, depth: depth}
	if err == nil && res.StatusCode != 200 {
		err = fmt.Errorf("%s %s?%s: %w: %s", method, path, query, statusError(res.StatusCode), res.Body)
	}
	return res.Body, d, c, err
}

// reqCost is what one request cost DynamoDB.
type reqCost struct{ reads, calls, depth int }

// reportCase is one report request.
type reportCase struct {
	name, function, query string
	runs                  int
	target                func(s *reportShop, c reqCost, body string) (string, bool) // the target, and whether c meets it
	// sameCount: the items read must not grow from one volume to the
	// next; maxRatio (if set): the latency at most this many get-sales.
	sameCount bool
	maxRatio  float64
}

// reportRun is one case measured at one volume.
type reportRun struct {
	cost        reqCost   // the most any run cost (each figure on its own)
	costs       []reqCost // each run's
	median, get time.Duration
	body        string
}

// spread formats the runs' values of one figure: "n" when every run had the
// same, "min–max" otherwise.
func (r reportRun) spread(of func(reqCost) int, format func(int) string) string {
	lo, hi := of(r.costs[0]), of(r.costs[0])
	for _, c := range r.costs {
		lo, hi = min(lo, of(c)), max(hi, of(c))
	}
	if lo == hi {
		return format(lo)
	}
	return format(lo) + "–" + format(hi)
}

// reads and trips are the runs' items read, and calls (sequential round
// trips), as spread formats them.
func (r reportRun) reads() string {
	return r.spread(func(c reqCost) int { return c.reads }, thousands)
}

func (r reportRun) trips() string {
	return r.spread(func(c reqCost) int { return c.calls }, thousands) + " (" + r.spread(func(c reqCost) int { return c.depth }, thousands) + ")"
}

// measure makes the case warm+runs times, each followed by a get-sale of the
// shop, and returns the median of each and what each run cost.
func (s *reportShop) measure(c reportCase, warm int, before func() error) (reportRun, error) {
	var rep, get []time.Duration
	var out reportRun
	for i := 0; i < warm+c.runs; i++ {
		if before != nil && i >= warm {
			if err := before(); err != nil {
				return out, err
			}
		}
		body, d, cost, err := s.invoke(c.function, "GET", "/api/v1/reports/"+strings.TrimPrefix(c.function, "report-"), c.query)
		if err != nil {
			return out, fmt.Errorf("%s: %w", c.name, err)
		}
		_, g, _, err := s.invoke("get-sale", "GET", "/api/v1/sales/100042", "")
		if err != nil {
			return out, err
		}
		if i < warm {
			continue
		}
		out.costs, out.body = append(out.costs, cost), body
		out.cost = reqCost{max(out.cost.reads, cost.reads), max(out.cost.calls, cost.calls), max(out.cost.depth, cost.depth)}
		rep, get = append(rep, d), append(get, g)
	}
	out.median, out.get = median(rep), median(get)
	return out, nil
}

// reportField reads a number of a report's response: data.report.<path>.
func reportField(body string, path ...string) float64 {
	var v any
	if json.Unmarshal([]byte(body), &v) != nil {
		return -1
	}
	for _, k := range append([]string{"data", "report"}, path...) {
		m, ok := v.(map[string]any)
		if !ok {
			return -1
		}
		v = m[k]
	}
	switch x := v.(type) {
	case float64:
		return x
	case string:
		var f float64
		if _, err := fmt.Sscan(x, &f); err == nil {
			return f
		}
	}
	return -1
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

func atMost(n int) func(*reportShop, reqCost, string) (string, bool) {
	return func(_ *reportShop, c reqCost, _ string) (string, bool) {
		return fmt.Sprintf("<= %d", n), c.reads <= n
	}
}

// startDynamoDB starts a DynamoDB Local in memory on a free port of
// 127.0.0.1 (infra/dynamodb-local/start.sh, as make bench starts the run's
// own) and returns its endpoint and what stops it.
func startDynamoDB() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	out, err := exec.Command("infra/dynamodb-local/start.sh", strconv.Itoa(port)).Output()
	if err != nil {
		return "", nil, fmt.Errorf("start DynamoDB Local: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return "", nil, fmt.Errorf("start DynamoDB Local: pid %q", out)
	}
	stop := func() {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port), stop, nil
}

// reports measures each report at 10,000 and at 20,000 sales.
func (b *bench) reports() error {
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	s, cleanup, err := b.newReportShop(ctx)
	if cleanup != nil {
		defer cleanup()
	}
	if err != nil {
		return err
	}
	defer func() { // the consumer stopped between batches
		s.gate.Lock()
		cancel()
		s.gate.Unlock()
	}()
	if err := s.setup(); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	cases := []reportCase{
		{"summary, 12 months by month", "report-summary", "from=2025-01-01&to=2025-12-31&group_by=month", 21, atMost(400), true, 0},
		{"summary, 31 days by day", "report-summary", "from=2025-03-01&to=2025-03-31&group_by=day", 21, atMost(200), true, 0},
		{"summary, a quarter by week", "report-summary", "from=2025-04-01&to=2025-06-30&group_by=week", 21,
			func(_ *reportShop, c reqCost, _ string) (string, bool) {
				return "none stated (91 days + settings: 92)", true
			}, true, 0},
		{"receivables", "report-receivables", "", 11, atMost(400), true, 10},
		{"inventory", "report-inventory", "", 11, atMost(400), false, 10},
	}
	waitCase := reportCase{fmt.Sprintf("summary, 12 months by month, %d figures items waiting", reportWaiting), "report-summary",
		"from=2025-01-01&to=2025-12-31&group_by=month", 5, nil, false, 0}
	freshCase := reportCase{fmt.Sprintf("receivables, a debt written less than %s before", store.DebtsSettle), "report-receivables", "", 11, nil, false, 0}
	type volume struct {
		sales, items            int
		loaded, took            time.Duration
		first, left             int
		runs                    []reportRun
		waited, fresh           reportRun
		totalSales, totalIssued float64
	}
	var vols []volume
	for v := 0; v < 2; v++ {
		var vol volume
		start := time.Now()
		if v == 1 { // the second volume's inventory is ten times the first's
			if err := s.addItems(s.items, reportItemsMore); err != nil {
				return fmt.Errorf("load items: %w", err)
			}
		}
		if err := s.load(reportVolume, reportExpenses); err != nil {
			return fmt.Errorf("load: %w", err)
		}
		vol.items = s.items
		vol.sales, vol.loaded = s.sales, time.Since(start)
		if vol.first, vol.took, vol.left, err = s.settle(5 * time.Minute); err != nil {
			return fmt.Errorf("settle: %w", err)
		}
		for _, c := range cases {
			r, err := s.measure(c, 3, nil)
			if err != nil {
				return err
			}
			vol.runs = append(vol.runs, r)
		}
		renames := 0
		if vol.fresh, err = s.measure(freshCase, 0, func() error { renames++; return s.renameApplied(renames) }); err != nil {
			return err
		}
		sum := vol.runs[0].body
		vol.totalSales, vol.totalIssued = reportField(sum, "totals", "sales_count"), reportField(sum, "totals", "invoiced")
		// A consumer that has fallen behind: paused, while 50 expenses each
		// of a day of its own wait to be applied by the report.
		s.gate.Lock()
		batch := 0
		vol.waited, err = s.measure(waitCase, 0, func() error {
			s.clock.spread(reportYear.Add(time.Duration(batch)*time.Hour), reportYearLen, reportWaiting)
			batch++
			defer s.clock.stop(reportAfter)
			if err := parallel(reportWaiting, func(i int) error {
				_, err := s.do("POST", "/api/v1/expenses/add", map[string]any{"expense_type": "Fuel",
					"expense_amount": "1.00", "payment_method": "Cash", "created_by": "Bench"})
				return err
			}); err != nil {
				return err
			}
			if n, err := s.waiting(); err != nil || n != reportWaiting {
				return fmt.Errorf("%d figures items wait, want %d (%v)", n, reportWaiting, err)
			}
			return nil
		})
		s.gate.Unlock()
		if err != nil {
			return err
		}
		vols = append(vols, vol)
	}

	b.printf("## Reports\n\n")
	b.printf("A shop of its own, on a table of its own in a DynamoDB Local of its own, whose stream feeds the apply-report-figures handler (`app.ApplyReportFigures` through `streampoll.PollMapping` with the template's mapping, as the devserver runs it, on a DynamoDB client of its own). "+
		"The store's clock (`SetClock`) stamps the shop's sales and expenses evenly over 2025 (timezone Africa/Accra: UTC days), so every day of the year has figures: "+
		"%s sales (a third draft, a third partial, a third paid, as the main load; each due 30 days after it was made) with %s expenses, then %s sales and %s expenses more; %s inventory items (a quarter alerting at 10, a fortieth out of stock), then 18,000 more with the second volume; 20 customers. "+
		"(The main load is not used: its sales are all stamped within a few minutes, so all its figures fall on one day.) "+
		"Each report through its Lambda function, API key cache warm, once every figures item had been applied and %s had passed since (the steady state: receivables read the debts' index entries alone once no debt has been written for that long; the last row measures them within it); items read are the Query's ScannedCount and the items GetItem and BatchGetItem returned, counted by SDK middleware; calls and sequential round trips as in the round trips table; where the runs differed, the least and the most (a target is checked against the most). "+
		"Latency: the median of the runs (summaries 21, receivables and inventory 11, after 3 warm-ups), each followed by a get-sale of the shop, against the median of those get-sales. "+
		"Targets: a 12-month summary by month reads at most 400 items and a 31-day summary by day at most 200, the same count at 10,000 and at 20,000 sales; receivables at most 400 items, the same count at both volumes, and inventory at most 400 at %s and at %s items, each at most 10 times as long as a get-sale.\n\n",
		thousands(reportVolume), thousands(reportExpenses), thousands(reportVolume), thousands(reportExpenses), thousands(vols[0].items), store.DebtsSettle, thousands(vols[0].items), thousands(vols[1].items))
	v0, v1 := thousands(vols[0].sales), thousands(vols[1].sales)
	b.printf("| report | query | items read at %s sales | at %s | target | met | calls (sequential) at %s | at %s | latency ÷ get-sale at %s | at %s |\n|---|---|---|---|---|---|---|---|---|---|\n",
		v0, v1, v0, v1, v0, v1)
	for i, c := range cases {
		r0, r1 := vols[0].runs[i], vols[1].runs[i]
		t0, ok0 := c.target(s, r0.cost, r0.body)
		t1, ok1 := c.target(s, r1.cost, r1.body)
		target := t0
		if t1 != t0 {
			target = t0 + " at " + thousands(vols[0].sales) + "; " + t1 + " at " + thousands(vols[1].sales)
		}
		met := "yes"
		if !ok0 || !ok1 {
			met = "no"
		}
		r0x, r1x := float64(r0.median)/float64(r0.get), float64(r1.median)/float64(r1.get)
		if c.maxRatio > 0 {
			target += fmt.Sprintf("; latency <= %.0f× a get-sale", c.maxRatio)
			if r0x > c.maxRatio || r1x > c.maxRatio {
				met = "no (latency)"
			}
		}
		if c.sameCount {
			if r0.cost.reads != r1.cost.reads {
				met = "no (the count grew)"
			} else if met == "yes" {
				met = "yes, the same count"
			}
		}
		query := c.query
		if query == "" {
			query = "(none)"
		}
		b.printf("| %s | `%s` | %s | %s | %s | %s | %s | %s | %.2f | %.2f |\n", c.name, query,
			r0.reads(), r1.reads(), target, met, r0.trips(), r1.trips(), r0x, r1x)
	}
	w0, w1 := vols[0].waited, vols[1].waited
	b.printf("| %s (the consumer paused; %d runs) | `%s` | %s | %s | none: the bound holds once applied (a report applies at most 1,000; more is EBUSY) | n/a | %s | %s | %.2f | %.2f |\n",
		waitCase.name, waitCase.runs, waitCase.query, w0.reads(), w1.reads(), w0.trips(), w1.trips(),
		float64(w0.median)/float64(w0.get), float64(w1.median)/float64(w1.get))
	f0, f1 := vols[0].fresh, vols[1].fresh
	b.printf("| %s (each run after a rename of a debtor, applied by the consumer; %d runs) | `(none)` | %s | %s | none: the debts listed are read from the table again, until the index has surely caught up | n/a | %s | %s | %.2f | %.2f |\n\n",
		freshCase.name, freshCase.runs, f0.reads(), f1.reads(), f0.trips(), f1.trips(),
		float64(f0.median)/float64(f0.get), float64(f1.median)/float64(f1.get))
	for _, v := range vols {
		consumer := fmt.Sprintf("the stream's consumer had applied all %d figures items waiting at the end of the load %s later", v.first, v.took.Round(100*time.Millisecond))
		if v.left > 0 {
			consumer = fmt.Sprintf("of the %d figures items waiting at the end of the load, %d were still waiting %s later and were applied by report calls", v.first, v.left, v.took.Round(100*time.Millisecond))
		}
		b.printf("- At %s sales: loaded in %s; %s; get-sale median %s; the 12-month summary counted %s sales, %.2f invoiced (expected %s, %d.00).\n",
			thousands(v.sales), v.loaded.Round(time.Second), consumer, v.runs[0].get.Round(time.Microsecond), thousands(int(v.totalSales)), v.totalIssued, thousands(v.sales), v.sales*50)
	}
	b.printf("- The waiting row: before each run, %d expenses of 1.00 are added (each on a day of its own; they stay, so the second volume has %d more expenses than loaded) while the consumer is paused; the report applies them (a Query of each partition of waiting items, in parallel, a GetItem of the account's timezones, one TransactWriteItems per %d at most) before it reads the days. The consumer was handed %d figures inserts in all (those a report had applied first it skips).\n\n",
		reportWaiting, waitCase.runs*reportWaiting, 40, s.consumed.Load())
	return s.busySummaries()
}

// busyWindow and busyClients: the one-busy-account run's length, and its
// clients (the peak of "One busy account").
const (
	busyWindow  = 30 * time.Second
	busyClients = 64
)

// busySummaries has busyClients clients post paid-in-part sales on the shop
// back to back for busyWindow (each moves money, so each writes a figures
// item) while one client asks the 31-day summary through its Lambda
// function back to back, and the stream's consumer runs; it reports the
// sales rate, the summaries and how many answered 503, and the most figures
// items seen waiting (sampled each second on the consumer's client).
func (s *reportShop) busySummaries() error {
	s.clock.stop(reportAfter)
	deadline := time.Now().Add(busyWindow)
	var sales, saleBusy, asked, refused atomic.Int64
	var mostWaiting atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for c := 0; c < busyClients; c++ {
		wg.Go(func() {
			for n := 0; time.Now().Before(deadline); n++ {
				body, _ := json.Marshal(map[string]any{"customer_id": c%20 + 1, "sub_total_amount": "20.00", "total_amount": "20.00",
					"amount_paid": "5.00", "payment_type": "Cash", "payment_date": "2026-01-20", "invoice_type": "pos", "due_date": "2026-02-19"})
				req := httptest.NewRequest("POST", "/api/v1/sales/add", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+s.key)
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				s.h.ServeHTTP(rec, req)
				switch rec.Code {
				case 200:
					sales.Add(1)
				case http.StatusServiceUnavailable:
					saleBusy.Add(1)
				default:
					first.CompareAndSwap(nil, fmt.Errorf("busy sale: %d %s", rec.Code, rec.Body.String()))
					return
				}
			}
		})
	}
	wg.Go(func() {
		for time.Now().Before(deadline) {
			_, _, _, err := s.invoke("report-summary", "GET", "/api/v1/reports/summary", "from=2026-01-01&to=2026-01-31&group_by=day")
			asked.Add(1)
			var se statusError
			if errors.As(err, &se) && se == http.StatusServiceUnavailable {
				refused.Add(1)
			} else if err != nil {
				first.CompareAndSwap(nil, err)
				return
			}
		}
	})
	wg.Go(func() {
		for time.Now().Before(deadline) {
			time.Sleep(time.Second)
			if n, err := s.waiting(); err == nil && int64(n) > mostWaiting.Load() {
				mostWaiting.Store(int64(n))
			}
		}
	})
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	if _, _, left, err := s.settle(time.Minute); err != nil {
		return err
	} else if left > 0 {
		s.b.printf("- After the busy run, %d figures items still waited a minute later (applied by a report).\n", left)
	}
	met := "yes"
	if refused.Load() > 0 {
		met = "no"
	}
	s.b.printf("One busy account's summaries: %d clients post sales on the shop (each paid in part, so each writes a figures item) back to back for %s, as at the peak of \"One busy account\", while one client asks the 31-day summary through its Lambda function back to back and the stream's consumer runs; figures items waiting sampled each second. Target: no summary answered 503.\n\n", busyClients, busyWindow)
	s.b.printf("| sales/s (503s) | summaries asked (503s) | most figures items waiting | met |\n|---|---|---|---|\n")
	s.b.printf("| %.0f (%d) | %d (%d) | %d | %s |\n\n", float64(sales.Load())/busyWindow.Seconds(), saleBusy.Load(), asked.Load(), refused.Load(), mostWaiting.Load(), met)
	return nil
}

// reportTrips reports the round trips of the settings and report routes, in
// a table of their own, over a small account of its own (a few records of
// each kind, their figures applied by a first summary), and marks their
// functions covered. What the reports read at scale is the Reports section's.
func (b *bench) reportTrips(covered map[string]bool) error {
	a, _ := business.NewAccount("Trips Shop", fmt.Sprintf("TRIPS%d", time.Now().UnixNano()%1e9), "GHS", "")
	_, key, err := b.store.CreateAccount(b.ctx, a)
	if err != nil {
		return err
	}
	benchKey := b.key
	b.key = key
	defer func() { b.key = benchKey }()
	if _, _, err := b.do("POST", "/api/v1/inventory/categories/add", map[string]any{"category_name": "Goods"}); err != nil {
		return err
	}
	for i := 0; i < 3; i++ {
		if _, _, err := b.do("POST", "/api/v1/customers/add", map[string]any{"name": fmt.Sprintf("Customer %d", i)}); err != nil {
			return err
		}
		if _, _, err := b.do("POST", "/api/v1/inventory/items/add", map[string]any{"item_name": fmt.Sprintf("Item %d", i),
			"category_id": 1, "item_price": "12.50", "quantity": fmt.Sprint(i * 5)}); err != nil {
			return err
		}
		if _, _, err := b.do("POST", "/api/v1/expenses/add", map[string]any{"expense_type": "Fuel", "expense_amount": "9.00",
			"payment_method": "Cash", "created_by": "Bench"}); err != nil {
			return err
		}
	}
	for i := 0; i < 6; i++ {
		if _, _, err := b.do("POST", "/api/v1/sales/add", map[string]any{"customer_id": i%3 + 1, "sub_total_amount": "20.00", "total_amount": "20.00",
			"amount_paid": []string{"0", "5.00", "20.00"}[i%3], "payment_type": []string{"None", "Cash", "Cash"}[i%3],
			"invoice_type": "pos", "due_date": "2026-01-31"}); err != nil {
			return err
		}
	}
	warm := func() error {
		_, err := b.invoke("authenticate", "GET", "/api/v1/user/authenticate", "", nil)
		return err
	}
	if err := warm(); err != nil {
		return err
	}
	if _, err := b.invoke("report-summary", "GET", "/api/v1/reports/summary", "", nil); err != nil { // applies the figures waiting
		return err
	}
	zones := []string{"Africa/Nairobi", "Africa/Accra"}
	cases := []struct {
		function, what, method, path, query string
		body                                func(i int) any
		target                              string
		max                                 int // 0: no round-trip target
	}{
		{"get-settings", "the account's settings", "GET", "/api/v1/user/settings", "", nil, "1", 1},
		{"update-settings", "timezone (a change made while another waits to take effect follows it)", "PUT", "/api/v1/user/settings", "",
			func(i int) any { return map[string]any{"timezone": zones[i%2]} }, "<= 2", 2},
		{"report-summary", "12 months by month (the default), nothing waiting", "GET", "/api/v1/reports/summary", "", nil, "none: items read (see Reports)", 0},
		{"report-summary", "31 days by day, nothing waiting", "GET", "/api/v1/reports/summary", "group_by=day", nil, "none: items read (see Reports)", 0},
		{"report-receivables", "4 open sales (one page of each status)", "GET", "/api/v1/reports/receivables", "", nil, "none: items read (see Reports)", 0},
		{"report-inventory", "3 items (one page)", "GET", "/api/v1/reports/inventory", "", nil, "none: items read (see Reports)", 0},
	}
	b.printf("### Settings and reports\n\nThe settings and report routes, through the Lambda function with the API key cache warm (made warm again before each run: a settings change forgets the account's cached key), over an account of its own with 3 customers, a category, 3 items, 3 expenses and 6 sales, their figures applied by a first summary; each case made %d times, the typical run reported. Target: 1 for the settings read, at most 2 sequential for its write; a report's calls are set by what it reads (a summary: the settings, the figures waiting (a Query of each of their partitions, in parallel), the months and days (in parallel); receivables: the settings, the figures waiting, the sums and the largest debts' index entries, in parallel, then, within %s of a debt's write (the first summary's apply), the debts listed and their customers; inventory: the settings, then the figures waiting, then the worth and the alerts' index entries), and its bound is on items read, measured at scale in the Reports section.\n\n| function | case | method | calls | sequential round trips | runs that differed | target | met |\n|---|---|---|---|---|---|---|---|\n",
		corrRuns, store.DebtsSettle)
	for _, c := range cases {
		covered[c.function] = true
		typical, differed, err := b.typicalRunAfter(corrRuns, warm, func(i int) error {
			var body any
			if c.body != nil {
				body = c.body(i)
			}
			_, err := b.invoke(c.function, c.method, c.path, c.query, body)
			return err
		})
		if err != nil {
			return fmt.Errorf("%s (%s): %w", c.function, c.what, err)
		}
		verdict := "n/a"
		if c.max > 0 {
			verdict = "yes"
			if typical.depth > c.max {
				verdict = "**no**"
			}
		}
		b.printf("| %s | %s | %s | %d | %d | %s | %s | %s |\n", c.function, c.what, c.method, typical.calls, typical.depth, differed, c.target, verdict)
	}
	b.printf("\n")
	return nil
}
