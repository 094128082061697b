package dashboard

import (
	"context"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/infra/streampoll"
	"bizdata/shared/app"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"
)

// deliverWebhooks runs what Lambda runs on AWS beside the board: the
// table's stream fed to the webhook service, and its dispatcher, until the
// test ends.
func (b *board) deliverWebhooks() {
	b.t.Helper()
	testdb.EnableStream(b.t, b.st)
	// The stream's and the dispatcher's log, shown when the test fails.
	var logs testdb.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	b.t.Cleanup(func() {
		if b.t.Failed() {
			b.t.Logf("the stream's and the dispatcher's warnings and errors:\n%s", logs.String())
		}
	})
	svc := webhook.NewService(b.st, webhook.NewSender(true), []time.Duration{time.Hour}, log)
	ctx, cancel := context.WithCancel(context.Background())
	cfg := testdb.Config(b.t)
	streams, err := app.NewStreams(ctx, cfg.Endpoint)
	if err != nil {
		b.t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		streampoll.Poll(ctx, b.st.Client(), streams, b.st.Table(), webhook.Streamed, svc.HandleStream, streampoll.MaximumRetryAttempts, log)
	}()
	go func() { defer wg.Done(); svc.Dispatch(ctx, time.Now().Add(time.Hour), 50*time.Millisecond) }()
	b.t.Cleanup(func() { cancel(); wg.Wait() })
}

// receiver is a webhook receiver that answers 200 and counts what it gets.
type receiver struct {
	*httptest.Server
	got atomic.Int64
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		r.got.Add(1)
	}))
	t.Cleanup(r.Close)
	return r
}

// waitForPage gets path until its body matches want, for up to 90 s (the
// stream and the dispatcher are real, and slow on a loaded machine).
func (o *owner) waitForPage(path string, want *regexp.Regexp) string {
	o.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		_, page, _ := o.get(path)
		if want.MatchString(page) {
			return page
		}
		if time.Now().After(deadline) {
			o.t.Fatalf("%s never showed %s:\n%s", path, want, page)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// TestDeliveriesShowEveryAttempt: with the stream and the dispatcher
// running, an endpoint set up on the Developers page receives a sale's
// events and its page lists each delivery with its attempt; the payment
// callback's delivery is listed with its attempt, and Redeliver sends it
// again (a second attempt, a second request at the receiver).
func TestDeliveriesShowEveryAttempt(t *testing.T) {
	// Not parallel: the stream poller needs DynamoDB Local's stream reads.
	b := newBoard(t)
	b.deliverWebhooks()
	o := b.newOwner("DELIV1")
	hooks, callback := newReceiver(t), newReceiver(t)

	st, page, _ := o.post("/dashboard/developers/endpoints", url.Values{"url": {hooks.URL + "/events"}, "events": {"sale.created"}})
	if st != http.StatusOK || !secretShownRE.MatchString(page) {
		t.Fatalf("add endpoint: %d", st)
	}
	endpointID := regexp.MustCompile(`/dashboard/developers/endpoints/(we_[A-Za-z0-9]+|[A-Za-z0-9_]+)"`).FindStringSubmatch(page)
	if endpointID == nil {
		t.Fatalf("the page links no endpoint:\n%s", page)
	}
	if st, page, _ := o.post("/dashboard/developers/webhook", url.Values{"callback_url": {callback.URL + "/pay"}, "secret_action": {"keep"}}); st != http.StatusOK {
		t.Fatalf("set the callback: %d %s", st, page)
	}
	o.mustAPI("POST", "/api/v1/customers/add", map[string]any{"name": "Ama Mensah"})
	o.mustAPI("POST", "/api/v1/sales/add", saleBody("440001", "20.00"))

	page = o.waitForPage("/dashboard/developers/endpoints/"+endpointID[1], regexp.MustCompile(`sale\.created[\s\S]*status 200`))
	mustContain(t, page, "delivered")
	page = o.waitForPage("/dashboard/developers", regexp.MustCompile(`Sale 440001[\s\S]*status 200`))
	tx := regexp.MustCompile(`/dashboard/developers/deliveries/([^/"]+)/redeliver`).FindStringSubmatch(page)
	if tx == nil {
		t.Fatal("the payment delivery has no Redeliver form")
	}
	// The button reads "Redeliver"; its name says which payment, briefly.
	button := regexp.MustCompile(`/redeliver" class="inline">\s*<input[^>]*>\s*<button type="submit" class="secondary" aria-label="([^"]+)">([^<]*)</button>`).FindStringSubmatch(page)
	if button == nil || button[2] != "Redeliver" || !strings.HasPrefix(button[1], "Redeliver payment ") || !strings.HasSuffix(button[1], " of sale 440001") || strings.Contains(button[2], tx[1]) {
		t.Fatalf("the payment's Redeliver button: %q", button)
	}
	before := callback.got.Load()
	if st, page, _ := o.post("/dashboard/developers/deliveries/"+tx[1]+"/redeliver", nil); st != http.StatusOK {
		t.Fatalf("redeliver: %d %s", st, page)
	}
	o.waitForPage("/dashboard/developers", regexp.MustCompile(`Sale 440001[\s\S]*status 200[\s\S]*status 200`))
	if callback.got.Load() <= before {
		t.Fatal("Redeliver sent nothing to the receiver")
	}
	if strings.Contains(page, "Internal") {
		t.Fatal("a page answered an internal error")
	}

	// The endpoint's own forms: a test event, listed with its attempt; the
	// sale's delivery redelivered by the dispatcher; the settings saved.
	epPage := "/dashboard/developers/endpoints/" + endpointID[1]
	before = hooks.got.Load()
	st, page, at := o.post(epPage+"/test", nil)
	if st != http.StatusOK || at != epPage {
		t.Fatalf("send a test event: %d at %s", st, at)
	}
	mustContain(t, page, "delivered: status code 200", "webhook_endpoint.test")
	if hooks.got.Load() != before+1 {
		t.Errorf("the test event reached the receiver %d times, want once", hooks.got.Load()-before)
	}
	sale := regexp.MustCompile(`<code>(evt_[0-9a-f]+)</code><span class="hint">[^<]*</span></td>\s*<td>sale\.created</td>`).FindStringSubmatch(page)
	if sale == nil {
		t.Fatalf("the endpoint's page lists no sale.created delivery:\n%s", page)
	}
	before = hooks.got.Load()
	if st, page, _ := o.post(epPage+"/deliveries/"+sale[1]+"/redeliver", nil); st != http.StatusOK || !strings.Contains(page, "Delivery queued for another attempt") {
		t.Fatalf("redeliver the sale's event: %d", st)
	}
	deadline := time.Now().Add(90 * time.Second)
	for hooks.got.Load() == before && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if hooks.got.Load() == before {
		t.Fatal("the redelivered event never reached the receiver")
	}
	o.waitForPage(epPage, regexp.MustCompile(sale[1]+`</code>[^<]*<span[^>]*>[^<]*</span></td>\s*<td>sale\.created</td>[\s\S]*?<ol><li>[^<]*status 200[^<]*</li><li>[^<]*status 200`))

	st, page, _ = o.post(epPage, url.Values{"url": {"not a url"}, "events": {"sale.*"}, "status": {"enabled"}})
	if st != http.StatusBadRequest {
		t.Errorf("a bad URL answered %d, want 400", st)
	}
	mustContain(t, page, `value="not a url"`, `aria-invalid="true" aria-describedby="endpoint-url-err"`)
	st, page, at = o.post(epPage, url.Values{"url": {hooks.URL + "/v2"}, "events": {"sale.*", "payment.received"}, "status": {"disabled"}})
	if st != http.StatusOK || at != epPage {
		t.Fatalf("save the endpoint: %d at %s", st, at)
	}
	mustContain(t, page, "Webhook endpoint saved", hooks.URL+"/v2", "sale.*, payment.received", `<span class="status disabled">disabled</span>`)
}

// TestEndpointDeliveriesPaged: an endpoint's page lists its deliveries 20 at
// a time, newest first, with a link to the older ones; following the links
// reaches every delivery once. Each Redeliver button reads "Redeliver" (the
// id stays in the form's action) and is named apart from the others by the
// event's type and the end of its id.
func TestEndpointDeliveriesPaged(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("DELPG1")
	hooks := newReceiver(t)
	st, page, _ := o.post("/dashboard/developers/endpoints", url.Values{"url": {hooks.URL}, "events": {"customer.created"}})
	m := regexp.MustCompile(`href="/dashboard/developers/endpoints/([^"#]+)"`).FindStringSubmatch(page)
	if st != http.StatusOK || m == nil {
		t.Fatalf("add endpoint: %d", st)
	}
	id := m[1]
	// 42 customers' events, queued to the endpoint by a replay (pending:
	// no dispatcher runs), then 3 test events, delivered at once: 45
	// deliveries, three pages.
	since := time.Now().UTC().Add(-time.Minute).Format(time.DateTime)
	for i := range 42 {
		o.mustAPI(http.MethodPost, "/api/v1/customers/add", map[string]any{"name": "Customer " + strconv.Itoa(i)})
	}
	if got := o.mustAPI(http.MethodPost, "/api/v1/webhook-endpoints/"+id+"/replay", map[string]any{"since": since}); !strings.Contains(got, `"queued":42`) {
		t.Fatalf("replay: %s", got)
	}
	for range 3 {
		o.mustAPI(http.MethodPost, "/api/v1/webhook-endpoints/"+id+"/test", nil)
	}
	const total, tests = 45, 3

	rowRE := regexp.MustCompile(`<code>(evt_[0-9a-zA-Z]+)</code><span class="hint">`)
	buttonRE := regexp.MustCompile(`<form method="post" action="/dashboard/developers/endpoints/[^/]+/deliveries/([^/]+)/redeliver" class="inline">\s*<input[^>]*>\s*<button type="submit" class="secondary" aria-label="([^"]+)">([^<]*)</button>`)
	olderRE := regexp.MustCompile(`<a href="([^"]+)" rel="next">Older deliveries</a>`)
	seen := map[string]bool{}
	names := map[string]bool{}
	path := "/dashboard/developers/endpoints/" + id
	for pages := 1; ; pages++ {
		st, page, _ := o.get(path)
		if st != http.StatusOK {
			t.Fatalf("page %d: %d", pages, st)
		}
		rows := rowRE.FindAllStringSubmatch(page, -1)
		if want := min(20, total-len(seen)); len(rows) != want {
			t.Fatalf("page %d lists %d deliveries, want %d", pages, len(rows), want)
		}
		for _, r := range rows {
			if seen[r[1]] {
				t.Fatalf("page %d repeats %s", pages, r[1])
			}
			seen[r[1]] = true
		}
		for _, bt := range buttonRE.FindAllStringSubmatch(page, -1) {
			name := html.UnescapeString(bt[2])
			end, ok := strings.CutPrefix(name, "Redeliver webhook_endpoint.test …")
			if bt[3] != "Redeliver" || !seen[bt[1]] || names[name] || !ok || !strings.HasSuffix(bt[1], end) {
				t.Fatalf("button %q named %q for %s: want the label Redeliver and a name of its own ending as the id", bt[3], name, bt[1])
			}
			names[name] = true
		}
		if strings.Contains(page, "Redeliver evt_") {
			t.Fatal("a Redeliver button spells out its event id")
		}
		next := olderRE.FindStringSubmatch(page)
		if len(seen) == total {
			if next != nil {
				t.Fatalf("the last page links older deliveries: %s", next[1])
			}
			if pages != 3 {
				t.Fatalf("%d deliveries took %d pages, want 3", total, pages)
			}
			mustContain(t, page, `>Newest deliveries</a>`)
			break
		}
		if next == nil {
			t.Fatalf("page %d has no link to older deliveries; %d of %d seen", pages, len(seen), total)
		}
		path = html.UnescapeString(next[1])
	}
	if len(names) != tests {
		t.Errorf("%d Redeliver buttons for the %d delivered test events", len(names), tests)
	}
}
