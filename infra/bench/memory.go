package main

// The memory step: every function's peak RSS and CPU time, and the
// MemorySize chosen from them.

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"bizdata/shared/app/lambdas"
	"bizdata/shared/business"
	"bizdata/shared/notices"
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
	// (its runtime deadline); on AWS a run dispatches for lambdas.DispatchFor.
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

// lambdaMemory runs every function's own binary under a minimal Lambda Runtime API,
// one cold event then a representative sequence, reads the process's peak RSS
// and CPU time, and picks each function's MemorySize from them.
func (b *bench) lambdaMemory() error {
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
	others := map[int]*costRange{} // against 256 MB, every function but retry-webhooks
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
		u, err := b.measureFunction(filepath.Join(tmp, name), name, p)
		if p.stop != nil {
			p.stop()
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		label := name
		if name == "retry-webhooks" {
			load.perDelivery = u.scaleToDispatchRuns(load.sent)
			label += fmt.Sprintf(" (per %s run)", lambdas.DispatchFor)
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
				others[size] = &costRange{}
			}
			others[size].add(u.cost(size)-u.cost(256), u.p50(size)/u.p50(256))
		}
	}
	if load.sent > 0 { // retry-webhooks measured (-memory-functions may leave it out)
		var rates []string
		for _, size := range memorySizes {
			rates = append(rates, fmt.Sprintf("%.0f/s at %d MB", 1/eventTime{load.perDelivery, load.perDelivery}.at(size), size))
		}
		b.printf("\nretry-webhooks: %.2f ms of CPU per delivery (the busy runs' CPU less the idle run's, over the %d deliveries they sent), so a run works through a backlog at most at %s (plain HTTP here; TLS to real endpoints costs more); at 128 MB a run would cost $%.2f per million.\n",
			millis(load.perDelivery), load.sent, strings.Join(rates, ", "), load.cost128)
	}
	b.printf("\n")
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

// costRange is the range of two figures over the functions.
type costRange struct{ cost, p50 [2]float64 }

func (s *costRange) add(cost, p50 float64) {
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
		hookWindow, hookBacklog, hookMerchants, lambdas.DispatchFor)
	b.printf("apply-report-figures: a stream batch of 1 of the loaded account's waiting figures items, then 4 of 25 and one of 1000 (the template's BatchSize). drain-stream-failures: a failure queue message naming the stream range of 1 paid sale's records, then 4 of 5 sales' and one of 25's, each read again from the stream and recorded. ")
	b.printf("Settings, reports, keys, the clear of test data, an endpoint's test and redelivery, and the dashboard: over a shop of the step's own (a few records of each kind and a sale of 100 lines; a summary of the loaded account would first apply its thousands of waiting figures): settings read, then timezone changes; summaries by month, day and week; receivables and inventory, the largest over the loaded account (its waiting figures applied first, as the stream's consumer would have); key creates, lists and revokes (each of a key of its own); clears of a test twin holding 1 customer, the largest 200; 5 endpoint tests (its limit a minute) to the receiver; redeliveries of delivered events. dashboard-assets: its two files; dashboard-auth: the sign-in page, then 4 sign-ins (an argon2id hash each); dashboard-pages: a session's overview and lists, the largest the 100-line sale's page; dashboard-actions: forms adding a customer; each with a 2 MiB body last (400 where a form is read). ")
	b.printf("Invoice links and documents, over the same shop: create-invoice-link by turns a sale's first link and the replacement of one; revoke-invoice-link each of a sale's link made for it; get-sale-pdf (with the key), invoice-page and invoice-pdf (no key, the token of a link made for the sale) by turns a sale of 1 line and one of %d, the largest the 100-line sale. send-notices: scheduled runs in the run's table, each after sales of an account of its own whose notices are due at once (a reminder_date of today, for customers with an email address; a due_date of yesterday), emailing over SMTP to a Mailpit of its own: the cold one with 1 reminder, then 4 with 5 reminders and 5 overdue notices, and one with %d reminders (5 for each of a run's %d workers).\n\n",
		invoiceLongLines, memNoticeMost, notices.Workers)
	b.printf("Peak RSS is the process's VmHWM (`/proc/<pid>/status`) after the cold event and after the sequence. CPU per event is the process's utime+stime (`/proc/<pid>/stat`, 10 ms ticks) over the sequence; the ordinary events' (the 4 ordinary requests, batches or runs with deliveries) is read finer, from the threads' `schedstat` run times, and their wall from handing the event over to its answer. ")
	b.printf("Model: Lambda gives CPU in proportion to memory (%d MB = one vCPU; a core of this machine stands for it), so an event lasts max(0, wall - cpu) + cpu x %d/M at M MB. ", fullVCPU, fullVCPU)
	b.printf("Cost per million events = $0.20 + the ordinary events' mean modelled duration in seconds x M/1024 x $%.10f x 1e6 (arm64 list prices in us-east-1, aws.amazon.com/lambda/pricing; no free tier, no rounding up to the billed 1 ms). ", pricePerGBs)
	b.printf("Chosen: of %v MB, the size that costs least while the ordinary events' modelled p50 (for retry-webhooks, a delivery's CPU time: a backlog is CPU-bound) stays within 1.25x of 256 MB's and the peak RSS under half the size. ", memorySizes)
	b.printf("Under this model 128 MB passes only for events that wait (wall - cpu) at least %.1fx their CPU time, so the choice hangs on DynamoDB's latency: DynamoDB Local took a median %.1f ms per PutItem as the step began (DynamoDB on AWS: single-digit ms; DynamoDB Local slows as its stream store fills, and waits measured on a slow one overstate the case for 128 MB).\n\n",
		(f(128)-1.25*f(256))/0.25, millis(put))
	b.printf("| function | peak RSS cold (MB) | peak RSS after the sequence (MB) | CPU ms per event | ordinary event: CPU ms, wall ms (mean) | chosen MemorySize | cost per million events at chosen vs 256 MB |\n|---|---|---|---|---|---|---|\n")
}
