package webhook

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/streamimage"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// IsPaymentInsert reports whether a stream record is the insertion of a
// payment or a refund, each announced to the account's callback URL.
func IsPaymentInsert(r events.DynamoDBEventRecord) bool {
	t := streamimage.InsertedType(r)
	return t == "payment" || t == "refund"
}

// IsEventInsert reports whether a stream record is the insertion of an
// event, delivered to each of the account's webhook endpoints that
// subscribes to its type.
func IsEventInsert(r events.DynamoDBEventRecord) bool { return streamimage.InsertedType(r) == "event" }

// Streamed reports whether a stream record is one HandleStream takes: a
// payment, refund or event insert, exactly what the template's filter lets
// through (and the devserver's poller too).
func Streamed(r events.DynamoDBEventRecord) bool { return IsPaymentInsert(r) || IsEventInsert(r) }

// errUnprocessable marks a stream record that lacks what its kind must
// carry (an account, a transaction or event id, a body).
var errUnprocessable = errors.New("stream record cannot be processed")

// Unprocessable reports whether handing a stream record again cannot change
// err: the record lacks what it must carry, or its account is gone (a test
// twin retired by a clear; the account is read consistently, so a miss is
// final). Such a record is logged and passed over: reported as a batch item
// failure, it would hold every later record of its shard, every merchant's,
// until its retries ran out. Anything else (throttling, a timeout, a denied
// call) is reported and retried, and reaches the failure queue and its alarm
// if it outlasts the retries.
func Unprocessable(err error) bool {
	return errors.Is(err, errUnprocessable) || business.ErrorCode(err) == business.ENOTFOUND
}

// HandleStream is the deliver-webhooks function: for each payment insert it
// records a delivery, due at once, in its account's queue; for each event
// insert, one to each endpoint of the account that subscribes to it, in the
// endpoint's queue; and it wakes those queues. It never waits on a receiver.
// An Unprocessable record is logged and passed over; one whose deliveries
// could not be recorded for a passing cause is reported by its sequence
// number, so Lambda hands the shard again from it (the records after it that
// were recorded find their deliveries and do nothing).
func (s *Service) HandleStream(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var resp events.DynamoDBEventResponse
	var payments, evs []map[string]types.AttributeValue
	var seqs, evSeqs []string
	for _, r := range ev.Records {
		switch {
		case IsPaymentInsert(r):
			payments = append(payments, streamimage.Item(r.Change.NewImage))
			seqs = append(seqs, r.Change.SequenceNumber)
		case IsEventInsert(r):
			evs = append(evs, streamimage.Item(r.Change.NewImage))
			evSeqs = append(evSeqs, r.Change.SequenceNumber)
		}
	}
	for _, i := range s.recordAll(ctx, payments) {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: seqs[i]})
	}
	for _, i := range s.fanOut(ctx, evs) {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: evSeqs[i]})
	}
	return resp, nil
}

// recordAll records the delivery of each payment record, then wakes each
// account that got one to wait; it returns the indexes of the payments whose
// delivery (or its account's wake) could not be recorded. A payment no retry
// can record (Unprocessable: its account is gone, or it lacks its ids) is
// logged and passed over.
func (s *Service) recordAll(ctx context.Context, payments []map[string]types.AttributeValue) []int {
	var mu sync.Mutex
	var failed []int
	fail := func(i int) { mu.Lock(); failed = append(failed, i); mu.Unlock() }
	woken := map[string][]int{} // account -> its payments, when one waits
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	accounts := &batchAccounts{m: map[string]*accountRead{}}
	for i, img := range payments {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			account, waiting, err := s.recordPayment(ctx, accounts, img)
			if err != nil && Unprocessable(err) {
				s.log.WarnContext(ctx, "webhook delivery not recorded: the record cannot be processed; passed over", "account_id", getString(img, "account_id"),
					"transaction_id", getString(img, "transaction_id"), "error", err.Error())
				return
			}
			if err != nil {
				s.log.ErrorContext(ctx, "webhook delivery not recorded", "transaction_id", getString(img, "transaction_id"), "error", err.Error())
				fail(i)
				return
			}
			if waiting {
				mu.Lock()
				woken[account] = append(woken[account], i)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	s.wakeAll(ctx, woken, fail)
	return failed
}

// wakeAll wakes each queue of woken, 16 at a time, and calls fail with the
// records of each queue that could not be woken.
func (s *Service) wakeAll(ctx context.Context, woken map[string][]int, fail func(int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	now := s.now()
	for account, is := range woken {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := s.store.Wake(ctx, account, now); err != nil {
				s.log.ErrorContext(ctx, "webhook queue not woken", "account_id", account, "error", err.Error())
				for _, i := range is {
					fail(i)
				}
			}
		}()
	}
	wg.Wait()
}

// fanOut records, for each event record, a pending delivery due at once to
// every endpoint of its account that subscribes to its type, then wakes the
// enabled endpoints' queues (a disabled endpoint's delivery waits until it
// is enabled again); it returns the indexes of the events whose deliveries
// could not be recorded (Unprocessable ones are logged and passed over). An
// account whose events of the batch owe more than InlineFanout deliveries
// gets one fan-out job instead (store.AddFanout), which the dispatcher
// expands: a batch's work stays bounded whatever one merchant's burst.
func (s *Service) fanOut(ctx context.Context, evs []map[string]types.AttributeValue) []int {
	var mu sync.Mutex
	var failed []int
	fail := func(i int) { mu.Lock(); failed = append(failed, i); mu.Unlock() }
	woken := map[string][]int{} // endpoint queue -> its events
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	endpoints := &batchEndpoints{m: map[string]*endpointsRead{}}
	var inline []int
	for account, is := range byAccount(evs) {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ids, err := s.deferFanout(ctx, endpoints, account, evs, is)
			switch {
			case err != nil && !Unprocessable(err):
				s.log.ErrorContext(ctx, "webhook endpoint fan-out not recorded", "account_id", account, "events", len(is), "error", err.Error())
				for _, i := range is {
					fail(i)
				}
			case len(ids) == 0:
				mu.Lock()
				inline = append(inline, is...) // few deliveries, or the account is gone: each event on its own
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, i := range inline {
		img := evs[i]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			queues, err := s.fanOneOut(ctx, endpoints, img)
			account, id := store.EventOf(img)
			if err != nil && Unprocessable(err) {
				s.log.WarnContext(ctx, "webhook endpoint deliveries not recorded: the record cannot be processed; passed over", "account_id", account,
					"event_id", id, "error", err.Error())
				return
			}
			if err != nil {
				s.log.ErrorContext(ctx, "webhook endpoint deliveries not recorded", "account_id", account,
					"event_id", id, "error", err.Error())
				fail(i)
				return
			}
			mu.Lock()
			for _, q := range queues {
				woken[q] = append(woken[q], i)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	s.wakeAll(ctx, woken, fail)
	return failed
}

// InlineFanout is how many deliveries one account's events of a stream
// batch may owe for the stream handler to record them itself; beyond it
// they are recorded as a fan-out job.
const InlineFanout = 32

// byAccount groups the indexes of event records by their account ("" for
// a record without one).
func byAccount(evs []map[string]types.AttributeValue) map[string][]int {
	m := map[string][]int{}
	for i, img := range evs {
		account, _ := store.EventOf(img)
		m[account] = append(m[account], i)
	}
	return m
}

// deferFanout records the events is of account as one fan-out job when
// they owe its endpoints more than InlineFanout deliveries, and returns the
// ids it recorded (none when they owe fewer: the caller records them).
func (s *Service) deferFanout(ctx context.Context, endpoints *batchEndpoints, account string, evs []map[string]types.AttributeValue, is []int) ([]string, error) {
	if account == "" || len(is) < 2 {
		return nil, nil
	}
	eps, err := endpoints.list(ctx, s.store, account)
	if err != nil {
		return nil, err
	}
	owed := 0
	var ids []string
	for _, i := range is {
		img := evs[i]
		_, id := store.EventOf(img)
		eventType := store.EventTypeOf(img) // the body is read when the job is expanded
		if store.EventMoved(img) || id == "" || eventType == "" {
			continue // fanOneOut passes it over, or finds it unprocessable
		}
		ids = append(ids, id)
		for _, ep := range eps {
			if ep.Wants(eventType) {
				owed++
			}
		}
	}
	if owed <= InlineFanout {
		return nil, nil
	}
	if err := s.store.AddFanout(ctx, account, ids, s.now()); err != nil {
		return nil, err
	}
	// The records it left out (moved, or unprocessable) are passed over as
	// fanOneOut would; an event without a body owes nothing when expanded.
	return ids, nil
}

// fanOneOut records the deliveries of one event record and returns the
// queues to wake: those of the enabled endpoints that got one (found
// existing, a replayed record's, it is woken again: harmless). The delivery
// is the event as the feed shows it, its webhook-id the event's id. An
// event `admin migrate` moved into the sharded feed had its deliveries when
// it was made: its insert records none (an endpoint created since would get
// an event older than itself).
func (s *Service) fanOneOut(ctx context.Context, endpoints *batchEndpoints, img map[string]types.AttributeValue) ([]string, error) {
	if store.EventMoved(img) {
		return nil, nil
	}
	account, id := store.EventOf(img)
	body, eventType, ok := store.EventFromImage(img)
	if account == "" || id == "" || !ok || len(body) == 0 {
		return nil, fmt.Errorf("event record without account_id, event_id or body: %w", errUnprocessable)
	}
	eps, err := endpoints.list(ctx, s.store, account)
	if err != nil {
		return nil, err
	}
	ds, wake := owedTo(eps, account, id, eventType, body, s.now())
	// Side by side: an event's deliveries cost the batch one round trip,
	// not one per endpoint (at most InlineFanout of them in a batch).
	if err := s.createAll(ctx, ds, InlineFanout); err != nil {
		return nil, err
	}
	return wake, nil
}

// owedTo returns an event's deliveries to the endpoints of eps that
// subscribe to its type, pending and due at now, its webhook-id the event's
// id, and the queues of the enabled ones, to wake once they are recorded (a
// disabled endpoint's delivery waits: enabling it wakes its queue).
func owedTo(eps []business.Endpoint, account, id, eventType string, body []byte, now time.Time) ([]business.Delivery, []string) {
	var ds []business.Delivery
	var wake []string
	for _, ep := range eps {
		if !ep.Wants(eventType) {
			continue
		}
		queue := store.EndpointQueue(account, ep.ID)
		ds = append(ds, business.Delivery{
			AccountID: queue, TransactionID: id, WebhookID: id,
			Payload: body, State: business.DeliveryPending, NextAt: now, CreatedAt: now,
		})
		if ep.Status == business.EndpointEnabled {
			wake = append(wake, queue)
		}
	}
	return ds, wake
}

// createAll records deliveries, at most n at once.
func (s *Service) createAll(ctx context.Context, ds []business.Delivery, n int) error {
	errs := make([]error, len(ds))
	var wg sync.WaitGroup
	sem := make(chan struct{}, n)
	for i, d := range ds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			_, errs[i] = s.store.CreateDelivery(ctx, d)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// batchEndpoints reads the endpoints of each account of a stream batch once,
// however many of its events the batch holds.
type batchEndpoints struct {
	mu sync.Mutex
	m  map[string]*endpointsRead
}

type endpointsRead struct {
	once sync.Once
	eps  []business.Endpoint
	err  error
}

func (b *batchEndpoints) list(ctx context.Context, st *store.Store, account string) ([]business.Endpoint, error) {
	b.mu.Lock()
	r := b.m[account]
	if r == nil {
		r = &endpointsRead{}
		b.m[account] = r
	}
	b.mu.Unlock()
	r.once.Do(func() { r.eps, r.err = st.ListEndpoints(ctx, account) })
	return r.eps, r.err
}

func getString(img map[string]types.AttributeValue, k string) string {
	if v, ok := img[k].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
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

// recordPayment creates the delivery of one payment record: pending and due
// now, or skipped when the account has no callback URL. It returns the
// account and whether the delivery waits for an attempt (found existing, it
// is reported waiting: waking its account again is harmless).
func (s *Service) recordPayment(ctx context.Context, accounts *batchAccounts, img map[string]types.AttributeValue) (string, bool, error) {
	accountID, tx := getString(img, "account_id"), getString(img, "transaction_id")
	if accountID == "" || tx == "" {
		return "", false, fmt.Errorf("payment record without account_id or transaction_id: %w", errUnprocessable)
	}
	acct, settings, err := accounts.find(ctx, s.store, accountID)
	if err != nil {
		return "", false, err
	}
	var payload []byte
	if getString(img, "type") == "refund" {
		payload = NewRefundPayload(acct, store.RefundFrom(img))
	} else {
		payload = NewPayload(acct, store.PaymentFrom(img))
	}
	now := s.now()
	d := business.Delivery{
		AccountID: accountID, TransactionID: tx, WebhookID: "msg_" + tx,
		Payload: payload, State: business.DeliveryPending, NextAt: now, CreatedAt: now,
	}
	if settings.CallbackURL == "" {
		d.State = business.DeliverySkipped
	}
	created, err := s.store.CreateDelivery(ctx, d)
	return accountID, !created || d.Waiting(), err
}
