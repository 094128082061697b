package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/events"
)

// Lambda's sizes and prices: memory sizes considered, the size that gets one
// full vCPU, and the arm64 list prices in us-east-1 (aws.amazon.com/lambda/pricing,
// first pricing tier, no free tier).
var memorySizes = []int{128, 256, 512}

const (
	fullVCPU     = 1769 // MB
	pricePerGBs  = 0.0000133334
	pricePerCall = 0.20 / 1e6
	// hookWindow is how long each retry-webhooks run is let dispatch here
	// (its runtime deadline); on AWS a run dispatches for app.DispatchFor.
	hookWindow = 8 * time.Second
	// A busy retry-webhooks run finds hookBacklog deliveries due for each of
	// hookMerchants merchants, all started in its first pass (a hundred at
	// once time out in a DynamoDB Local that has slowed down).
	hookMerchants = 6
	hookBacklog   = 8
)

// memoryFunctions, when set, limits the memory step to these functions (the
// -memory-functions flag), to measure a few on their own.
var memoryFunctions string

// memory runs every function's own binary under a minimal Lambda Runtime API,
// one cold event then a representative sequence, reads the process's peak RSS
// and CPU time, and picks each function's MemorySize from them.
func (b *bench) memory() error {
	names, err := functionNames(memoryFunctions)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "memory")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := hostBuild(tmp, names...); err != nil {
		return err
	}
	var received atomic.Int64
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		received.Add(1)
	}))
	defer hook.Close()
	put, err := b.memoryRecords(hook.URL)
	if err != nil {
		return err
	}
	load, cleanup, err := b.dispatchLoad(hook.URL, &received)
	if err != nil {
		return err
	}
	defer cleanup()
	b.memoryIntro(put)
	chosen := map[int][]string{}
	others := map[int]*spread{} // against 256 MB, every function but retry-webhooks
	for _, name := range names {
		if name == "report-receivables" || name == "report-inventory" {
			if err := b.applyLoadedFigures(); err != nil {
				return err
			}
		}
		p, err := b.memoryPlan(name, load)
		if err != nil {
			return err
		}
		u, err := b.measure(filepath.Join(tmp, name), name, p)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		label := name
		if name == "retry-webhooks" {
			load.perDelivery = u.dispatcher(load.sent)
			label += fmt.Sprintf(" (per %s run)", app.DispatchFor)
		}
		size := u.choose()
		chosen[size] = append(chosen[size], name)
		m := u.mean()
		b.printf("| %s | %.1f | %.1f | %.1f | %.2f, %.2f | %d | $%.2f vs $%.2f |\n", label, u.coldRSS, u.peakRSS, millis(u.cpu), millis(m.cpu), millis(m.wall),
			size, u.cost(size), u.cost(256))
		if name == "retry-webhooks" {
			load.cost128 = u.cost(128)
			continue
		}
		for _, size := range memorySizes {
			if others[size] == nil {
				others[size] = &spread{}
			}
			others[size].add(u.cost(size)-u.cost(256), u.p50(size)/u.p50(256))
		}
	}
	var rates []string
	for _, size := range memorySizes {
		rates = append(rates, fmt.Sprintf("%.0f/s at %d MB", 1/eventTime{load.perDelivery, load.perDelivery}.at(size), size))
	}
	b.printf("\nretry-webhooks: %.2f ms of CPU per delivery (the busy runs' CPU less the idle run's, over the %d deliveries they sent), so a run works through a backlog at most at %s (plain HTTP here; TLS to real endpoints costs more); at 128 MB a run would cost $%.2f per million.\n\n",
		millis(load.perDelivery), load.sent, strings.Join(rates, ", "), load.cost128)
	for _, size := range memorySizes {
		if size != 256 {
			o := others[size]
			b.printf("At %d MB the other functions would cost %s to %s per million against 256 MB, with a modelled p50 %.2f to %.2f times 256 MB's.\n", size, dollars(o.cost[0]), dollars(o.cost[1]), o.p50[0], o.p50[1])
		}
	}
	b.printf("\n")
	for _, size := range memorySizes {
		if len(chosen[size]) > 0 {
			b.printf("%d MB: %d functions (%s).\n", size, len(chosen[size]), strings.Join(chosen[size], ", "))
		}
	}
	b.printf("\n")
	return nil
}

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

// spread is the range of two figures over the functions.
type spread struct{ cost, p50 [2]float64 }

func (s *spread) add(cost, p50 float64) {
	if s.p50[1] == 0 {
		s.cost, s.p50 = [2]float64{cost, cost}, [2]float64{p50, p50}
		return
	}
	s.cost = [2]float64{min(s.cost[0], cost), max(s.cost[1], cost)}
	s.p50 = [2]float64{min(s.p50[0], p50), max(s.p50[1], p50)}
}

// applyLoadedFigures applies the loaded account's waiting figures, as the
// stream's consumer would have (none runs in this step), so its receivables
// and inventory read what is kept rather than apply thousands of changes
// (more than a report applies at once: a 503). It runs after
// apply-report-figures has taken its batches of those same waiting items
// (functions are measured in name order).
func (b *bench) applyLoadedFigures() error {
	for {
		_, _, err := b.store.ReportDays(b.ctx, b.acct.ID, "2025-01-01", "2025-01-01")
		var be *business.Error
		if errors.As(err, &be) && be.Code == business.EBUSY {
			continue
		}
		return err
	}
}

// memoryIntro says how the step measures and chooses; put is DynamoDB
// Local's median PutItem time as the step began.
func (b *bench) memoryIntro(put time.Duration) {
	f := func(size int) float64 { return float64(fullVCPU) / float64(size) }
	b.printf("## Lambda memory\n\n")
	b.printf("Every function's own binary, built for this machine with `make build`'s flags, runs under a minimal Lambda Runtime API on loopback (table on DynamoDB Local) and is sent one cold event, then a sequence. ")
	b.printf("API functions: 4 ordinary requests (the round-trips step's); for routes that take a body, the largest valid one (every text field at its longest, in \"é\" sent as `\\u00e9` as Python's `json.dumps` sends it, 6 bytes on the wire for 2 stored: a sale's 100 lines come to %.2f MB); for lists, `limit=200` over at least 200 records; and a 2 MiB body (413 where the route reads one). ",
		float64(len(fillToLimits("add-sale", map[string]any{})))/1e6)
	b.printf("Corrections: the ordinary requests are the round-trips step's correction cases of the function by turns (refund-sale: money only, then 1 stocked unit returned; void-sale: a sale without, then with 2 stocked lines; adjust-stock: +1; list-movements: a page of %d), each on a record that takes it (refunds of a paid sale of this step's own, each void of a different unpaid sale) and, as every request here, without an Idempotency-Key; refund-sale's largest body returns a unit of each line of a 100-line sale (%.1f KB), and list-movements' limit=200 lists an item's %d movements. ",
		corrMovesMax, float64(len(fillToLimits("refund-sale", map[string]any{"amount": "5.00"})))/1e3, corrMoves)
	b.printf("deliver-webhooks: a stream batch of 1 payment insert, then 4 of 25 (the template's BatchSize). retry-webhooks: scheduled runs cut to %s by their runtime deadline, on a table of their own in a DynamoDB Local of their own (the run's, after the load, takes tens of milliseconds a write, one at a time, where DynamoDB takes a few side by side), sending to a receiver on loopback (plain HTTP): the cold one and one more with nothing due, then 3 with %d deliveries due for each of %d merchants (its cost scales these to a %s run). ",
		hookWindow, hookBacklog, hookMerchants, app.DispatchFor)
	b.printf("apply-report-figures: a stream batch of 1 of the loaded account's waiting figures items, then 4 of 25 and one of 1000 (the template's BatchSize). drain-stream-failures: a failure queue message naming the stream range of 1 paid sale's records, then 4 of 5 sales' and one of 25's, each read again from the stream and recorded. ")
	b.printf("Settings, reports, keys, the clear of test data, an endpoint's test and redelivery, and the dashboard: over a shop of the step's own (a few records of each kind and a sale of 100 lines; a summary of the loaded account would first apply its thousands of waiting figures): settings read, then timezone changes; summaries by month, day and week; receivables and inventory, the largest over the loaded account (its waiting figures applied first, as the stream's consumer would have); key creates, lists and revokes (each of a key of its own); clears of a test twin holding 1 customer, the largest 200; 5 endpoint tests (its limit a minute) to the receiver; redeliveries of delivered events. dashboard-assets: its two files; dashboard-auth: the sign-in page, then 4 sign-ins (an argon2id hash each); dashboard-pages: a session's overview and lists, the largest the 100-line sale's page; dashboard-actions: forms adding a customer; each with a 2 MiB body last (400 where a form is read).\n\n")
	b.printf("Peak RSS is the process's VmHWM (`/proc/<pid>/status`) after the cold event and after the sequence. CPU per event is the process's utime+stime (`/proc/<pid>/stat`, 10 ms ticks) over the sequence; the ordinary events' (the 4 ordinary requests, batches or runs with deliveries) is read finer, from the threads' `schedstat` run times, and their wall from handing the event over to its answer. ")
	b.printf("Model: Lambda gives CPU in proportion to memory (%d MB = one vCPU; a core of this machine stands for it), so an event lasts max(0, wall - cpu) + cpu x %d/M at M MB. ", fullVCPU, fullVCPU)
	b.printf("Cost per million events = $0.20 + the ordinary events' mean modelled duration in seconds x M/1024 x $%.10f x 1e6 (arm64 list prices in us-east-1, aws.amazon.com/lambda/pricing; no free tier, no rounding up to the billed 1 ms). ", pricePerGBs)
	b.printf("Chosen: of %v MB, the size that costs least while the ordinary events' modelled p50 (for retry-webhooks, a delivery's CPU time: a backlog is CPU-bound) stays within 1.25x of 256 MB's and the peak RSS under half the size. ", memorySizes)
	b.printf("Under this model 128 MB passes only for events that wait (wall - cpu) at least %.1fx their CPU time, so the choice hangs on DynamoDB's latency: DynamoDB Local took a median %.1f ms per PutItem as the step began (DynamoDB on AWS: single-digit ms; DynamoDB Local slows as its stream store fills, and waits measured on a slow one overstate the case for 128 MB).\n\n",
		(f(128)-1.25*f(256))/0.25, millis(put))
	b.printf("| function | peak RSS cold (MB) | peak RSS after the sequence (MB) | CPU ms per event | ordinary event: CPU ms, wall ms (mean) | chosen MemorySize | cost per million events at chosen vs 256 MB |\n|---|---|---|---|---|---|---|\n")
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fnUsage is what one function measured.
type fnUsage struct {
	coldRSS, peakRSS float64       // MB
	cpu              time.Duration // mean per event of the sequence (utime+stime)
	events           []eventTime   // each event of the sequence
	ordinary         []eventTime   // the ordinary ones: the cost model's
	latency          []eventTime   // the p50 check's: the ordinary ones, or a dispatcher's backlog
}

// eventTime is one event's wall and CPU time.
type eventTime struct{ wall, cpu time.Duration }

// at models the event's duration in seconds at size MB: its CPU part slows
// down in proportion below one full vCPU; the rest (waiting) does not.
func (s eventTime) at(size int) float64 {
	return max(0, s.wall-s.cpu).Seconds() + s.cpu.Seconds()*max(1, float64(fullVCPU)/float64(size))
}

// p50 is the median modelled duration of the latency samples at size.
func (u fnUsage) p50(size int) float64 {
	d := make([]time.Duration, len(u.latency))
	for i, s := range u.latency {
		d[i] = time.Duration(s.at(size) * float64(time.Second))
	}
	return median(d).Seconds()
}

// cost is the price of a million ordinary events at size, in dollars.
func (u fnUsage) cost(size int) float64 {
	total := 0.0
	for _, s := range u.ordinary {
		total += s.at(size)
	}
	return 1e6 * (pricePerCall + total/float64(len(u.ordinary))*float64(size)/1024*pricePerGBs)
}

// mean is the ordinary events' mean wall and CPU time.
func (u fnUsage) mean() eventTime {
	var m eventTime
	for _, s := range u.ordinary {
		m.wall += s.wall / time.Duration(len(u.ordinary))
		m.cpu += s.cpu / time.Duration(len(u.ordinary))
	}
	return m
}

// choose returns the size that costs least whose modelled p50 is within
// 1.25x of 256 MB's and whose peak RSS is under half of it: the smallest
// such size unless a larger one costs at least half a cent less per million
// (below a full vCPU, CPU-bound work costs the same at every size). It is
// the largest size when none fits.
func (u fnUsage) choose() int {
	best := 0
	for _, size := range memorySizes {
		fits := u.peakRSS < float64(size)/2 && u.p50(size) <= 1.25*u.p50(256)
		if fits && (best == 0 || u.cost(size) < u.cost(best)-0.005) {
			best = size
		}
	}
	if best == 0 {
		return memorySizes[len(memorySizes)-1]
	}
	return best
}

// fnEvent is one event for a function: built when it is sent (after a key
// rotation, or once its payments exist), a check of the answer, and whether
// it is an ordinary one (the latency and cost model's) or an extreme one
// (there for the peak RSS).
type fnEvent struct {
	event    func() (any, error)
	check    func(answer []byte) error
	ordinary bool
}

// fnPlan is what a function is sent; deadline is the time each event is given.
type fnPlan struct {
	cold     fnEvent
	sequence []fnEvent
	deadline time.Duration
	env      []string // added to the function's environment
}

// measure starts the function, sends it its plan and reads its usage.
func (b *bench) measure(bin, name string, p fnPlan) (fnUsage, error) {
	var u fnUsage
	proc, err := b.startLambda(bin, name, append([]string{"WEBHOOK_ALLOW_PRIVATE=1"}, p.env...)...)
	if err != nil {
		return u, err
	}
	defer proc.stop()
	send := func(r fnEvent) (eventTime, error) {
		ev, err := r.event()
		if err != nil {
			return eventTime{}, err
		}
		j, err := json.Marshal(ev)
		if err != nil {
			return eventTime{}, err
		}
		cpu0, err := proc.runTime()
		if err != nil {
			return eventTime{}, err
		}
		start := time.Now()
		answer, err := proc.invoke(j, p.deadline)
		if err != nil {
			return eventTime{}, err
		}
		s := eventTime{wall: time.Since(start)}
		cpu, err := proc.runTime()
		s.cpu = cpu - cpu0
		return s, errors.Join(err, r.check([]byte(answer)))
	}
	if _, err := send(p.cold); err != nil {
		return u, err
	}
	if u.coldRSS, err = proc.peakRSS(); err != nil {
		return u, err
	}
	cpu0, err := proc.cpu()
	if err != nil {
		return u, err
	}
	for _, r := range p.sequence {
		s, err := send(r)
		if err != nil {
			return u, err
		}
		u.events = append(u.events, s)
		if r.ordinary {
			u.ordinary = append(u.ordinary, s)
		}
	}
	cpu, err := proc.cpu()
	if err != nil {
		return u, err
	}
	u.cpu, u.latency = (cpu-cpu0)/time.Duration(len(p.sequence)), u.ordinary
	u.peakRSS, err = proc.peakRSS()
	return u, err
}

// dispatcher reads retry-webhooks' usage: a run with nothing due, then runs
// that sent sent deliveries in all, each cut to hookWindow. A run on AWS
// lasts app.DispatchFor whatever its size, so its cost is that of the busy
// runs scaled to that length; what its size changes is how fast it works
// through a backlog, which is CPU-bound (sending on a fast network), so its
// latency is a delivery's CPU time. It returns that.
func (u *fnUsage) dispatcher(sent int64) time.Duration {
	scale := app.DispatchFor / hookWindow
	m := u.mean()
	perDelivery := (m.cpu - u.events[0].cpu) * time.Duration(len(u.ordinary)) / time.Duration(sent)
	for i := range u.ordinary {
		u.ordinary[i] = eventTime{u.ordinary[i].wall * scale, u.ordinary[i].cpu * scale}
	}
	u.cpu *= scale
	u.latency = []eventTime{{perDelivery, perDelivery}}
	return perDelivery
}

// memoryPlan is what each function is sent. Every function needs one: a
// function without one fails the step (errNoPlan), so none goes unmeasured.
var errNoPlan = errors.New("no memory plan: give it a representative sequence of events (memoryPlan)")

func (b *bench) memoryPlan(name string, load *dispatchLoad) (fnPlan, error) {
	if p, ok, err := b.memoryOwnPlan(name, load); ok || err != nil {
		return p, err
	}
	switch name {
	case "deliver-webhooks":
		p := fnPlan{cold: b.streamBatch(1), deadline: time.Minute}
		for range 4 {
			p.sequence = append(p.sequence, asOrdinary(b.streamBatch(25)))
		}
		return p, nil
	case "retry-webhooks":
		p := fnPlan{cold: load.run(0), deadline: hookWindow, env: []string{"TABLE_NAME=" + load.st.Table(), "DYNAMODB_ENDPOINT=" + load.endpoint}}
		p.sequence = []fnEvent{load.run(0)}
		for range 3 {
			p.sequence = append(p.sequence, asOrdinary(load.run(hookBacklog)))
		}
		return p, nil
	case api.DefaultFunction:
		p := fnPlan{cold: b.apiRequest(call{}, "GET", "/api/v1/no-such-route", "", "", 404), deadline: 10 * time.Second}
		for i := range 4 {
			p.sequence = append(p.sequence, asOrdinary(b.apiRequest(call{}, "GET", fmt.Sprintf("/api/v1/no-such-route/%d", i), "", "", 404)))
		}
		p.sequence = append(p.sequence, b.apiRequest(call{}, "POST", "/api/v1/no-such-route", "", overLimit(), 404))
		return p, nil
	}
	calls := b.benchCalls() // counters of its own, so edit-sale's payments stay under its total
	var c call
	path := func(int) string { return c.path }
	if i := slices.IndexFunc(calls, func(c call) bool { return c.function == name }); i >= 0 {
		c = calls[i]
		if name == "redeliver-webhook" { // each delivery once: a queued one is 409
			path = func(i int) string { return fmt.Sprintf("/api/v1/user/webhook/deliveries/txn_mem_%03d/redeliver", i) }
		}
	} else {
		var ok bool
		var err error
		c, path, ok, err = b.memoryCorrection(name)
		if err == nil && !ok {
			c, path, ok, err = b.memoryEvent(name)
		}
		if err != nil {
			return fnPlan{}, err
		}
		if !ok {
			return fnPlan{}, fmt.Errorf("function %s: %w", name, errNoPlan)
		}
	}
	deadline := 10 * time.Second // the template's Timeout
	if name == "test-webhook" {
		deadline = 15 * time.Second
	}
	body := func(i int) string {
		if c.body == nil {
			return ""
		}
		j, _ := json.Marshal(c.body(i))
		return string(j)
	}
	// Cold, then 4 ordinary requests: test-webhook may send 5 a minute.
	p := fnPlan{cold: b.apiRequest(c, c.method, path(0), c.query, body(0), 200), deadline: deadline}
	for i := 1; i <= 4; i++ {
		p.sequence = append(p.sequence, asOrdinary(b.apiRequest(c, c.method, path(i), c.query, body(i), 200)))
	}
	if c.body != nil {
		var m map[string]any
		_ = json.Unmarshal([]byte(body(5)), &m)
		p.sequence = append(p.sequence, b.apiRequest(c, c.method, path(5), c.query, fillToLimits(name, m), 200))
	}
	if strings.HasPrefix(name, "list-") && name != "list-webhook-endpoints" { // that list is every endpoint (16 at most), no pages
		p.sequence = append(p.sequence, b.apiRequest(c, c.method, c.path, "limit=200", "", 200))
	}
	want := http.StatusRequestEntityTooLarge
	if c.method == "GET" {
		want = 200 // a GET route never reads a body
	}
	p.sequence = append(p.sequence, b.apiRequest(c, c.method, path(6), c.query, overLimit(), want))
	return p, nil
}

func asOrdinary(r fnEvent) fnEvent { r.ordinary = true; return r }

// apiRequest is an API Gateway HTTP API (v2) event with the bench's key
// whose answer must carry status want; c's afterCall reads the answer (a
// rotated key).
func (b *bench) apiRequest(c call, method, path, query, body string, want int) fnEvent {
	return b.gatewayEvent(c.function, gatewayRequest{method: method, path: path, query: query, body: body, want: want,
		key: func() string { return b.key }})
}

// overLimit is a 2 MiB JSON body, twice what the API accepts.
func overLimit() string {
	return `{"name":"` + strings.Repeat("x", 2<<20) + `"}`
}

// fillToLimits returns body with every text field of the route at its
// longest, in "é" escaped as \u00e9, the largest body the route accepts.
func fillToLimits(function string, body map[string]any) string {
	long := func(n int) string { return strings.Repeat("é", n) }
	url := func(host string) string { return "https://" + host + ".example.com/" + strings.Repeat("a", 2000) }
	switch kind := function[strings.Index(function, "-")+1:]; {
	case function == "refund-sale": // a unit back of each line of a 100-line sale
		var lines []any
		for i := range business.MaxSaleLines {
			lines = append(lines, map[string]any{"sales_item_id": i + 1, "quantity": "1"})
		}
		body["lines"], body["reason"], body["issued_by"] = lines, long(500), long(255)
	case function == "void-sale":
		body["reason"] = long(500)
	case function == "adjust-stock":
		body["note"] = long(1000)
	case kind == "sale": // 100 lines, sized to stay under 1 MiB and DynamoDB's 400 KB item
		var lines []any
		for i := range business.MaxSaleLines {
			lines = append(lines, map[string]any{"item_name": fmt.Sprintf("Line %d", i), "description": long(1700), "unit_price": "0.50", "quantity": "1"})
		}
		body["items"], body["sub_total_amount"], body["total_amount"] = lines, "50.00", "50.00"
	case kind == "expense":
		body["expense_description"], body["created_by"], body["expense_image"] = long(2000), long(200), url("img")
	case kind == "item":
		var images []any
		for range business.MaxItemImages {
			images = append(images, map[string]any{"image_url": url("img")})
		}
		body["description"], body["item_location"], body["unit"], body["item_images"] = long(2000), long(200), long(32), images
	case kind == "category":
		body["description"] = long(2000)
	case kind == "customer":
		body["name"], body["address"] = long(200), long(500)
	case kind == "webhook-settings":
		body["callback_url"], body["callback_secret"] = url("hooks"), strings.Repeat("s", 256)
	}
	j, _ := json.Marshal(body)
	return string(bytes.ReplaceAll(j, []byte("é"), []byte(`\u00e9`)))
}

// memoryRecords makes sure the records the requests name exist and every
// list has at least 200: the load step's records, or a load of 200 of each,
// customers and categories topped up to 200, and 200 delivered webhooks
// (txn_mem_000...) to redeliver, whose median PutItem time it returns;
// webhooks go to url.
func (b *bench) memoryRecords(url string) (time.Duration, error) {
	if code, _, err := b.do("GET", "/api/v1/sales/100042", nil); code == http.StatusNotFound {
		if err := b.load(200, 200, 200); err != nil {
			return 0, err
		}
	} else if err != nil {
		return 0, err
	}
	for _, l := range []struct{ path, key, field string }{{"/api/v1/customers", "customers", "name"}, {"/api/v1/inventory/categories", "categories", "category_name"}} {
		_, out, err := b.do("GET", l.path+"?limit=200", nil)
		if err != nil {
			return 0, err
		}
		have, _ := out["data"].(map[string]any)[l.key].([]any)
		if err := parallel(200-len(have), func(i int) error {
			_, _, err := b.do("POST", l.path+"/add", map[string]any{l.field: fmt.Sprintf("Memory %d", i)})
			return err
		}); err != nil {
			return 0, err
		}
	}
	now := time.Now().UTC()
	var puts []time.Duration
	for i := range 200 {
		tx := fmt.Sprintf("txn_mem_%03d", i)
		start := time.Now()
		if _, err := b.store.CreateDelivery(b.ctx, business.Delivery{AccountID: b.acct.ID, TransactionID: tx, WebhookID: "msg_" + tx,
			Payload: []byte(`{"amount":"1.00"}`), State: business.DeliveryDelivered, NextAt: now, CreatedAt: now}); err != nil {
			return 0, err
		}
		puts = append(puts, time.Since(start))
	}
	return median(puts), b.store.SetWebhook(b.ctx, b.acct.ID, business.Webhook{CallbackURL: url})
}

// payments adds n paid sales and returns their payment records as a stream
// batch carries them.
func (b *bench) payments(n int) (events.DynamoDBEvent, error) {
	var ev events.DynamoDBEvent
	from := time.Now()
	var codes sync.Map
	if err := parallel(n, func(int) error {
		_, out, err := b.do("POST", "/api/v1/sales/add", map[string]any{"customer_id": 1, "sub_total_amount": "20.00", "total_amount": "20.00",
			"amount_paid": "20.00", "payment_type": "Cash", "invoice_type": "pos", "due_date": "2026-12-31"})
		if err == nil {
			codes.Store(fmt.Sprint(out["data"].(map[string]any)["sales"].(map[string]any)["invoice_code"]), true)
		}
		return err
	}); err != nil {
		return ev, err
	}
	written, err := b.store.PaymentsWritten(b.ctx, from.Add(-time.Second), time.Now().Add(time.Second))
	if err != nil {
		return ev, err
	}
	for _, it := range written {
		img := streamImage(it)
		if _, ok := codes.Load(img["invoice_code"].String()); ok {
			ev.Records = append(ev.Records, events.DynamoDBEventRecord{EventName: "INSERT", EventSource: "aws:dynamodb",
				Change: events.DynamoDBStreamRecord{SequenceNumber: strconv.Itoa(len(ev.Records) + 1), NewImage: img, StreamViewType: "NEW_IMAGE"}})
		}
	}
	if len(ev.Records) != n {
		return ev, fmt.Errorf("found %d of the %d payments just made", len(ev.Records), n)
	}
	return ev, nil
}

// streamBatch is a deliver-webhooks event of n fresh payment inserts, which
// it must record without a failure.
func (b *bench) streamBatch(n int) fnEvent {
	return fnEvent{
		event: func() (any, error) { return b.payments(n) },
		check: func(answer []byte) error {
			var res events.DynamoDBEventResponse
			if err := json.Unmarshal(answer, &res); err != nil || len(res.BatchItemFailures) > 0 {
				return fmt.Errorf("stream batch answered %.300s", answer)
			}
			return nil
		},
	}
}

// dispatchLoad is retry-webhooks' work, on a table of its own (so that its
// sweep finds nothing of the other steps') in a DynamoDB Local of its own
// (see below): merchants whose webhooks go to the bench's receiver, and a
// real payment record to copy into theirs.
type dispatchLoad struct {
	b        *bench
	st       *store.Store
	accounts []string
	payment  events.DynamoDBEventRecord
	received *atomic.Int64
	url      string // the receiver's
	endpoint string // its DynamoDB Local's
	seq      int
	// What the runs measured: the deliveries sent by the runs that had some
	// due, the CPU time of one, and the cost of a run at 128 MB.
	sent        int64
	perDelivery time.Duration
	cost128     float64
}

func (b *bench) dispatchLoad(url string, received *atomic.Int64) (*dispatchLoad, func(), error) {
	cfg := b.cfg
	cfg.TableName += "-dispatch"
	// A DynamoDB Local of its own: after the load the run's one answers a
	// write in tens of milliseconds, one write at a time, so the 48 claims
	// a busy run starts at once each waited over 5 s, past its window, and
	// it sent nothing. On DynamoDB a claim takes milliseconds, side by side
	// with the others.
	endpoint, stop, err := startDynamoDB()
	if err != nil {
		return nil, nil, err
	}
	cfg.Endpoint = endpoint
	st, err := app.NewStore(b.ctx, cfg)
	if err == nil {
		err = st.EnsureTable(b.ctx)
	}
	if err != nil {
		stop()
		return nil, nil, err
	}
	cleanup := stop
	l := &dispatchLoad{b: b, st: st, received: received, url: url, endpoint: endpoint}
	// The table's first sweep looks 25 hours back, hundreds of queries that
	// would fill the runs' windows; a deployed table's was made long ago.
	if _, err := l.service().Sweep(b.ctx); err != nil {
		cleanup()
		return nil, nil, err
	}
	for i := range hookMerchants {
		a, _ := business.NewAccount(fmt.Sprintf("Merchant %d", i), fmt.Sprintf("MEM%03d", i), "GHS", "")
		a, _, err := st.CreateAccount(b.ctx, a)
		if err == nil {
			err = st.SetWebhook(b.ctx, a.ID, business.Webhook{CallbackURL: url})
		}
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		l.accounts = append(l.accounts, a.ID)
	}
	ev, err := b.payments(1)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	l.payment = ev.Records[0]
	return l, cleanup, nil
}

func (l *dispatchLoad) service() *webhook.Service {
	return webhook.NewService(l.st, webhook.NewSender(true), business.DefaultRetrySchedule, l.b.quiet)
}

// run is a scheduled event, sent once perAccount deliveries of each merchant
// are recorded (by deliver-webhooks' handler, in this process). A run must
// send some when some are due (on a slow DynamoDB Local not always all of
// them within its window), and none when none are.
func (l *dispatchLoad) run(perAccount int) fnEvent {
	var before int64
	return fnEvent{
		event: func() (any, error) {
			var ev events.DynamoDBEvent
			for _, a := range l.accounts {
				for range perAccount {
					l.seq++
					r := l.payment
					r.Change.NewImage = maps.Clone(r.Change.NewImage)
					r.Change.NewImage["account_id"] = events.NewStringAttribute(a)
					r.Change.NewImage["transaction_id"] = events.NewStringAttribute(fmt.Sprintf("txn_dispatch_%d", l.seq))
					ev.Records = append(ev.Records, r)
				}
			}
			if res, err := l.service().HandleStream(l.b.ctx, ev); err != nil || len(res.BatchItemFailures) > 0 {
				return nil, fmt.Errorf("recording deliveries: %v %v", err, res.BatchItemFailures)
			}
			before = l.received.Load()
			return events.EventBridgeEvent{Version: "0", DetailType: "Scheduled Event", Source: "aws.events", Time: time.Now().UTC(), Detail: json.RawMessage("{}")}, nil
		},
		check: func(answer []byte) error {
			got := l.received.Load() - before
			if string(answer) != "null" || (perAccount > 0) != (got > 0) {
				return fmt.Errorf("run with %d due per merchant sent %d and answered %.300s", perAccount, got, answer)
			}
			if perAccount > 0 {
				l.sent += got
			}
			return nil
		},
	}
}

// hostBuild builds the named functions for this machine into dir/<name>,
// with the flags make build uses.
func hostBuild(dir string, names ...string) error {
	args := []string{"build", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", dir + string(filepath.Separator)}
	for _, n := range names {
		args = append(args, "./functions/"+n)
	}
	build := exec.Command("go", args...)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}
	return nil
}

// lambdaProc is a function's process under a minimal Lambda Runtime API
// that hands it one event per invoke, as Lambda does a warm environment.
type lambdaProc struct {
	cmd     *exec.Cmd
	rt      *http.Server
	started time.Time // just before the process started
	next    chan lambdaInvocation
	done    chan lambdaAnswer
	seq     int
}

type lambdaInvocation struct {
	id       string
	event    []byte
	deadline time.Time
}

type lambdaAnswer struct {
	body []byte
	err  error
}

// startLambda starts the function bin (its name for the runtime) with the
// bench's table, and env added to its environment.
func (b *bench) startLambda(bin, name string, env ...string) (*lambdaProc, error) {
	p := &lambdaProc{next: make(chan lambdaInvocation), done: make(chan lambdaAnswer, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", func(w http.ResponseWriter, r *http.Request) {
		select {
		case inv := <-p.next:
			w.Header().Set("Lambda-Runtime-Aws-Request-Id", inv.id)
			w.Header().Set("Lambda-Runtime-Deadline-Ms", fmt.Sprint(inv.deadline.UnixMilli()))
			w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:local:0:function:"+name)
			_, _ = w.Write(inv.event)
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		p.done <- lambdaAnswer{body: body}
	})
	mux.HandleFunc("POST /2018-06-01/runtime/", func(w http.ResponseWriter, r *http.Request) { // an invocation's or init's error
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		p.done <- lambdaAnswer{err: fmt.Errorf("%s: %s", r.URL.Path, body)}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.rt = &http.Server{Handler: mux}
	go p.rt.Serve(ln)
	p.cmd = exec.Command(bin)
	p.cmd.Env = append(os.Environ(), "AWS_LAMBDA_RUNTIME_API="+ln.Addr().String(), "TABLE_NAME="+b.cfg.TableName,
		"DYNAMODB_ENDPOINT="+b.cfg.Endpoint, "CURSOR_SECRET="+b.cfg.CursorSecret, "AWS_LAMBDA_FUNCTION_NAME="+name)
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stdout, p.cmd.Stderr = io.Discard, io.Discard
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		p.rt.Close()
		return nil, err
	}
	return p, nil
}

// invoke hands the function one event with timeout to its deadline, and
// returns its answer.
func (p *lambdaProc) invoke(event []byte, timeout time.Duration) (string, error) {
	p.seq++
	inv := lambdaInvocation{id: fmt.Sprintf("req-%d", p.seq), event: event, deadline: time.Now().Add(timeout)}
	give := time.After(timeout + 30*time.Second)
	select {
	case p.next <- inv:
	case <-give:
		return "", errors.New("the function did not ask for its next event in time")
	}
	select {
	case a := <-p.done:
		return string(a.body), a.err
	case <-give:
		return "", fmt.Errorf("no answer within %s", timeout+30*time.Second)
	}
}

func (p *lambdaProc) stop() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.rt.Close()
}

// runTime is the CPU time the process's threads have run, to the
// nanosecond (the sum of their schedstat run times; Go's threads do not exit).
func (p *lambdaProc) runTime() (time.Duration, error) {
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", p.cmd.Process.Pid))
	if err != nil || len(stats) == 0 {
		return 0, fmt.Errorf("no schedstat: %v", err)
	}
	var total time.Duration
	for _, path := range stats {
		stat, err := os.ReadFile(path)
		if err != nil {
			return 0, err
		}
		ns, err := strconv.ParseInt(strings.Fields(string(stat))[0], 10, 64)
		if err != nil {
			return 0, err
		}
		total += time.Duration(ns)
	}
	return total, nil
}

// peakRSS is the process's peak resident set (VmHWM) in MB.
func (p *lambdaProc) peakRSS() (float64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
			kb, err := strconv.Atoi(f[1])
			return float64(kb) / 1024, err
		}
	}
	return 0, errors.New("no VmHWM in /proc status")
}

// cpu is the CPU time the process has used (utime+stime, in the kernel's
// 100 Hz clock ticks).
func (p *lambdaProc) cpu() (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command's closing parenthesis start at field 3;
	// utime and stime are fields 14 and 15.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond, errors.Join(err1, err2)
}
