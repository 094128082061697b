package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// leaseTime is how long a runner holds a delivery's attempt: longer than an
// attempt can take, so a live runner never loses it.
const leaseTime = 3 * Timeout

// workers bounds the attempts one run makes at once.
const workers = 8

// Service records one delivery per payment and makes its attempts: the first
// one as soon as the payment's stream record arrives, the retries when the
// schedule says. Deliveries live in the table, so nothing depends on the
// stream's 24-hour retention, and each attempt is claimed before it is made,
// so two runners never make the same attempt.
type Service struct {
	store    *store.Store
	sender   *Sender
	schedule []time.Duration
	log      *slog.Logger
	now      func() time.Time
}

// NewService returns a Service; schedule is the wait before each retry.
func NewService(st *store.Store, sender *Sender, schedule []time.Duration, log *slog.Logger) *Service {
	return &Service{store: st, sender: sender, schedule: schedule, log: log, now: func() time.Time { return time.Now().UTC() }}
}

// IsPaymentInsert reports whether a stream record is the insertion of a
// payment: the records the stream's filter lets through.
func IsPaymentInsert(r events.DynamoDBEventRecord) bool {
	t, ok := r.Change.NewImage["type"]
	return r.EventName == "INSERT" && ok && t.DataType() == events.DataTypeString && t.String() == "payment"
}

// HandleStream is the deliver-webhooks function: for each payment insert it
// records a delivery and makes the first attempt. A record whose delivery
// could not be recorded is reported by its sequence number, so Lambda retries
// from it; a failed attempt is not an error (the schedule retries it).
func (s *Service) HandleStream(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var resp events.DynamoDBEventResponse
	var mu sync.Mutex
	s.each(len(ev.Records), func(i int) {
		r := ev.Records[i]
		if !IsPaymentInsert(r) {
			return
		}
		if err := s.start(ctx, FromStreamImage(r.Change.NewImage)); err != nil {
			s.log.ErrorContext(ctx, "webhook delivery not recorded", "sequence_number", r.Change.SequenceNumber, "error", err.Error())
			mu.Lock()
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
			mu.Unlock()
		}
	})
	return resp, nil
}

// each runs fn(0..n-1) on at most workers goroutines.
func (s *Service) each(n int, fn func(int)) {
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

func (s *Service) start(ctx context.Context, img map[string]types.AttributeValue) error {
	p := store.PaymentFrom(img)
	accountID := ""
	if v, ok := img["account_id"].(*types.AttributeValueMemberS); ok {
		accountID = v.Value
	}
	if accountID == "" || p.TransactionID == "" {
		return fmt.Errorf("payment record without account_id or transaction_id")
	}
	acct, wh, err := s.store.FindAccount(ctx, accountID)
	if err != nil {
		return err
	}
	now := s.now()
	d := business.Delivery{
		AccountID: accountID, TransactionID: p.TransactionID, WebhookID: "msg_" + p.TransactionID,
		Payload: NewPayload(acct, p), State: business.DeliveryPending, NextAt: now, CreatedAt: now,
	}
	if wh.CallbackURL == "" {
		d.State = business.DeliverySkipped
	}
	created, err := s.store.CreateDelivery(ctx, d)
	if err != nil || !created || d.State != business.DeliveryPending {
		return err // a record seen again: its delivery exists and the retries own it
	}
	return s.attempt(ctx, d, wh)
}

// attempt claims d's next attempt, makes it and saves the outcome.
func (s *Service) attempt(ctx context.Context, d business.Delivery, wh business.Webhook) error {
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
	if wh.CallbackURL == "" {
		a = business.DeliveryAttempt{At: now, Error: "no callback URL is set for the account"}
	} else {
		a, ok = s.sender.Send(ctx, d, wh.CallbackURL, wh.CallbackSecret, now)
	}
	d.Next(a, ok, s.schedule)
	s.log.InfoContext(ctx, "webhook attempt", "account_id", d.AccountID, "transaction_id", d.TransactionID,
		"attempt", d.Attempt, "status", a.Status, "ms", a.LatencyMS, "error", a.Error, "state", d.State)
	if err := s.store.SaveAttempt(ctx, d, lease); errors.Is(err, store.ErrNotClaimed) {
		s.log.WarnContext(ctx, "webhook attempt outlived its lease", "transaction_id", d.TransactionID)
		return nil
	} else if err != nil {
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

// RetryDue is the retry-webhooks function: it makes every attempt that is
// due now, up to limit of them.
func (s *Service) RetryDue(ctx context.Context, limit int) error {
	due, err := s.store.DueDeliveries(ctx, s.now(), limit)
	if err != nil {
		return err
	}
	settings := map[string]business.Webhook{}
	var mu sync.Mutex
	var errs []error
	s.each(len(due), func(i int) {
		d := due[i]
		mu.Lock()
		wh, ok := settings[d.AccountID]
		mu.Unlock()
		if !ok {
			_, w, err := s.store.FindAccount(ctx, d.AccountID)
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			wh = w
			mu.Lock()
			settings[d.AccountID] = w
			mu.Unlock()
		}
		if err := s.attempt(ctx, d, wh); err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	})
	return errors.Join(errs...)
}
