package notices_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/hosted"
	"bizdata/shared/mail"
	"bizdata/shared/money"
	"bizdata/shared/notices"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
	"bizdata/shared/testmail"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// baseURL is where the runner says the hosted invoices are served.
const baseURL = "https://pay.example.test"

// clock is a store clock the test moves; the runner's workers read it at
// once.
type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time            { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) set(t time.Time)           { c.ns.Store(t.UnixNano()) }
func (c *clock) at(t *testing.T, s string) { c.set(instant(t, s)) }

func instant(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// fixture is one account in a table of its own, a Mailpit, and a runner
// whose log the test reads.
type fixture struct {
	st      *store.Store
	clock   *clock
	account string
	inbox   *testmail.Inbox
	log     *testdb.Buffer
	runner  *notices.Runner
}

// newFixture starts the store's clock at start (RFC 3339); the account is
// in UTC until the test moves it.
func newFixture(t *testing.T, start string) *fixture {
	t.Helper()
	st, _ := testdb.NewStore(t)
	f := &fixture{st: st, clock: &clock{}, inbox: testmail.Start(t), log: &testdb.Buffer{}}
	f.clock.at(t, start)
	st.SetClock(f.clock.now)
	a, _ := testdb.NewAccount(t, st, "Ama's Shop", "AMA"+hex.EncodeToString(randomBytes(3)))
	f.account = a.ID
	f.runner = &notices.Runner{Store: st, Mail: mail.NewSMTP(f.inbox.SMTPAddr(), "Ama's Shop <invoices@bizdata.localhost>"),
		BaseURL: baseURL, Log: slog.New(slog.NewJSONHandler(f.log, nil))}
	return f
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// newAddress returns an address no other test sends to.
func newAddress() string { return "customer-" + hex.EncodeToString(randomBytes(6)) + "@example.test" }

// moveTo sets the account's timezone, and the clock to when it takes effect.
func (f *fixture) moveTo(t *testing.T, zone string) {
	t.Helper()
	if _, err := f.st.UpdateSettings(context.Background(), f.account, store.SettingsChange{Timezone: &zone}); err != nil {
		t.Fatal(err)
	}
	f.clock.set(f.clock.now().Add(business.TimezoneDelay))
}

// customer stores a customer with email address email ("" for none) and
// returns its id.
func (f *fixture) customer(t *testing.T, email string) int64 {
	t.Helper()
	var id int64
	_, err := f.st.CreateCustomer(context.Background(), f.account, business.Customer{Name: "Kofi Mensah", Email: email}, nil,
		func(c business.Customer) ([]byte, error) { id = c.ID; return json.Marshal(c) })
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// saleSpec is what a test sets of a sale: the rest is an invoice of 120.50.
type saleSpec struct {
	customer      int64
	reminder, due string
	message       string
	paid          string // amount paid at creation, "" for none
}

// sale stores a sale as the API does (validated, code and number drawn)
// and returns its invoice code.
func (f *fixture) sale(t *testing.T, s saleSpec) string {
	t.Helper()
	code, err := f.createSale(s)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// createSale is sale for goroutines other than the test's.
func (f *fixture) createSale(s saleSpec) (string, error) {
	sale := business.Sale{InvoiceNumber: "INV-000000", CustomerID: s.customer, InvoiceType: "main", PaymentType: "None",
		SubTotal: money.MustAmount("120.50"), Total: money.MustAmount("120.50"),
		DueDate: s.due, ReminderDate: s.reminder, ReminderMessage: s.message}
	if s.paid != "" {
		sale.AmountPaid, sale.PaymentType = money.MustAmount(s.paid), "Cash"
	}
	sale.InvoiceCode = business.NewInvoiceCode()
	if err := sale.Validate(""); err != nil {
		return "", err
	}
	var code string
	_, err := f.st.CreateSale(context.Background(), f.account, store.NewSale{Sale: sale, CodeGenerated: true, NumberGenerated: true}, nil,
		func(r store.SaleRecord) ([]byte, error) { code = r.Sale.InvoiceCode; return nil, nil })
	return code, err
}

// edit changes the sale as an API edit does: change, then validate.
func (f *fixture) edit(t *testing.T, code string, change func(s *business.Sale)) {
	t.Helper()
	_, err := f.st.UpdateSale(context.Background(), f.account, code, func(_ store.SaleRecord, next *business.Sale) error {
		change(next)
		return next.Validate("")
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) find(t *testing.T, code string) store.SaleRecord {
	t.Helper()
	rec, err := f.st.FindSaleByCode(context.Background(), f.account, code)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// run runs the runner once, failing the test on an error, and checks what
// it did.
func (f *fixture) run(t *testing.T, want notices.Result) {
	t.Helper()
	got, err := f.runner.Run(context.Background())
	if err != nil {
		t.Fatalf("run at %s: %v", f.clock.now().Format(time.RFC3339), err)
	}
	if got != want {
		t.Fatalf("run at %s: %+v, want %+v", f.clock.now().Format(time.RFC3339), got, want)
	}
}

// events returns the account's events of type typ about the sale code.
func (f *fixture) events(t *testing.T, typ, code string) []json.RawMessage {
	t.Helper()
	page, err := f.st.ListEvents(context.Background(), f.account,
		store.EventFilter{Type: typ, ResourceType: business.ResourceSale, ResourceID: code}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	return page.Items
}

// wantEvents fails unless the sale has n events of type typ.
func (f *fixture) wantEvents(t *testing.T, typ, code string, n int) {
	t.Helper()
	if got := f.events(t, typ, code); len(got) != n {
		t.Fatalf("%d %s events for sale %s, want %d: %s", len(got), typ, code, n, got)
	}
}

// wantMail fails unless exactly n messages were sent to address, and
// returns them.
func (f *fixture) wantMail(t *testing.T, address string, n int) []testmail.Received {
	t.Helper()
	got := f.inbox.Messages(t, address)
	if n > 0 {
		// Mailpit stores a message before it acknowledges it; the wait is
		// for a slow API only.
		got = f.inbox.WaitFor(t, address, n, 10*time.Second)
	}
	if len(got) != n {
		t.Fatalf("%d messages to the customer, want %d", len(got), n)
	}
	return got
}

// wantDue fails unless n notices are due at the clock's now.
func (f *fixture) wantDue(t *testing.T, n int) []store.DueNotice {
	t.Helper()
	due, err := f.st.DueNotices(context.Background(), f.clock.now(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != n {
		t.Fatalf("%d notices due at %s, want %d: %+v", len(due), f.clock.now().Format(time.RFC3339), n, due)
	}
	return due
}

// wantLogClean fails if the runner's log holds any of secrets (addresses,
// tokens, texts).
func (f *fixture) wantLogClean(t *testing.T, secrets ...string) {
	t.Helper()
	log := f.log.String()
	for _, s := range secrets {
		if s != "" && strings.Contains(log, s) {
			t.Errorf("the log holds %q:\n%s", s, log)
		}
	}
}

// openLink GETs the hosted page at link through the public handler and
// returns its status and body.
func (f *fixture) openLink(t *testing.T, link string) (int, string) {
	t.Helper()
	path, ok := strings.CutPrefix(link, baseURL)
	if !ok {
		t.Fatalf("link %q is not under %s", link, baseURL)
	}
	rr := httptest.NewRecorder()
	hosted.NewServer(f.st, slog.New(slog.NewJSONHandler(f.log, nil))).Handler(hosted.Routes).
		ServeHTTP(rr, httptest.NewRequest(http.MethodGet, path, nil))
	return rr.Code, rr.Body.String()
}

// deadSMTP returns an address where nothing listens: every connection is
// refused.
func deadSMTP(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// lostReplyProxy relays SMTP to the real server at upstream but loses the
// server's answer to the end of a message's data: the server has the
// message, the client never hears it was accepted (a connection cut at the
// worst moment). It returns the address to send to.
func lostReplyProxy(t *testing.T, upstream string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			go relayLosingDataReply(client, upstream)
		}
	}()
	return ln.Addr().String()
}

func relayLosingDataReply(client net.Conn, upstream string) {
	defer client.Close()
	server, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	defer server.Close()
	var cut atomic.Bool
	answered := make(chan struct{})
	go func() { // the server's replies, until the data has ended
		defer close(answered)
		buf := make([]byte, 4096)
		for {
			n, err := server.Read(buf)
			if cut.Load() || err != nil {
				return // the reply to the data's end is read and dropped
			}
			if _, err := client.Write(buf[:n]); err != nil {
				return
			}
		}
	}()
	var tail []byte
	buf := make([]byte, 4096)
	for {
		n, err := client.Read(buf)
		if err != nil {
			return
		}
		seen := append(tail, buf[:n]...)
		if strings.Contains(string(seen), "\r\n.\r\n") {
			cut.Store(true) // before the server can answer it
			_, _ = server.Write(buf[:n])
			<-answered
			return
		}
		if _, err := server.Write(buf[:n]); err != nil {
			return
		}
		tail = seen[max(0, len(seen)-4):]
	}
}
