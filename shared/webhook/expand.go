package webhook

import (
	"context"
	"errors"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
)

// expandWorkers is how many accounts' fan-out jobs one dispatcher expands at
// once, and expandWrites how many deliveries one expansion writes at once:
// a burst's thousands of deliveries are recorded at a pace that leaves the
// table's capacity to every other merchant's attempts.
const (
	expandWorkers = 4
	expandWrites  = 8
	expandJobs    = 4 // jobs read at a time
	// expandRetry is when an expansion that failed is tried again.
	expandRetry = 5 * time.Second
)

// expandFanout records, in the background, the deliveries of the fan-out
// jobs of q's account (see store.AddFanout), unless this dispatcher is at it
// already; then parks the queue, unless a job was added since q was read.
func (s *Service) expandFanout(ctx context.Context, q store.Queue) {
	account := store.FanoutAccount(q.AccountID)
	s.mu.Lock()
	busy := s.expanding[account]
	s.expanding[account] = true
	s.mu.Unlock()
	if busy {
		return
	}
	s.wg.Add(1)
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.expanding, account)
			s.mu.Unlock()
			s.wg.Done()
		}()
		select {
		case s.expanders <- struct{}{}:
			defer func() { <-s.expanders }()
		case <-ctx.Done():
			return
		}
		if err := s.expandAll(ctx, account, q); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "webhook fan-out not expanded; tried again shortly", "account_id", account, "error", err.Error())
			// Not at every pass: a cause that lasts (throttling, a record
			// DynamoDB refuses) would keep the table busy for nothing.
			if err := s.store.Park(ctx, q, s.now().Add(expandRetry)); err != nil && !errors.Is(err, store.ErrNotClaimed) {
				s.log.WarnContext(ctx, "webhook dispatch: fan-out queue not parked", "account_id", account, "error", err.Error())
			}
		}
	}()
}

// expandAll expands the account's fan-out jobs until none is left, then
// parks its queue. A job is deleted only once all its deliveries are
// recorded and their queues woken, so one cut short is expanded again; its
// deliveries recorded already are found and kept.
func (s *Service) expandAll(ctx context.Context, account string, q store.Queue) error {
	for {
		jobs, err := s.store.FanoutJobs(ctx, account, expandJobs)
		if err != nil {
			return err
		}
		if len(jobs) == 0 {
			if err := s.store.Park(ctx, q, time.Time{}); err != nil && !errors.Is(err, store.ErrNotClaimed) {
				return err
			}
			return nil
		}
		eps, err := s.store.ListEndpoints(ctx, account)
		if err != nil {
			return err
		}
		// A job that fails holds up none after it; the queue stays due
		// for it (see expandFanout).
		var errs []error
		for _, job := range jobs {
			if err := s.expandJob(ctx, job, eps); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
	}
}

// expandJob records the deliveries of one fan-out job to every endpoint of
// eps that subscribes to each of its events, wakes the enabled endpoints'
// queues, and deletes the job. An event gone meanwhile (its account's test
// data cleared) owes nothing.
func (s *Service) expandJob(ctx context.Context, job store.FanoutJob, eps []business.Endpoint) error {
	evs, err := s.store.FanoutEvents(ctx, job)
	if err != nil {
		return err
	}
	now := s.now()
	var ds []business.Delivery
	wake := map[string]bool{}
	for _, ev := range evs {
		if !ev.Found {
			continue
		}
		owed, queues := owedTo(eps, job.Account, ev.ID, ev.Type, ev.Body, now)
		ds = append(ds, owed...)
		for _, q := range queues {
			wake[q] = true
		}
	}
	if err := s.createAll(ctx, ds, expandWrites); err != nil {
		return err
	}
	for queue := range wake {
		if err := s.store.Wake(ctx, queue, now); err != nil {
			return err
		}
	}
	return s.store.DoneFanout(ctx, job)
}
