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

// Limits of one dispatcher: attempts in flight at once, in all and per
// account (so a merchant whose endpoint is slow or hangs uses only its share
// of the sending capacity), and the circuit breaker's settings.
const (
	MaxInFlight        = 128
	MaxInFlightAccount = 8
	// BreakerThreshold consecutive failed attempts of one account open its
	// circuit: its waiting deliveries are held until a probe, BreakerProbe
	// later, shows the endpoint answering again.
	BreakerThreshold = 5
	BreakerProbe     = 30 * time.Second
)

// Service records one delivery per payment and makes its attempts.
// Recording (HandleStream, the deliver-webhooks function) is fast and never
// waits on a receiver; attempts are made by Dispatch (the retry-webhooks
// function, and the devserver's loop), from the sharded due index, with many
// attempts in flight but a bounded share per account, and a circuit breaker
// per account. Deliveries live in the table, so nothing depends on the
// stream's 24-hour retention, and each attempt is claimed before it is made,
// so two runners never make the same attempt.
type Service struct {
	store    *store.Store
	sender   *Sender
	schedule []time.Duration
	log      *slog.Logger
	now      func() time.Time

	// Probe is BreakerProbe unless a test shortens it.
	Probe time.Duration

	mu       sync.Mutex
	inFlight map[string]bool // "<account>/<transaction>" attempts under way
	perAcct  map[string]int
	breakers map[string]*breaker
	slots    chan struct{}
	wg       sync.WaitGroup
}

// breaker is one account's circuit: failures counts consecutive failed
// attempts; while openUntil is ahead, the account's deliveries are held, and
// once it passes one probe attempt decides whether to close it.
type breaker struct {
	failures  int
	openUntil time.Time
	probing   bool
}

// NewService returns a Service; schedule is the wait before each retry.
func NewService(st *store.Store, sender *Sender, schedule []time.Duration, log *slog.Logger) *Service {
	return &Service{store: st, sender: sender, schedule: schedule, log: log, now: func() time.Time { return time.Now().UTC() },
		Probe: BreakerProbe, inFlight: map[string]bool{}, perAcct: map[string]int{}, breakers: map[string]*breaker{},
		slots: make(chan struct{}, MaxInFlight)}
}

// IsPaymentInsert reports whether a stream record is the insertion of a
// payment: the records the stream's filter lets through.
func IsPaymentInsert(r events.DynamoDBEventRecord) bool {
	t, ok := r.Change.NewImage["type"]
	return r.EventName == "INSERT" && ok && t.DataType() == events.DataTypeString && t.String() == "payment"
}

// HandleStream is the deliver-webhooks function: for each payment insert it
// records a delivery, due at once; it never waits on a receiver (Dispatch
// makes the attempts). A record whose delivery could not be recorded is
// reported by its sequence number, so Lambda retries from it; a record seen
// again finds its delivery and does nothing.
func (s *Service) HandleStream(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var resp events.DynamoDBEventResponse
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	accounts := &batchAccounts{m: map[string]*accountRead{}}
	for _, r := range ev.Records {
		if !IsPaymentInsert(r) {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := s.record(ctx, accounts, FromStreamImage(r.Change.NewImage)); err != nil {
				s.log.ErrorContext(ctx, "webhook delivery not recorded", "sequence_number", r.Change.SequenceNumber, "error", err.Error())
				mu.Lock()
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return resp, nil
}

// batchAccounts reads each account of a stream batch once, however many of
// its payments the batch holds.
type batchAccounts struct {
	mu sync.Mutex
	m  map[string]*accountRead
}

type accountRead struct {
	once     sync.Once
	acct     business.Account
	settings store.WebhookSettings
	err      error
}

func (b *batchAccounts) find(ctx context.Context, st *store.Store, id string) (business.Account, store.WebhookSettings, error) {
	b.mu.Lock()
	r := b.m[id]
	if r == nil {
		r = &accountRead{}
		b.m[id] = r
	}
	b.mu.Unlock()
	r.once.Do(func() { r.acct, r.settings, r.err = st.FindWebhookSettings(ctx, id) })
	return r.acct, r.settings, r.err
}

// record creates the delivery of one payment record: pending and due now,
// or skipped when the account has no callback URL.
func (s *Service) record(ctx context.Context, accounts *batchAccounts, img map[string]types.AttributeValue) error {
	p := store.PaymentFrom(img)
	accountID := ""
	if v, ok := img["account_id"].(*types.AttributeValueMemberS); ok {
		accountID = v.Value
	}
	if accountID == "" || p.TransactionID == "" {
		return fmt.Errorf("payment record without account_id or transaction_id")
	}
	acct, settings, err := accounts.find(ctx, s.store, accountID)
	if err != nil {
		return err
	}
	now := s.now()
	d := business.Delivery{
		AccountID: accountID, TransactionID: p.TransactionID, WebhookID: "msg_" + p.TransactionID,
		Payload: NewPayload(acct, p), State: business.DeliveryPending, NextAt: now, CreatedAt: now,
	}
	if settings.CallbackURL == "" {
		d.State = business.DeliverySkipped
	}
	_, err = s.store.CreateDelivery(ctx, d)
	return err
}

// Dispatch makes due attempts until stopAt (or ctx ends), looking for due
// deliveries every poll, then waits for the attempts under way. An account
// has at most MaxInFlightAccount attempts in flight, all accounts together
// MaxInFlight, so a slow endpoint delays only its own deliveries.
func (s *Service) Dispatch(ctx context.Context, stopAt time.Time, poll time.Duration) {
	defer s.wg.Wait()
	for ctx.Err() == nil && time.Now().Before(stopAt) {
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

// dispatchDue starts an attempt (or a hold) for each due delivery that its
// account's share, the breaker and the free slots allow; it does not wait
// for them.
func (s *Service) dispatchDue(ctx context.Context) error {
	due, err := s.store.DueDeliveries(ctx, s.now(), 100)
	if err != nil {
		return err
	}
	settings := map[string]business.Webhook{}
	for _, d := range due {
		id := d.AccountID + "/" + d.TransactionID
		now := s.now()
		s.mu.Lock()
		b := s.breakers[d.AccountID]
		if b == nil {
			b = &breaker{}
			s.breakers[d.AccountID] = b
		}
		hold := now.Before(b.openUntil)
		skip := s.inFlight[id] || s.perAcct[d.AccountID] >= MaxInFlightAccount ||
			(!hold && !b.openUntil.IsZero() && b.probing) // one probe at a time
		probe := !skip && !hold && !b.openUntil.IsZero()
		if probe {
			b.probing = true // the circuit's time is up: this attempt is its probe
		}
		until := b.openUntil
		s.mu.Unlock()
		// endProbe lets another attempt probe when this one ends without an
		// outcome (not started, or claimed by another runner).
		endProbe := func() {
			if probe {
				s.mu.Lock()
				b.probing = false
				s.mu.Unlock()
			}
		}
		if skip || (hold && d.State == business.DeliveryHeld && !d.NextAt.Before(until)) {
			continue
		}
		wh, ok := settings[d.AccountID]
		if !ok && !hold {
			var err error
			if _, wh, err = s.store.FindAccount(ctx, d.AccountID); err != nil {
				endProbe()
				s.log.WarnContext(ctx, "webhook dispatch: account not read", "account_id", d.AccountID, "error", err.Error())
				continue
			}
			settings[d.AccountID] = wh
		}
		select {
		case s.slots <- struct{}{}:
		default:
			endProbe()
			return nil // every slot is busy: the next poll goes on
		}
		s.mu.Lock()
		s.inFlight[id] = true
		s.perAcct[d.AccountID]++
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer func() {
				endProbe()
				s.mu.Lock()
				delete(s.inFlight, id)
				s.perAcct[d.AccountID]--
				s.mu.Unlock()
				<-s.slots
				s.wg.Done()
			}()
			var err error
			if hold {
				err = s.hold(ctx, d, until)
			} else {
				err = s.attempt(ctx, d, wh)
			}
			if err != nil && ctx.Err() == nil {
				s.log.WarnContext(ctx, "webhook attempt not saved", "transaction_id", d.TransactionID, "error", err.Error())
			}
		}()
	}
	return nil
}

// hold claims d and puts it aside until the account's next probe, visible
// in the delivery log as held.
func (s *Service) hold(ctx context.Context, d business.Delivery, until time.Time) error {
	lease, err := s.store.ClaimDelivery(ctx, d, s.now(), leaseTime)
	if errors.Is(err, store.ErrNotClaimed) {
		return nil
	}
	if err != nil {
		return err
	}
	d.Hold(until)
	if err := s.store.SaveAttempt(ctx, d, lease); err != nil && !errors.Is(err, store.ErrNotClaimed) {
		return err
	}
	return nil
}

// outcome feeds an attempt's result to the account's breaker.
func (s *Service) outcome(account string, ok bool, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.breakers[account]
	if b == nil {
		b = &breaker{}
		s.breakers[account] = b
	}
	wasProbe := b.probing
	b.probing = false
	if ok {
		b.failures, b.openUntil = 0, time.Time{}
		return
	}
	b.failures++
	if b.failures >= BreakerThreshold || wasProbe {
		b.openUntil = now.Add(s.Probe)
		if !wasProbe {
			s.log.Warn("webhook circuit open: holding the account's deliveries", "account_id", account, "failures", b.failures, "probe_at", b.openUntil)
		}
	}
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
		s.outcome(d.AccountID, ok, s.now())
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
