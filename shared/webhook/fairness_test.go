package webhook_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"
)

// heldReceivers are the receivers of one merchant's endpoints: each holds
// every request until released (or until the sender gives up on it), and
// they count the merchant's attempts in flight, summed over its endpoints.
type heldReceivers struct {
	release  chan struct{}
	once     sync.Once
	mu       sync.Mutex
	inFlight int
	most     int // the most in flight at once
	ended    int // attempts that ended before the release (the sender's timeout)
	got      map[string]bool
}

func newHeldReceivers() *heldReceivers {
	return &heldReceivers{release: make(chan struct{}), got: map[string]bool{}}
}

// server returns a receiver of the merchant; it closes when the test ends.
func (h *heldReceivers) server(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read whole, so that the server sees the sender give up (its
		// request's context ends then).
		_, _ = io.Copy(io.Discard, r.Body)
		h.mu.Lock()
		h.inFlight++
		h.most = max(h.most, h.inFlight)
		h.got[r.Header.Get(webhook.HeaderID)] = true
		h.mu.Unlock()
		released := false
		select {
		case <-h.release:
			released = true
		case <-r.Context().Done():
		}
		h.mu.Lock()
		h.inFlight--
		if !released {
			h.ended++
		}
		h.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// free lets every held request be answered 2xx.
func (h *heldReceivers) free() { h.once.Do(func() { close(h.release) }) }

// counts returns the attempts in flight now, the most at once, and how many
// ended unreleased.
func (h *heldReceivers) counts() (now, most, ended int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inFlight, h.most, h.ended
}

func (h *heldReceivers) received(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.got[id]
}

// endpointBacklog gives account n webhook endpoints, each with its own
// receiver of rc and depth deliveries due now (recorded directly, as the
// stream handler records an event's), and wakes their queues. It returns
// the endpoints' queues.
func endpointBacklog(t *testing.T, st *store.Store, account string, rc *heldReceivers, n, depth int) []string {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Add(-time.Second)
	var queues []string
	for i := 0; i < n; i++ {
		ep, err := st.CreateEndpoint(ctx, account, business.Endpoint{URL: rc.server(t).URL, EnabledEvents: []string{"*"}},
			business.NewEndpointSecret())
		if err != nil {
			t.Fatal(err)
		}
		q := store.EndpointQueue(account, ep.ID)
		for j := 0; j < depth; j++ {
			id := fmt.Sprintf("evt_%s_%02d_%03d", account, i, j)
			if _, err := st.CreateDelivery(ctx, business.Delivery{AccountID: q, TransactionID: id, WebhookID: id,
				Payload: []byte(`{"type":"sale.created"}`), State: business.DeliveryPending, NextAt: now, CreatedAt: now}); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Wake(ctx, q, now); err != nil {
			t.Fatal(err)
		}
		queues = append(queues, q)
	}
	return queues
}

// steady waits until every group of receivers has attempts in flight and
// their numbers have not changed for 2 s (ten passes) while none ended
// unreleased, and reports whether they did before one ended.
func steady(t *testing.T, groups ...*heldReceivers) bool {
	t.Helper()
	var last []int
	since := time.Now()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var cur []int
		for _, g := range groups {
			now, _, ended := g.counts()
			if ended > 0 {
				return false
			}
			cur = append(cur, now)
		}
		if fmt.Sprint(cur) != fmt.Sprint(last) || slices.Contains(cur, 0) {
			last, since = cur, time.Now()
			continue
		}
		if time.Since(since) >= 2*time.Second {
			return true
		}
	}
	t.Fatal("the attempts in flight never settled in 60 s")
	return false
}

// TestFairShareCountedPerMerchant: a merchant with business.MaxEndpoints
// endpoints and a merchant with one, each endpoint with a deep backlog at a
// receiver that holds every request: a share of the attempts in flight is
// the merchant's, however many endpoints it spreads over, so the merchant
// with 16 endpoints never has more attempts in flight than the other, beyond
// one share (MaxInFlightAccount).
func TestFairShareCountedPerMerchant(t *testing.T) {
	st, _ := testdb.NewStore(t)
	many, _ := testdb.NewAccount(t, st, "Many endpoints", "MANY1")
	one, _ := testdb.NewAccount(t, st, "One endpoint", "ONE1")
	manyRc, oneRc := newHeldReceivers(), newHeldReceivers()
	endpointBacklog(t, st, many.ID, manyRc, business.MaxEndpoints, 30)
	endpointBacklog(t, st, one.ID, oneRc, 1, 30)
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Hour}, testdb.Quiet())
	dispatching(t, svc)
	t.Cleanup(func() { manyRc.free(); oneRc.free() }) // before the dispatcher stops: it waits for its attempts
	settled := steady(t, manyRc, oneRc)
	_, manyMost, _ := manyRc.counts()
	_, oneMost, _ := oneRc.counts()
	t.Logf("most attempts in flight at once: %d for the merchant with %d endpoints, %d for the merchant with 1", manyMost, business.MaxEndpoints, oneMost)
	if oneMost == 0 {
		t.Fatalf("the merchant with one endpoint had no attempt while the one with %d had %d in flight", business.MaxEndpoints, manyMost)
	}
	if manyMost > oneMost+webhook.MaxInFlightAccount {
		t.Fatalf("the merchant with %d endpoints had %d attempts in flight at once, the merchant with 1 endpoint %d: "+
			"each endpoint got a share of its own (settled before an attempt timed out: %v)", business.MaxEndpoints, manyMost, oneMost, settled)
	}
}

// TestFairNewcomerBesideManyEndpoints: merchants whose endpoints together
// outnumber the attempts in flight (8 merchants of business.MaxEndpoints
// endpoints each, every endpoint with a backlog at a receiver that holds
// every request) take no more than their shares: another merchant's new
// delivery is attempted while all their attempts are still held, not once
// one of them ends.
func TestFairNewcomerBesideManyEndpoints(t *testing.T) {
	st, _ := testdb.NewStore(t)
	const merchants = 8
	var busy []*heldReceivers
	for i := 0; i < merchants; i++ {
		a, _ := testdb.NewAccount(t, st, fmt.Sprintf("Busy %d", i), fmt.Sprintf("BUSY%d", i))
		rc := newHeldReceivers()
		endpointBacklog(t, st, a.ID, rc, business.MaxEndpoints, 4)
		busy = append(busy, rc)
	}
	newcomer, _ := testdb.NewAccount(t, st, "Newcomer", "NEW1")
	newRc := newHeldReceivers()
	newRc.free() // its receiver answers at once
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Hour}, testdb.Quiet())
	dispatching(t, svc)
	t.Cleanup(func() {
		for _, rc := range busy {
			rc.free()
		}
	})
	// The busy merchants' attempts are under way, as many as the
	// dispatcher gives them: none has ended, and their number has not
	// changed for 2 s (ten passes).
	inFlight := func() (now, ended int) {
		for _, rc := range busy {
			n, _, e := rc.counts()
			now, ended = now+n, ended+e
		}
		return now, ended
	}
	began := time.Now()
	for last, since := -1, time.Now(); ; time.Sleep(50 * time.Millisecond) {
		n, ended := inFlight()
		if ended > 0 {
			t.Fatalf("a busy merchant's attempt timed out before their attempts settled (%d in flight)", n)
		}
		if n != last || n == 0 {
			last, since = n, time.Now()
		} else if time.Since(since) >= 2*time.Second {
			break
		}
		if time.Since(began) > 60*time.Second {
			t.Fatal("the busy merchants' attempts never settled in 60 s")
		}
	}
	held, _ := inFlight()
	t.Logf("the busy merchants' %d endpoints have %d attempts held (%s after the dispatcher started)", merchants*business.MaxEndpoints, held, time.Since(began).Round(time.Millisecond))
	recorded := time.Now()
	endpointBacklog(t, st, newcomer.ID, newRc, 1, 1)
	id := fmt.Sprintf("evt_%s_%02d_%03d", newcomer.ID, 0, 0)
	for !newRc.received(id) {
		if n, ended := inFlight(); ended > 0 {
			t.Fatalf("the newcomer's delivery was not attempted before the busy merchants' held attempts began to time out "+
				"(%s after it was recorded; %d of theirs were in flight when it was, of %d slots; %d now)", time.Since(recorded).Round(time.Millisecond), held, webhook.MaxInFlight, n)
		}
		if time.Since(recorded) > 60*time.Second {
			t.Fatalf("the newcomer's delivery was not attempted in 60 s (%d of the busy merchants' attempts held)", held)
		}
		time.Sleep(20 * time.Millisecond)
	}
	n, ended := inFlight()
	t.Logf("the newcomer's delivery arrived %s after it was recorded, %d of the busy merchants' attempts held", time.Since(recorded).Round(time.Millisecond), n)
	if ended > 0 {
		t.Fatalf("the newcomer's delivery arrived only after %d of the busy merchants' attempts ended", ended)
	}
}
