package webhook

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
)

// Dispatch makes due attempts until stopAt (or ctx ends), looking for due
// work every poll and sweeping for payments without a delivery every
// SweepEvery, then waits for the attempts under way.
func (s *Service) Dispatch(ctx context.Context, stopAt time.Time, poll time.Duration) {
	defer s.wg.Wait()
	var swept time.Time
	var sweeping sync.WaitGroup
	defer sweeping.Wait()
	for ctx.Err() == nil && time.Now().Before(stopAt) {
		if time.Since(swept) >= SweepEvery {
			// Beside the passes, one sweep at a time, so a long one (after an
			// outage) never holds up an attempt.
			swept = time.Now()
			sweeping.Add(1)
			go func() {
				defer sweeping.Done()
				if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
					s.log.WarnContext(ctx, "webhook sweep", "error", err.Error())
				}
			}()
		}
		if err := s.dispatchDue(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "webhook dispatch", "error", err.Error())
		}
		select {
		case <-ctx.Done():
		case <-time.After(poll):
		}
	}
}

// DispatchOnce starts the attempts due now and waits for them.
func (s *Service) DispatchOnce(ctx context.Context) error {
	err := s.dispatchDue(ctx)
	s.wg.Wait()
	return err
}

// dispatchDue reads the queues with work due and starts their attempts,
// without waiting for them. Shares are per merchant (merchantOf): an
// account's callback URL and each of its endpoints are queues of their own
// but draw on one share, so a merchant with many endpoints takes no more of
// the sending capacity than one with a single queue. First each merchant's
// share (MaxInFlight over the merchants due, at most MaxInFlightAccount,
// Spare left free), taken from its queues in turn; then free slots up to
// MaxBeyondTurn, spread over the merchants with more due (work conserving:
// the next pass gives a newcomer its share first). A queue whose probe time
// has come gets its probe; a fan-out queue is expanded beside the pass.
func (s *Service) dispatchDue(ctx context.Context) error {
	now := s.now()
	qs, err := s.store.ReadyQueues(ctx, now) // what it read, even when a shard failed
	byID := map[string]*merchant{}
	var ms []*merchant
	for _, q := range qs {
		switch {
		case store.IsFanoutQueue(q.AccountID):
			s.expandFanout(ctx, q)
		case q.Held(now) || s.heldHere(q.AccountID, now):
			// Held: it waits for its probe (the index may not show yet the
			// circuit this dispatcher just opened).
		case q.Open():
			s.probeCircuit(ctx, q, now)
		default:
			s.markFailing(q) // before any allotment: the beyond-turn phase skips a failing queue
			id := merchantOf(q.AccountID)
			m := byID[id]
			if m == nil {
				m = &merchant{id: id}
				byID[id] = m
				ms = append(ms, m)
			}
			m.queues = append(m.queues, q)
		}
	}
	share := max(1, min(MaxInFlightAccount, (MaxInFlight-Spare)/max(1, len(ms))))
	s.mu.Lock()
	before := maps.Clone(s.perMerchant)
	s.passes++
	turn := s.passes
	s.mu.Unlock()
	var runs []allotment
	hungry := map[string]*merchant{} // merchant -> its queues that have more due
	addHungry := func(m string, q store.Queue) {
		if hungry[m] == nil {
			hungry[m] = &merchant{id: m}
		}
		hungry[m].queues = append(hungry[m].queues, q)
	}
	for _, m := range ms {
		r, rest := s.allot(m, share, turn, nil)
		runs = append(runs, r...)
		for _, q := range rest {
			addHungry(m.id, q)
		}
	}
	var mu sync.Mutex
	startAllotted := func(a allotment) {
		if _, hungry := s.startDue(ctx, a.q, a.want, now); hungry {
			mu.Lock()
			addHungry(a.merchant, a.q)
			mu.Unlock()
		}
	}
	s.runAllotments(runs, startAllotted)
	if free := MaxBeyondTurn - len(s.slots); free > 0 && len(hungry) > 0 {
		extra := max(1, free/len(hungry))
		runs = nil
		for _, m := range hungry {
			// A merchant at most doubles what it had in flight when the
			// pass began, and only from queues whose attempts do not fail:
			// a failing endpoint is not flooded before its circuit opens.
			s.mu.Lock()
			n := s.perMerchant[m.id]
			s.mu.Unlock()
			if grow := min(extra, before[m.id]); grow > 0 {
				r, _ := s.allot(m, n+grow, turn, s.isFailing)
				runs = append(runs, r...)
			}
		}
		hungry = map[string]*merchant{}
		s.runAllotments(runs, startAllotted)
	}
	return err
}

// merchant is one account's queues with work due in a pass.
type merchant struct {
	id     string
	queues []store.Queue
}

// merchantOf returns the account whose share a queue's attempts count
// against: the account of an endpoint's queue, or the account itself for
// its callback URL's queue.
func merchantOf(queue string) string {
	if account, _, ok := store.SplitEndpointQueue(queue); ok {
		return account
	}
	return queue
}

// allotment is how many more attempts a pass may start of one queue.
type allotment struct {
	q        store.Queue
	want     int
	merchant string
}

// allot spreads what m may still start, up to limit in flight here, over its
// queues: evenly, the remainder to the first ones from a place that moves on
// each pass (turn), so each of a merchant's endpoints is first in turn; skip,
// when not nil, passes over a queue. The queues are then filled side by
// side, so a pass takes no longer for a merchant with many endpoints. It
// returns the allotments and the queues left without one this pass.
func (s *Service) allot(m *merchant, limit int, turn int, skip func(string) bool) ([]allotment, []store.Queue) {
	s.mu.Lock()
	budget := limit - s.perMerchant[m.id]
	s.mu.Unlock()
	var qs []store.Queue
	for i := range m.queues {
		if q := m.queues[(turn+i)%len(m.queues)]; skip == nil || !skip(q.AccountID) {
			qs = append(qs, q)
		}
	}
	if budget <= 0 || len(qs) == 0 {
		return nil, qs
	}
	var runs []allotment
	var rest []store.Queue
	for i, q := range qs {
		want := budget / len(qs)
		if i < budget%len(qs) {
			want++
		}
		if want == 0 {
			rest = append(rest, q)
			continue
		}
		runs = append(runs, allotment{q: q, want: want, merchant: m.id})
	}
	return runs, rest
}

// passWorkers is how many queues one pass serves at once: a pass's time
// does not grow with the number of merchants that have work due.
const passWorkers = 16

// runAllotments calls fn for every allotment, passWorkers at a time, and
// waits.
func (s *Service) runAllotments(qs []allotment, fn func(allotment)) {
	sem := make(chan struct{}, passWorkers)
	var wg sync.WaitGroup
	for _, q := range qs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(q)
		}()
	}
	wg.Wait()
}

// startDue starts up to want more attempts of q, from its due partition, and
// returns how many it started and whether more of its work is due than that.
// When nothing of the queue is under way and nothing more is due, it parks
// the queue's ready entry at its next due time (or removes it when nothing
// waits).
func (s *Service) startDue(ctx context.Context, q store.Queue, want int, now time.Time) (int, bool) {
	if s.endpointOff(ctx, q, now) {
		return 0, false
	}
	s.markFailing(q)
	s.mu.Lock()
	local := s.perAcct[q.AccountID]
	gen, drained := s.drained[q.AccountID]
	s.mu.Unlock()
	if drained && gen == q.Gen && local > 0 {
		return 0, false // all its due work is under way here, and nothing was queued since
	}
	if want <= 0 {
		return 0, true
	}
	// The queue's target is read beside its due deliveries (one round trip
	// before the first attempt, not two); a pass that finds nothing to start
	// spends one consistent read for nothing.
	type targetRead struct {
		t  target
		ok bool
	}
	targetc := make(chan targetRead, 1)
	go func() {
		t, ok := s.targetOf(ctx, q.AccountID, now)
		targetc <- targetRead{t, ok}
	}()
	ds, more, err := s.store.AccountDue(ctx, q.AccountID, local+want+MaxInFlightAccount)
	if err != nil {
		s.log.WarnContext(ctx, "webhook dispatch: due deliveries not read", "account_id", q.AccountID, "error", err.Error())
		return 0, false
	}
	var next time.Time // when the account next has work, if nothing is under way
	earlier := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	started, busy, remaining := 0, local > 0, false
	var tg target // the read's result, taken at the first attempt this pass starts
	read := false
	for _, d := range ds {
		if d.NextAt.After(now) {
			earlier(d.NextAt)
			more = false // the rest are later still
			break
		}
		if s.underWay(d.Delivery) {
			busy = true
			continue
		}
		if !d.LeaseUntil.Before(now) { // another dispatcher's attempt: look again soon
			earlier(now.Add(2 * time.Second))
			continue
		}
		if started == want {
			remaining = true
			break
		}
		if !read {
			r := <-targetc
			if tg, read = r.t, r.ok; !read {
				remaining = true
				break
			}
		}
		if tg.off || !s.startAttempt(ctx, d.Delivery, tg, false) {
			remaining = true
			break
		}
		started, busy = started+1, true
	}
	remaining = remaining || more
	switch {
	case remaining:
		return started, true
	case busy:
		s.mu.Lock()
		if s.perAcct[q.AccountID] > 0 {
			s.drained[q.AccountID] = q.Gen
		}
		s.mu.Unlock()
		return started, false
	}
	if settled := q.QueuedAt.Add(QueueSettle); now.Before(settled) {
		// What was just queued may not be in the index yet: look again a
		// second later, then once the index has surely caught up.
		look := settled
		if q.ReadyAt.Before(q.QueuedAt.Add(time.Second)) {
			look = now.Add(time.Second)
		}
		if next.IsZero() || next.After(look) {
			next = look
		}
	}
	if next.Unix() == q.ReadyAt.Unix() {
		return started, false
	}
	if err := s.store.Park(ctx, q, next); err != nil && !errors.Is(err, store.ErrNotClaimed) {
		s.log.WarnContext(ctx, "webhook dispatch: queue not parked", "account_id", q.AccountID, "error", err.Error())
	}
	return started, false
}

// underWay reports whether this dispatcher is making an attempt of d.
func (s *Service) underWay(d business.Delivery) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight[d.AccountID+"/"+d.TransactionID]
}
