package main

// The reports step's shop: an account on a table of its own, its store's
// clock spreading its records over a year, its stream's consumer running.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"bizdata/infra/streampoll"
	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
	"bizdata/shared/business"
	"bizdata/shared/store"

	"github.com/aws/aws-lambda-go/events"
)

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
	adapters adapterCache
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
	s := &reportShop{b: b, ctx: ctx}
	st, cfg, stop, err := b.ownTable(ctx, "-reports", countReads(&s.reads), s.spans.Option())
	if err != nil {
		return nil, nil, err
	}
	s.clock.stop(reportYear.Add(-time.Hour))
	st.SetClock(s.clock.now)
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
	apply := lambdas.ApplyReportFigures(cst, log)
	handle := func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		s.gate.Lock()
		defer s.gate.Unlock()
		if ctx.Err() != nil { // the step is over
			return events.DynamoDBEventResponse{}, nil
		}
		s.consumed.Add(int64(len(ev.Records)))
		return apply(ctx, ev)
	}
	go streampoll.PollMapping(ctx, cst.Client(), streams, cfg.TableName, streampoll.ApplyReportFigures, lambdas.IsFiguresInsert, handle, log)

	s.srv = api.NewServer(st, b.quiet, time.Hour)
	s.h = s.srv.Handler(api.Routes)
	acct, key, err := createAccount(ctx, st, "Report Shop", fmt.Sprintf("REP%d", time.Now().UnixNano()%1e9))
	if err != nil {
		return nil, cleanup, err
	}
	s.acct, s.key = acct.ID, key
	if _, err := s.request("PUT", "/api/v1/user/settings", map[string]any{"timezone": "Africa/Accra"}); err != nil {
		return nil, cleanup, err
	}
	return s, cleanup, nil
}

// request serves one request through the shop's handler (all routes) and
// returns its body.
func (s *reportShop) request(method, path string, body any) ([]byte, error) {
	// A 503 is retried after its Retry-After, as a client does (the setup's
	// bursts can find DynamoDB Local busy); a write carries an
	// Idempotency-Key, so a retry of one that committed is its replay.
	idem := ""
	if method == "POST" {
		idem = "bench-" + strconv.FormatUint(rand.Uint64(), 36)
	}
	for try := 1; ; try++ {
		req := apiRequest(method, path, s.key, jsonBody(body))
		if idem != "" {
			req.Header.Set("Idempotency-Key", idem)
		}
		rec := serveRequest(s.h, req)
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

// post is request's POST, for the load's helpers.
func (s *reportShop) post(path string, body any) error {
	_, err := s.request("POST", path, body)
	return err
}

// setup makes the shop's customers, categories and items (at one instant).
func (s *reportShop) setup() error {
	s.clock.stop(reportYear.Add(-time.Hour))
	if err := addCustomersAndCategories(s.post); err != nil {
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
		_, err := s.request("POST", "/api/v1/inventory/items/add", body)
		return err
	})
	if err == nil {
		s.items = from + n
	}
	return err
}

// loadYear adds expenses and sales, each stamped evenly over the year: sales a
// third draft, a third partial, a third paid, as the main load, each due 30
// days after it was made.
func (s *reportShop) loadYear(sales, expenses int) error {
	s.clock.spread(reportYear, reportYearLen, expenses)
	if err := addExpenses(s.post, expenses); err != nil {
		return err
	}
	first := s.sales
	s.clock.spread(reportYear, reportYearLen, sales)
	err := parallel(sales, func(i int) error {
		at := reportYear.Add(time.Duration(int64(reportYearLen) / int64(sales) * int64(i)))
		return s.post("/api/v1/sales/add", loadedSale(first+i, at.AddDate(0, 0, 30).Format(business.DateFormat), at.Format(business.DateFormat)))
	})
	s.clock.stop(reportAfter)
	if err != nil {
		return err
	}
	s.sales += sales
	return nil
}

// figuresWaiting counts the shop's figures items not yet applied (read on the
// consumer's client, uncounted).
func (s *reportShop) figuresWaiting() (int, error) {
	items, err := s.consumer.WaitingFigures(s.ctx, s.acct)
	return len(items), err
}

// settleFigures waits for the stream's consumer to apply every figures item (up to
// limit), then applies what still waits as reports do, 100 at a time. It
// returns what waited when it began, how long the consumer took (or limit),
// and how many the reports applied.
func (s *reportShop) settleFigures(limit time.Duration) (int, time.Duration, int, error) {
	start := time.Now()
	first, err := s.figuresWaiting()
	if err != nil {
		return 0, 0, 0, err
	}
	for n := first; n > 0 && time.Since(start) < limit; {
		time.Sleep(time.Second)
		if n, err = s.figuresWaiting(); err != nil {
			return 0, 0, 0, err
		}
	}
	took := time.Since(start)
	left, err := s.figuresWaiting()
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
	if _, err := s.request("PUT", "/api/v1/customers/1", map[string]any{"name": fmt.Sprintf("Customer 1 (%d)", n)}); err != nil {
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n, err := s.figuresWaiting(); err != nil || n == 0 {
			return err
		}
	}
	return errors.New("the consumer did not apply a rename within 30s")
}

// invoke serves one request through the Lambda function of the route, as
// bench.invoke does, for the shop; it returns the body, the time it took
// and the DynamoDB items read, calls and sequential round trips.
func (s *reportShop) invoke(function, method, path, query string) (string, time.Duration, reqCost, error) {
	h, err := lambdas.FunctionHandler(s.srv, function)
	if err != nil {
		return "", 0, reqCost{}, err
	}
	a := s.adapters.get(function, h)
	ev := gatewayEvent(method, path, query)
	ev.Headers["authorization"] = "Bearer " + s.key
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
