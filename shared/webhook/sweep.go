package webhook

import (
	"context"
	"fmt"
	"time"
)

// Sweep gives a delivery to every payment written between the sweep cursor
// and SweepDelay ago that has none (its stream batch was skipped), wakes the
// accounts whose deliveries of those payments still wait, and moves the
// cursor on SweepSpan at a time. Deliveries are created as the stream would
// have, with the same webhook-id, so a stream record handled late finds them
// and does nothing. It returns how many it created.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	until := s.now().Add(-s.SweepDelay).Truncate(time.Second)
	from, err := s.store.SweepCursor(ctx)
	if err != nil {
		return 0, err
	}
	first := from.IsZero()
	if first {
		from = until.Add(-SweepLookback)
	}
	created := 0
	for from.Before(until) {
		to := from.Add(SweepSpan)
		if to.After(until) {
			to = until
		}
		written, err := s.store.PaymentsWritten(ctx, from, to)
		if err != nil {
			return created, err
		}
		missing, waiting, err := s.store.WithoutDelivery(ctx, written)
		if err != nil {
			return created, err
		}
		// The accounts of deliveries still waiting are woken again, so one
		// whose wake was lost (or whose index lagged) is not stranded.
		for _, account := range waiting {
			if err := s.store.Wake(ctx, account, s.now()); err != nil {
				return created, err
			}
		}
		failed := s.recordAll(ctx, missing)
		created += len(missing) - len(failed)
		if len(failed) > 0 {
			return created, fmt.Errorf("sweep: %d of %d missing deliveries not recorded; the next sweep tries again", len(failed), len(missing))
		}
		if len(missing) > 0 {
			s.log.WarnContext(ctx, "webhook sweep recorded deliveries the stream had not", "count", len(missing), "from", from, "to", to)
		}
		if err := s.store.AdvanceSweep(ctx, from, to, first); err != nil {
			return created, err
		}
		from, first = to, false
	}
	return created, nil
}
