package webhook

import (
	"context"
	"errors"

	"bizdata/shared/business"
	"bizdata/shared/store"
)

// startAttempt takes a slot and makes d's attempt in the background; false
// when every slot is busy.
func (s *Service) startAttempt(ctx context.Context, d business.Delivery, tg target, probe bool) bool {
	select {
	case s.slots <- struct{}{}:
	default:
		return false
	}
	id := d.AccountID + "/" + d.TransactionID
	merchant := merchantOf(d.AccountID)
	s.mu.Lock()
	s.inFlight[id] = true
	s.perAcct[d.AccountID]++
	s.perMerchant[merchant]++
	if probe {
		s.probing[d.AccountID] = true
	}
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.inFlight, id)
			if s.perAcct[d.AccountID]--; s.perAcct[d.AccountID] == 0 {
				delete(s.perAcct, d.AccountID)
				delete(s.drained, d.AccountID)
			}
			if s.perMerchant[merchant]--; s.perMerchant[merchant] == 0 {
				delete(s.perMerchant, merchant)
			}
			if probe {
				delete(s.probing, d.AccountID)
			}
			s.mu.Unlock()
			<-s.slots
			s.wg.Done()
		}()
		if err := s.attemptDelivery(ctx, d, tg, probe); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "webhook attempt not saved", "transaction_id", d.TransactionID, "error", err.Error())
		}
	}()
	return true
}

// attemptDelivery claims d's next attempt, makes it to tg and saves the
// outcome. A record that cannot be saved ends failed (logged and counted),
// never retried.
func (s *Service) attemptDelivery(ctx context.Context, d business.Delivery, tg target, probe bool) error {
	now := s.now()
	lease, err := s.store.ClaimDelivery(ctx, d, now, leaseTime)
	if errors.Is(err, store.ErrNotClaimed) {
		return nil
	}
	if err != nil {
		return err
	}
	var a business.DeliveryAttempt
	ok := false
	switch {
	case tg.url == "":
		a = business.DeliveryAttempt{At: now, Error: "no callback URL is set for the account"}
	case tg.endpoint:
		a, ok = s.sender.SendSigned(ctx, d, tg.url, tg.secrets, now)
	default:
		a, ok = s.sender.Send(ctx, d, tg.url, tg.secret, now)
	}
	if tg.url != "" && ctx.Err() == nil { // an attempt the run's end cut short says nothing of the endpoint
		s.updateBreaker(ctx, d.AccountID, ok, probe)
	}
	d.Next(a, ok, s.schedule)
	if tg.endpoint && a.Status == 410 && s.disableGone(ctx, d.AccountID, now) {
		// 410 Gone: the endpoint is gone, not the delivery. It waits, due
		// at once, as those recorded while the endpoint is off do (even
		// after its last attempt), and is sent when the endpoint is
		// enabled again.
		d.State, d.NextAt = business.DeliveryPending, now
	}
	s.log.InfoContext(ctx, "webhook attempt", "account_id", d.AccountID, "transaction_id", d.TransactionID,
		"attempt", d.Attempt, "status", a.Status, "ms", a.LatencyMS, "error", a.Error, "state", d.State)
	err = s.store.SaveAttempt(ctx, d, lease)
	switch {
	case errors.Is(err, store.ErrNotClaimed):
		s.log.WarnContext(ctx, "webhook attempt outlived its lease", "transaction_id", d.TransactionID)
		return nil
	case errors.Is(err, store.ErrUnsavable):
		s.log.ErrorContext(ctx, "webhook delivery record cannot be saved: ending it failed", "account_id", d.AccountID,
			"transaction_id", d.TransactionID, "error", err.Error())
		if ferr := s.store.FailUnsavable(ctx, d, lease, d.Attempts[len(d.Attempts)-1]); ferr != nil {
			return ferr
		}
		d.State = business.DeliveryFailed
	case err != nil:
		return err
	}
	if d.State == business.DeliveryFailed {
		s.failedMetric(ctx, d)
	}
	return nil
}

// Metric names of the delivery functions, in CloudWatch embedded metric
// format: the log line is the metric, so no API call and no permission is
// needed. The WebhooksFailedAlarm of template.yaml watches it.
const (
	MetricNamespace        = "BizData/Webhooks"
	MetricDeliveriesFailed = "DeliveriesFailed"
)

// failedMetric logs that d used its last attempt, as one EMF metric line.
func (s *Service) failedMetric(ctx context.Context, d business.Delivery) {
	s.log.ErrorContext(ctx, "webhook delivery failed",
		"_aws", map[string]any{
			"Timestamp": s.now().UnixMilli(),
			"CloudWatchMetrics": []map[string]any{{
				"Namespace":  MetricNamespace,
				"Dimensions": [][]string{{}},
				"Metrics":    []map[string]string{{"Name": MetricDeliveriesFailed, "Unit": "Count"}},
			}},
		},
		MetricDeliveriesFailed, 1, "account_id", d.AccountID, "transaction_id", d.TransactionID, "attempts", d.Attempt)
}
