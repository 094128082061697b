// Package notices sends what a sale sends on its own: the reminder email to
// the customer on its reminder_date and the sale.overdue event the day after
// its due_date. The scheduled function (send-notices) calls Run; the
// devserver runs it on a timer.
package notices

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/mail"
	"bizdata/shared/store"
)

// Limits of one run, which stays well within the function's timeout: at
// most MaxPerRun notices, handled Workers at a time. The rest waits for the
// next run, oldest first.
const (
	MaxPerRun = 200
	Workers   = 8
)

// claimTimeout is how long a reminder claimed by a run may stay unrecorded
// before another run takes it for sent: longer than any run lasts.
const claimTimeout = 10 * time.Minute

// Runner holds what a run needs.
type Runner struct {
	Store *store.Store
	Mail  mail.Sender
	// BaseURL is where the hosted invoice pages are served
	// ("https://api.example.com"): a reminder's link is BaseURL/invoices/<token>.
	BaseURL string
	Log     *slog.Logger
}

// Result counts what a run did.
type Result struct {
	Reminded, Overdue, Dropped, Deferred, Failed int
}

// Run handles the notices whose instant has come, up to MaxPerRun. A notice
// that fails stays in the schedule for the next run; Run returns the first
// failure after handling the rest.
func (r *Runner) Run(ctx context.Context) (Result, error) {
	due, err := r.Store.DueNotices(ctx, r.Store.Now(), MaxPerRun)
	if err != nil {
		return Result{}, err
	}
	var (
		mu    sync.Mutex
		res   Result
		first error
		wg    sync.WaitGroup
	)
	work := make(chan store.DueNotice)
	for range min(Workers, len(due)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range work {
				outcome, err := r.handle(ctx, n)
				mu.Lock()
				if err != nil {
					res.Failed++
					if first == nil {
						first = err
					}
					// Never the address or the body: the sale and the kind.
					r.Log.ErrorContext(ctx, "notice failed", "account", n.Account, "invoice_code", n.InvoiceCode, "kind", n.Kind, "error", err.Error())
				} else {
					outcome.add(&res)
				}
				mu.Unlock()
			}
		}()
	}
	for _, n := range due {
		work <- n
	}
	close(work)
	wg.Wait()
	return res, first
}

type outcome int

const (
	reminded outcome = iota
	overdue
	dropped
	deferred
)

func (o outcome) add(r *Result) {
	switch o {
	case reminded:
		r.Reminded++
	case overdue:
		r.Overdue++
	case dropped:
		r.Dropped++
	case deferred:
		r.Deferred++
	}
}

func (r *Runner) handle(ctx context.Context, n store.DueNotice) (outcome, error) {
	c, err := r.Store.FindNoticeCase(ctx, n)
	if business.ErrorCode(err) == business.ENOTFOUND {
		return dropped, r.Store.DropNotice(ctx, n, nil)
	}
	if err != nil {
		return 0, err
	}
	now := r.Store.Now()
	switch business.DecideNotice(c.Sale.Sale, n.Kind, n.Date, c.CustomerEmail, c.Timezones, now) {
	case business.NoticeDrop:
		return dropped, r.Store.DropNotice(ctx, n, &c)
	case business.NoticeLater:
		return deferred, r.Store.PlanNoticeAgain(ctx, n, business.NoticeInstant(n.Date, c.Timezones))
	}
	if n.Kind == business.NoticeOverdue {
		return overdue, r.Store.RecordNotice(ctx, n, c)
	}
	if !mail.Configured(r.Mail) {
		// No sender (MailFromAddress empty): the reminder cannot go, and
		// waiting for it would hold the sale's overdue notice back.
		return dropped, r.Store.DropNotice(ctx, n, &c)
	}
	return r.remind(ctx, n, c, now)
}

// Reminders the mail server or SES refused are tried again every
// retryRefused (moved in the schedule, so that refused ones never fill a
// run's MaxPerRun ahead of others' notices), for up to giveUpAfter past
// their date; then dropped, and the sale's next notice planned.
const (
	retryRefused = time.Hour
	giveUpAfter  = 3 * 24 * time.Hour
)

// refused handles a reminder that certainly was not sent: its claim is
// released and it is tried again later, or given up.
func (r *Runner) refused(ctx context.Context, n store.DueNotice, c store.NoticeCase, now time.Time, cause error) (outcome, error) {
	if err := r.Store.ReleaseNotice(ctx, n); err != nil {
		return 0, errors.Join(cause, err)
	}
	var err error
	if start := business.NoticeInstant(n.Date, c.Timezones); now.Sub(start) > giveUpAfter {
		err = r.Store.DropNotice(ctx, n, &c)
	} else {
		err = r.Store.PlanNoticeAgain(ctx, n, now.Add(retryRefused))
	}
	return 0, errors.Join(fmt.Errorf("send reminder: %w", cause), err)
}

// remind sends a reminder at most once: it claims the notice's marker, sends,
// then records it sent. A send that certainly failed (mail.ErrNotSent)
// releases the claim, to be tried again (see refused); a send whose outcome is
// unknown, or a run that stopped between sending and recording, leaves its
// claim, which the first run after claimTimeout records as sent rather than
// send a second time.
func (r *Runner) remind(ctx context.Context, n store.DueNotice, c store.NoticeCase, now time.Time) (outcome, error) {
	marker, err := r.Store.ClaimNotice(ctx, n)
	switch {
	case errors.Is(err, store.ErrNoticeTaken) && marker.Sending && now.Sub(marker.At) < claimTimeout:
		return deferred, nil // another run is sending it
	case errors.Is(err, store.ErrNoticeTaken):
		return dropped, r.Store.RecordNotice(ctx, n, c)
	case err != nil:
		return 0, err
	}
	token, err := r.Store.InvoiceLinkToken(ctx, n.Account, n.InvoiceCode, &c.Sale)
	if err == nil {
		err = r.Mail.Send(ctx, ReminderEmail(c, r.BaseURL+"/invoices/"+token))
		if err != nil && !errors.Is(err, mail.ErrNotSent) {
			return 0, fmt.Errorf("send reminder, outcome unknown: %w", err)
		}
	}
	if err != nil {
		return r.refused(ctx, n, c, now, err)
	}
	return reminded, r.Store.RecordNotice(ctx, n, c)
}
