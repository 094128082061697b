package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// leaseTime is how long a runner holds a delivery's attempt, or an open
// circuit's probe: longer than an attempt can take, so a live runner never
// loses it.
const leaseTime = 3 * Timeout

// Limits of one dispatcher: attempts in flight at once, in all and per
// merchant while other merchants wait (so a merchant whose callback URL or
// endpoints are slow or hang uses only its share of the sending capacity,
// however many endpoints it has: see dispatchDue), and the circuit
// breaker's settings (one circuit per queue: a callback URL's, or an
// endpoint's).
const (
	MaxInFlight        = 128
	MaxInFlightAccount = 8
	// Spare is how many slots the accounts' shares leave free, so a merchant
	// whose work comes due usually finds one at the next poll (not when more
	// than MaxInFlight-Spare merchants are due at once, each then at a share
	// of 1); and the slots beyond their shares that busy merchants may take
	// while no one else waits stop at half of MaxInFlight, so at least half
	// the slots are for shares.
	Spare         = MaxInFlightAccount
	MaxBeyondTurn = MaxInFlight / 2
	// BreakerThreshold consecutive failed attempts of one account open its
	// circuit: its waiting deliveries are held until a probe, BreakerProbe
	// later, shows the endpoint answering again.
	BreakerThreshold = 5
	BreakerProbe     = 30 * time.Second
	// QueueSettle is how long after deliveries were queued the dispatcher
	// trusts a read of the account's due partition that finds none of them
	// (the index is eventually consistent): until then it looks again within
	// a second instead of parking the account.
	QueueSettle = 10 * time.Second
	// Sweep settings: payments written more than SweepDelay ago without a
	// delivery get one (the stream records them within seconds); the first
	// sweep looks back SweepLookback (the stream's 24 h and a margin), and one
	// sweep covers at most SweepSpan.
	SweepDelay    = 3 * time.Minute
	SweepEvery    = time.Minute
	SweepLookback = 25 * time.Hour
	SweepSpan     = 6 * time.Hour
)

// Service records one delivery per payment and makes its attempts.
// Recording (HandleStream, the deliver-webhooks function) is fast and never
// waits on a receiver; attempts are made by Dispatch (the retry-webhooks
// function, and the devserver's loop) from the webhook queues (see
// store/queue.go; an account's callback URL is one queue, each of its
// endpoints another): each pass reads the queues that have work due, one
// entry each however deep their backlog, gives each merchant its share of
// the attempts in flight, spread over its queues, and the slots left over to
// the merchants that have more (work conserving). The circuit breaker of
// each queue lives in its queue item, so every dispatcher sees it. Deliveries live in the table, so nothing
// depends on the stream's 24-hour retention; each attempt is claimed before
// it is made, so two runners never make the same attempt; and a periodic
// sweep gives a delivery to any payment the stream did not.
type Service struct {
	store    *store.Store
	sender   *Sender
	schedule []time.Duration
	log      *slog.Logger
	now      func() time.Time

	// Probe is BreakerProbe, and SweepDelay SweepDelay, unless a test
	// shortens them.
	Probe      time.Duration
	SweepDelay time.Duration
	// DisableAfter is how long every attempt to a webhook endpoint may fail
	// before the endpoint is disabled: business.EndpointDisableAfter unless
	// configured otherwise (WEBHOOK_ENDPOINT_DISABLE_AFTER); 0 never
	// disables one.
	DisableAfter time.Duration

	mu          sync.Mutex
	inFlight    map[string]bool // "<queue>/<transaction>" attempts under way
	perAcct     map[string]int  // queue -> its attempts under way
	perMerchant map[string]int  // account -> the attempts of all its queues under way
	passes      int
	drained     map[string]int64 // account -> queue gen whose due work is all in flight here
	probing     map[string]bool
	failing     map[string]bool      // accounts whose failure count in the table may be above 0
	held        map[string]time.Time // circuits this dispatcher opened, until their probe
	offSeen     map[string]bool      // endpoint queues whose last read found the endpoint off
	expanding   map[string]bool      // accounts whose fan-out jobs this dispatcher is expanding
	expanders   chan struct{}
	slots       chan struct{}
	wg          sync.WaitGroup
}

// target is where a queue's deliveries go and how they are signed: an
// account's callback URL (its queue is named by the account id) with the
// description's signature header beside the Standard Webhooks ones, or a
// webhook endpoint (its queue named store.EndpointQueue) with the Standard
// Webhooks headers only, signed with each of its secrets.
type target struct {
	url      string
	secret   string   // the callback URL's
	endpoint bool     // a webhook endpoint's queue
	secrets  []string // the endpoint's: the current one first
	// off says the endpoint is disabled or deleted: nothing is attempted and
	// its queue is parked until it is enabled again.
	off bool
}

// offSeenKept is how many endpoint queues found off a dispatcher notes
// before it forgets them all (a note only saves a pass: see endpointOff).
const offSeenKept = 1024

// NewService returns a Service; schedule is the wait before each retry.
func NewService(st *store.Store, sender *Sender, schedule []time.Duration, log *slog.Logger) *Service {
	return &Service{store: st, sender: sender, schedule: schedule, log: log, now: func() time.Time { return time.Now().UTC() },
		Probe: BreakerProbe, SweepDelay: SweepDelay, DisableAfter: business.EndpointDisableAfter,
		inFlight: map[string]bool{}, perAcct: map[string]int{}, perMerchant: map[string]int{},
		drained: map[string]int64{}, probing: map[string]bool{}, failing: map[string]bool{}, held: map[string]time.Time{},
		offSeen: map[string]bool{}, slots: make(chan struct{}, MaxInFlight),
		expanding: map[string]bool{}, expanders: make(chan struct{}, expandWorkers)}
}

// insertOf returns the type of the item a stream record inserts ("" for
// any other record).
func insertOf(r events.DynamoDBEventRecord) string {
	t, ok := r.Change.NewImage["type"]
	if r.EventName != "INSERT" || !ok || t.DataType() != events.DataTypeString {
		return ""
	}
	return t.String()
}

// IsPaymentInsert reports whether a stream record is the insertion of a
// payment or a refund, each announced to the account's callback URL.
func IsPaymentInsert(r events.DynamoDBEventRecord) bool {
	t := insertOf(r)
	return t == "payment" || t == "refund"
}

// IsEventInsert reports whether a stream record is the insertion of an
// event, delivered to each of the account's webhook endpoints that
// subscribes to its type.
func IsEventInsert(r events.DynamoDBEventRecord) bool { return insertOf(r) == "event" }

// Streamed reports whether a stream record is one HandleStream takes: a
// payment, refund or event insert, exactly what the template's filter lets
// through (and the devserver's poller too).
func Streamed(r events.DynamoDBEventRecord) bool { return IsPaymentInsert(r) || IsEventInsert(r) }

// HandleStream is the deliver-webhooks function: for each payment insert it
// records a delivery, due at once, and wakes its account's queue; for each
// event insert, a delivery to each endpoint of the account that subscribes
// to it, each in its endpoint's queue. It never waits on a receiver
// (Dispatch makes the attempts). A record no retry can process (see
// Unprocessable: a retired test twin's payment, a record without its ids)
// is logged and passed over, so the records behind it are not held. A record
// whose deliveries could not be recorded for a passing cause is reported by
// its sequence number: Lambda hands the shard again from the lowest one
// reported, and the records after it that were recorded find their
// deliveries and do nothing.
func (s *Service) HandleStream(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var resp events.DynamoDBEventResponse
	var payments, evs []map[string]types.AttributeValue
	var seqs, evSeqs []string
	for _, r := range ev.Records {
		switch {
		case IsPaymentInsert(r):
			payments = append(payments, FromStreamImage(r.Change.NewImage))
			seqs = append(seqs, r.Change.SequenceNumber)
		case IsEventInsert(r):
			evs = append(evs, FromStreamImage(r.Change.NewImage))
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
			account, waiting, err := s.record(ctx, accounts, img)
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

// fanOut records, for each event record, a delivery to every endpoint of
// its account that subscribes to its type, pending and due at once, then
// wakes the queues of the enabled ones; it returns the indexes of the
// events whose deliveries (or a queue's wake) could not be recorded (one no
// retry can record, Unprocessable, is logged and passed over). A disabled
// endpoint's delivery is recorded too, and waits: enabling the endpoint
// again wakes its queue. When an account's events of the batch owe more
// than InlineFanout deliveries, it records them as one fan-out job instead
// (store.AddFanout), which the dispatcher expands: the batch's work stays
// bounded whatever one merchant's burst × endpoints.
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

// record creates the delivery of one payment record: pending and due now,
// or skipped when the account has no callback URL. It returns the account
// and whether the delivery waits for an attempt (found existing, it is
// reported waiting: waking its account again is harmless).
func (s *Service) record(ctx context.Context, accounts *batchAccounts, img map[string]types.AttributeValue) (string, bool, error) {
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
// without waiting for them. Shares are counted per merchant, not per queue:
// an account's callback URL and each of its webhook endpoints are queues of
// their own, but they all draw on the one share of their account
// (merchantOf), so a merchant with many endpoints takes no more of the
// sending capacity than one with a single queue. First each merchant's share
// (MaxInFlight shared by the merchants due, at most MaxInFlightAccount each,
// Spare left over), taken from its queues in turn; then free slots up to
// MaxBeyondTurn in use, spread over the merchants that have more due than
// their share (work conserving: a lone busy merchant may use what no one else
// waits for; the next pass gives a newcomer its share first). A queue whose
// circuit's probe time has come gets its probe instead; a fan-out queue
// (store.FanoutQueue) is expanded into its endpoints' deliveries beside the
// pass (see expand).
func (s *Service) dispatchDue(ctx context.Context) error {
	now := s.now()
	qs, err := s.store.ReadyQueues(ctx, now) // what it read, even when a shard failed
	byID := map[string]*merchant{}
	var ms []*merchant
	for _, q := range qs {
		switch {
		case store.IsFanoutQueue(q.AccountID):
			s.expand(ctx, q)
		case q.Held(now) || s.heldHere(q.AccountID, now):
			// Held: it waits for its probe (the index may not show yet the
			// circuit this dispatcher just opened).
		case q.Open():
			s.probe(ctx, q, now)
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
	more := func(m string, q store.Queue) {
		if hungry[m] == nil {
			hungry[m] = &merchant{id: m}
		}
		hungry[m].queues = append(hungry[m].queues, q)
	}
	for _, m := range ms {
		r, rest := s.allot(m, share, turn, nil)
		runs = append(runs, r...)
		for _, q := range rest {
			more(m.id, q)
		}
	}
	var mu sync.Mutex
	fill := func(a allotment) {
		if _, hungry := s.fill(ctx, a.q, a.want, now); hungry {
			mu.Lock()
			more(a.merchant, a.q)
			mu.Unlock()
		}
	}
	s.each(runs, fill)
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
		s.each(runs, fill)
	}
	return err
}

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

// expand records, in the background, the deliveries of the fan-out jobs of
// q's account (see store.AddFanout), unless this dispatcher is at it
// already; then parks the queue, unless a job was added since q was read.
func (s *Service) expand(ctx context.Context, q store.Queue) {
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
		// for it (see expand).
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

// isFailing reports whether the last attempt of queue's deliveries here
// failed (or failures are counted in its queue item).
func (s *Service) isFailing(queue string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failing[queue]
}

// passWorkers is how many queues one pass serves at once: a pass's time
// does not grow with the number of merchants that have work due.
const passWorkers = 16

// each calls fn for every allotment, passWorkers at a time, and waits.
func (s *Service) each(qs []allotment, fn func(allotment)) {
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

// fill starts up to want more attempts of q, from its due partition, and
// returns how many it started and whether more of its work is due than that.
// When nothing of the queue is under way and nothing more is due, it parks
// the queue's ready entry at its next due time (or removes it when nothing
// waits).
func (s *Service) fill(ctx context.Context, q store.Queue, want int, now time.Time) (int, bool) {
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
		if tg.off || !s.start(ctx, d.Delivery, tg, false) {
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

// markFailing notes that q's account has failures counted in the table (or
// a streak of them going on), so its next success resets them.
func (s *Service) markFailing(q store.Queue) {
	if q.Failures > 0 || !q.FailingSince.IsZero() {
		s.mu.Lock()
		s.failing[q.AccountID] = true
		s.mu.Unlock()
	}
}

// probe makes the one attempt that decides whether the open circuit of q's
// account closes, if its time has come and no other dispatcher makes it.
func (s *Service) probe(ctx context.Context, q store.Queue, now time.Time) {
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
			s.start(ctx, d.Delivery, tg, true)
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

// underWay reports whether this dispatcher is making an attempt of d.
func (s *Service) underWay(d business.Delivery) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight[d.AccountID+"/"+d.TransactionID]
}

// targetOf reads where the deliveries of a queue go: the account's webhook
// settings, or for an endpoint's queue the endpoint and its secrets. Each
// read is consistent and serves only the attempts one pass of the queue
// starts, never a later pass: a rotation, a disable or a new URL answered
// before a pass began applies to every attempt it starts. A queue whose
// endpoint is off is noted, so that the next pass parks it (endpointOff).
func (s *Service) targetOf(ctx context.Context, queue string, now time.Time) (target, bool) {
	var t target
	var err error
	if account, id, isEndpoint := store.SplitEndpointQueue(queue); isEndpoint {
		t, err = s.readEndpoint(ctx, account, id, now)
	} else {
		var wh business.Webhook
		_, wh, err = s.store.FindAccount(ctx, queue)
		t = target{url: wh.CallbackURL, secret: wh.CallbackSecret}
	}
	if err != nil {
		s.log.WarnContext(ctx, "webhook dispatch: target not read", "account_id", queue, "error", err.Error())
		return target{}, false
	}
	if t.off {
		s.noteOff(queue)
	}
	return t, true
}

// noteOff notes that queue's endpoint was found off.
func (s *Service) noteOff(queue string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.offSeen) >= offSeenKept { // a long-running dispatcher forgets them
		clear(s.offSeen)
	}
	s.offSeen[queue] = true
}

// readEndpoint reads an endpoint's target, consistently: off when it is
// disabled or deleted. The endpoint and its secrets are read side by side
// (one round trip before the attempts, not two).
func (s *Service) readEndpoint(ctx context.Context, account, id string, now time.Time) (target, error) {
	off := target{endpoint: true, off: true}
	var secrets []string
	var secretsErr error
	read := make(chan struct{})
	go func() {
		defer close(read)
		secrets, secretsErr = s.store.EndpointSecrets(ctx, account, id, now)
	}()
	ep, err := s.store.FindEndpointNow(ctx, account, id)
	<-read
	switch {
	case business.ErrorCode(err) == business.ENOTFOUND:
		return off, nil
	case err != nil:
		return target{}, err
	case ep.Status != business.EndpointEnabled:
		return off, nil
	}
	switch err := secretsErr; {
	case business.ErrorCode(err) == business.ENOTFOUND: // deleted meanwhile
		return off, nil
	case err != nil:
		return target{}, err
	}
	return target{url: ep.URL, endpoint: true, secrets: secrets}, nil
}

// endpointOff reports whether q is the queue of an endpoint that is
// disabled or deleted, and then parks it: nothing is attempted, and the
// queue leaves the due index until the endpoint is enabled again (that
// wakes it). Only a queue an earlier read found off is looked at (one not
// yet found off has its target read before any attempt starts, and is
// noted then), and its endpoint is read again before the queue is parked:
// a re-enable since that read would otherwise be missed and its deliveries
// stranded.
func (s *Service) endpointOff(ctx context.Context, q store.Queue, now time.Time) bool {
	account, id, ok := store.SplitEndpointQueue(q.AccountID)
	if !ok {
		return false
	}
	s.mu.Lock()
	seen := s.offSeen[q.AccountID]
	delete(s.offSeen, q.AccountID)
	s.mu.Unlock()
	if !seen {
		return false
	}
	tg, err := s.readEndpoint(ctx, account, id, now)
	if err != nil {
		s.log.WarnContext(ctx, "webhook dispatch: endpoint not read", "account_id", q.AccountID, "error", err.Error())
		s.noteOff(q.AccountID) // the next pass reads it again
		return true
	}
	if !tg.off {
		return false
	}
	if err := s.store.ParkEndpointQueue(ctx, q); err != nil && !errors.Is(err, store.ErrNotClaimed) {
		s.log.WarnContext(ctx, "webhook dispatch: disabled endpoint's queue not parked", "account_id", q.AccountID, "error", err.Error())
	}
	return true
}

// start takes a slot and makes d's attempt in the background; false when
// every slot is busy.
func (s *Service) start(ctx context.Context, d business.Delivery, tg target, probe bool) bool {
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
		if err := s.attempt(ctx, d, tg, probe); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "webhook attempt not saved", "transaction_id", d.TransactionID, "error", err.Error())
		}
	}()
	return true
}

// outcome feeds an attempt's result to the account's circuit breaker in the
// table: a failure is counted (and opens the circuit at the threshold, or
// keeps it open after a failed probe); a success resets a count above 0.
func (s *Service) outcome(ctx context.Context, account string, ok, probe bool) {
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

// disableFailing disables the endpoint of queue when every attempt to it
// has failed since since, for DisableAfter or longer; store.DisableEndpoint
// records the webhook_endpoint.disabled event with it. Its queue is then
// parked (see endpointOff): its deliveries wait, and new ones are recorded,
// until its owner enables it again.
func (s *Service) disableFailing(ctx context.Context, queue string, since, now time.Time) {
	account, id, ok := store.SplitEndpointQueue(queue)
	if !ok || s.DisableAfter <= 0 || since.IsZero() || now.Sub(since) < s.DisableAfter {
		return
	}
	reason := fmt.Sprintf("every delivery attempt failed for %s (since %s)", s.DisableAfter, since.UTC().Format(time.RFC3339))
	if disabled, _ := s.disable(ctx, queue, account, id, reason, now); disabled {
		s.log.WarnContext(ctx, "webhook endpoint disabled: every attempt failed", "account_id", account, "endpoint_id", id,
			"failing_since", since, "disable_after", s.DisableAfter.String())
	}
}

// disable disables the endpoint of queue with reason (store.DisableEndpoint
// records its webhook_endpoint.disabled event, once however many attempts
// ask) and notes its queue off, so the next pass parks it. It returns
// whether this call disabled it, and whether the endpoint is off now
// (disabled, by this call or before, or deleted); off is false when the
// disable could not be written (logged).
func (s *Service) disable(ctx context.Context, queue, account, id, reason string, now time.Time) (disabled, off bool) {
	disabled, err := s.store.DisableEndpoint(ctx, account, id, reason, now)
	if err != nil && business.ErrorCode(err) != business.ENOTFOUND {
		s.log.WarnContext(ctx, "webhook endpoint not disabled", "account_id", account, "endpoint_id", id, "error", err.Error())
		return false, false
	}
	s.noteOff(queue)
	return disabled, true
}

// disableGone disables the endpoint of queue, which answered an attempt
// 410 Gone: its receiver says it is gone for good, so retrying it for days
// would only fail (the Standard Webhooks guidance). As disableFailing does,
// it disables it with its webhook_endpoint.disabled event (see disable) and
// the queue is parked. It
// reports whether the endpoint is off now (disabled, by this call or before,
// or deleted); false when the disable could not be written, and the next
// 410 tries again.
func (s *Service) disableGone(ctx context.Context, queue string, now time.Time) bool {
	account, id, ok := store.SplitEndpointQueue(queue)
	if !ok {
		return false
	}
	disabled, off := s.disable(ctx, queue, account, id, "the endpoint answered 410 Gone", now)
	if disabled {
		s.log.WarnContext(ctx, "webhook endpoint disabled: it answered 410 Gone", "account_id", account, "endpoint_id", id)
	}
	return off
}

// attempt claims d's next attempt, makes it to tg and saves the outcome. A
// record that cannot be saved ends failed (logged and counted), never
// retried.
func (s *Service) attempt(ctx context.Context, d business.Delivery, tg target, probe bool) error {
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
		s.outcome(ctx, d.AccountID, ok, probe)
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
