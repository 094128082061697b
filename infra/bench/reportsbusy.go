package main

// The reports step's busy account: summaries asked while sales pour in.

import (
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"
)

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
	// Clients 0 to busyClients-1 post sales, the next asks summaries, the
	// last samples the figures items waiting.
	err := untilDeadline(busyClients+2, deadline, func(c int) error {
		switch c {
		case busyClients:
			_, _, _, err := s.invoke("report-summary", "GET", "/api/v1/reports/summary", "from=2026-01-01&to=2026-01-31&group_by=day")
			asked.Add(1)
			var se statusError
			if errors.As(err, &se) && se == http.StatusServiceUnavailable {
				refused.Add(1)
				return nil
			}
			return err
		case busyClients + 1:
			time.Sleep(time.Second)
			if n, err := s.figuresWaiting(); err == nil && int64(n) > mostWaiting.Load() {
				mostWaiting.Store(int64(n))
			}
			return nil
		}
		sale := jsonBody(map[string]any{"customer_id": c%20 + 1, "sub_total_amount": "20.00", "total_amount": "20.00",
			"amount_paid": "5.00", "payment_type": "Cash", "payment_date": "2026-01-20", "invoice_type": "pos", "due_date": "2026-02-19"})
		rec := serveRequest(s.h, apiRequest("POST", "/api/v1/sales/add", s.key, sale))
		switch rec.Code {
		case 200:
			sales.Add(1)
		case http.StatusServiceUnavailable:
			saleBusy.Add(1)
		default:
			return fmt.Errorf("busy sale: %d %s", rec.Code, rec.Body.String())
		}
		return nil
	})
	if err != nil {
		return err
	}
	if _, _, left, err := s.settleFigures(time.Minute); err != nil {
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
