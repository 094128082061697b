package webhook

import (
	"log/slog"
	"sync"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
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

// Service records the deliveries of payments and events and makes their
// attempts. HandleStream (the deliver-webhooks function) records them and
// never waits on a receiver; Dispatch (the retry-webhooks function, and the
// devserver's loop) makes the attempts from the webhook queues
// (store/queue.go: an account's callback URL is one queue, each endpoint
// another), each merchant at its share of the attempts in flight; Sweep
// gives a delivery to any payment the stream did not. Deliveries and each
// queue's circuit breaker live in the table, so nothing depends on the
// stream's retention and every dispatcher sees the same circuit; an attempt
// is claimed before it is made, so two runners never make the same one.
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

// NewService returns a Service; schedule is the wait before each retry.
func NewService(st *store.Store, sender *Sender, schedule []time.Duration, log *slog.Logger) *Service {
	return &Service{store: st, sender: sender, schedule: schedule, log: log, now: func() time.Time { return time.Now().UTC() },
		Probe: BreakerProbe, SweepDelay: SweepDelay, DisableAfter: business.EndpointDisableAfter,
		inFlight: map[string]bool{}, perAcct: map[string]int{}, perMerchant: map[string]int{},
		drained: map[string]int64{}, probing: map[string]bool{}, failing: map[string]bool{}, held: map[string]time.Time{},
		offSeen: map[string]bool{}, slots: make(chan struct{}, MaxInFlight),
		expanding: map[string]bool{}, expanders: make(chan struct{}, expandWorkers)}
}
