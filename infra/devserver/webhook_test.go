package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"
)

// receiver is a real HTTP receiver on loopback that records what it gets and
// answers with the statuses of answers in turn (200 once they run out).
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	got     []received
	answers []int
	arrived chan time.Time
}

type received struct {
	header http.Header
	body   []byte
	at     time.Time
}

func newReceiver(t *testing.T, answers ...int) *receiver {
	rc := &receiver{answers: answers, arrived: make(chan time.Time, 100)}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{r.Header.Clone(), b, time.Now()})
		code := 200
		if len(rc.answers) > 0 {
			code, rc.answers = rc.answers[0], rc.answers[1:]
		}
		rc.mu.Unlock()
		rc.arrived <- time.Now()
		if code >= 300 && code < 400 {
			http.Redirect(w, r, "/elsewhere", code)
			return
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out after %s waiting for %s", timeout, what)
}

// webhookEnv is a devserver with a short retry schedule, and a store on its table.
type webhookEnv struct {
	base  string
	cfg   app.Config
	store *store.Store
	n     int
}

func newWebhookEnv(t *testing.T) *webhookEnv {
	t.Helper()
	cfg := testdb.Config(t)
	t.Setenv("WEBHOOK_RETRY_SCHEDULE", "1s,1s")
	t.Setenv("WEBHOOK_ALLOW_PRIVATE", "1")
	base, stop := start(t, cfg, t.TempDir())
	t.Cleanup(stop)
	st, err := app.NewStore(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &webhookEnv{base: base, cfg: cfg, store: st}
}

// account creates an account with a customer, its webhook pointing at url.
func (e *webhookEnv) account(t *testing.T, url, secret string) (business.Account, string) {
	t.Helper()
	e.n++
	a, key := testdb.NewAccount(t, e.store, "Shop", fmt.Sprintf("SHOP%d", e.n))
	if url != "" {
		if err := e.store.SetWebhook(context.Background(), a.ID, business.Webhook{CallbackURL: url, CallbackSecret: secret}); err != nil {
			t.Fatal(err)
		}
	}
	if code, body := call(t, "POST", e.base+"/api/v1/customers/add", key, `{"name":"Ama"}`); code != 200 {
		t.Fatalf("customer: %d %v", code, body)
	}
	return a, key
}

// sale adds a sale of 50.00 with paid received; it returns the transaction id
// of its payment ("" for a draft).
func (e *webhookEnv) sale(t *testing.T, key, paid string) string {
	t.Helper()
	pt := "Cash"
	if paid == "0" {
		pt = "None"
	}
	code, body := call(t, "POST", e.base+"/api/v1/sales/add", key, fmt.Sprintf(
		`{"customer_id":1,"sub_total_amount":"50.00","total_amount":"50.00","amount_paid":%q,"invoice_type":"pos","payment_type":%q,"due_date":"2026-12-01"}`, paid, pt))
	if code != 200 {
		t.Fatalf("sale: %d %v", code, body)
	}
	pays := body["data"].(map[string]any)["sales-payment"].([]any)
	if len(pays) == 0 {
		return ""
	}
	return pays[0].(map[string]any)["transaction_id"].(string)
}

func (e *webhookEnv) delivery(t *testing.T, acct, tx string) business.Delivery {
	t.Helper()
	d, err := e.store.FindDelivery(context.Background(), acct, tx)
	if err != nil && business.ErrorCode(err) != business.ENOTFOUND {
		t.Fatal(err)
	}
	return d
}

func TestWebhooks(t *testing.T) {
	e := newWebhookEnv(t)

	t.Run("SignedPaymentDelivered", func(t *testing.T) {
		rc := newReceiver(t)
		a, key := e.account(t, rc.srv.URL+"/hook", "s3cret-callback")
		tx := e.sale(t, key, "50.00")
		waitFor(t, 10*time.Second, "one delivery", func() bool { return len(rc.requests()) == 1 })
		r := rc.requests()[0]
		if err := (webhook.Verifier{Secret: "s3cret-callback"}).Verify(r.header, r.body); err != nil || r.header.Get("signature") == "" {
			t.Fatalf("signature does not verify: %v (headers %v)", err, r.header)
		}
		var p map[string]any
		if err := json.Unmarshal(r.body, &p); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"status": float64(200), "message": "Payment received", "amount": "50.00", "transaction_id": tx,
			"currency": "GHS", "business_code": a.BusinessCode, "payment_status": "paid"}
		for k, v := range want {
			if p[k] != v {
				t.Errorf("%s = %v, want %v", k, p[k], v)
			}
		}
		if r.header.Get("Content-Type") != "application/json" || r.header.Get("webhook-id") != "msg_"+tx {
			t.Errorf("headers %v", r.header)
		}
		waitFor(t, 5*time.Second, "state delivered", func() bool { return e.delivery(t, a.ID, tx).State == business.DeliveryDelivered })
		time.Sleep(1500 * time.Millisecond)
		if n := len(rc.requests()); n != 1 {
			t.Fatalf("%d deliveries, want exactly 1", n)
		}
	})

	t.Run("DraftSendsNothing", func(t *testing.T) {
		rc := newReceiver(t)
		_, key := e.account(t, rc.srv.URL, "s3cret-callback")
		if tx := e.sale(t, key, "0"); tx != "" {
			t.Fatalf("draft sale has payment %s", tx)
		}
		time.Sleep(1500 * time.Millisecond)
		if n := len(rc.requests()); n != 0 {
			t.Fatalf("%d deliveries for a draft", n)
		}
	})

	t.Run("NoSecretNoSignature", func(t *testing.T) {
		rc := newReceiver(t)
		_, key := e.account(t, rc.srv.URL, "")
		e.sale(t, key, "20.00")
		waitFor(t, 10*time.Second, "one delivery", func() bool { return len(rc.requests()) == 1 })
		h := rc.requests()[0].header
		if h.Get("signature") != "" || h.Get("webhook-signature") != "" || h.Get("webhook-id") == "" {
			t.Fatalf("headers %v", h)
		}
	})

	t.Run("RetriedWithSameID", func(t *testing.T) {
		rc := newReceiver(t, 500, 503)
		a, key := e.account(t, rc.srv.URL, "s3cret-callback")
		tx := e.sale(t, key, "10.00")
		waitFor(t, 15*time.Second, "delivered after two failures", func() bool { return e.delivery(t, a.ID, tx).State == business.DeliveryDelivered })
		reqs := rc.requests()
		if len(reqs) != 3 {
			t.Fatalf("%d requests, want 3", len(reqs))
		}
		for _, r := range reqs {
			if r.header.Get("webhook-id") != "msg_"+tx || string(r.body) != string(reqs[0].body) {
				t.Fatalf("attempts differ: %v", r.header)
			}
		}
		d := e.delivery(t, a.ID, tx)
		if len(d.Attempts) != 3 || d.Attempts[0].Status != 500 || d.Attempts[1].Status != 503 || d.Attempts[2].Status != 200 {
			t.Fatalf("attempt log %+v", d.Attempts)
		}
	})

	t.Run("FailedThenRedelivered", func(t *testing.T) {
		rc := newReceiver(t, 500, 500, 500)
		a, key := e.account(t, rc.srv.URL, "s3cret-callback")
		tx := e.sale(t, key, "10.00")
		waitFor(t, 15*time.Second, "failed after the schedule", func() bool { return e.delivery(t, a.ID, tx).State == business.DeliveryFailed })
		if n := len(rc.requests()); n != 3 {
			t.Fatalf("%d attempts, want 3 (first + 2 retries)", n)
		}
		page, err := e.store.ListDeliveries(context.Background(), a.ID, "", 10, "")
		if err != nil || len(page.Items) != 1 || page.Items[0].State != business.DeliveryFailed || len(page.Items[0].Attempts) != 3 {
			t.Fatalf("deliveries %+v %v", page.Items, err)
		}
		if _, err := e.store.Redeliver(context.Background(), a.ID, tx, time.Now()); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, "delivered on redelivery", func() bool { return e.delivery(t, a.ID, tx).State == business.DeliveryDelivered })
		if n := len(rc.requests()); n != 4 {
			t.Fatalf("%d attempts, want 4", n)
		}
	})

	t.Run("RedirectIsFailure", func(t *testing.T) {
		rc := newReceiver(t, 302, 302, 302)
		a, key := e.account(t, rc.srv.URL, "")
		tx := e.sale(t, key, "10.00")
		waitFor(t, 15*time.Second, "failed", func() bool { return e.delivery(t, a.ID, tx).State == business.DeliveryFailed })
		d := e.delivery(t, a.ID, tx)
		if d.Attempts[0].Status != 302 || len(rc.requests()) != 3 {
			t.Fatalf("attempts %+v, requests %d (a followed redirect would add requests to /elsewhere)", d.Attempts, len(rc.requests()))
		}
	})

	t.Run("LatencyMedianOf20", func(t *testing.T) {
		rc := newReceiver(t)
		_, key := e.account(t, rc.srv.URL, "s3cret-callback")
		var lat []time.Duration
		for i := 0; i < 20; i++ {
			start := time.Now()
			e.sale(t, key, "5.00")
			select {
			case at := <-rc.arrived:
				lat = append(lat, at.Sub(start))
			case <-time.After(10 * time.Second):
				t.Fatal("no delivery within 10s")
			}
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		t.Logf("payment request -> receipt: median %s, p95 %s, n=%d", lat[10], lat[18], len(lat))
	})
}

// TestPrivateTargetRefused sends with the production sender (no private
// targets) to a receiver on loopback: the attempt is refused before any
// request is made.
func TestPrivateTargetRefused(t *testing.T) {
	rc := newReceiver(t)
	s := webhook.NewSender(false)
	a, ok := s.Send(context.Background(), business.Delivery{WebhookID: "msg_x", Payload: []byte(`{}`)}, rc.srv.URL, "", time.Now())
	if ok || a.Status != 0 || len(rc.requests()) != 0 {
		t.Fatalf("attempt %+v, requests %d", a, len(rc.requests()))
	}
	if a.Error != "refused: the callback URL resolves to a private or reserved address" {
		t.Fatalf("error %q", a.Error)
	}
	for _, u := range []string{"http://169.254.169.254/latest/meta-data", "http://10.0.0.1/", "http://100.64.0.1/", "http://[::1]:8080/"} {
		if a, ok := s.Send(context.Background(), business.Delivery{WebhookID: "msg_x", Payload: []byte(`{}`)}, u, "", time.Now()); ok || a.Error == "" {
			t.Errorf("%s: %+v", u, a)
		}
	}
}

// TestSelfServiceWebhook: a merchant sets its webhook over the API, tests it,
// watches its deliveries and redelivers one, all with its own key: a payment
// after the PUT goes to the new URL signed with the new secret.
func TestSelfServiceWebhook(t *testing.T) {
	e := newWebhookEnv(t)
	oldRC, newRC := newReceiver(t), newReceiver(t)
	a, key := e.account(t, oldRC.srv.URL, "old-secret-value-1")
	secret := "whsec_" + "c2VsZi1zZXJ2aWNlLXNlY3JldC1rZXktMzItYnl0ZXM="
	if code, body := call(t, "PUT", e.base+"/api/v1/user/webhook", key, fmt.Sprintf(`{"callback_url":%q,"callback_secret":%q}`, newRC.srv.URL, secret)); code != 200 {
		t.Fatalf("PUT settings: %d %v", code, body)
	}
	if code, body := call(t, "POST", e.base+"/api/v1/user/webhook/test", key, ""); code != 200 ||
		body["data"].(map[string]any)["delivery"].(map[string]any)["delivered"] != true {
		t.Fatalf("test notification: %d %v", code, body)
	}
	tx := e.sale(t, key, "20.00")
	waitFor(t, 10*time.Second, "the payment's webhook at the new URL", func() bool { return len(newRC.requests()) == 2 })
	if n := len(oldRC.requests()); n != 0 {
		t.Fatalf("the old URL got %d deliveries", n)
	}
	v := webhook.Verifier{Secret: secret}
	for i, r := range newRC.requests() {
		if err := v.Verify(r.header, r.body); err != nil {
			t.Fatalf("delivery %d does not verify with the new secret: %v", i, err)
		}
	}
	var p webhook.Payload
	_ = json.Unmarshal(newRC.requests()[0].body, &p)
	if p.Message != "Test notification" || p.Amount != "0.00" || len(p.TransactionID) < 6 || p.TransactionID[:5] != "test_" {
		t.Fatalf("test payload %+v", p)
	}
	waitFor(t, 10*time.Second, "the delivery recorded as delivered", func() bool { return e.delivery(t, a.ID, tx).State == business.DeliveryDelivered })
	code, body := call(t, "GET", e.base+"/api/v1/user/webhook/deliveries?state=delivered", key, "")
	list, _ := body["data"].(map[string]any)["deliveries"].([]any)
	if code != 200 || len(list) != 1 || list[0].(map[string]any)["transaction_id"] != tx {
		t.Fatalf("deliveries: %d %v", code, body)
	}
	if code, body := call(t, "POST", e.base+"/api/v1/user/webhook/deliveries/"+tx+"/redeliver", key, "{}"); code != 200 ||
		body["data"].(map[string]any)["delivery"].(map[string]any)["state"] != "pending" {
		t.Fatalf("redeliver: %d %v", code, body)
	}
	waitFor(t, 10*time.Second, "the redelivery", func() bool { return len(newRC.requests()) == 3 })
	if first, again := newRC.requests()[1].header.Get("webhook-id"), newRC.requests()[2].header.Get("webhook-id"); first != again {
		t.Fatalf("webhook-id changed on redelivery: %s %s", first, again)
	}
}

// TestTwoDevserversOneTable: two devservers on one table are two stream
// pollers and two dispatchers, as overlapping retry-webhooks runs are on
// AWS. Payments made through both, to a receiver that fails at first, each
// reach it, and only ever with the webhook-id of their own delivery.
func TestTwoDevserversOneTable(t *testing.T) {
	e := newWebhookEnv(t)
	second, stop := start(t, e.cfg, t.TempDir())
	t.Cleanup(stop)
	rc := newReceiver(t, 500, 503) // fewer failures than the schedule's attempts
	a, key := e.account(t, rc.srv.URL, "")
	bases := []string{e.base, second}
	const payments = 30
	var txs []string
	for i := 0; i < payments; i++ {
		code, body := call(t, "POST", bases[i%2]+"/api/v1/sales/add", key,
			`{"customer_id":1,"sub_total_amount":"50.00","total_amount":"50.00","amount_paid":"5.00","invoice_type":"pos","payment_type":"Cash","due_date":"2026-12-01"}`)
		if code != 200 {
			t.Fatalf("sale: %d %v", code, body)
		}
		txs = append(txs, body["data"].(map[string]any)["sales-payment"].([]any)[0].(map[string]any)["transaction_id"].(string))
	}
	delivered := func() map[string]int {
		ok := map[string]int{}
		for _, r := range rc.requests() {
			var p struct {
				TransactionID string `json:"transaction_id"`
			}
			_ = json.Unmarshal(r.body, &p)
			if id := r.header.Get("webhook-id"); id != "msg_"+p.TransactionID {
				t.Fatalf("payment %s sent with webhook-id %q", p.TransactionID, id)
			}
			ok[p.TransactionID]++
		}
		return ok
	}
	waitFor(t, 60*time.Second, "every payment's webhook", func() bool {
		got := delivered()
		for _, tx := range txs {
			if got[tx] == 0 {
				return false
			}
		}
		return true
	})
	// The first two requests were answered with failures, every later one
	// with 200: no payment was answered 200 twice (two dispatchers never make
	// the same attempt).
	ok := map[string]int{}
	for _, r := range rc.requests()[2:] {
		var p struct {
			TransactionID string `json:"transaction_id"`
		}
		_ = json.Unmarshal(r.body, &p)
		if ok[p.TransactionID]++; ok[p.TransactionID] > 1 {
			t.Errorf("payment %s delivered twice", p.TransactionID)
		}
	}
	for _, tx := range txs {
		if d := e.delivery(t, a.ID, tx); d.State != business.DeliveryDelivered {
			t.Errorf("delivery of %s is %s", tx, d.State)
		}
	}
}
