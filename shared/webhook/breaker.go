package webhook

import (
	"context"
	"errors"
	"time"

	"bizdata/shared/store"
)

// heldHere reports whether this dispatcher opened (or kept open) the
// account's circuit until after now.
func (s *Service) heldHere(account string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	until, ok := s.held[account]
	if ok && !now.Before(until) {
		delete(s.held, account)
		return false
	}
	return ok
}

// isFailing reports whether the last attempt of queue's deliveries here
// failed (or failures are counted in its queue item).
func (s *Service) isFailing(queue string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failing[queue]
}

// markFailing notes that q's account has failures counted in the table (or
// a streak of them going on), so its next success resets them.
func (s *Service) markFailing(q store.Queue) {
	if q.Failures > 0 || !q.FailingSince.IsZero() {
		s.mu.Lock()
		s.failing[q.AccountID] = true
		s.mu.Unlock()
	}
}

// probeCircuit makes the one attempt that decides whether the open circuit
// of q's account closes, if its time has come and no other dispatcher makes
// it.
func (s *Service) probeCircuit(ctx context.Context, q store.Queue, now time.Time) {
	s.mu.Lock()
	probing := s.probing[q.AccountID]
	s.mu.Unlock()
	if probing || !q.ProbeUntil.Before(now) && !q.ProbeUntil.IsZero() {
		return // the probe is under way, here or in another dispatcher
	}
	if s.endpointOff(ctx, q, now) {
		return
	}
	if err := s.store.ClaimProbe(ctx, q, now, leaseTime); err != nil {
		if !errors.Is(err, store.ErrNotClaimed) {
			s.log.WarnContext(ctx, "webhook dispatch: probe not claimed", "account_id", q.AccountID, "error", err.Error())
		}
		return
	}
	ds, _, err := s.store.AccountDue(ctx, q.AccountID, 2*MaxInFlightAccount)
	if err != nil {
		s.log.WarnContext(ctx, "webhook dispatch: due deliveries not read", "account_id", q.AccountID, "error", err.Error())
		return // the probe's lease runs out, and it is made again
	}
	busy := false
	for _, d := range ds {
		if d.NextAt.After(now) {
			break // the rest are later still
		}
		if !d.LeaseUntil.Before(now) || s.underWay(d.Delivery) {
			busy = true // an attempt under way says nothing yet
			continue
		}
		// Not started (settings unreadable, or no slot free): the probe's
		// lease runs out and it is made then.
		if tg, ok := s.targetOf(ctx, q.AccountID, now); ok && !tg.off {
			s.startAttempt(ctx, d.Delivery, tg, true)
		}
		return
	}
	if busy {
		return // the probe's lease runs out, and it is made then
	}
	// Nothing is due to probe with: close the circuit; what comes due is
	// attempted, and opens it again if the endpoint still fails. No attempt
	// succeeded, so the streak of failures goes on.
	if err := s.store.CloseCircuit(ctx, q.AccountID, now); err != nil {
		s.log.WarnContext(ctx, "webhook dispatch: circuit not closed", "account_id", q.AccountID, "error", err.Error())
	}
}

// updateBreaker feeds an attempt's result to the account's circuit breaker
// in the table: a failure is counted (and opens the circuit at the
// threshold, or keeps it open after a failed probe); a success resets a
// count above 0.
func (s *Service) updateBreaker(ctx context.Context, account string, ok, probe bool) {
	now := s.now()
	s.mu.Lock()
	failing := s.failing[account]
	if ok {
		delete(s.failing, account)
	} else {
		s.failing[account] = true
	}
	s.mu.Unlock()
	var err error
	switch {
	case ok && (failing || probe):
		s.mu.Lock()
		delete(s.held, account)
		s.mu.Unlock()
		err = s.store.AttemptSucceeded(ctx, account, now)
	case !ok:
		var opened bool
		var until, since time.Time
		opened, until, since, err = s.store.AttemptFailed(ctx, account, now, BreakerThreshold, s.Probe, probe)
		if !until.IsZero() {
			s.mu.Lock()
			s.held[account] = until
			s.mu.Unlock()
		}
		if opened {
			s.log.WarnContext(ctx, "webhook circuit open: holding the account's deliveries", "account_id", account, "threshold", BreakerThreshold, "probe_at", until)
		}
		if err == nil {
			s.disableFailing(ctx, account, since, now)
		}
	}
	if err != nil {
		s.log.WarnContext(ctx, "webhook circuit not updated", "account_id", account, "error", err.Error())
	}
}
