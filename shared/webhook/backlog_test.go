package webhook_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// sameShard returns two accounts whose ready entries share a shard of the due
// index, the case in which a deep backlog used to hide the other merchant.
func sameShard(t *testing.T, st *store.Store) (business.Account, business.Account) {
	t.Helper()
	seen := map[int]business.Account{}
	for i := 0; i < 200; i++ {
		a, _ := testdb.NewAccount(t, st, fmt.Sprintf("Shop %d", i), fmt.Sprintf("SH%03d", i))
		if b, ok := seen[store.ShardOf(a.ID)]; ok {
			return b, a
		}
		seen[store.ShardOf(a.ID)] = a
	}
	t.Fatal("no two accounts in one shard")
	return business.Account{}, business.Account{}
}

// queue gives account a n deliveries due now, with callback url, and wakes
// its queue as the stream handler does.
func queue(t *testing.T, st *store.Store, a business.Account, url string, n int, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	if err := st.SetWebhook(ctx, a.ID, business.Webhook{CallbackURL: url}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	var ids []string
	for i := 0; i < n; i++ {
		tx := fmt.Sprintf("txn_%s_%03d", prefix, i)
		if _, err := st.CreateDelivery(ctx, business.Delivery{AccountID: a.ID, TransactionID: tx, WebhookID: "msg_" + tx,
			Payload: []byte(`{"amount":"1.00"}`), State: business.DeliveryPending, NextAt: now, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, "msg_"+tx)
	}
	if err := st.Wake(ctx, a.ID, now); err != nil {
		t.Fatal(err)
	}
	return ids
}

// recorder is a receiver that answers after delay with status and counts
// what it received, by webhook-id.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	got  map[string]int
	done atomic.Int32
}

func newRecorder(t *testing.T, delay time.Duration, status int) *recorder {
	rc := &recorder{got: map[string]int{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
		}
		rc.mu.Lock()
		rc.got[r.Header.Get(webhook.HeaderID)]++
		rc.mu.Unlock()
		rc.done.Add(1)
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *recorder) count(ids []string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, id := range ids {
		if rc.got[id] > 0 {
			n++
		}
	}
	return n
}

// dispatching runs svc's dispatcher, polling as the devserver does, until the
// test ends.
func dispatching(t *testing.T, svc *webhook.Service) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { svc.Dispatch(ctx, time.Now().Add(time.Hour), 200*time.Millisecond); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestSameShardBehindSlowBacklog: a merchant whose receiver answers 2xx, but
// slowly (8 s, so its circuit never opens), has 240 deliveries waiting;
// another merchant in the same shard gets every one of its webhooks before
// the slow receiver has answered one. (Before each account had its own queue, the
// shard's first 100 due entries were all the slow merchant's, and the other
// was not even read until the backlog fell under 100. How fast is measured by
// make bench.)
func TestSameShardBehindSlowBacklog(t *testing.T) {
	st, _ := testdb.NewStore(t)
	slowAcct, fastAcct := sameShard(t, st)
	slow := newRecorder(t, 8*time.Second, 200) // within Timeout: its circuit never opens
	fast := newRecorder(t, 0, 200)
	const backlog = 240
	queue(t, st, slowAcct, slow.URL, backlog, "slow")
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Hour}, testdb.Quiet())
	dispatching(t, svc)
	time.Sleep(time.Second) // the backlog is under way: a few passes
	ids := queue(t, st, fastAcct, fast.URL, 10, "fast")
	for deadline := time.Now().Add(30 * time.Second); fast.count(ids) < len(ids); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d of the healthy merchant's webhooks arrived", fast.count(ids), len(ids))
		}
	}
	if n := slow.done.Load(); n > 0 {
		t.Fatalf("the healthy merchant waited for %d of the slow merchant's %d deliveries to be answered", n, backlog)
	}
}

// writesTo counts the write calls among reqs whose key's partition starts
// with prefix.
func writesTo(reqs []testdb.Request, prefix string) int {
	n := 0
	for _, r := range reqs {
		var pk string
		switch in := r.Input.(type) {
		case *dynamodb.PutItemInput:
			pk = attrS(in.Item["PK"])
		case *dynamodb.UpdateItemInput:
			pk = attrS(in.Key["PK"])
		case *dynamodb.DeleteItemInput:
			pk = attrS(in.Key["PK"])
		case *dynamodb.TransactWriteItemsInput:
			for _, it := range in.TransactItems {
				switch {
				case it.Put != nil:
					pk = attrS(it.Put.Item["PK"])
				case it.Update != nil:
					pk = attrS(it.Update.Key["PK"])
				}
				if strings.HasPrefix(pk, prefix) {
					n++
				}
			}
			continue
		}
		if strings.HasPrefix(pk, prefix) {
			n++
		}
	}
	return n
}

// TestSameShardBehindHeldBacklog: a merchant whose receiver fails has 300
// deliveries waiting; its circuit opens and they are held, in place: not one
// of them is written while held. Another merchant in the same shard gets every
// webhook meanwhile, and the held merchant's receiver sees no attempt but the
// ones that opened the circuit.
func TestSameShardBehindHeldBacklog(t *testing.T) {
	var reqs testdb.Requests
	st, _ := testdb.NewStore(t, reqs.Option())
	downAcct, fastAcct := sameShard(t, st)
	down := newRecorder(t, 0, 503)
	fast := newRecorder(t, 0, 200)
	const backlog = 300
	queue(t, st, downAcct, down.URL, backlog, "down")
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Hour}, testdb.Quiet())
	svc.Probe = time.Hour // no probe during the test
	ctx := context.Background()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err := svc.DispatchOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if q, err := st.FindQueue(ctx, downAcct.ID); err != nil || q.Open() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the circuit did not open after %d failures", down.done.Load())
		}
	}
	opened := down.done.Load()
	mark := reqs.Mark()
	dispatching(t, svc)
	ids := queue(t, st, fastAcct, fast.URL, 10, "fast")
	for deadline := time.Now().Add(30 * time.Second); fast.count(ids) < len(ids); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d of the healthy merchant's webhooks arrived", fast.count(ids), len(ids))
		}
	}
	time.Sleep(time.Second) // a few more passes over the held merchant
	if n := writesTo(reqs.Since(mark), "A#"+downAcct.ID+"#DELIVERY#"); n != 0 {
		t.Fatalf("%d writes to held deliveries while the circuit was open", n)
	}
	if n := down.done.Load(); n != opened {
		t.Fatalf("%d attempts at the held merchant's receiver while its circuit was open", n-opened)
	}
	page, err := st.ListDeliveries(ctx, downAcct.ID, business.DeliveryHeld, 100, "")
	if err != nil || len(page.Items) != 100 {
		t.Fatalf("%d deliveries listed held (%v), want a full page", len(page.Items), err)
	}
}

// TestBreakerSharedAcrossDispatchers: the circuit one dispatcher opened holds
// a fresh dispatcher too (it spends no attempt learning it), and when the
// probe time comes, two dispatchers make one probe between them.
func TestBreakerSharedAcrossDispatchers(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Down", "DOWN1")
	down := newRecorder(t, 0, 503)
	queue(t, st, a, down.URL, 40, "down")
	const probe = 10 * time.Second // longer than the passes below take, on a loaded machine too
	newSvc := func() *webhook.Service {
		svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Hour}, testdb.Quiet())
		svc.Probe = probe
		return svc
	}
	first := newSvc()
	for i := 0; i < 3; i++ {
		if err := first.DispatchOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	q, err := st.FindQueue(ctx, a.ID)
	if err != nil || !q.Open() {
		t.Fatalf("circuit %+v (%v) after %d failures", q, err, down.done.Load())
	}
	opened := down.done.Load()
	fresh := newSvc()
	for i := 0; i < 3; i++ {
		if err := fresh.DispatchOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := down.done.Load(); n != opened {
		t.Fatalf("a fresh dispatcher made %d attempts at an open circuit", n-opened)
	}
	time.Sleep(time.Until(q.HeldUntil) + 100*time.Millisecond)
	var wg sync.WaitGroup
	for _, svc := range []*webhook.Service{first, fresh} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				_ = svc.DispatchOnce(ctx)
			}
		}()
	}
	wg.Wait()
	if n := down.done.Load() - opened; n != 1 {
		t.Fatalf("%d probes by two dispatchers in one interval, want 1", n)
	}
	if q2, err := st.FindQueue(ctx, a.ID); err != nil || !q2.Held(time.Now()) {
		t.Fatalf("after a failed probe the circuit is %+v (%v), want held", q2, err)
	}
}

// TestDeliveryRecordBounded: a delivery whose attempts fail with a huge error
// text, redelivered 1,000 times, keeps the last AttemptLogSize attempts and
// their counts, errors cut to ErrorTextMax bytes, stays far under DynamoDB's
// 400 KB, and ends each round failed, as its schedule says.
func TestDeliveryRecordBounded(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "SHOP1")
	now := time.Now().UTC().Add(-time.Second)
	d := business.Delivery{AccountID: a.ID, TransactionID: "txn_big", WebhookID: "msg_txn_big",
		Payload: []byte(`{"amount":"1.00"}`), State: business.DeliveryPending, NextAt: now, CreatedAt: now}
	if _, err := st.CreateDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	huge := "tls: failed to verify certificate: x509: certificate is valid for " + strings.Repeat("a-very-long-host-name.example.com, ", 1500)
	// The first rounds go through the record's own rules (Next, and what
	// Redeliver does to start a round) in memory and are saved at once; the
	// last ones through the store, redelivery included.
	const rounds, stored = 1000, 25
	lease, err := st.ClaimDelivery(ctx, d, time.Now().UTC(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < rounds-stored; i++ {
		at := time.Now().UTC()
		if i > 0 {
			d.State, d.RoundStart, d.NextAt = business.DeliveryPending, d.Attempt, at
		}
		d.Next(business.DeliveryAttempt{At: at, Error: huge}, false, nil)
	}
	if err := st.SaveAttempt(ctx, d, lease); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < stored; i++ {
		at := time.Now().UTC()
		cur, err := st.Redeliver(ctx, a.ID, "txn_big", at.Add(-time.Second))
		if err != nil {
			t.Fatal(err)
		}
		lease, err := st.ClaimDelivery(ctx, cur, at, time.Minute)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		cur.Next(business.DeliveryAttempt{At: at, Error: huge}, false, nil)
		if err := st.SaveAttempt(ctx, cur, lease); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
	}
	got, err := st.FindDelivery(ctx, a.ID, "txn_big")
	if err != nil {
		t.Fatal(err)
	}
	if got.State != business.DeliveryFailed || got.Attempt != rounds || len(got.Attempts) != business.AttemptLogSize {
		t.Fatalf("state %s, %d attempts counted, %d logged", got.State, got.Attempt, len(got.Attempts))
	}
	for _, at := range got.Attempts {
		if len(at.Error) > business.ErrorTextMax || !strings.HasPrefix(at.Error, "tls: failed to verify") {
			t.Fatalf("error of %d bytes: %.80q", len(at.Error), at.Error)
		}
	}
	if n := store.DeliveryItemBytes(got); n > 16<<10 {
		t.Fatalf("the record is %d bytes after %d rounds", n, rounds)
	}
}

// TestUnsavableDeliveryEndsFailed: a delivery whose record cannot be saved
// after an attempt (here, a payload that leaves no room for the log) ends
// failed, is logged and counted by the failed-deliveries metric, and is not
// sent again.
func TestUnsavableDeliveryEndsFailed(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "SHOP1")
	rc := newRecorder(t, 0, 500)
	if err := st.SetWebhook(ctx, a.ID, business.Webhook{CallbackURL: rc.URL}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Add(-time.Second)
	payload := []byte(`{"note":"` + strings.Repeat("x", 395<<10) + `"}`)
	if _, err := st.CreateDelivery(ctx, business.Delivery{AccountID: a.ID, TransactionID: "txn_fat", WebhookID: "msg_txn_fat",
		Payload: payload, State: business.DeliveryPending, NextAt: now, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.Wake(ctx, a.ID, now); err != nil {
		t.Fatal(err)
	}
	var logs testdb.Buffer
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Millisecond}, slog.New(slog.NewJSONHandler(&logs, nil)))
	for i := 0; i < 3; i++ {
		if err := svc.DispatchOnce(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	d, err := st.FindDelivery(ctx, a.ID, "txn_fat")
	if err != nil || d.State != business.DeliveryFailed {
		t.Fatalf("delivery %s (%v), want failed", d.State, err)
	}
	if n := rc.done.Load(); n != 1 {
		t.Fatalf("%d attempts, want 1: an unsavable delivery must not be sent again", n)
	}
	if !strings.Contains(logs.String(), `"DeliveriesFailed":1`) || !strings.Contains(logs.String(), "cannot be saved") {
		t.Fatalf("no failed metric or reason logged: %s", logs.String())
	}
}

func attrS(v types.AttributeValue) string {
	if s, ok := v.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}
