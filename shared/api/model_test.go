package api_test

// The model-based test: random sequences of operations on two businesses
// (each with a live book and a test twin's), sent through the real HTTP
// handler on DynamoDB Local, each response checked against what an
// in-memory model of the API predicts, and the invariants checked by an
// audit that reads everything back. Failures shrink to a
// minimal sequence; each one found is kept as a plain test in
// model_regress_test.go.
//
// Corrections (issue 21) are in the model too: refunds with and without
// lines, voids, stock adjustments, edits of an item's quantity and of a
// sale's lines, the ledger of every item, and concurrent corrections, whose
// answers must be those of some serial order of them. The audit checks,
// for every sale, that payments add up to amount_paid and refunds to
// amount_refunded (never above it), that no line returns more than it sold,
// and that a void sale reads as its void answered; for every item, that its
// stock is never negative and is the sum of its movements.
//
// Reports are in the model too. The store's clock is the model's: stopped,
// at the start of each sequence, a second to half an hour before a local
// midnight (of Africa/Nairobi, UTC, America/New_York or Asia/Kathmandu; some
// days the last of a month, or a Sunday) and moved forward only by steps,
// seconds to hours at a time, so that facts fall on both sides of local
// midnights; every write's stamp is checked against it. Steps change the
// account's timezone (to zones off the hour, far east and west; twice in a
// row now and then, before the first change takes effect), and the model
// keeps the history each change answers, once it has checked that it never
// rewrites the past. The model keeps its own books: each sale, payment (by
// its method), change of a sale's total, refund, void, expense (by its
// type) and edit of one is a fact at an instant, dated by the local date
// the timezone history gives that instant. Every summary (by day, week or
// month, over ranges around the facts and far from them, and by default) is
// compared with the books to the cent, period by period; receivables with
// the open sales aged on dates at the edges of the buckets (before a due
// date, on it, 1, 30, 31, 60, 61, 90, 91 days after and long after), and
// today's just before and just after a local midnight (of a zone not UTC)
// with sales due that day and 30, 60 and 90 days before it; the debtors by
// their current names, more of them than the report names now and then;
// the inventory report with the items' values (each sum exact, rounded
// once) and their stock alerts, more items short than it lists now and
// then. Bad report queries must
// be refused naming the parameter. Reports asked at once, with the stream's
// consumer applying the same changes (and a stale copy of its batch), must
// all answer the books: each change counted once, whoever applies it; with
// a few hundred changes waiting a report applies them all and answers. A report asked during a concurrent burst must answer too, and the
// books are compared after the burst, in the serial order found for it.
//
// API keys, scopes and test mode are in the model too (model_keys_test.go):
// each business has keys of both modes and of different scopes, and every
// step acts with one of them, on the book of its mode: a live book and a
// test twin's, each with its own records, ids, invoice numbers, events,
// reports and webhook settings. A request whose key lacks the route's scope,
// or is of a mode the route does not serve, must be refused 403 saying so,
// and change nothing. Keys are made, listed, rotated and revoked, and the
// test data cleared, by steps.
//
// `make test` runs a bounded number of sequences; `make check-model` runs
// thousands (MODEL_SEQUENCES).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/store"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/shopspring/decimal"
	"pgregory.net/rapid"
)

// modelSequences is how many sequences TestModel runs unless -rapid.checks
// or MODEL_SEQUENCES says otherwise.
const modelSequences = 12

// checksPassed records, before the first model test sets it, whether
// -rapid.checks was given: once set by flag.Set, flag.Visit would report it
// as given, and the Lambda run would take the HTTP run's count.
var checksPassed = sync.OnceValue(func() bool {
	passed := false
	flag.Visit(func(f *flag.Flag) { passed = passed || f.Name == "rapid.checks" })
	return passed
})

func setModelChecks(t *testing.T, def int) {
	t.Helper()
	if checksPassed() {
		return
	}
	n := def
	if v := os.Getenv("MODEL_SEQUENCES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatalf("MODEL_SEQUENCES=%q", v)
		}
	}
	if err := flag.Set("rapid.checks", strconv.Itoa(n)); err != nil {
		t.Fatal(err)
	}
}

func TestModel(t *testing.T) {
	setModelChecks(t, modelSequences)
	tables := freshTables(t)
	rapid.Check(t, func(rt *rapid.T) {
		e, clk := tables()
		runModel(rt, e, httpCaller{e}, clk)
	})
}

// sequencesPerTable is how many sequences share one table: DynamoDB Local
// slows down as one table fills (a backlog step alone writes hundreds of
// changes), so a long run (make check-model) moves to a fresh table, and
// drops the old one, every so many sequences.
const sequencesPerTable = 25

// freshTables returns what gives each sequence its env: the same one for
// sequencesPerTable sequences, then a new one on a table of its own.
func freshTables(t *testing.T) func() (*env, *fakeClock) {
	var e *env
	var clk *fakeClock
	n := 0
	return func() (*env, *fakeClock) {
		if n%sequencesPerTable == 0 {
			if e != nil {
				_, _ = e.store.Client().DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(e.store.Table())})
			}
			e = newEnv(t)
			clk = useFakeClock(e)
		}
		n++
		return e, clk
	}
}

// TestModelLambda runs a sample of the model's sequences through the Lambda
// path (API Gateway v2 events into each route's function), so local and
// Lambda behaviour cannot drift apart.
func TestModelLambda(t *testing.T) {
	setModelChecks(t, modelSequences/3)
	tables := freshTables(t)
	var lc *lambdaCaller
	var last *env
	rapid.Check(t, func(rt *rapid.T) {
		e, clk := tables() // the Lambda handlers share e's store, and so its clock
		if e != last {
			lc, last = newLambdaCaller(t, e), e
		}
		runModel(rt, e, lc, clk)
	})
}

// caller sends one request and returns its status, headers and body.
type caller interface {
	call(method, path, key string, body []byte, headers map[string]string) (int, http.Header, []byte)
}

type httpCaller struct{ e *env }

func (c httpCaller) call(method, path, key string, body []byte, headers map[string]string) (int, http.Header, []byte) {
	r, err := http.NewRequest(method, c.e.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	if body == nil {
		r.Body = http.NoBody
	} else {
		r.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	return res.StatusCode, res.Header, buf.Bytes()
}

// reply is a checked response.
type reply struct {
	code int
	raw  []byte
	body map[string]any
}

func (r reply) data() map[string]any { d, _ := r.body["data"].(map[string]any); return d }
func (r reply) obj(key string) map[string]any {
	o, _ := r.data()[key].(map[string]any)
	return o
}
func (r reply) list(key string) []any { l, _ := r.data()[key].([]any); return l }
func (r reply) errText() string       { s, _ := r.body["error"].(string); return s }
func (r reply) field(name string) string {
	f, _ := r.body["fields"].(map[string]any)
	s, _ := f[name].(string)
	return s
}

// model is the in-memory state the API must agree with.
type model struct {
	t     *rapid.T
	c     caller
	st    *store.Store // what the stream's consumer of report figures calls
	bizs  []*mBiz      // the businesses: each a live book and a test twin's
	accts []*mAccount  // every book: each business's live one, then its test twin's
	keys  map[string]*mKey
	clk   *fakeClock
	end   time.Time // the clock never passes it in a sequence
	day   time.Time // the local date the clock starts on (midnight UTC of it)
}

type mAccount struct {
	key        string // the key the current step sends with (see acct)
	live       bool   // a live book, or a test twin's
	biz        *mBiz
	full       *mKey // the book's "*" key: what the audit reads with
	hook       mHook // the webhook settings
	customers  map[int64]*mCustomer
	categories map[int64]*mCategory
	items      map[string]*mItem
	sales      map[string]*mSale
	numbers    map[string]bool // invoice numbers in use
	expenses   map[int64]*mExpense
	idem       map[string]*mIdem // route + " " + key
	lastID     map[string]int64
	id         string     // the account's id
	name, code string     // business name and code, as settings show them
	clk        *fakeClock // the store's clock
	tz         []mSpan    // timezone history, oldest first: UTC from the start, then each change
	facts      []mFact    // the books, in the order the changes were made
}

type mCustomer struct {
	id                          int64
	name, email, phone, created string
}

type mCategory struct {
	id            int64
	name, created string
}

type mItem struct {
	code, name     string
	id, category   int64
	qty            decimal.Decimal
	price          string
	cost, minAlert decimal.Decimal // unit_cost and minimum_qty_alert
	created        string
	moves          []mMove // its ledger, oldest first
}

// mMove is one movement of an item's ledger: change is signed (positive adds
// to stock); invoice, reason and note are "" for null.
type mMove struct {
	kind, invoice, reason, note string
	change                      decimal.Decimal
}

func (mv mMove) String() string {
	return fmt.Sprintf("{%s %s invoice %q reason %q note %q}", mv.kind, mv.change, mv.invoice, mv.reason, short(mv.note))
}

type mSale struct {
	code, number, invoiceType, status, dueDate, created string
	payType                                             string // payment_type: a new payment's method
	payDate                                             string // payment_date: the local date of the first payment ("" before)
	customer, id                                        int64
	sub, total, paid, refunded                          money.Amount
	payments, refunds                                   int
	lines                                               []mLine // every line: its sales_item_id is its position from 1
	sent                                                []any   // the lines as sent, for edits of them
	void                                                bool
	voidData                                            string // the void's answer (data): the sale never changes again
}

type mLine struct {
	itemCode string // "" for a line of no inventory item
	qty      money.Quantity
	returned decimal.Decimal
}

type mExpense struct {
	id                   int64
	typ, created, amount string
}

type mIdem struct {
	path string
	body []byte
	resp []byte
	// redo checks the answer to the same request sent to another sale or
	// item (target) of a correction route; nil for creates.
	redo func(target string, r reply)
}

// modelAccounts numbers the accounts the sequences make: business codes are
// unique per table, and every sequence of a run shares one.
var modelAccounts atomic.Int64

// newBook is an empty book of account id.
func newBook(id, name, code string, clk *fakeClock, tz []mSpan, live bool) *mAccount {
	return &mAccount{customers: map[int64]*mCustomer{}, categories: map[int64]*mCategory{},
		items: map[string]*mItem{}, sales: map[string]*mSale{}, numbers: map[string]bool{},
		expenses: map[int64]*mExpense{}, idem: map[string]*mIdem{}, lastID: map[string]int64{},
		id: id, name: name, code: code, clk: clk, tz: slices.Clone(tz), live: live}
}

func runModel(rt *rapid.T, e *env, c caller, clk *fakeClock) {
	m := &model{t: rt, c: c, st: e.store, clk: clk, keys: map[string]*mKey{}}
	zone := m.startClock(rt)
	m.bizs = []*mBiz{m.newBusiness(rt, e, 1), m.newBusiness(rt, e, 2)}
	m.refreshBooks()
	m.startZones(rt, zone)
	rt.Repeat(map[string]func(*rapid.T){
		"addCustomer":           m.addCustomer,
		"editCustomer":          m.editCustomer,
		"concurrentEdits":       m.concurrentEdits,
		"addCategory":           m.addCategory,
		"addItem":               m.addItem,
		"editItem":              m.editItem,
		"addSale":               m.addSale,
		"editSale":              m.editSale,
		"addExpense":            m.addExpense,
		"replay":                m.replay,
		"concurrentReplay":      m.concurrentReplay,
		"list":                  m.list,
		"cursorElsewhere":       m.cursorElsewhere,
		"otherAccountsKey":      m.otherAccountsKey,
		"badQuery":              m.badQuery,
		"longPathAndFilters":    m.longPathAndFilters,
		"stockedSale":           m.stockedSale,
		"refund":                m.refund,
		"void":                  m.void,
		"adjust":                m.adjust,
		"movements":             m.movements,
		"keyElsewhere":          m.keyElsewhere,
		"concurrentRefunds":     m.concurrentRefunds,
		"concurrentCorrections": m.concurrentCorrections,
		"editExpense":           m.editExpense,
		"setTimezone":           m.setTimezone,
		"advanceClock":          m.advanceClock,
		"summary":               m.summary,
		"receivables":           m.receivables,
		"inventoryReport":       m.inventoryReport,
		"midnightAging":         m.midnightAging,
		"manyDebtors":           m.manyDebtors,
		"manyAlerts":            m.manyAlerts,
		"badReport":             m.badReport,
		"concurrentReports":     m.concurrentReports,
		"manyChanges":           m.manyChanges,
		"consumer":              m.consumer,
		"audit":                 m.audit,
		"createKey":             m.createKey,
		"listKeys":              m.listKeys,
		"revokeKey":             m.revokeKey,
		"rotateKey":             m.rotateKey,
		"authenticate":          m.authenticate,
		"clearTestData":         m.clearTestData,
		"concurrentKeyChanges":  m.concurrentKeyChanges,
		"webhookSettings":       m.webhookSettings,
		"forbiddenRoute":        m.forbiddenRoute,
		"":                      m.tick, // after every step
	})
	// Every sequence ends with a full audit, and the events feed rebuilds
	// every record.
	m.audit(rt)
	for _, a := range m.accts {
		a.key = a.full.secret
		m.feedRebuilds(a)
	}
}

// send makes a request and checks what holds for every response: never a
// 5xx, a JSON envelope whose status equals the HTTP status.
func (m *model) send(method, path, key string, body any, headers map[string]string) reply {
	return m.sendAllowing(method, path, key, body, headers, false)
}

// busyMessage is the 503 of a record under more contention than the store
// retries through (8 s): a request that gets it changed nothing.
const busyMessage = "too many concurrent changes to this record; retry the request"

// sendAllowing is send; with busyOK, a request of a burst on one record may
// also get the store's 503 for contention it could not outlast (on a slow
// machine, 16 writers of one sale each waiting on the others).
//
// A request sent with a key of the model that lacks the route's scope, or
// is of a mode the route does not serve, must be refused 403 with the text
// that says so; it is then sent again with the "*" key of the mode the
// route serves, whose answer the caller predicts from the books: so every
// step goes on as it would, and a refused request that changed anything
// shows in the answers of the books from then on.
func (m *model) sendAllowing(method, path, key string, body any, headers map[string]string, busyOK bool) reply {
	if k := m.keys[key]; k != nil && !k.revoked {
		if why, full := m.refusal(method, path, k); why != "" {
			sent := body
			if body != nil && len(path)%2 == 0 {
				sent = []byte(`{"not JSON`) // the refusal is decided before the body is read
			}
			r := m.sendOnce(method, path, key, sent, headers, false)
			if r.code != http.StatusForbidden || r.errText() != why {
				m.t.Fatalf("%s %s with a %s key of scopes %v: %d %s, want 403 %q", method, path, k.mode(), k.scopes, r.code, r.raw, why)
			}
			key = full.secret
		}
	}
	return m.sendOnce(method, path, key, body, headers, busyOK)
}

// sendOnce sends one request and checks what holds for every response. A
// key of the model that authenticates is then used (its last_used_at set).
func (m *model) sendOnce(method, path, key string, body any, headers map[string]string, busyOK bool) reply {
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			m.t.Fatal(err)
		}
	}
	code, hdr, out := m.c.call(method, path, key, raw, headers)
	busy := strings.Contains(string(out), busyMessage) || strings.Contains(string(out), reportBusyMessage)
	if code >= 500 && !(busyOK && code == 503 && busy) {
		m.t.Fatalf("%s %s: %d %s", method, path, code, out)
	}
	if hdr.Get("Content-Type") != "application/json" {
		m.t.Fatalf("%s %s: Content-Type %q", method, path, hdr.Get("Content-Type"))
	}
	r := reply{code: code, raw: out}
	if err := json.Unmarshal(out, &r.body); err != nil {
		m.t.Fatalf("%s %s: not JSON: %s", method, path, out)
	}
	if st, _ := r.body["status"].(float64); int(st) != code {
		m.t.Fatalf("%s %s: body status %v, HTTP %d", method, path, r.body["status"], code)
	}
	if k := m.keys[key]; k != nil && code != http.StatusUnauthorized {
		// What no route serves authenticates no key; a route refusing the
		// key for its scope or mode stamps nothing.
		if _, routed := modelRoute(method, path); routed && (code != http.StatusForbidden || r.errText() != m.routeRefusal(method, path, k)) {
			k.used.Store(true)
		}
	}
	return r
}

func (m *model) expect(r reply, code int, what string) {
	m.t.Helper()
	if r.code != code {
		m.t.Fatalf("%s: status %d, want %d: %s", what, r.code, code, r.raw)
	}
}

// acct draws a business and one of its keys: the step acts with that key,
// on the book of its mode.
func (m *model) acct(t *rapid.T) *mAccount {
	b := m.bizs[rapid.IntRange(0, len(m.bizs)-1).Draw(t, "account")]
	k := m.drawKey(t, b)
	a := b.book(k.live)
	a.key = k.secret
	return a
}

// newID checks that a created record's id is new and above every earlier
// id of its kind in the account (ids may have gaps).
func (m *model) newID(a *mAccount, kind string, id int64) {
	if id <= a.lastID[kind] {
		m.t.Fatalf("%s id %d not above the last one %d", kind, id, a.lastID[kind])
	}
	a.lastID[kind] = id
}

// create posts body to path, with an Idempotency-Key when drawn, and
// remembers the key's first answer. body is sent as is when it is []byte
// (nil for no body at all).
func (m *model) create(t *rapid.T, a *mAccount, path string, body any) reply {
	r, _ := m.createKeyed(t, a, path, body)
	return r
}

// createKeyed is create, and returns the key it drew ("" for none).
func (m *model) createKeyed(t *rapid.T, a *mAccount, path string, body any) (reply, string) {
	key := ""
	if rapid.Bool().Draw(t, "withKey") {
		key = fmt.Sprintf("k-%d", rapid.IntRange(0, 1<<30).Draw(t, "key"))
	}
	return m.createWithKey(a, path, body, key), key
}

// createWithKey is create with the Idempotency-Key key ("" for none). It
// answers code -1 when the key was used on path before (the answer is checked
// here as a replay).
func (m *model) createWithKey(a *mAccount, path string, body any, key string) reply {
	headers := map[string]string{}
	if key != "" {
		headers["Idempotency-Key"] = key
	}
	raw, ok := body.([]byte)
	if !ok {
		raw, _ = json.Marshal(body)
	}
	if prev, ok := a.idem[path+" "+key]; key != "" && ok {
		// A drawn key already used on this route: the model's answer is the
		// replay (or 409 for another body).
		r := m.send("POST", path, a.key, raw, headers)
		m.checkReplay(prev, raw, r)
		return reply{code: -1}
	}
	r := m.send("POST", path, a.key, raw, headers)
	if key != "" && r.code == 200 {
		a.idem[path+" "+key] = &mIdem{path: path, body: raw, resp: r.raw}
	}
	return r
}

func (m *model) checkReplay(prev *mIdem, body []byte, r reply) {
	if bytes.Equal(prev.body, body) {
		if r.code != 200 || !bytes.Equal(r.raw, prev.resp) {
			m.t.Fatalf("replay of %s: got %d %s, want the first answer %s", prev.path, r.code, r.raw, prev.resp)
		}
		return
	}
	m.expect(r, http.StatusConflict, "key reused with another body")
}

// Text near its limits, counted in characters (some of two or four bytes).
func drawText(t *rapid.T, label string, max int) (string, bool) {
	switch rapid.IntRange(0, 5).Draw(t, label+"Kind") {
	case 0:
		return strings.Repeat("é", max), true
	case 1:
		return strings.Repeat("𝄞", max+1), false
	case 2:
		return "   ", false
	default:
		return rapid.SampledFrom([]string{"Ama", "Kofi Mensah", "Yaa", "Esi Ltd", "Ọlá"}).Draw(t, label), true
	}
}

func (m *model) addCustomer(t *rapid.T) {
	a := m.acct(t)
	name, ok := drawText(t, "name", 200)
	r := m.create(t, a, "/api/v1/customers/add", map[string]any{"name": name})
	if r.code == -1 {
		return
	}
	if !ok {
		m.expect(r, 400, "customer with bad name")
		if r.field("name") == "" {
			m.t.Fatalf("400 does not name the field: %s", r.raw)
		}
		return
	}
	m.expect(r, 200, "add customer")
	c := r.obj("customers")
	id := int64(c["id"].(float64))
	m.newID(a, "customer", id)
	if c["name"] != strings.TrimSpace(name) {
		m.t.Fatalf("name %q, want %q", c["name"], name)
	}
	m.stamped("new customer's created_at", c["created_at"])
	a.customers[id] = &mCustomer{id: id, name: c["name"].(string), created: c["created_at"].(string)}
}

func pick[K comparable, V any](t *rapid.T, mp map[K]V, label string) (K, V, bool) {
	var zero K
	if len(mp) == 0 {
		return zero, *new(V), false
	}
	keys := make([]K, 0, len(mp))
	for k := range mp {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	k := rapid.SampledFrom(keys).Draw(t, label)
	return k, mp[k], true
}

func (m *model) editCustomer(t *rapid.T) {
	a := m.acct(t)
	id, c, ok := pick(t, a.customers, "customer")
	if !ok || rapid.IntRange(0, 4).Draw(t, "missing") == 0 {
		id = a.lastID["customer"] + 1000
		r := m.send("PUT", fmt.Sprintf("/api/v1/customers/%d", id), a.key, map[string]any{"phone": "1"}, nil)
		m.expect(r, 404, "edit missing customer")
		return
	}
	phone := rapid.SampledFrom([]string{"0244000000", strings.Repeat("9", 32), strings.Repeat("9", 33)}).Draw(t, "phone")
	body := map[string]any{"phone": phone}
	name := c.name
	if rapid.IntRange(0, 2).Draw(t, "rename") == 0 { // receivables name a debtor by its current name
		name = rapid.SampledFrom([]string{"Ama Renamed", "Kofi & Sons", "Zed"}).Draw(t, "newName")
		body["name"] = name
	}
	r := m.send("PUT", fmt.Sprintf("/api/v1/customers/%d", id), a.key, body, nil)
	if len(phone) > 32 {
		m.expect(r, 400, "phone too long")
		return
	}
	m.expect(r, 200, "edit customer")
	got := r.obj("customers")
	if got["phone"] != phone || got["name"] != name {
		m.t.Fatalf("edit: %s", r.raw)
	}
	c.phone, c.name = phone, name
}

// concurrentEdits sends two edits of one customer at once, each changing
// another field: both must apply.
func (m *model) concurrentEdits(t *rapid.T) {
	a := m.acct(t)
	id, c, ok := pick(t, a.customers, "customer")
	if !ok {
		return
	}
	n := rapid.IntRange(0, 1<<20).Draw(t, "n")
	email, phone := fmt.Sprintf("c%d@example.com", n), fmt.Sprintf("0%d", n)
	path := fmt.Sprintf("/api/v1/customers/%d", id)
	var wg sync.WaitGroup
	var r1, r2 reply
	wg.Add(2)
	go func() { defer wg.Done(); r1 = m.send("PUT", path, a.key, map[string]any{"email": email}, nil) }()
	go func() { defer wg.Done(); r2 = m.send("PUT", path, a.key, map[string]any{"phone": phone}, nil) }()
	wg.Wait()
	m.expect(r1, 200, "concurrent edit 1")
	m.expect(r2, 200, "concurrent edit 2")
	got := m.send("GET", path, a.key, nil, nil).obj("customers")
	if got["email"] != email || got["phone"] != phone {
		m.t.Fatalf("concurrent edits lost one another: %v", got)
	}
	c.email, c.phone = email, phone
}

func (m *model) addCategory(t *rapid.T) {
	a := m.acct(t)
	name := rapid.SampledFrom([]string{"Grains", " grains ", "Oils", "OILS", "Spices", strings.Repeat("ß", 100)}).Draw(t, "name")
	r := m.create(t, a, "/api/v1/inventory/categories/add", map[string]any{"category_name": name})
	if r.code == -1 {
		return
	}
	for _, c := range a.categories {
		if business.NameKey(c.name) == business.NameKey(name) {
			m.expect(r, 409, "taken category name")
			return
		}
	}
	m.expect(r, 200, "add category")
	c := r.obj("categories")
	id := int64(c["id"].(float64))
	m.newID(a, "category", id)
	a.categories[id] = &mCategory{id: id, name: c["category_name"].(string), created: c["created_at"].(string)}
}

var quantities = []string{"0", "1", "2.5", "10", "999999999.999", "999999999"}

// unitCosts and alertLevels are the unit_cost and minimum_qty_alert items
// get: values whose products with the quantities round (2.5 x 0.99), and
// the largest.
var (
	unitCosts   = []string{"0.99", "1.25", "0", "99999999.99"}
	alertLevels = []string{"0", "1", "2.5", "10", "999999999.999"}
)

func (m *model) addItem(t *rapid.T) {
	a := m.acct(t)
	catID, _, ok := pick(t, a.categories, "category")
	if !ok || rapid.IntRange(0, 5).Draw(t, "noCategory") == 0 {
		catID = a.lastID["category"] + 100
	}
	code := rapid.SampledFrom([]string{"", "RICE-1", "OIL-2", "rice-1", strings.Repeat("Z", 64)}).Draw(t, "code")
	qty := rapid.SampledFrom(quantities).Draw(t, "qty")
	price := rapid.SampledFrom([]string{"1.50", "99999999.99", "0"}).Draw(t, "price")
	name := rapid.SampledFrom([]string{"Rice", "Rice 5kg", "rice 5KG", "Palm Oil"}).Draw(t, "itemName")
	body := map[string]any{"item_name": name, "category_id": catID, "item_price": price, "quantity": qty}
	if code != "" {
		body["item_code"] = code
	}
	cost, minAlert := decimal.Zero, decimal.Zero
	if rapid.Bool().Draw(t, "withCost") {
		c := rapid.SampledFrom(unitCosts).Draw(t, "unitCost")
		body["unit_cost"], cost = c, decimal.RequireFromString(c)
	}
	if rapid.Bool().Draw(t, "withAlert") {
		q := rapid.SampledFrom(alertLevels).Draw(t, "minAlert")
		body["minimum_qty_alert"], minAlert = q, decimal.RequireFromString(q)
	}
	r := m.create(t, a, "/api/v1/inventory/items/add", body)
	if r.code == -1 {
		return
	}
	if _, ok := a.categories[catID]; !ok {
		m.expect(r, 400, "item in a missing category")
		return
	}
	if _, ok := a.items[code]; ok && code != "" {
		m.expect(r, 409, "taken item code")
		return
	}
	m.expect(r, 200, "add item")
	x := r.obj("items")
	id := int64(x["id"].(float64))
	m.newID(a, "item", id)
	got := x["item_code"].(string)
	if code != "" && got != code {
		m.t.Fatalf("item_code %q, want %q", got, code)
	}
	if x["quantity"] != money.MustQuantity(qty).String() {
		m.t.Fatalf("quantity %v, want %s", x["quantity"], qty)
	}
	m.stamped("new item's created_at", x["created_at"])
	it := &mItem{code: got, name: x["item_name"].(string), id: id, category: catID, qty: decimal.RequireFromString(qty), price: price,
		cost: cost, minAlert: minAlert, created: x["created_at"].(string)}
	if !it.qty.IsZero() {
		it.moves = []mMove{{kind: "initial", change: it.qty}}
	}
	a.items[got] = it
}

func (m *model) editItem(t *rapid.T) {
	a := m.acct(t)
	code, x, ok := pick(t, a.items, "item")
	if !ok {
		return
	}
	qty := rapid.SampledFrom(quantities).Draw(t, "qty")
	body := map[string]any{"quantity": qty}
	newPrice := rapid.Bool().Draw(t, "reprice")
	price := rapid.SampledFrom([]string{"7.25", "0.05", "0.01"}).Draw(t, "price") // 2.5 x 0.05 rounds
	if newPrice {
		body["item_price"] = price
	}
	cost, minAlert := x.cost, x.minAlert
	if rapid.IntRange(0, 3).Draw(t, "recost") == 0 {
		c := rapid.SampledFrom(unitCosts).Draw(t, "unitCost")
		body["unit_cost"], cost = c, decimal.RequireFromString(c)
	}
	if rapid.IntRange(0, 3).Draw(t, "realert") == 0 {
		q := rapid.SampledFrom(alertLevels).Draw(t, "minAlert")
		body["minimum_qty_alert"], minAlert = q, decimal.RequireFromString(q)
	}
	r := m.send("PUT", "/api/v1/inventory/items/"+code, a.key, body, nil)
	m.expect(r, 200, "edit item")
	got := r.obj("items")
	if got["quantity"] != money.MustQuantity(qty).String() {
		m.t.Fatalf("quantity %v, want %s", got["quantity"], qty)
	}
	a.setQuantity(x, decimal.RequireFromString(qty))
	x.cost, x.minAlert = cost, minAlert
	if newPrice && x.price != price {
		if want, _ := strconv.ParseFloat(x.price, 64); got["previous_price"] != want {
			m.t.Fatalf("previous_price %v, want %s", got["previous_price"], x.price)
		}
		x.price = price
	}
}

var invoiceTypes = []string{"main", "pos", "order"}

func (m *model) addSale(t *rapid.T) {
	a := m.acct(t)
	custID, _, ok := pick(t, a.customers, "customer")
	if !ok || rapid.IntRange(0, 6).Draw(t, "noCustomer") == 0 {
		custID = a.lastID["customer"] + 100
	}
	var lines []any
	var mlines []mLine
	sub, tax := money.Zero, money.Zero
	nLines := rapid.SampledFrom([]int{0, 1, 2, 3, 100}).Draw(t, "lines")
	for i := 0; i < nLines; i++ {
		price := money.MustAmount(rapid.SampledFrom([]string{"1.00", "2.50", "0.99"}).Draw(t, "unitPrice"))
		qty := money.MustQuantity(rapid.SampledFrom([]string{"1", "2", "0.5", "3"}).Draw(t, "lineQty"))
		l := map[string]any{"item_name": "Line", "unit_price": price, "quantity": qty, "tax": "0.10"}
		ml := mLine{qty: qty}
		if i < 3 && rapid.Bool().Draw(t, "stocked") {
			if code, _, ok := pick(t, a.items, "lineItem"); ok {
				l["item_code"] = code
				ml.itemCode = code
			}
		}
		mlines = append(mlines, ml)
		if nLines == 100 {
			l["description"] = strings.Repeat("€", 1000) // 3 KB a line: the record passes 300 KB
		}
		lines = append(lines, l)
		sub = sub.Add(money.LineTotal(price, qty))
		tax = tax.Add(money.MustAmount("0.10"))
	}
	total := sub.Add(tax)
	if nLines == 0 {
		sub = money.MustAmount(rapid.SampledFrom([]string{"25.00", "99999999.99"}).Draw(t, "subTotal"))
		total = sub
	}
	paid := rapid.SampledFrom([]money.Amount{money.Zero, total, money.MustAmount("0.01")}).Draw(t, "paid")
	if paid.Cmp(total) > 0 {
		paid = total
	}
	// Without lines the amounts are taken as sent; with lines they must add up.
	wrongTotal := nLines > 0 && rapid.IntRange(0, 9).Draw(t, "wrongTotal") == 0
	sentTotal := total
	if wrongTotal {
		sentTotal = total.Add(money.MustAmount("1.00"))
	}
	code := rapid.SampledFrom([]string{"", "111111", "222222", "999999"}).Draw(t, "invoiceCode")
	number := rapid.SampledFrom([]string{"", "100001", "INV-100002", "100003"}).Draw(t, "invoiceNumber")
	typ := rapid.SampledFrom(invoiceTypes).Draw(t, "invoiceType")
	due := rapid.SampledFrom(m.dueDates()).Draw(t, "due")
	payType := rapid.SampledFrom(payTypes).Draw(t, "payType")
	body := map[string]any{"customer_id": custID, "sub_total_amount": sub, "total_amount": sentTotal, "amount_paid": paid,
		"invoice_type": typ, "payment_type": payType, "due_date": due, "items": lines}
	if code != "" {
		body["invoice_code"] = code
	}
	if number != "" {
		body["invoice_number"] = number
	}
	r := m.create(t, a, "/api/v1/sales/add", body)
	if r.code == -1 {
		return
	}
	fullNumber := ""
	if number != "" {
		fullNumber, _ = business.NormalizeInvoiceNumber("INV", number)
	}
	// Predict the answer in the order the API decides it.
	take := lineStock(mlines).neg()
	short := !a.fits(take)
	switch {
	case wrongTotal:
		m.expect(r, 400, "wrong total")
		if !strings.Contains(r.field("total_amount"), "expected") {
			m.t.Fatalf("totals mismatch does not show the expected value: %s", r.raw)
		}
		return
	case a.customers[custID] == nil:
		m.expect(r, 400, "missing customer")
		return
	case code != "" && a.sales[code] != nil:
		m.expect(r, 409, "taken invoice code")
		return
	case fullNumber != "" && a.numbers[fullNumber]:
		m.expect(r, 409, "taken invoice number")
		return
	case short:
		m.expect(r, 400, "insufficient stock")
		return
	}
	m.expect(r, 200, "add sale")
	s := r.obj("sales")
	got := fmt.Sprint(s["invoice_code"])
	id := int64(s["id"].(float64))
	m.newID(a, "sale", id)
	if code != "" && got != code {
		m.t.Fatalf("invoice_code %s, want %s", got, code)
	}
	status := business.DeriveStatus(paid, total)
	if s["payment_status"] != status || s["amount_paid"] != paid.String() || s["total_amount"] != total.String() {
		m.t.Fatalf("sale %s: want status %s paid %s total %s", r.raw, status, paid, total)
	}
	pays := r.list("sales-payment")
	if (paid.IsZero() && len(pays) != 0) || (!paid.IsZero() && len(pays) != 1) {
		m.t.Fatalf("payments %v for amount_paid %s", pays, paid)
	}
	a.moveStock(take, mMove{kind: "sale", invoice: got})
	ms := &mSale{code: got, number: s["invoice_number"].(string), invoiceType: typ, status: status, dueDate: due,
		created: s["created_at"].(string), customer: custID, sub: sub, total: total, paid: paid, payments: len(pays), id: id,
		lines: mlines, sent: lines, payType: payType}
	if msg := checkSale(ms, r); msg != "" {
		m.t.Fatalf("add sale: %s: %s", msg, r.raw)
	}
	m.checkNewSale(a, ms, r)
	a.bookNewSale(ms, paid)
	a.sales[got] = ms
	a.numbers[s["invoice_number"].(string)] = true
}

// dueDates are the due dates of sales, which receivables age on dates
// around them: a leap day, either side of a new year, far back and ahead;
// and the dates whose age on the day the clock starts, and the next (past
// the midnight it starts near), is at an edge of a bucket: due the next
// day, that day, and 1, 30, 60, 90 and 91 days before it.
func (m *model) dueDates() []string {
	out := []string{"2024-02-29", "2025-12-31", "2026-01-01", "2026-01-31", "2026-12-31", "2027-06-30"}
	for _, d := range []int{1, 0, -1, -30, -60, -90, -91} {
		out = append(out, m.day.AddDate(0, 0, d).Format(business.DateFormat))
	}
	return out
}

// payTypes are the payment types sales are made and edited with: a
// payment's method, by which summaries add up what was collected.
var payTypes = []string{"Cash", "Mobile Money", "Bank Transfer / Deposit"}

// checkNewSale checks what a new sale's answer says of when it was made
// (the store's clock), of its first payment's method and of its
// payment_date (none is sent): the business's date of that payment.
func (m *model) checkNewSale(a *mAccount, s *mSale, r reply) {
	m.stamped("new sale's created_at", r.obj("sales")["created_at"])
	if len(r.list("sales-payment")) > 0 {
		s.payDate = a.localDate(m.clk.stamp())
	}
	m.checkPayDate(s, r)
	for _, p := range r.list("sales-payment") {
		p := p.(map[string]any)
		m.stamped("first payment's payment_at", p["payment_at"])
		if p["payment_method"] != s.payType {
			m.t.Fatalf("first payment's method %v, want the sale's payment_type %s: %s", p["payment_method"], s.payType, r.raw)
		}
	}
}

// checkPayDate checks a sale's answer's payment_date: the local date of
// its first payment in the zone in effect then, null before one.
func (m *model) checkPayDate(s *mSale, r reply) {
	var want any
	if s.payDate != "" {
		want = s.payDate
	}
	if got := r.obj("sales")["payment_date"]; got != want {
		m.t.Fatalf("sale %s: payment_date %v, want %v: %s", s.code, got, want, r.raw)
	}
}

func dec(q money.Quantity) decimal.Decimal { return decimal.RequireFromString(q.String()) }

func (m *model) editSale(t *rapid.T) {
	a := m.acct(t)
	code, s, ok := pick(t, a.sales, "sale")
	if !ok {
		return
	}
	body := map[string]any{"invoice_code": code, "invoice_number": s.number, "customer_id": s.customer,
		"sub_total_amount": s.sub, "total_amount": s.total, "amount_paid": s.paid}
	op := rapid.SampledFrom([]string{"pay", "note", "customer", "number", "decrease", "lines"}).Draw(t, "op")
	want := 200
	var newPaid money.Amount
	var newLines []mLine
	var sent []any
	var sub, total money.Amount
	payType := s.payType
	switch op {
	case "pay":
		newPaid = s.total
		if rapid.Bool().Draw(t, "partial") && s.total.Cmp(s.paid.Add(money.MustAmount("0.01"))) > 0 {
			newPaid = s.paid.Add(money.MustAmount("0.01"))
		}
		body["amount_paid"] = newPaid
		if rapid.Bool().Draw(t, "newPayType") { // the new payment's method
			payType = rapid.SampledFrom(payTypes).Draw(t, "payType")
			body["payment_type"] = payType
		}
	case "note":
		body["invoice_note"] = "Thank you"
	case "customer":
		id, _, ok := pick(t, a.customers, "newCustomer")
		if !ok || id == s.customer {
			return
		}
		body["customer_id"] = id
		if s.status == business.StatusPaid {
			want = 400
		}
	case "number":
		n := rapid.SampledFrom([]string{"100001", "100002", "700007"}).Draw(t, "newNumber")
		full, _ := business.NormalizeInvoiceNumber("INV", n)
		if full == s.number {
			return
		}
		body["invoice_number"] = n
		switch {
		case s.status == business.StatusPaid:
			want = 400
		case a.numbers[full]:
			want = 409
		}
	case "decrease":
		if s.paid.IsZero() {
			return
		}
		body["amount_paid"] = money.Zero
		want = 400
	case "lines":
		// One line changed (its quantity, or its inventory item), or all
		// sent again as they are: the stock moves by the difference.
		if len(s.sent) == 0 {
			return
		}
		sent = make([]any, len(s.sent))
		for i, l := range s.sent {
			sent[i] = maps.Clone(l.(map[string]any))
		}
		newLines = slices.Clone(s.lines)
		i := rapid.IntRange(0, len(sent)-1).Draw(t, "line")
		l := sent[i].(map[string]any)
		switch rapid.SampledFrom([]string{"quantity", "unstock", "stock", "same"}).Draw(t, "change") {
		case "quantity":
			q := money.MustQuantity(rapid.SampledFrom([]string{"1", "2", "0.5", "3", "7"}).Draw(t, "newQty"))
			l["quantity"], newLines[i].qty = q, q
		case "unstock":
			delete(l, "item_code")
			newLines[i].itemCode = ""
		case "stock":
			c, _, ok := pick(t, a.items, "newItem")
			if !ok {
				return
			}
			l["item_code"], newLines[i].itemCode = c, c
		}
		sub, total = money.Zero, money.Zero
		for _, x := range sent {
			l := x.(map[string]any)
			sub = sub.Add(money.LineTotal(l["unit_price"].(money.Amount), l["quantity"].(money.Quantity)))
			total = total.Add(money.MustAmount(l["tax"].(string)))
		}
		total = total.Add(sub)
		body["items"], body["sub_total_amount"], body["total_amount"] = sent, sub, total
		same := slices.EqualFunc(s.lines, newLines, func(x, y mLine) bool { return x.itemCode == y.itemCode && x.qty.Cmp(y.qty) == 0 })
		switch {
		case !same && s.hasReturns(), !same && s.status == business.StatusPaid, s.paid.Cmp(total) > 0:
			want = 400
		case !a.fits(lineStock(s.lines).sub(lineStock(newLines))):
			want = 400 // short of stock, or given back past the largest quantity
		}
	}
	if s.void {
		want = http.StatusConflict // a void sale never changes again
	}
	r := m.send("PUT", "/api/v1/sales/edit/"+code, a.key, body, nil)
	m.expect(r, want, "edit sale "+op)
	if want == http.StatusConflict && s.void && r.errText() != "Sale is void" {
		m.t.Fatalf("edit of a void sale: %s", r.raw)
	}
	if want != 200 {
		if want == 400 && !strings.Contains(r.errText(), "finalized") && op != "decrease" && op != "lines" {
			m.t.Fatalf("a paid sale's %s: %s", op, r.raw)
		}
		return
	}
	got := r.obj("sales")
	if op == "pay" && s.payDate == "" && newPaid.Cmp(s.paid) > 0 {
		s.payDate = a.localDate(m.clk.stamp())
	}
	m.checkPayDate(s, r)
	switch op {
	case "pay":
		s.payType = payType
		if newPaid.Cmp(s.paid) > 0 {
			s.payments++
			a.bookPayment(newPaid.Sub(s.paid), payType)
			pays := r.list("sales-payment")
			p, _ := pays[len(pays)-1].(map[string]any)
			m.stamped("new payment's payment_at", p["payment_at"])
			if p["payment_method"] != payType {
				m.t.Fatalf("new payment's method %v, want the sale's payment_type %s: %s", p["payment_method"], payType, r.raw)
			}
		}
		s.paid = newPaid
		s.status = business.DeriveStatus(s.paid, s.total)
	case "customer":
		s.customer = body["customer_id"].(int64)
	case "number":
		delete(a.numbers, s.number)
		s.number = got["invoice_number"].(string)
		a.numbers[s.number] = true
	case "lines":
		a.moveStock(lineStock(s.lines).sub(lineStock(newLines)), mMove{kind: "sale_edit", invoice: code})
		a.book(mFact{at: parseStamp(s.created), invoiced: cents(total) - cents(s.total)})
		s.lines, s.sent, s.sub, s.total = newLines, sent, sub, total
		s.status = business.DeriveStatus(s.paid, s.total)
	}
	if msg := checkSale(s, r); msg != "" {
		m.t.Fatalf("edit %s: %s: %s", op, msg, r.raw)
	}
}

func (m *model) addExpense(t *rapid.T) {
	a := m.acct(t)
	typ := rapid.SampledFrom([]string{"Rent", "rent", "Fuel", strings.Repeat("x", 100)}).Draw(t, "type")
	amount := rapid.SampledFrom([]string{"10.00", "99999999.99", "100000000.00", "1.005"}).Draw(t, "amount")
	body := map[string]any{"expense_type": typ, "expense_amount": amount, "payment_method": "Cash", "created_by": "Ama"}
	r := m.create(t, a, "/api/v1/expenses/add", body)
	if r.code == -1 {
		return
	}
	if _, err := money.ParseAmount(amount); err != nil {
		m.expect(r, 400, "bad expense amount")
		if r.field("expense_amount") == "" {
			m.t.Fatalf("400 does not name expense_amount: %s", r.raw)
		}
		return
	}
	m.expect(r, 200, "add expense")
	x := r.obj("expense")
	id := int64(x["id"].(float64))
	m.newID(a, "expense", id)
	m.stamped("new expense's created_at", x["created_at"])
	e := &mExpense{id: id, typ: typ, created: x["created_at"].(string), amount: amount}
	c := cents(money.MustAmount(amount))
	a.book(mFact{at: parseStamp(e.created), expenses: c, byType: map[string]int64{typ: c}})
	a.expenses[id] = e
}

// editExpense edits an expense's amount and type (or a missing expense's:
// 404): the books move by the difference on the day it was created.
func (m *model) editExpense(t *rapid.T) {
	a := m.acct(t)
	id, x, ok := pick(t, a.expenses, "expense")
	if !ok || rapid.IntRange(0, 9).Draw(t, "missing") == 0 {
		r := m.send("PUT", fmt.Sprintf("/api/v1/expenses/%d", a.lastID["expense"]+1000), a.key,
			map[string]any{"expense_type": "Rent", "expense_amount": "1.00", "payment_method": "Cash", "created_by": "Ama"}, nil)
		m.expect(r, 404, "edit of a missing expense")
		return
	}
	typ := x.typ
	if rapid.Bool().Draw(t, "retype") {
		typ = rapid.SampledFrom([]string{"Rent", "rent", "Fuel", "Wages"}).Draw(t, "type")
	}
	amount := rapid.SampledFrom([]string{"10.00", "0.01", "2500.50", "99999999.99", "1.005"}).Draw(t, "amount")
	r := m.send("PUT", fmt.Sprintf("/api/v1/expenses/%d", id), a.key,
		map[string]any{"expense_type": typ, "expense_amount": amount, "payment_method": "Cash", "created_by": "Ama"}, nil)
	if _, err := money.ParseAmount(amount); err != nil {
		m.expect(r, 400, "bad expense amount")
		if r.field("expense_amount") == "" {
			m.t.Fatalf("400 does not name expense_amount: %s", r.raw)
		}
		return
	}
	m.expect(r, 200, "edit expense")
	got := r.obj("expenses")
	if got["expense_type"] != typ || got["expense_amount"] != money.MustAmount(amount).String() || got["created_at"] != x.created {
		m.t.Fatalf("edit expense %d: %s", id, r.raw)
	}
	old, next := cents(money.MustAmount(x.amount)), cents(money.MustAmount(amount))
	f := mFact{at: parseStamp(x.created), expenses: next - old, byType: map[string]int64{}}
	f.byType[x.typ] -= old
	f.byType[typ] += next
	a.book(f)
	x.typ, x.amount = typ, amount
}

// replay sends a remembered create again: the same body gets the first
// answer, byte for byte, even after the record changed; another body 409.
func (m *model) replay(t *rapid.T) {
	a := m.acct(t)
	k, prev, ok := pick(t, a.idem, "idem")
	if !ok {
		return
	}
	_, key, _ := strings.Cut(k, " ")
	body := prev.body
	if rapid.IntRange(0, 3).Draw(t, "otherBody") == 0 {
		// Another valid body: one harmless field differs.
		fields := map[string]any{}
		_ = json.Unmarshal(body, &fields)
		fields[harmlessField(prev.path)] = "changed"
		body, _ = json.Marshal(fields)
	}
	r := m.send("POST", prev.path, a.key, body, map[string]string{"Idempotency-Key": key})
	m.checkReplay(prev, body, r)
}

// harmlessField is a field of path's body that any text may fill.
func harmlessField(path string) string {
	switch {
	case strings.HasSuffix(path, "/refunds"), strings.HasSuffix(path, "/void"):
		return "reason"
	case strings.HasSuffix(path, "/adjustments"):
		return "note"
	}
	return map[string]string{
		"/api/v1/sales/add": "issued_by", "/api/v1/customers/add": "address", "/api/v1/inventory/categories/add": "description",
		"/api/v1/inventory/items/add": "description", "/api/v1/expenses/add": "expense_description",
	}[path]
}

// concurrentReplay sends one create three times at once with one new key:
// every answer is the same, and one record is created.
func (m *model) concurrentReplay(t *rapid.T) {
	a := m.acct(t)
	key := fmt.Sprintf("race-%d", rapid.IntRange(0, 1<<30).Draw(t, "key"))
	if _, ok := a.idem["/api/v1/customers/add "+key]; ok {
		return
	}
	body, _ := json.Marshal(map[string]any{"name": "Racer"})
	var wg sync.WaitGroup
	replies := make([]reply, 3)
	for i := range replies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = m.send("POST", "/api/v1/customers/add", a.key, body, map[string]string{"Idempotency-Key": key})
		}()
	}
	wg.Wait()
	for _, r := range replies {
		m.expect(r, 200, "concurrent identical create")
		if !bytes.Equal(r.raw, replies[0].raw) {
			m.t.Fatalf("identical concurrent creates answered differently:\n%s\n%s", replies[0].raw, r.raw)
		}
	}
	c := replies[0].obj("customers")
	id := int64(c["id"].(float64))
	m.newID(a, "customer", id)
	a.customers[id] = &mCustomer{id: id, name: "Racer", created: c["created_at"].(string)}
	a.idem["/api/v1/customers/add "+key] = &mIdem{path: "/api/v1/customers/add", body: body, resp: replies[0].raw}
}

// listSpec is one list request: its path and filters, and the keys of the
// model's records that match, in the order the API must return them.
type listSpec struct {
	path, key string // key: the data key of the records
	idField   string
	filters   url.Values
	want      []string
}

func (m *model) drawList(t *rapid.T, a *mAccount) listSpec {
	type rec struct{ id, order string }
	sortDesc := func(rs []rec) []string {
		sort.Slice(rs, func(i, j int) bool { return rs[i].order > rs[j].order })
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.id
		}
		return out
	}
	createdBound := func(label string, times []string) string {
		if len(times) == 0 || !rapid.Bool().Draw(t, label) {
			return ""
		}
		return rapid.SampledFrom(times).Draw(t, label+"Value")
	}
	f := url.Values{}
	var rs []rec
	switch rapid.SampledFrom([]string{"sales", "customers", "items", "expenses", "categories"}).Draw(t, "list") {
	case "customers":
		var times []string
		for _, c := range a.customers {
			times = append(times, c.created)
		}
		slices.Sort(times)
		from := createdBound("created", times)
		for _, c := range a.customers {
			if from == "" || c.created >= from {
				rs = append(rs, rec{id: fmt.Sprint(c.id), order: c.created + pad12(c.id)})
			}
		}
		if from != "" {
			f.Set("created_at", from)
		}
		return listSpec{path: "/api/v1/customers", key: "customers", idField: "id", filters: f, want: sortDesc(rs)}
	case "categories":
		var times []string
		for _, c := range a.categories {
			times = append(times, c.created)
		}
		from := createdBound("created", times)
		name := ""
		if rapid.Bool().Draw(t, "byName") {
			name = rapid.SampledFrom([]string{"grains", "OILS", "Spices", "none"}).Draw(t, "name")
		}
		for _, c := range a.categories {
			if (from == "" || c.created >= from) && (name == "" || business.NameKey(name) == business.NameKey(c.name)) {
				rs = append(rs, rec{id: fmt.Sprint(c.id), order: c.created + pad12(c.id)})
			}
		}
		if from != "" {
			f.Set("created_at", from)
		}
		if name != "" {
			f.Set("category_name", name)
		}
		return listSpec{path: "/api/v1/inventory/categories", key: "categories", idField: "id", filters: f, want: sortDesc(rs)}
	case "items":
		var times []string
		for _, x := range a.items {
			times = append(times, x.created)
		}
		from := createdBound("created", times)
		cat := int64(0)
		if id, _, ok := pick(t, a.categories, "byCategory"); ok && rapid.Bool().Draw(t, "filterCategory") {
			cat = id
		}
		for _, x := range a.items {
			if (from == "" || x.created >= from) && (cat == 0 || x.category == cat) {
				rs = append(rs, rec{id: x.code, order: x.created + pad12(x.id)})
			}
		}
		if from != "" {
			f.Set("created_at", from)
		}
		if cat != 0 {
			f.Set("category_id", fmt.Sprint(cat))
		}
		return listSpec{path: "/api/v1/inventory/items", key: "items", idField: "item_code", filters: f, want: sortDesc(rs)}
	case "expenses":
		var times []string
		for _, x := range a.expenses {
			times = append(times, x.created)
		}
		from := createdBound("created", times)
		typ := ""
		if rapid.Bool().Draw(t, "byType") {
			typ = rapid.SampledFrom([]string{"RENT", "Fuel", "none"}).Draw(t, "type")
		}
		for _, x := range a.expenses {
			if (from == "" || x.created >= from) && (typ == "" || strings.EqualFold(typ, x.typ)) {
				rs = append(rs, rec{id: fmt.Sprint(x.id), order: x.created + pad12(x.id)})
			}
		}
		if from != "" {
			f.Set("created_at", from)
		}
		if typ != "" {
			f.Set("expense_type", typ)
		}
		return listSpec{path: "/api/v1/expenses", key: "expenses", idField: "id", filters: f, want: sortDesc(rs)}
	}
	// Sales, with any combination of filters.
	var times []string
	for _, s := range a.sales {
		times = append(times, s.created)
	}
	from := createdBound("created", times)
	cust, status, typ, due := int64(0), "", "", ""
	if id, _, ok := pick(t, a.customers, "byCustomer"); ok && rapid.Bool().Draw(t, "filterCustomer") {
		cust = id
	}
	if rapid.Bool().Draw(t, "filterStatus") {
		status = rapid.SampledFrom([]string{"draft", "partial", "paid", "void"}).Draw(t, "status")
	}
	if rapid.Bool().Draw(t, "filterType") {
		typ = rapid.SampledFrom([]string{"invoice", "pos", "storefront", "main", "order"}).Draw(t, "type")
	}
	if rapid.Bool().Draw(t, "filterDue") {
		due = rapid.SampledFrom([]string{"2026-01-31", "2026-12-30", "2027-06-30"}).Draw(t, "due")
	}
	// Served by a due-date key (ordered by due date): due_date without
	// created_at and customer, alone or with payment_status.
	byDue := due != "" && from == "" && cust == 0 && (status != "" || typ == "")
	for _, s := range a.sales {
		if (from == "" || s.created >= from) && (cust == 0 || s.customer == cust) && (status == "" || s.status == status) &&
			(typ == "" || business.InvoiceTypeFilter[typ] == s.invoiceType) && (due == "" || s.dueDate <= due) {
			order := s.created + pad12(s.id)
			if byDue {
				order = s.dueDate + pad12(s.id)
			}
			rs = append(rs, rec{id: s.code, order: order})
		}
	}
	for k, v := range map[string]string{"created_at": from, "payment_status": status, "invoice_type": typ, "due_date": due} {
		if v != "" {
			f.Set(k, v)
		}
	}
	if cust != 0 {
		f.Set("customer_id", fmt.Sprint(cust))
	}
	return listSpec{path: "/api/v1/sales", key: "sales", idField: "invoice_code", filters: f, want: sortDesc(rs)}
}

func pad12(id int64) string { return fmt.Sprintf("#%012d", id) }

// list pages through a random list with a random page size and checks that
// it returns each matching record exactly once, in order.
func (m *model) list(t *rapid.T) {
	a := m.acct(t)
	spec := m.drawList(t, a)
	limit := rapid.SampledFrom([]int{1, 2, 3, 50, 200}).Draw(t, "limit")
	got := m.pageAll(a, spec, limit)
	if !slices.Equal(got, spec.want) {
		m.t.Fatalf("%s?%s limit %d:\n got %v\nwant %v", spec.path, spec.filters.Encode(), limit, got, spec.want)
	}
}

func (m *model) pageAll(a *mAccount, spec listSpec, limit int) []string {
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		q := url.Values{}
		for k, v := range spec.filters {
			q[k] = v
		}
		q.Set("limit", strconv.Itoa(limit))
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		r := m.send("GET", spec.path+"?"+q.Encode(), a.key, nil, nil)
		m.expect(r, 200, "list "+spec.path)
		recs := r.list(spec.key)
		if len(recs) > limit {
			m.t.Fatalf("page of %d records with limit %d", len(recs), limit)
		}
		for _, x := range recs {
			got = append(got, fmt.Sprint(x.(map[string]any)[spec.idField]))
		}
		next, _ := r.data()["next_cursor"].(string)
		if next == "" {
			return got
		}
		if pages > 1000 {
			m.t.Fatalf("list does not end")
		}
		cursor = next
	}
}

// cursorElsewhere takes a cursor of one list and uses it with other filters
// or on another list: 400 naming the cursor.
func (m *model) cursorElsewhere(t *rapid.T) {
	a := m.acct(t)
	spec := m.drawList(t, a)
	r := m.send("GET", spec.path+"?limit=1&"+spec.filters.Encode(), a.key, nil, nil)
	m.expect(r, 200, "list")
	next, _ := r.data()["next_cursor"].(string)
	if next == "" {
		return
	}
	other := rapid.SampledFrom([]string{
		"/api/v1/sales?created_at=2000-01-01&cursor=",
		"/api/v1/sales?payment_status=paid&customer_id=1&cursor=",
		"/api/v1/customers?created_at=2000-01-01&cursor=",
		"/api/v1/expenses?cursor=",
		"/api/v1/inventory/items?category_id=1&cursor=",
	}).Draw(t, "elsewhere")
	op, oq, _ := strings.Cut(other, "?")
	ov, _ := url.ParseQuery(oq)
	ov.Del("cursor")
	if op == spec.path && ov.Encode() == spec.filters.Encode() {
		return // the same list with the same filters: a valid cursor
	}
	r = m.send("GET", other+url.QueryEscape(next), a.key, nil, nil)
	m.expect(r, 400, "cursor used elsewhere")
	if r.field("cursor") == "" {
		m.t.Fatalf("400 does not name the cursor: %s", r.raw)
	}
	// Another account's key with this account's cursor: another business's,
	// or a key of the other mode of the same business.
	b := m.otherBook(t, a)
	m.useKey(t, b)
	r = m.send("GET", spec.path+"?limit=1&cursor="+url.QueryEscape(next)+"&"+spec.filters.Encode(), b.key, nil, nil)
	m.expect(r, 400, "another account's cursor")
}

// otherAccountsKey reads and edits one book's records with another's key
// (another business's, or the other mode's of the same business): 404,
// exactly as for a record that does not exist.
func (m *model) otherAccountsKey(t *rapid.T) {
	a := m.accts[rapid.IntRange(0, len(m.accts)-1).Draw(t, "owner")]
	b := m.otherBook(t, a)
	m.useKey(t, b)
	if code, _, ok := pick(t, a.sales, "sale"); ok && b.sales[code] == nil {
		m.expect(m.send("GET", "/api/v1/sales/"+code, b.key, nil, nil), 404, "another account's sale")
	}
	if code, _, ok := pick(t, a.items, "item"); ok && b.items[code] == nil {
		m.expect(m.send("PUT", "/api/v1/inventory/items/"+code, b.key, map[string]any{"item_price": 1}, nil), 404, "another account's item")
		m.expect(m.send("GET", "/api/v1/inventory/items/"+code+"/movements", b.key, nil, nil), 404, "another account's ledger")
		m.expect(m.send("POST", "/api/v1/inventory/items/"+code+"/adjustments", b.key, map[string]any{"quantity": "1", "reason": "count"}, nil),
			404, "another account's adjustment")
	}
	if code, _, ok := pick(t, a.sales, "saleToCorrect"); ok && b.sales[code] == nil {
		m.expect(m.send("POST", "/api/v1/sales/"+code+"/refunds", b.key, map[string]any{"amount": "0.01"}, nil), 404, "another account's refund")
		m.expect(m.send("POST", "/api/v1/sales/"+code+"/void", b.key, nil, nil), 404, "another account's void")
	}
	if id, _, ok := pick(t, a.expenses, "expense"); ok && b.expenses[id] == nil {
		m.expect(m.send("GET", fmt.Sprintf("/api/v1/expenses/%d", id), b.key, nil, nil), 404, "another account's expense")
	}
}

// badQuery sends query strings that do not parse, repeated and empty
// parameters: always 400 naming the parameter, never a silently dropped
// filter.
func (m *model) badQuery(t *rapid.T) {
	a := m.acct(t)
	q := rapid.SampledFrom([]struct{ query, param string }{
		{"customer_id=1;payment_status=paid", "customer_id"},
		{"payment_status=paid&customer_id=%zz", "customer_id"},
		{"payment_status=pa%id", "payment_status"},
		{"payment_status=paid&payment_status=draft", "payment_status"},
		{"customer_id=", "customer_id"},
		{"limit=0", "limit"},
		{"limit=99999999999999999999", "limit"},
		{"customer_id=9007199254740992", "customer_id"},
		{"due_date=2026-02-30", "due_date"},
		{"created_at=2026-01-01T25:00:00", "created_at"},
		{"colour=red", "colour"},
	}).Draw(t, "query")
	r := m.send("GET", "/api/v1/sales?"+q.query, a.key, nil, nil)
	m.expect(r, 400, q.query)
	if r.field(q.param) == "" {
		m.t.Fatalf("%s: 400 does not name %s: %s", q.query, q.param, r.raw)
	}
}

// longPathAndFilters sends values beyond DynamoDB's key sizes in paths and
// filters: 404 or 400, never a 500.
func (m *model) longPathAndFilters(t *rapid.T) {
	a := m.acct(t)
	long := strings.Repeat(rapid.SampledFrom([]string{"a", "é", "%F0%9D%84%9E"}).Draw(t, "char"), rapid.SampledFrom([]int{65, 700, 3000}).Draw(t, "n"))
	for _, p := range []string{"/api/v1/inventory/items/" + long, "/api/v1/sales/" + long, "/api/v1/inventory/items/" + long + "/movements"} {
		m.expect(m.send("GET", p, a.key, nil, nil), 404, "long path")
	}
	for _, p := range []string{"/api/v1/expenses?expense_type=" + long, "/api/v1/inventory/categories?category_name=" + long} {
		r := m.send("GET", p, a.key, nil, nil)
		if r.code != 400 && r.code != 200 {
			m.t.Fatalf("long filter: %d %s", r.code, r.raw)
		}
	}
}

// audit reads every record back and checks it against the model and the
// invariants: payments sum to amount_paid; refunds sum to amount_refunded,
// at most amount_paid; a line's returns (as its refunds list them) are its
// quantity_returned, at most its quantity; a void sale reads as its void
// answered; stock is what the model says, never negative, and the sum of
// the item's ledger.
func (m *model) audit(t *rapid.T) {
	page := rapid.SampledFrom([]int{2, 200}).Draw(t, "ledgerPage")
	for _, a := range m.accts {
		a.key = a.full.secret
		for code, s := range a.sales {
			r := m.send("GET", "/api/v1/sales/"+code, a.key, nil, nil)
			m.expect(r, 200, "get sale "+code)
			got := r.obj("sales")
			sum := money.Zero
			for _, p := range r.list("sales-payment") {
				sum = sum.Add(money.MustAmount(p.(map[string]any)["amount_paid"].(string)))
			}
			if sum.String() != got["amount_paid"] || got["amount_paid"] != s.paid.String() || len(r.list("sales-payment")) != s.payments {
				m.t.Fatalf("sale %s: payments sum %s, amount_paid %v, model %s with %d payments: %s", code, sum, got["amount_paid"], s.paid, s.payments, r.raw)
			}
			if got["payment_status"] != s.status || got["invoice_number"] != s.number || got["customer_id"] != fmt.Sprint(s.customer) {
				m.t.Fatalf("sale %s: %s, model %+v", code, r.raw, s)
			}
			refunded, returned := money.Zero, map[int]decimal.Decimal{}
			for _, x := range r.list("sales-refund") {
				f := x.(map[string]any)
				refunded = refunded.Add(money.MustAmount(f["amount"].(string)))
				for _, l := range f["lines"].([]any) {
					l := l.(map[string]any)
					id := int(l["sales_item_id"].(float64))
					returned[id] = returned[id].Add(decimal.RequireFromString(l["quantity"].(string)))
				}
			}
			if refunded.String() != got["amount_refunded"] || refunded.Cmp(sum) > 0 {
				m.t.Fatalf("sale %s: refunds sum %s, amount_refunded %v, amount_paid %s: %s", code, refunded, got["amount_refunded"], sum, r.raw)
			}
			for i, x := range r.list("sales-item") {
				l := x.(map[string]any)
				if !decEq(l["quantity_returned"], returned[i+1]) || returned[i+1].GreaterThan(decimal.RequireFromString(l["quantity"].(string))) {
					m.t.Fatalf("sale %s line %d: refunds return %s: %s", code, i+1, returned[i+1], r.raw)
				}
			}
			if msg := checkSale(s, r); msg != "" {
				m.t.Fatalf("sale %s: %s: %s", code, msg, r.raw)
			}
			if s.void && canonical(r.data()) != s.voidData {
				m.t.Fatalf("void sale %s changed:\n%s\nvoid answered\n%s", code, canonical(r.data()), s.voidData)
			}
		}
		for code, x := range a.items {
			r := m.send("GET", "/api/v1/inventory/items/"+code, a.key, nil, nil)
			m.expect(r, 200, "get item "+code)
			q, _ := r.obj("items")["quantity"].(string)
			if got := decimal.RequireFromString(q); !got.Equal(x.qty) || got.IsNegative() {
				m.t.Fatalf("item %s: stock %v, model %s", code, q, x.qty)
			}
			if msg := ledgerDiff(x, m.ledger(a, code, page)); msg != "" {
				m.t.Fatalf("item %s: %s", code, msg)
			}
		}
		for id, c := range a.customers {
			r := m.send("GET", fmt.Sprintf("/api/v1/customers/%d", id), a.key, nil, nil)
			m.expect(r, 200, "get customer")
			if got := r.obj("customers"); got["name"] != c.name || got["phone"] != c.phone || got["email"] != c.email {
				m.t.Fatalf("customer %d: %s, model %+v", id, r.raw, c)
			}
		}
		for id, x := range a.expenses {
			r := m.send("GET", fmt.Sprintf("/api/v1/expenses/%d", id), a.key, nil, nil)
			m.expect(r, 200, "get expense")
			if got := r.obj("expense"); got["expense_type"] != x.typ || got["expense_amount"] != money.MustAmount(x.amount).String() {
				m.t.Fatalf("expense %d: %s, model %+v", id, r.raw, x)
			}
		}
		// The books: every day with a fact, settings, receivables today and
		// the inventory.
		first, last := a.localDate(m.clk.now()), a.localDate(m.clk.now())
		for _, f := range a.facts {
			d := a.localDate(f.at)
			first, last = min(first, d), max(last, d)
		}
		m.checkSummary(a, first, last, "day")
		m.checkSettings(a, m.send("GET", "/api/v1/user/settings", a.key, nil, nil), "Settings found")
		m.checkHook(a, m.send("GET", "/api/v1/user/webhook", a.key, nil, nil), "Webhook settings found")
		m.checkReceivables(a, "")
		m.checkInventory(a)
	}
}

// Corrections: refunds, voids, stock adjustments, and the ledger that
// explains every quantity. Each request's answer is predicted by the
// functions below, which the serial operations and the concurrent ones
// (applied in some serial order) share.

// maxQty is the most stock an item may hold.
var maxQty = decimal.RequireFromString("999999999.999")

// stock is a change of stock per item code: positive adds to it.
type stock map[string]decimal.Decimal

// lineStock is the stock lines hold: their quantities per item code.
func lineStock(lines []mLine) stock {
	s := stock{}
	for _, l := range lines {
		if l.itemCode != "" {
			s[l.itemCode] = s[l.itemCode].Add(dec(l.qty))
		}
	}
	return s
}

// sub returns s-o.
func (s stock) sub(o stock) stock {
	out := stock{}
	for c, q := range s {
		out[c] = out[c].Add(q)
	}
	for c, q := range o {
		out[c] = out[c].Sub(q)
	}
	return out
}

func (s stock) neg() stock { return stock{}.sub(s) }

// fits reports whether every item stays between 0 and maxQty after d.
func (a *mAccount) fits(d stock) bool {
	for c, q := range d {
		if n := a.items[c].qty.Add(q); !q.IsZero() && (n.IsNegative() || n.GreaterThan(maxQty)) {
			return false
		}
	}
	return true
}

// moveStock moves stock by d, each item's change with its movement mv.
func (a *mAccount) moveStock(d stock, mv mMove) {
	for c, q := range d {
		if q.IsZero() {
			continue
		}
		x := a.items[c]
		x.qty = x.qty.Add(q)
		mv.change = q
		x.moves = append(x.moves, mv)
	}
}

// setQuantity is an item edit's new quantity: an adjustment (reason count)
// of the difference.
func (a *mAccount) setQuantity(x *mItem, q decimal.Decimal) {
	if !q.Equal(x.qty) {
		x.moves = append(x.moves, mMove{kind: "adjustment", reason: "count", change: q.Sub(x.qty)})
		x.qty = q
	}
}

func (s *mSale) held() money.Amount { return s.paid.Sub(s.refunded) }

func (s *mSale) hasReturns() bool {
	return slices.ContainsFunc(s.lines, func(l mLine) bool { return !l.returned.IsZero() })
}

// clone copies what corrections change: sales, items, invoice numbers, ids.
func (a *mAccount) clone() *mAccount {
	c := *a
	c.sales = make(map[string]*mSale, len(a.sales))
	for k, s := range a.sales {
		x := *s
		x.lines = slices.Clone(s.lines)
		c.sales[k] = &x
	}
	c.items = make(map[string]*mItem, len(a.items))
	for k, it := range a.items {
		x := *it
		x.moves = slices.Clone(it.moves)
		c.items[k] = &x
	}
	c.numbers, c.lastID = maps.Clone(a.numbers), maps.Clone(a.lastID)
	// Clipped, so that what one clone books never shows in another's.
	c.facts, c.tz = slices.Clip(a.facts), slices.Clip(a.tz)
	return &c
}

func decEq(v any, d decimal.Decimal) bool {
	s, _ := v.(string)
	got, err := decimal.NewFromString(s)
	return err == nil && got.Equal(d)
}

func strOrEmpty(v any) string { s, _ := v.(string); return s }

// checkSale compares a single-sale answer with the model's sale: "" when
// they agree, else what differs.
func checkSale(s *mSale, r reply) string {
	got := r.obj("sales")
	switch {
	case got == nil:
		return "no sale in the answer"
	case fmt.Sprint(got["invoice_code"]) != s.code:
		return fmt.Sprintf("the answer is sale %v's, not %s's", got["invoice_code"], s.code)
	case got["amount_paid"] != s.paid.String() || got["amount_refunded"] != s.refunded.String() ||
		got["total_amount"] != s.total.String() || got["payment_status"] != s.status:
		return fmt.Sprintf("model: paid %s, refunded %s, total %s, status %s", s.paid, s.refunded, s.total, s.status)
	case len(r.list("sales-payment")) != s.payments || len(r.list("sales-refund")) != s.refunds:
		return fmt.Sprintf("model: %d payments, %d refunds", s.payments, s.refunds)
	case len(r.list("sales-item")) != len(s.lines):
		return fmt.Sprintf("model: %d lines", len(s.lines))
	case s.void != (got["voided_at"] != nil):
		return fmt.Sprintf("model: void %v", s.void)
	}
	for i, x := range r.list("sales-item") {
		l, ml := x.(map[string]any), s.lines[i]
		if strOrEmpty(l["item_code"]) != ml.itemCode || l["quantity"] != ml.qty.String() || !decEq(l["quantity_returned"], ml.returned) {
			return fmt.Sprintf("line %d: model: item %q, quantity %s, returned %s", i+1, ml.itemCode, ml.qty, ml.returned)
		}
	}
	return ""
}

// canonical is v as JSON with sorted keys: equal values, equal text.
func canonical(v any) string { b, _ := json.Marshal(v); return string(b) }

// refundReq is a refund as the model sent it.
type refundReq struct {
	amount         money.Amount
	lines          []refundLineReq
	method, reason string
	bad            bool // refused for its form, whatever the sale
}

type refundLineReq struct {
	id  int
	qty decimal.Decimal
}

// drawRefund draws a refund of s (nil for a sale that does not exist):
// amounts around what it holds, lines within and beyond what it sold, and
// now and then a field of bad form.
func drawRefund(t *rapid.T, s *mSale) (map[string]any, refundReq) {
	held, nLines := money.Zero, 0
	if s != nil {
		held, nLines = s.held(), len(s.lines)
	}
	spoil := ""
	if rapid.IntRange(0, 4).Draw(t, "badForm") == 0 {
		spoil = rapid.SampledFrom([]string{"amount", "line", "method", "reason"}).Draw(t, "spoil")
	}
	var req refundReq
	amount := rapid.SampledFrom([]string{"held", "half", "cent", "held", "half", "over"}).Draw(t, "amount")
	if spoil == "amount" {
		amount = "zero"
	}
	switch amount {
	case "held":
		req.amount = held
	case "half":
		req.amount = money.MustAmount(decimal.RequireFromString(held.String()).Div(decimal.NewFromInt(2)).StringFixed(2))
	case "cent":
		req.amount = money.MustAmount("0.01")
	case "over":
		req.amount = held.Add(money.MustAmount("0.01"))
	case "zero":
		req.amount = money.Zero
	}
	req.bad = req.amount.IsZero()
	body := map[string]any{"amount": req.amount}
	lines := []any{}
	n := rapid.IntRange(0, 2).Draw(t, "refundLines")
	if spoil == "line" {
		n = max(n, 1)
	}
	for i := 0; i < n; i++ {
		id := rapid.IntRange(1, max(1, nLines)).Draw(t, "salesItemID")
		var stocked []int // lines of inventory items: their returns restock
		for j := 0; s != nil && j < nLines; j++ {
			if s.lines[j].itemCode != "" {
				stocked = append(stocked, j+1)
			}
		}
		if len(stocked) > 0 && rapid.Bool().Draw(t, "stockedLine") {
			id = rapid.SampledFrom(stocked).Draw(t, "stockedID")
		}
		if rapid.IntRange(0, 7).Draw(t, "noSuchLine") == 0 {
			id = nLines + 1
		}
		if spoil == "line" && i == 0 {
			id = rapid.SampledFrom([]int{0, business.MaxSaleLines + 1, id}).Draw(t, "badID")
		}
		left := decimal.NewFromInt(1)
		if id >= 1 && id <= nLines {
			left = dec(s.lines[id-1].qty).Sub(s.lines[id-1].returned)
		}
		q := map[string]decimal.Decimal{"left": left, "one": decimal.NewFromInt(1), "half": decimal.RequireFromString("0.5"),
			"over": left.Add(decimal.NewFromInt(1))}[rapid.SampledFrom([]string{"left", "one", "half", "left", "over"}).Draw(t, "returnQty")]
		if spoil == "line" && i == 0 && id >= 1 && id <= business.MaxSaleLines {
			q = decimal.Zero
		}
		req.bad = req.bad || q.IsZero() || id < 1 || id > business.MaxSaleLines
		req.lines = append(req.lines, refundLineReq{id: id, qty: q})
		lines = append(lines, map[string]any{"sales_item_id": id, "quantity": q.String()})
	}
	if len(lines) > 0 || rapid.Bool().Draw(t, "emptyLines") {
		body["lines"] = lines
	}
	if req.method = rapid.SampledFrom([]string{"", "Mobile Money", "Card Payment"}).Draw(t, "refundMethod"); spoil == "method" {
		req.method = "Bitcoin"
	}
	if req.method != "" {
		body["refund_method"] = req.method
		req.bad = req.bad || req.method == "Bitcoin"
	}
	if req.reason = rapid.SampledFrom([]string{"", "Damaged", strings.Repeat("é", 500)}).Draw(t, "reason"); spoil == "reason" {
		req.reason = strings.Repeat("𝄞", 501)
	}
	if req.reason != "" {
		body["reason"] = req.reason
		req.bad = req.bad || strings.Count(req.reason, "𝄞") > 500
	}
	return body, req
}

// predictRefund is the status a refund of the sale code answers, and what
// it changes when it answers 200.
func (a *mAccount) predictRefund(code string, req refundReq) (int, func()) {
	s := a.sales[code]
	switch {
	case req.bad:
		return 400, nil
	case s == nil:
		return 404, nil
	case s.void:
		return http.StatusConflict, nil
	case s.paid.IsZero():
		return 400, nil
	}
	bad := req.amount.Cmp(s.held()) > 0
	returned := make([]decimal.Decimal, len(s.lines))
	for i, l := range s.lines {
		returned[i] = l.returned
	}
	give := stock{}
	for _, l := range req.lines {
		if l.id > len(s.lines) {
			bad = true
			continue
		}
		line := s.lines[l.id-1]
		if l.qty.GreaterThan(dec(line.qty).Sub(returned[l.id-1])) {
			bad = true
			continue
		}
		returned[l.id-1] = returned[l.id-1].Add(l.qty)
		if line.itemCode != "" {
			give[line.itemCode] = give[line.itemCode].Add(l.qty)
		}
	}
	if bad || !a.fits(give) {
		return 400, nil
	}
	return 200, func() {
		a.book(mFact{at: a.clk.stamp(), refunded: cents(req.amount)})
		s.refunded = s.refunded.Add(req.amount)
		s.refunds++
		for i := range s.lines {
			s.lines[i].returned = returned[i]
		}
		a.moveStock(give, mMove{kind: "return", invoice: code, reason: req.reason})
	}
}

// checkRefundAnswer compares a refund's 200 answer with the model's sale
// after it (and its time with the clock's).
func checkRefundAnswer(s *mSale, req refundReq, r reply, clk *fakeClock) string {
	if msg := checkSale(s, r); msg != "" {
		return msg
	}
	refunds := r.list("sales-refund")
	last, _ := refunds[len(refunds)-1].(map[string]any)
	if want := clk.stampText(); last["refunded_at"] != want {
		return fmt.Sprintf("the new refund's refunded_at is %v, the store's clock %s", last["refunded_at"], want)
	}
	method := req.method
	if method == "" {
		method = s.payType // the sale's payment_type
	}
	lines, _ := last["lines"].([]any)
	if last["amount"] != req.amount.String() || last["refund_method"] != method || strOrEmpty(last["reason"]) != req.reason ||
		len(lines) != len(req.lines) || !strings.HasPrefix(strOrEmpty(last["refund_id"]), "ref_") {
		return fmt.Sprintf("the new refund is not the one asked for (%+v)", req)
	}
	for i, x := range lines {
		l, _ := x.(map[string]any)
		want := req.lines[i]
		if l["sales_item_id"] != float64(want.id) || !decEq(l["quantity"], want.qty) || strOrEmpty(l["item_code"]) != s.lines[want.id-1].itemCode {
			return fmt.Sprintf("refund line %d: %v, asked for %+v", i, l, want)
		}
	}
	return ""
}

// checkRefund checks a refund's answer against the model's prediction and
// applies it.
func (m *model) checkRefund(a *mAccount, code string, req refundReq, r reply) {
	want, commit := a.predictRefund(code, req)
	m.expect(r, want, fmt.Sprintf("refund %+v of sale %s", req, code))
	switch {
	case want == http.StatusConflict && r.errText() != "Sale is void":
		m.t.Fatalf("refund of a void sale: %s", r.raw)
	case want == 400 && r.body["fields"] == nil:
		m.t.Fatalf("refused refund names no field: %s", r.raw)
	case want != 200:
		return
	}
	commit()
	if msg := checkRefundAnswer(a.sales[code], req, r, a.clk); msg != "" {
		m.t.Fatalf("refund of sale %s: %s: %s", code, msg, r.raw)
	}
}

// pickSale picks a sale, three times in four one that ok accepts when
// there is one.
func pickSale(t *rapid.T, a *mAccount, ok func(*mSale) bool) (string, *mSale, bool) {
	some := map[string]*mSale{}
	for c, s := range a.sales {
		if ok(s) {
			some[c] = s
		}
	}
	if len(some) > 0 && rapid.IntRange(0, 3).Draw(t, "eligible") > 0 {
		return pick(t, some, "sale")
	}
	return pick(t, a.sales, "sale")
}

func refundable(s *mSale) bool { return !s.void && !s.held().IsZero() }

// missingSale is an invoice code no sale of the model has, unless one drew it.
const missingSale = "888888"

// refund refunds a sale (or one that does not exist), with or without
// lines, with an Idempotency-Key when drawn.
func (m *model) refund(t *rapid.T) {
	a := m.acct(t)
	code, s, ok := pickSale(t, a, refundable)
	if !ok || rapid.IntRange(0, 9).Draw(t, "missingSale") == 0 {
		code, s = missingSale, a.sales[missingSale]
	}
	body, req := drawRefund(t, s)
	path := "/api/v1/sales/" + code + "/refunds"
	r, key := m.createKeyed(t, a, path, body)
	if r.code == -1 {
		return
	}
	m.checkRefund(a, code, req, r)
	m.keepRedo(a, path, key, func(code string, r reply) { m.checkRefund(a, code, req, r) })
}

// keepRedo remembers, with the first answer of key on path, how to check
// the same request sent to another record (see keyElsewhere).
func (m *model) keepRedo(a *mAccount, path, key string, redo func(target string, r reply)) {
	if prev := a.idem[path+" "+key]; key != "" && prev != nil && prev.redo == nil {
		prev.redo = redo
	}
}

// predictVoid is the status a void of the sale code answers, and what it
// changes when it answers 200 (given the answer, which the sale keeps).
func (a *mAccount) predictVoid(code, reason string, bad bool) (int, func(reply)) {
	s := a.sales[code]
	switch {
	case bad:
		return 400, nil
	case s == nil:
		return 404, nil
	case s.void, !s.held().IsZero():
		return http.StatusConflict, nil
	}
	give := stock{}
	for _, l := range s.lines {
		if left := dec(l.qty).Sub(l.returned); l.itemCode != "" && !left.IsZero() {
			give[l.itemCode] = give[l.itemCode].Add(left)
		}
	}
	if !a.fits(give) {
		return 400, nil
	}
	return 200, func(r reply) {
		a.book(mFact{at: parseStamp(s.created), count: -1, invoiced: -cents(s.total)})
		s.void, s.status, s.voidData = true, business.StatusVoid, canonical(r.data())
		a.moveStock(give, mMove{kind: "void", invoice: code, reason: reason})
	}
}

func checkVoidAnswer(s *mSale, reason string, r reply) string {
	if msg := checkSale(s, r); msg != "" {
		return msg
	}
	if strOrEmpty(r.obj("sales")["void_reason"]) != reason {
		return "void_reason is not the reason sent"
	}
	return ""
}

func (m *model) checkVoid(a *mAccount, code, reason string, bad bool, r reply) {
	want, commit := a.predictVoid(code, reason, bad)
	m.expect(r, want, "void of sale "+code)
	if want != 200 {
		if s := a.sales[code]; want == http.StatusConflict && s.void != (r.errText() == "Sale is void") {
			m.t.Fatalf("void of a sale (void %v): %s", s.void, r.raw)
		}
		return
	}
	commit(r)
	if msg := checkVoidAnswer(a.sales[code], reason, r); msg != "" {
		m.t.Fatalf("void of sale %s: %s: %s", code, msg, r.raw)
	}
}

// void voids a sale (or one that does not exist), with no body, an empty
// one, a reason or one too long.
func (m *model) void(t *rapid.T) {
	a := m.acct(t)
	code, _, ok := pickSale(t, a, func(s *mSale) bool { return !s.void && s.held().IsZero() })
	if !ok || rapid.IntRange(0, 9).Draw(t, "missingSale") == 0 {
		code = missingSale
	}
	var body any = []byte(nil)
	reason, bad := "", false
	switch rapid.IntRange(0, 3).Draw(t, "voidBody") {
	case 1:
		body = map[string]any{}
	case 2:
		reason = "Wrong customer"
		body = map[string]any{"reason": reason}
	case 3:
		body, bad = map[string]any{"reason": strings.Repeat("𝄞", 501)}, true
	}
	path := "/api/v1/sales/" + code + "/void"
	r, key := m.createKeyed(t, a, path, body)
	if r.code == -1 {
		return
	}
	m.checkVoid(a, code, reason, bad, r)
	m.keepRedo(a, path, key, func(code string, r reply) { m.checkVoid(a, code, reason, bad, r) })
}

// adjustReq is a stock adjustment as the model sent it.
type adjustReq struct {
	change       decimal.Decimal
	reason, note string
	bad          bool
}

// predictAdjust is the status an adjustment of the item code answers, and
// what it changes when it answers 200.
func (a *mAccount) predictAdjust(code string, req adjustReq) (int, func()) {
	switch {
	case req.bad:
		return 400, nil
	case a.items[code] == nil:
		return 404, nil
	case !a.fits(stock{code: req.change}):
		return 400, nil
	}
	return 200, func() {
		a.moveStock(stock{code: req.change}, mMove{kind: "adjustment", reason: req.reason, note: req.note})
	}
}

func checkAdjustAnswer(x *mItem, req adjustReq, r reply) string {
	mv, _ := r.data()["movement"].(map[string]any)
	switch {
	case !decEq(r.obj("items")["quantity"], x.qty):
		return fmt.Sprintf("model: stock %s", x.qty)
	case mv["kind"] != "adjustment" || !decEq(mv["quantity"], req.change) || !decEq(mv["quantity_after"], x.qty) ||
		strOrEmpty(mv["reason"]) != req.reason || strOrEmpty(mv["note"]) != req.note || mv["invoice_code"] != nil:
		return fmt.Sprintf("movement is not the adjustment asked for (%+v)", req)
	}
	return ""
}

func (m *model) checkAdjust(a *mAccount, code string, req adjustReq, r reply) {
	want, commit := a.predictAdjust(code, req)
	m.expect(r, want, fmt.Sprintf("adjustment %+v of item %s", req, code))
	if want == 400 && r.body["fields"] == nil {
		m.t.Fatalf("refused adjustment names no field: %s", r.raw)
	}
	if want != 200 {
		return
	}
	commit()
	if msg := checkAdjustAnswer(a.items[code], req, r); msg != "" {
		m.t.Fatalf("adjustment of item %s: %s: %s", code, msg, r.raw)
	}
}

// missingItem is an item code (of valid form) no item of the model has.
const missingItem = "NO-SUCH-ITEM"

// adjust adjusts an item's stock (or one that does not exist) by signed
// quantities around zero and the largest quantity, with reasons and notes
// valid and not.
func (m *model) adjust(t *rapid.T) {
	a := m.acct(t)
	code, _, ok := pick(t, a.items, "item")
	if !ok || rapid.IntRange(0, 9).Draw(t, "missingItem") == 0 {
		code = missingItem
	}
	spoil := ""
	if rapid.IntRange(0, 4).Draw(t, "badForm") == 0 {
		spoil = rapid.SampledFrom([]string{"quantity", "reason", "note"}).Draw(t, "spoil")
	}
	q := rapid.SampledFrom([]string{"10", "-2", "+1.5", "-0.001", "3", "999999999.999", "-999999999.999"}).Draw(t, "change")
	if spoil == "quantity" {
		q = rapid.SampledFrom([]string{"0", "-0", "1.0001", "ten", "1000000000"}).Draw(t, "badChange")
	}
	var req adjustReq
	d, err := money.ParseDelta(q)
	if req.bad = err != nil || d.IsZero(); !req.bad {
		req.change = decimal.RequireFromString(d.String())
	}
	body := map[string]any{"quantity": q}
	if req.reason = rapid.SampledFrom(business.AdjustmentReasons).Draw(t, "adjustReason"); spoil == "reason" {
		req.reason = rapid.SampledFrom([]string{"stolen", ""}).Draw(t, "badReason")
	}
	if req.reason != "" {
		body["reason"] = req.reason
	}
	req.bad = req.bad || !business.ValidAdjustmentReason(req.reason)
	if req.note = rapid.SampledFrom([]string{"", "Shelf 3", strings.Repeat("é", 1000)}).Draw(t, "note"); spoil == "note" {
		req.note = strings.Repeat("é", 1001)
	}
	if req.note != "" {
		body["note"] = req.note
		req.bad = req.bad || len([]rune(req.note)) > 1000
	}
	path := "/api/v1/inventory/items/" + code + "/adjustments"
	r, key := m.createKeyed(t, a, path, body)
	if r.code == -1 {
		return
	}
	m.checkAdjust(a, code, req, r)
	m.keepRedo(a, path, key, func(code string, r reply) { m.checkAdjust(a, code, req, r) })
}

// keyElsewhere sends a correction's Idempotency-Key again, with the same
// body, for another sale or item of the same route. The key was given for
// another request: the answer is 409, or the request's own answer, never
// the first request's.
func (m *model) keyElsewhere(t *rapid.T) {
	a := m.acct(t)
	var ks []string
	for k, prev := range a.idem {
		if prev.redo != nil {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		return
	}
	sort.Strings(ks)
	k := rapid.SampledFrom(ks).Draw(t, "idem")
	prev := a.idem[k]
	_, key, _ := strings.Cut(k, " ")
	seg := strings.Split(prev.path, "/")
	var target string
	if seg[3] == "sales" {
		target, _, _ = pick(t, a.sales, "otherSale")
		if target == "" || target == seg[4] {
			target = missingSale
		}
		seg[4] = target
	} else {
		target, _, _ = pick(t, a.items, "otherItem")
		if target == "" || target == seg[5] {
			target = missingItem
		}
		seg[5] = target
	}
	path := strings.Join(seg, "/")
	if path == prev.path || a.idem[path+" "+key] != nil {
		return
	}
	r := m.createWithKey(a, path, prev.body, key)
	if r.code == http.StatusConflict && strings.Contains(r.errText(), "Idempotency-Key") {
		return
	}
	prev.redo(target, r)
}

// movements lists an item's ledger (or a missing item's: 404) with a
// random page size, and checks it against the model's.
func (m *model) movements(t *rapid.T) {
	a := m.acct(t)
	code, x, ok := pick(t, a.items, "item")
	if !ok || rapid.IntRange(0, 9).Draw(t, "missingItem") == 0 {
		r := m.send("GET", "/api/v1/inventory/items/"+missingItem+"/movements", a.key, nil, nil)
		m.expect(r, 404, "movements of a missing item")
		return
	}
	got := m.ledger(a, code, rapid.SampledFrom([]int{1, 2, 3, 50, 200}).Draw(t, "limit"))
	if msg := ledgerDiff(x, got); msg != "" {
		m.t.Fatalf("item %s: %s", code, msg)
	}
}

// ledger reads all of an item's movements, page by page, oldest first.
func (m *model) ledger(a *mAccount, code string, limit int) []map[string]any {
	var got []map[string]any
	cursor := ""
	for pages := 0; ; pages++ {
		q := url.Values{"limit": {strconv.Itoa(limit)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		r := m.send("GET", "/api/v1/inventory/items/"+code+"/movements?"+q.Encode(), a.key, nil, nil)
		m.expect(r, 200, "movements of "+code)
		page := r.list("movements")
		if len(page) > limit {
			m.t.Fatalf("page of %d movements with limit %d", len(page), limit)
		}
		if want := fmt.Sprintf("Movements found: %d", len(page)); r.body["message"] != want {
			m.t.Fatalf("movements: message %v, want %q", r.body["message"], want)
		}
		for _, x := range page {
			got = append(got, x.(map[string]any))
		}
		next, _ := r.data()["next_cursor"].(string)
		if next == "" {
			break
		}
		if pages > 1000 {
			m.t.Fatalf("movements do not end")
		}
		cursor = next
	}
	slices.Reverse(got)
	return got
}

// ledgerDiff compares an item's ledger, oldest first, with the model's: ids
// increase, each quantity_after is the sum of the changes up to it (never
// negative), the changes add up to the item's quantity, and each movement
// is the one the model recorded. "" when they agree.
func ledgerDiff(x *mItem, got []map[string]any) string {
	sum, last := decimal.Zero, int64(0)
	for i, mv := range got {
		id, _ := mv["id"].(float64)
		change, err := decimal.NewFromString(strOrEmpty(mv["quantity"]))
		switch {
		case int64(id) <= last:
			return fmt.Sprintf("movement ids do not increase: %v", got)
		case err != nil:
			return fmt.Sprintf("movement quantity %v", mv["quantity"])
		}
		last, sum = int64(id), sum.Add(change)
		if !decEq(mv["quantity_after"], sum) || sum.IsNegative() {
			return fmt.Sprintf("movement %d: quantity_after %v, but the changes up to it add up to %s", int64(id), mv["quantity_after"], sum)
		}
		if i >= len(x.moves) {
			continue
		}
		if want := x.moves[i]; mv["kind"] != want.kind || !change.Equal(want.change) || strOrEmpty(mv["invoice_code"]) != want.invoice ||
			strOrEmpty(mv["reason"]) != want.reason || strOrEmpty(mv["note"]) != want.note {
			return fmt.Sprintf("movement %d is %v, model %+v", i, mv, want)
		}
	}
	switch {
	case len(got) != len(x.moves):
		return fmt.Sprintf("%d movements, model %d (%+v): %v", len(got), len(x.moves), x.moves, got)
	case !sum.Equal(x.qty):
		return fmt.Sprintf("movements add up to %s, model stock %s", sum, x.qty)
	}
	return ""
}

// cop is one request of a concurrent step.
type cop struct {
	method, path string
	body         any
	sig          string // method, path and body: identical requests have the same
	r            reply
	// apply applies the request to a as if it were sent alone at this
	// point: changed when the model changed, ok when r is the answer the
	// model predicts.
	apply func(a *mAccount, r reply) (changed, ok bool)
	item  string // the item an edit of quantity sets ("" for other requests)
}

// short is s cut to a length a failure message can show.
func short(s string) string {
	if len(s) > 700 {
		return s[:700] + "…"
	}
	return s
}

func newCop(method, path string, body any, apply func(*mAccount, reply) (bool, bool)) *cop {
	raw, ok := body.([]byte)
	if !ok {
		raw, _ = json.Marshal(body)
	}
	return &cop{method: method, path: path, body: body, sig: method + " " + path + " " + string(raw), apply: apply}
}

// concurrently sends ops at once (and side, a report, beside them when
// given), then reads back the sales and items they may change and checks
// that some serial order of them answers each as it was answered and
// leaves everything as read; the model takes that order's state, and its
// books must then be the reports'.
func (m *model) concurrently(a *mAccount, ops []*cop, sales, items []string, side func()) {
	var wg sync.WaitGroup
	for _, op := range ops {
		wg.Add(1)
		go func() { defer wg.Done(); op.r = m.sendAllowing(op.method, op.path, a.key, op.body, nil, true) }()
	}
	if side != nil {
		wg.Add(1)
		go func() { defer wg.Done(); side() }()
	}
	wg.Wait()
	// A request the store gave up on after retrying changed nothing: the
	// serial order is looked for among the others.
	answered := ops[:0]
	for _, op := range ops {
		if op.r.code != http.StatusServiceUnavailable {
			answered = append(answered, op)
		}
	}
	ops = answered
	for _, op := range ops {
		if op.path == "/api/v1/sales/add" && op.r.code == 200 {
			sales = append(sales, fmt.Sprint(op.r.obj("sales")["invoice_code"]))
		}
	}
	gotSales := map[string]reply{}
	for _, code := range sales {
		r := m.send("GET", "/api/v1/sales/"+code, a.key, nil, nil)
		m.expect(r, 200, "get sale "+code)
		gotSales[code] = r
	}
	gotQty, gotLedger := map[string]any{}, map[string][]map[string]any{}
	for _, code := range items {
		r := m.send("GET", "/api/v1/inventory/items/"+code, a.key, nil, nil)
		m.expect(r, 200, "get item "+code)
		gotQty[code], gotLedger[code] = r.obj("items")["quantity"], m.ledger(a, code, 200)
	}
	final := func(b *mAccount) string {
		for code, r := range gotSales {
			s := b.sales[code]
			if s == nil {
				return "sale " + code + " is not in the model"
			}
			if msg := checkSale(s, r); msg != "" {
				return "sale " + code + ": " + msg
			}
			if s.void && canonical(r.data()) != s.voidData {
				return "void sale " + code + " is not as its void answered"
			}
		}
		for code, q := range gotQty {
			if x := b.items[code]; !decEq(q, x.qty) {
				return fmt.Sprintf("item %s: stock %v, model %s", code, q, x.qty)
			}
			if msg := ledgerDiff(b.items[code], gotLedger[code]); msg != "" {
				return "item " + code + ": " + msg
			}
		}
		return ""
	}
	b, why := serialize(a, ops, final)
	if b == nil {
		var out strings.Builder
		for _, op := range ops {
			fmt.Fprintf(&out, "\n%s\n  -> %d %s", short(op.sig), op.r.code, short(string(op.r.raw)))
		}
		m.t.Fatalf("no serial order of these concurrent requests gives their answers and leaves what was read back (%s):%s", why, out.String())
	}
	for _, op := range ops {
		if op.item != "" && op.r.code == http.StatusConflict && len(b.items[op.item].moves) == len(a.items[op.item].moves) {
			m.t.Fatalf("an edit of item %s's quantity answered 409, but no other request moved its stock: %s", op.item, op.r.raw)
		}
	}
	*a = *b
	m.checkToday(a)
}

// serialize searches for a serial order of ops that answers each as it was
// answered and whose end state passes final. It returns the model as that
// order leaves it, or nil and why the last order tried failed.
func serialize(a *mAccount, ops []*cop, final func(*mAccount) string) (*mAccount, string) {
	why, budget := "no order answers every request as it was answered", 100000
	var try func(b *mAccount, left []int, lastNoop int) *mAccount
	try = func(b *mAccount, left []int, lastNoop int) *mAccount {
		if len(left) == 0 {
			if msg := final(b); msg != "" {
				why = msg
				return nil
			}
			return b
		}
		tried := map[string]bool{} // identical requests answered alike are one choice
		for j, i := range left {
			op := ops[i]
			if k := op.sig + " " + string(op.r.raw); tried[k] || budget <= 0 {
				continue
			} else {
				tried[k] = true
			}
			budget--
			c := b.clone()
			changed, ok := op.apply(c, op.r)
			// Requests that change nothing commute: they are tried in one
			// order only.
			if !ok || (!changed && i < lastNoop) {
				continue
			}
			next := i
			if changed {
				next = -1
			}
			if got := try(c, append(slices.Clone(left[:j]), left[j+1:]...), next); got != nil {
				return got
			}
		}
		return nil
	}
	left := make([]int, len(ops))
	for i := range left {
		left[i] = i
	}
	if budget <= 0 {
		why = "too many orders to try"
	}
	return try(a, left, -1), why
}

func refundCop(code string, body map[string]any, req refundReq) *cop {
	return newCop("POST", "/api/v1/sales/"+code+"/refunds", body, func(b *mAccount, r reply) (bool, bool) {
		want, commit := b.predictRefund(code, req)
		if r.code != want || want != 200 {
			return false, r.code == want
		}
		commit()
		return true, checkRefundAnswer(b.sales[code], req, r, b.clk) == ""
	})
}

// concurrentRefunds sends 2 to 16 identical refunds of one sale at once,
// with or without a line: their sum never passes what was paid, nor their
// returns what was sold. With one Idempotency-Key for all, one refund is
// made and every answer is its answer.
func (m *model) concurrentRefunds(t *rapid.T) {
	a := m.acct(t)
	code, s, ok := pickSale(t, a, refundable)
	if !ok {
		return
	}
	n := rapid.IntRange(2, 16).Draw(t, "n")
	req := refundReq{amount: money.MustAmount("0.01")}
	held := decimal.RequireFromString(s.held().String())
	switch rapid.SampledFrom([]string{"cent", "share", "held"}).Draw(t, "amountKind") {
	case "share": // about half of them fit
		if share := held.Div(decimal.NewFromInt(int64(max(1, n/2)))).Truncate(2); share.IsPositive() {
			req.amount = money.MustAmount(share.StringFixed(2))
		}
	case "held":
		if held.IsPositive() {
			req.amount = s.held()
		}
	}
	body := map[string]any{"amount": req.amount}
	if i := slices.IndexFunc(s.lines, func(l mLine) bool { return l.itemCode != "" }); i >= 0 && rapid.Bool().Draw(t, "withLine") {
		q := decimal.RequireFromString(rapid.SampledFrom([]string{"1", "0.5"}).Draw(t, "returnQty"))
		req.lines = []refundLineReq{{id: i + 1, qty: q}}
		body["lines"] = []any{map[string]any{"sales_item_id": i + 1, "quantity": q.String()}}
	}
	path := "/api/v1/sales/" + code + "/refunds"
	items := slices.Sorted(maps.Keys(lineStock(s.lines)))
	if rapid.IntRange(0, 3).Draw(t, "oneKey") > 0 {
		ops := make([]*cop, n)
		for i := range ops {
			ops[i] = refundCop(code, body, req)
		}
		m.concurrently(a, ops, []string{code}, items, m.sideReport(t, a))
		return
	}
	key := fmt.Sprintf("race-%d", rapid.IntRange(0, 1<<30).Draw(t, "key"))
	if a.idem[path+" "+key] != nil {
		return
	}
	raw, _ := json.Marshal(body)
	replies := make([]reply, n)
	var wg sync.WaitGroup
	for i := range replies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = m.send("POST", path, a.key, raw, map[string]string{"Idempotency-Key": key})
		}()
	}
	wg.Wait()
	for _, r := range replies {
		m.checkRefund(a.clone(), code, req, r)
		if r.code == 200 && !bytes.Equal(r.raw, replies[0].raw) {
			m.t.Fatalf("concurrent refunds with one key answered differently:\n%s\n%s", replies[0].raw, r.raw)
		}
	}
	m.checkRefund(a, code, req, replies[0])
	if replies[0].code == 200 {
		a.idem[path+" "+key] = &mIdem{path: path, body: raw, resp: replies[0].raw,
			redo: func(code string, r reply) { m.checkRefund(a, code, req, r) }}
	}
	m.checkToday(a)
}

// concurrentCorrections sends two to four corrections of one sale and an
// item it sells (or any item) at once: refunds, a void, a payment, a stock
// adjustment, an edit of the item's quantity, a new sale of the item.
func (m *model) concurrentCorrections(t *rapid.T) {
	a := m.acct(t)
	code, s, ok := pickSale(t, a, func(s *mSale) bool { return !s.void })
	if !ok {
		return
	}
	item := ""
	if i := slices.IndexFunc(s.lines, func(l mLine) bool { return l.itemCode != "" }); i >= 0 {
		item = s.lines[i].itemCode
	} else if c, _, ok := pick(t, a.items, "item"); ok {
		item = c
	}
	kinds := []string{"refundHeld", "refundLine", "void", "pay"}
	if item != "" {
		kinds = append(kinds, "adjust", "editQuantity", "sellItem")
	}
	var ops []*cop
	for i := rapid.IntRange(2, 4).Draw(t, "n"); i > 0; i-- {
		switch rapid.SampledFrom(kinds).Draw(t, "kind") {
		case "refundHeld":
			req := refundReq{amount: s.held()}
			if req.amount.IsZero() {
				req.amount = money.MustAmount("0.01")
			}
			ops = append(ops, refundCop(code, map[string]any{"amount": req.amount}, req))
		case "refundLine":
			if len(s.lines) == 0 {
				continue
			}
			id := max(1, slices.IndexFunc(s.lines, func(l mLine) bool { return l.itemCode != "" })+1)
			req := refundReq{amount: money.MustAmount("0.01"), lines: []refundLineReq{{id: id, qty: decimal.NewFromInt(1)}}}
			ops = append(ops, refundCop(code, map[string]any{"amount": "0.01", "lines": []any{map[string]any{"sales_item_id": id, "quantity": "1"}}}, req))
		case "void":
			ops = append(ops, newCop("POST", "/api/v1/sales/"+code+"/void", []byte(nil), func(b *mAccount, r reply) (bool, bool) {
				want, commit := b.predictVoid(code, "", false)
				if r.code != want || want != 200 {
					return false, r.code == want
				}
				commit(r)
				return true, checkVoidAnswer(b.sales[code], "", r) == ""
			}))
		case "pay":
			body := map[string]any{"invoice_code": code, "invoice_number": s.number, "customer_id": s.customer,
				"sub_total_amount": s.sub, "total_amount": s.total, "amount_paid": s.total}
			ops = append(ops, newCop("PUT", "/api/v1/sales/edit/"+code, body, func(b *mAccount, r reply) (bool, bool) {
				x := b.sales[code]
				if x.void || r.code != 200 {
					return false, x.void && r.code == http.StatusConflict
				}
				if x.total.Cmp(x.paid) > 0 {
					x.payments++
					b.bookPayment(x.total.Sub(x.paid), x.payType)
				}
				x.paid, x.status = x.total, business.DeriveStatus(x.total, x.total)
				return true, checkSale(x, r) == ""
			}))
		case "adjust":
			q := rapid.SampledFrom([]string{"-1", "5"}).Draw(t, "change")
			req := adjustReq{change: decimal.RequireFromString(q), reason: "damaged"}
			ops = append(ops, newCop("POST", "/api/v1/inventory/items/"+item+"/adjustments", map[string]any{"quantity": q, "reason": "damaged"},
				func(b *mAccount, r reply) (bool, bool) {
					want, commit := b.predictAdjust(item, req)
					if r.code != want || want != 200 {
						return false, r.code == want
					}
					commit()
					return true, checkAdjustAnswer(b.items[item], req, r) == ""
				}))
		case "editQuantity":
			q := rapid.SampledFrom([]string{"0", "10"}).Draw(t, "qty")
			op := newCop("PUT", "/api/v1/inventory/items/"+item, map[string]any{"quantity": q}, func(b *mAccount, r reply) (bool, bool) {
				if r.code == http.StatusConflict { // stock moved between its read and its write
					return false, true
				}
				b.setQuantity(b.items[item], decimal.RequireFromString(q))
				return true, r.code == 200 && decEq(r.obj("items")["quantity"], b.items[item].qty)
			})
			op.item = item
			ops = append(ops, op)
		case "sellItem":
			cust, _, ok := pick(t, a.customers, "customer")
			if !ok {
				continue
			}
			one, price := money.MustQuantity("1"), money.MustAmount("1.00")
			sent := []any{map[string]any{"item_name": "Line", "item_code": item, "unit_price": price, "quantity": one, "tax": "0.10"}}
			body := map[string]any{"customer_id": cust, "sub_total_amount": "1.00", "total_amount": "1.10", "amount_paid": "0",
				"invoice_type": "pos", "payment_type": "Cash", "due_date": "2026-12-31", "items": sent}
			before := a.lastID["sale"]
			ops = append(ops, newCop("POST", "/api/v1/sales/add", body, func(b *mAccount, r reply) (bool, bool) {
				take := stock{item: decimal.NewFromInt(-1)}
				if !b.fits(take) || r.code != 200 {
					return false, !b.fits(take) && r.code == 400
				}
				got := r.obj("sales")
				c, id := fmt.Sprint(got["invoice_code"]), int64(got["id"].(float64))
				if b.sales[c] != nil || id <= before {
					return false, false
				}
				ms := &mSale{code: c, number: got["invoice_number"].(string), invoiceType: "pos", status: business.StatusDraft,
					dueDate: "2026-12-31", created: got["created_at"].(string), customer: cust, id: id,
					sub: price, total: money.MustAmount("1.10"), lines: []mLine{{itemCode: item, qty: one}}, sent: sent, payType: "Cash"}
				b.sales[c], b.numbers[ms.number], b.lastID["sale"] = ms, true, max(id, b.lastID["sale"])
				b.moveStock(take, mMove{kind: "sale", invoice: c})
				b.bookNewSale(ms, money.Zero)
				return true, checkSale(ms, r) == "" && ms.created == b.clk.stampText()
			}))
		}
	}
	items := lineStock(s.lines)
	if item != "" {
		items[item] = decimal.Zero
	}
	m.concurrently(a, ops, []string{code}, slices.Sorted(maps.Keys(items)), m.sideReport(t, a))
}

// stockedSale sells one or two stocked items, paid in full or in part,
// making first what it needs (a customer, a category, items in stock): the
// sales that refunds with returns, voids and the ledger work on, which
// random adds reach too rarely in a sequence.
func (m *model) stockedSale(t *rapid.T) {
	a := m.acct(t)
	cust := m.buyer(t, a)
	var inStock []string
	for code, x := range a.items {
		if x.qty.GreaterThanOrEqual(decimal.NewFromInt(3)) && x.qty.LessThan(decimal.NewFromInt(1000)) {
			inStock = append(inStock, code)
		}
	}
	sort.Strings(inStock)
	if len(inStock) == 0 || rapid.IntRange(0, 3).Draw(t, "newItem") == 0 {
		inStock = append(inStock, m.stockItem(a))
	}
	var sent []any
	var lines []mLine
	sub, tax := money.Zero, money.Zero
	for i := rapid.IntRange(1, 2).Draw(t, "stockedLines"); i > 0; i-- {
		code := rapid.SampledFrom(inStock).Draw(t, "stockedItem")
		qty := money.MustQuantity(rapid.SampledFrom([]string{"1", "2", "0.5"}).Draw(t, "lineQty"))
		price := money.MustAmount("2.50")
		sent = append(sent, map[string]any{"item_name": "Line", "item_code": code, "unit_price": price, "quantity": qty, "tax": "0.10"})
		lines = append(lines, mLine{itemCode: code, qty: qty})
		sub, tax = sub.Add(money.LineTotal(price, qty)), tax.Add(money.MustAmount("0.10"))
	}
	total := sub.Add(tax)
	paid := rapid.SampledFrom([]money.Amount{total, money.MustAmount("1.00")}).Draw(t, "paid")
	body := map[string]any{"customer_id": cust, "sub_total_amount": sub, "total_amount": total, "amount_paid": paid,
		"invoice_type": "pos", "payment_type": "Cash", "due_date": "2026-12-31", "items": sent}
	r := m.send("POST", "/api/v1/sales/add", a.key, body, nil)
	take := lineStock(lines).neg()
	if !a.fits(take) {
		m.expect(r, 400, "stocked sale short of stock")
		return
	}
	m.expect(r, 200, "stocked sale")
	s := r.obj("sales")
	got, id := fmt.Sprint(s["invoice_code"]), int64(s["id"].(float64))
	m.newID(a, "sale", id)
	a.moveStock(take, mMove{kind: "sale", invoice: got})
	ms := &mSale{code: got, number: s["invoice_number"].(string), invoiceType: "pos", status: business.DeriveStatus(paid, total),
		dueDate: "2026-12-31", created: s["created_at"].(string), customer: cust, sub: sub, total: total, paid: paid,
		payments: 1, id: id, lines: lines, sent: sent, payType: "Cash"}
	if msg := checkSale(ms, r); msg != "" {
		m.t.Fatalf("stocked sale: %s: %s", msg, r.raw)
	}
	m.checkNewSale(a, ms, r)
	a.bookNewSale(ms, paid)
	a.sales[got] = ms
	a.numbers[ms.number] = true
}

// buyer draws a customer of the book, or adds one when it has none.
func (m *model) buyer(t *rapid.T, a *mAccount) int64 {
	cust, _, ok := pick(t, a.customers, "customer")
	if !ok {
		r := m.send("POST", "/api/v1/customers/add", a.key, map[string]any{"name": "Stock Buyer"}, nil)
		m.expect(r, 200, "add customer")
		c := r.obj("customers")
		cust = int64(c["id"].(float64))
		m.newID(a, "customer", cust)
		a.customers[cust] = &mCustomer{id: cust, name: "Stock Buyer", created: c["created_at"].(string)}
	}
	return cust
}

// stockCategory is the id of the book's category "Stock", added when
// missing.
func (m *model) stockCategory(a *mAccount) int64 {
	for id, c := range a.categories {
		if business.NameKey(c.name) == business.NameKey("Stock") {
			return id
		}
	}
	r := m.send("POST", "/api/v1/inventory/categories/add", a.key, map[string]any{"category_name": "Stock"}, nil)
	m.expect(r, 200, "add category")
	c := r.obj("categories")
	cat := int64(c["id"].(float64))
	m.newID(a, "category", cat)
	a.categories[cat] = &mCategory{id: cat, name: "Stock", created: c["created_at"].(string)}
	return cat
}

// stockItem adds an item with 10 in stock (and the category it needs) and
// returns its code.
func (m *model) stockItem(a *mAccount) string {
	cat := m.stockCategory(a)
	code := ""
	for n := len(a.items) + 1; code == "" || a.items[code] != nil; n++ {
		code = fmt.Sprintf("STOCK-%d", n)
	}
	r := m.send("POST", "/api/v1/inventory/items/add", a.key, map[string]any{"item_code": code, "item_name": "Stock " + code,
		"category_id": cat, "item_price": "2.50", "unit_cost": "1.15", "quantity": "10", "minimum_qty_alert": "8.5"}, nil)
	m.expect(r, 200, "add item")
	x := r.obj("items")
	id := int64(x["id"].(float64))
	m.newID(a, "item", id)
	ten := decimal.NewFromInt(10)
	a.items[code] = &mItem{code: code, name: "Stock " + code, id: id, category: cat, qty: ten, price: "2.50",
		cost: decimal.RequireFromString("1.15"), minAlert: decimal.RequireFromString("8.5"), created: x["created_at"].(string),
		moves: []mMove{{kind: "initial", change: ten}}}
	return code
}

// feedRebuilds replays a book's events feed from its start (each event's
// livemode the book's), keeps each record's latest version, and checks that
// this rebuilds every record the model knows exactly as its GET answers it,
// and nothing else: no event for a change that was refused, none missing for
// one that was made (nor one of the other mode's book). Events of
// one record never disagree about one version.
func (m *model) feedRebuilds(a *mAccount) {
	type latest struct {
		version   int64
		data      string
		truncated bool // the record was too large for an event: its sale only
		sale      string
	}
	rebuilt := map[string]latest{} // "<type>/<id>"
	since := business.EventIDAt(time.Now().Add(-24 * time.Hour))
	cursor := ""
	for {
		q := "/api/v1/events?limit=200&since=" + since
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		r := m.send("GET", q, a.key, nil, nil)
		m.expect(r, 200, "catch up on events")
		for _, x := range r.list("events") {
			ev := x.(map[string]any)
			if ev["livemode"] != a.live { // every event of a test twin says so, and none of a live book
				m.t.Fatalf("an event of a book with livemode %v: %s", a.live, canonical(ev))
			}
			res := ev["resource"].(map[string]any)
			switch res["type"] {
			case business.ResourceEndpoint, business.ResourceAPIKey, business.ResourceSettings:
				// Events of the set-up, not of the books: they rebuild no
				// record (TestConfigChangesAreEvents checks them).
				continue
			}
			k := fmt.Sprint(res["type"], "/", res["id"])
			v := int64(res["version"].(float64))
			data := canonical(ev["data"])
			truncated, _ := ev["data_truncated"].(bool)
			sale := ""
			if d, ok := ev["data"].(map[string]any); ok {
				sale = canonical(d["sales"])
			}
			switch cur, ok := rebuilt[k]; {
			case ok && cur.version == v && cur.data != data:
				m.t.Fatalf("%s: two events of version %d disagree:\n%s\n%s", k, v, cur.data, data)
			case !ok || v > cur.version:
				rebuilt[k] = latest{v, data, truncated, sale}
			}
		}
		next, _ := r.data()["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	check := func(k, path string) {
		got, ok := rebuilt[k]
		delete(rebuilt, k)
		r := m.send("GET", path, a.key, nil, nil)
		m.expect(r, 200, "get "+k)
		if !ok {
			m.t.Fatalf("%s: no event in the feed: %s", k, r.raw)
		}
		want := canonical(r.data())
		if got.truncated { // a sale too large for an event: the sale itself must match
			got.data, want = got.sale, canonical(r.data()["sales"])
		}
		if got.data != want {
			m.t.Fatalf("%s: the feed rebuilds version %d (truncated %v) as\n%.2000s\nGET answers\n%.2000s", k, got.version, got.truncated, got.data, want)
		}
	}
	for code := range a.sales {
		check("sale/"+code, "/api/v1/sales/"+code)
	}
	for code := range a.items {
		check("item/"+code, "/api/v1/inventory/items/"+code)
	}
	for id := range a.customers {
		check(fmt.Sprintf("customer/%d", id), fmt.Sprintf("/api/v1/customers/%d", id))
	}
	for id := range a.expenses {
		check(fmt.Sprintf("expense/%d", id), fmt.Sprintf("/api/v1/expenses/%d", id))
	}
	for id := range a.categories {
		k := fmt.Sprintf("category/%d", id)
		got, ok := rebuilt[k]
		delete(rebuilt, k)
		if !ok || !strings.Contains(got.data, fmt.Sprintf(`"id":%d,`, id)) {
			m.t.Fatalf("%s: the feed has no event of it (%+v)", k, got)
		}
	}
	if len(rebuilt) > 0 {
		m.t.Fatalf("the feed has events of records the model does not know (a refused change made one?): %v", slices.Collect(maps.Keys(rebuilt)))
	}
}

// The clock, the timezone and the books: the model's own accounts of what
// every change moved, which reports must answer to the cent.

// fakeClock is the store's clock in the model (the env's clock, which
// newEnvTTL gives the store before it serves): set at the start of each
// sequence and moved forward only by the model's steps (never during a
// burst), read by every request at once. Safe for concurrent use.
type fakeClock struct{ c *clock }

func (f *fakeClock) now() time.Time  { return f.c.now() }
func (f *fakeClock) set(t time.Time) { t = t.UTC(); f.c.at.Store(&t) }

// stamp is the instant a write made now is stamped with: whole seconds.
func (f *fakeClock) stamp() time.Time { return f.now().Truncate(time.Second) }

func (f *fakeClock) stampText() string { return f.stamp().Format(business.TimeFormat) }

// useFakeClock stops e's clock, the store's, for the model to move.
func useFakeClock(e *env) *fakeClock {
	f := &fakeClock{c: &e.clock}
	f.set(time.Now())
	return f
}

// zoneDelay is how long after a change of timezone the new zone takes
// effect.
const zoneDelay = business.TimezoneDelay

// maxAdvance bounds how far a sequence moves the clock: well inside the 24
// hours the clock keeps Idempotency-Key records.
const maxAdvance = 20 * time.Hour

// clockZones are the zones a sequence's clock starts near a midnight of:
// east of UTC, UTC, west of it, and a zone 45 minutes off the hour.
var clockZones = []string{"Africa/Nairobi", "UTC", "America/New_York", "Asia/Kathmandu"}

// startClock sets the clock a second to half an hour before a local
// midnight of a drawn zone, which it returns (less the 11 s startZones
// takes). The midnight is hours to days ahead of the real time: events'
// ids take the real time, and the feed keeps events 30 days by the clock
// and lists them up to it, so the clock stays ahead of the real time and
// within 30 days of it. Some sequences start before the midnight that ends
// a month, or a week (Sunday to Monday).
func (m *model) startClock(t *rapid.T) string {
	zone := rapid.SampledFrom(clockZones).Draw(t, "startZone")
	loc, err := time.LoadLocation(zone)
	if err != nil {
		m.t.Fatal(err)
	}
	soon := time.Now().Add(4 * time.Hour).In(loc)
	midnight := time.Date(soon.Year(), soon.Month(), soon.Day()+1, 0, 0, 0, 0, loc)
	switch rapid.SampledFrom([]string{"day", "monthEnd", "sunday"}).Draw(t, "startDay") {
	case "day":
		midnight = midnight.AddDate(0, 0, rapid.IntRange(0, 20).Draw(t, "days"))
	case "monthEnd":
		next := midnight
		for next.Day() != 1 {
			next = next.AddDate(0, 0, 1)
		}
		if next.Sub(midnight) < 25*24*time.Hour {
			midnight = next
		}
	case "sunday":
		for midnight.Weekday() != time.Monday {
			midnight = midnight.AddDate(0, 0, 1)
		}
	}
	before := rapid.SampledFrom([]time.Duration{time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute}).Draw(t, "beforeMidnight")
	start := midnight.Add(-before - zoneDelay - time.Second)
	m.clk.set(start)
	m.end = start.Add(maxAdvance)
	m.day = time.Date(midnight.Year(), midnight.Month(), midnight.Day()-1, 0, 0, 0, 0, time.UTC)
	return zone
}

// startZones sets each account's timezone, most times, to the zone the
// clock starts near a midnight of, and lets the change take effect.
func (m *model) startZones(t *rapid.T, zone string) {
	for i, b := range m.bizs {
		a := b.live
		a.key = a.full.secret
		if zone != "UTC" && rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("startZone%d", i)) > 0 {
			m.putSettings(a, map[string]any{"timezone": zone}, "")
		}
	}
	m.advance(zoneDelay + time.Second)
}

// advanceClock moves the clock forward by seconds (some with a fraction),
// minutes or hours.
func (m *model) advanceClock(t *rapid.T) {
	var d time.Duration
	switch rapid.SampledFrom([]string{"seconds", "fraction", "minutes", "hours"}).Draw(t, "unit") {
	case "seconds":
		d = time.Duration(rapid.IntRange(1, 59).Draw(t, "n")) * time.Second
	case "fraction":
		d = time.Duration(rapid.IntRange(1, 5000).Draw(t, "n")) * time.Millisecond
	case "minutes":
		d = time.Duration(rapid.IntRange(1, 59).Draw(t, "n")) * time.Minute
	case "hours":
		d = time.Duration(rapid.IntRange(60, 180).Draw(t, "n")) * time.Minute
	}
	m.advance(d)
}

// tick, after every step, leaves the clock or moves it forward: by seconds
// or minutes (a sequence then crosses the midnight it starts before midway,
// with facts on both sides), rarely by hours.
func (m *model) tick(t *rapid.T) {
	switch rapid.IntRange(0, 31).Draw(t, "tick") {
	case 0, 1, 2, 3, 4, 5, 6, 7, 8:
		m.advance(time.Duration(rapid.IntRange(1, 59).Draw(t, "seconds")) * time.Second)
	case 9:
		m.advance(time.Duration(rapid.IntRange(1, 5000).Draw(t, "millis")) * time.Millisecond)
	case 10, 11, 12, 13:
		m.advance(time.Duration(rapid.IntRange(1, 10).Draw(t, "minutes")) * time.Minute)
	case 14:
		m.advance(time.Duration(rapid.IntRange(1, 3).Draw(t, "hours")) * time.Hour)
	}
}

// advance moves the clock forward by d, never past the sequence's end.
func (m *model) advance(d time.Duration) {
	now := m.clk.now()
	if left := m.end.Sub(now); d > left {
		d = left
	}
	if d > 0 {
		m.clk.set(now.Add(d))
	}
}

// stamped checks that a write's time is the store's clock (whole seconds).
func (m *model) stamped(what string, v any) {
	if want := m.clk.stampText(); v != want {
		m.t.Fatalf("%s is %v, but the store's clock says %s", what, v, want)
	}
}

// mSpan is one entry of an account's timezone history: name is in effect
// from from (zero: from the start) until the next entry's.
type mSpan struct {
	name string
	from time.Time
}

// zoneAt is the zone the account was in at t.
func (a *mAccount) zoneAt(t time.Time) *time.Location {
	name := "UTC"
	for _, s := range a.tz {
		if s.from.After(t) {
			break
		}
		name = s.name
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// localDate is the date of instant t where the account was at t.
func (a *mAccount) localDate(t time.Time) string {
	return t.In(a.zoneAt(t)).Format(business.DateFormat)
}

func stampOrNull(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(business.TimeFormat)
}

// settingsZones are the zones steps change to: those sequences start in,
// zones half or three quarters of an hour off (far east, and west), one
// whose name says the opposite of its offset, and one sent with spaces.
var settingsZones = []string{"Africa/Nairobi", "UTC", "America/New_York", "Asia/Kathmandu", "Pacific/Chatham",
	"America/St_Johns", "Etc/GMT+3", " Asia/Kathmandu "}

// setTimezone changes an account's settings: most times its timezone, now
// and then twice in a row before the first change takes effect (or just as
// it does), and sometimes with a field refused.
func (m *model) setTimezone(t *rapid.T) {
	a := m.acct(t)
	m.changeSettings(t, a, "first")
	if rapid.IntRange(0, 2).Draw(t, "twice") == 0 {
		between := []time.Duration{0, time.Second, 3 * time.Second, 9*time.Second + 500*time.Millisecond, zoneDelay}
		m.advance(rapid.SampledFrom(between).Draw(t, "between"))
		m.changeSettings(t, a, "second")
	}
	if rapid.Bool().Draw(t, "read") {
		m.checkSettings(a, m.send("GET", "/api/v1/user/settings", a.key, nil, nil), "Settings found")
	}
	// The next step's facts just before, at or just after the instant the
	// new zone takes effect.
	m.advance(rapid.SampledFrom([]time.Duration{0, zoneDelay - time.Second, zoneDelay, zoneDelay + time.Second}).Draw(t, "after"))
}

func (m *model) changeSettings(t *rapid.T, a *mAccount, label string) {
	body := map[string]any{"timezone": rapid.SampledFrom(settingsZones).Draw(t, label+"Zone")}
	bad := ""
	switch rapid.IntRange(0, 11).Draw(t, label+"Other") {
	case 0:
		body["timezone"] = rapid.SampledFrom([]string{"Mars/Olympus", "Local", "", "Africa/Nairobi/Extra"}).Draw(t, label+"BadZone")
		bad = "timezone"
	case 1:
		body["timezone"], bad = nil, "timezone"
	case 2:
		body["business_name"] = fmt.Sprintf("Renamed %d", rapid.IntRange(1, 9).Draw(t, label+"Name"))
	case 3:
		body["business_name"], bad = "   ", "business_name"
	case 4: // as GET shows them: they cannot change, but may be sent back
		body["currency"], body["business_code"] = "GHS", a.code
	case 5:
		body["currency"], bad = "USD", "currency"
	case 6:
		body["business_code"], bad = a.code+"X", "business_code"
	case 7:
		delete(body, "timezone")
		body["business_name"] = "Only the name"
	case 8: // read-only, as the currency
		body["invoice_prefix"] = "INV"
	case 9:
		body["invoice_prefix"], bad = "SHOP", "invoice_prefix"
	}
	m.putSettings(a, body, bad)
}

// putSettings sends body to PUT settings and checks the answer: 400 naming
// bad when bad is not "" (nothing changes), else the settings as the model
// changes them.
func (m *model) putSettings(a *mAccount, body map[string]any, bad string) {
	r := m.send("PUT", "/api/v1/user/settings", a.key, body, nil)
	if bad != "" {
		m.expect(r, 400, fmt.Sprintf("settings %v", body))
		if r.field(bad) == "" {
			m.t.Fatalf("settings %v: 400 does not name %s: %s", body, bad, r.raw)
		}
		return
	}
	m.expect(r, 200, fmt.Sprintf("settings %v", body))
	defer m.mirrorSettings(a)
	if n, ok := body["business_name"].(string); ok {
		a.name = strings.TrimSpace(n)
	}
	if z, ok := body["timezone"].(string); ok {
		got, msg := historyAnswered(r)
		if msg == "" {
			msg = checkHistory(a.tz, strings.TrimSpace(z), m.clk.now(), got)
		}
		if msg != "" {
			m.t.Fatalf("settings %v at %s: %s: %s", body, m.clk.now().Format(time.RFC3339Nano), msg, r.raw)
		}
		a.tz = got
	}
	m.checkSettings(a, r, "Settings updated")
}

// historyAnswered reads the timezone history of a settings answer.
func historyAnswered(r reply) ([]mSpan, string) {
	var out []mSpan
	list, _ := r.obj("settings")["timezone_history"].([]any)
	for _, x := range list {
		x, _ := x.(map[string]any)
		name, _ := x["timezone"].(string)
		span := mSpan{name: name}
		if from, ok := x["from"].(string); ok {
			t, err := time.Parse(business.TimeFormat, from)
			if err != nil {
				return nil, "timezone_history: from " + from
			}
			span.from = t
		} else if x["from"] != nil {
			return nil, fmt.Sprintf("timezone_history: from %v", x["from"])
		}
		out = append(out, span)
	}
	return out, ""
}

// checkHistory checks the timezone history got that a change to zone made
// at now answered, given the history before it: "" when it keeps the rules.
// The model keeps the history the answer gives; the rules are that it
// starts with UTC from the start, each later zone takes effect after the
// one before it; the zones in effect at now are kept as they were (a
// change never rewrites the past); a zone the change adds takes effect no
// sooner than zoneDelay after now (whole seconds), and the newest is the
// one asked for (setting the newest again changes nothing). A change still
// waiting to take effect may be kept or replaced.
func checkHistory(before []mSpan, zone string, now time.Time, got []mSpan) string {
	switch {
	case len(got) == 0 || got[0] != (mSpan{name: "UTC"}):
		return "the history does not start with UTC from the start"
	case got[len(got)-1].name != zone:
		return "the newest zone is not the one asked for"
	case before[len(before)-1].name == zone && !slices.Equal(got, before):
		return "setting the newest zone again changed the history"
	}
	for i := 1; i < len(got); i++ {
		if !got[i].from.After(got[i-1].from) {
			return fmt.Sprintf("zone %d does not take effect after the one before it", i)
		}
	}
	inEffect := 0
	for inEffect < len(before) && !before[inEffect].from.After(now) {
		inEffect++
	}
	if len(got) < inEffect || !slices.Equal(got[:inEffect], before[:inEffect]) {
		return "the zones in effect before the change changed"
	}
	for _, s := range got[inEffect:] {
		if !s.from.After(now) {
			return fmt.Sprintf("%s is in effect already from %s", s.name, s.from)
		}
		if !slices.Contains(before[inEffect:], s) && s.from.Before(now.Truncate(time.Second).Add(zoneDelay)) {
			return fmt.Sprintf("%s takes effect at %s, sooner than %s after the change", s.name, s.from, zoneDelay)
		}
	}
	return ""
}

// checkSettings compares a settings answer with the model's.
func (m *model) checkSettings(a *mAccount, r reply, msg string) {
	m.expect(r, 200, msg)
	hist := make([]any, len(a.tz))
	for i, s := range a.tz {
		hist[i] = map[string]any{"timezone": s.name, "from": stampOrNull(s.from)}
	}
	cur := a.tz[len(a.tz)-1]
	want := map[string]any{"business_name": a.name, "business_code": a.code, "currency": "GHS", "invoice_prefix": "INV",
		"timezone": cur.name, "timezone_effective_at": stampOrNull(cur.from), "timezone_history": hist}
	if d := jsonDiff("settings", r.obj("settings"), want); d != "" || r.body["message"] != msg {
		m.t.Fatalf("settings at %s: %s: %s", m.clk.now().Format(time.RFC3339Nano), d, r.raw)
	}
}

// mFact is one fact of the books: what a change moved (money in cents) and
// the instant it counts at.
type mFact struct {
	at                                             time.Time
	count, invoiced, collected, refunded, expenses int64
	byMethod, byType                               map[string]int64
}

func (a *mAccount) book(f mFact) { a.facts = append(a.facts, f) }

// bookNewSale books a new sale: one sale more and its total where it was
// created, and its first payment (paid) where it was made.
func (a *mAccount) bookNewSale(s *mSale, paid money.Amount) {
	a.book(mFact{at: parseStamp(s.created), count: 1, invoiced: cents(s.total)})
	a.bookPayment(paid, s.payType)
}

// bookPayment books a payment made now by method.
func (a *mAccount) bookPayment(amount money.Amount, method string) {
	if c := cents(amount); c != 0 {
		a.book(mFact{at: a.clk.stamp(), collected: c, byMethod: map[string]int64{method: c}})
	}
}

func cents(x money.Amount) int64 { return decimal.RequireFromString(x.String()).Shift(2).IntPart() }

func fmtCents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

func parseStamp(s string) time.Time {
	t, err := time.Parse(business.TimeFormat, s)
	if err != nil {
		panic(err)
	}
	return t
}

// mFigures are the figures of a period.
type mFigures struct {
	count, invoiced, collected, refunded, expenses int64
	byMethod, byType                               map[string]int64
}

func (f *mFigures) add(x mFigures) {
	f.count += x.count
	f.invoiced += x.invoiced
	f.collected += x.collected
	f.refunded += x.refunded
	f.expenses += x.expenses
	f.byMethod, f.byType = addCents(f.byMethod, x.byMethod), addCents(f.byType, x.byType)
}

func addCents(m, n map[string]int64) map[string]int64 {
	if m == nil {
		m = map[string]int64{}
	}
	for k, v := range n {
		m[k] += v
	}
	return m
}

// json is f as a report shows it: maps without the entries that add up to
// nothing. The model's few expense types are all named (none past the 50
// a report names), so nothing is in other types.
func (f mFigures) json() map[string]any {
	toText := func(m map[string]int64) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if v != 0 {
				out[k] = fmtCents(v)
			}
		}
		return out
	}
	return map[string]any{"sales_count": f.count, "invoiced": fmtCents(f.invoiced), "collected": fmtCents(f.collected),
		"refunded": fmtCents(f.refunded), "expenses": fmtCents(f.expenses), "net": fmtCents(f.collected - f.refunded - f.expenses),
		"collected_by_method": toText(f.byMethod), "expenses_by_type": toText(f.byType), "expenses_other_types": fmtCents(0)}
}

// periodsOf splits the dates from..to into periods of group: days, weeks
// from Monday to Sunday, or months, the first and last cut at from and to.
func periodsOf(from, to time.Time, group string) [][2]time.Time {
	key := func(d time.Time) time.Time {
		switch group {
		case "day":
			return d
		case "week":
			return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
		}
		return time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	var out [][2]time.Time
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		if n := len(out); n > 0 && key(d).Equal(key(out[n-1][0])) {
			out[n-1][1] = d
		} else {
			out = append(out, [2]time.Time{d, d})
		}
	}
	return out
}

// wantSummary is the summary the books give at now for from, to and group
// as sent ("" when left out), or the parameter a 400 must name.
func (a *mAccount) wantSummary(from, to, group string, now time.Time) (map[string]any, string) {
	const day = business.DateFormat
	if group == "" {
		group = "month"
	}
	if to == "" {
		to = a.localDate(now)
	}
	end, err := time.Parse(day, to)
	if err != nil {
		return nil, "to"
	}
	if from == "" {
		switch group {
		case "day":
			from = end.AddDate(0, 0, -30).Format(day)
		case "week":
			from = end.AddDate(0, 0, -((int(end.Weekday())+6)%7)-77).Format(day)
		default:
			from = time.Date(end.Year(), end.Month()-11, 1, 0, 0, 0, 0, time.UTC).Format(day)
		}
	}
	start, err := time.Parse(day, from)
	if err != nil {
		return nil, "from"
	}
	days := int(end.Sub(start).Hours()/24) + 1
	months := (end.Year()-start.Year())*12 + int(end.Month()) - int(start.Month()) + 1
	if end.Before(start) || group == "day" && days > 400 || group == "week" && days > 3*366 || group == "month" && months > 120 {
		return nil, "to"
	}
	byDate := map[string]mFigures{}
	for _, f := range a.facts {
		d := a.localDate(f.at)
		x := byDate[d]
		x.add(mFigures{count: f.count, invoiced: f.invoiced, collected: f.collected, refunded: f.refunded, expenses: f.expenses,
			byMethod: f.byMethod, byType: f.byType})
		byDate[d] = x
	}
	var periods []any
	var totals mFigures
	for _, p := range periodsOf(start, end, group) {
		var sum mFigures
		for d := p[0]; !d.After(p[1]); d = d.AddDate(0, 0, 1) {
			sum.add(byDate[d.Format(day)])
		}
		totals.add(sum)
		j := sum.json()
		j["start"], j["end"] = p[0].Format(day), p[1].Format(day)
		periods = append(periods, j)
	}
	// timezone: the zone in effect at now, the one "today" is in; complete:
	// no change the model makes is set aside.
	return map[string]any{"from": from, "to": to, "group_by": group, "timezone": a.zoneAt(now).String(), "currency": "GHS",
		"as_of": now.Format(business.TimeFormat), "complete": true, "periods": periods, "totals": totals.json()}, ""
}

// wantReceivables is the receivables report the model's sales give on asOf
// ("": today where the account is).
func (a *mAccount) wantReceivables(asOf string, now time.Time) map[string]any {
	if asOf == "" {
		asOf = a.localDate(now)
	}
	day, _ := time.Parse(business.DateFormat, asOf)
	type debtor struct {
		id, owed int64
		aging    [5]int64
	}
	aging := func(b [5]int64) map[string]any {
		return map[string]any{"current": fmtCents(b[0]), "1_30": fmtCents(b[1]), "31_60": fmtCents(b[2]), "61_90": fmtCents(b[3]), "over_90": fmtCents(b[4])}
	}
	var total int64
	var all [5]int64
	open := 0
	by := map[int64]*debtor{}
	for _, s := range a.sales {
		if s.status != business.StatusDraft && s.status != business.StatusPartial {
			continue
		}
		open++
		owed := cents(s.total) - cents(s.paid)
		due, _ := time.Parse(business.DateFormat, s.dueDate)
		late, bucket := int(day.Sub(due).Hours()/24), 4
		switch {
		case late <= 0:
			bucket = 0
		case late <= 30:
			bucket = 1
		case late <= 60:
			bucket = 2
		case late <= 90:
			bucket = 3
		}
		total += owed
		all[bucket] += owed
		d := by[s.customer]
		if d == nil {
			d = &debtor{id: s.customer}
			by[s.customer] = d
		}
		d.owed += owed
		d.aging[bucket] += owed
	}
	debtors := slices.Collect(maps.Values(by))
	sort.Slice(debtors, func(i, j int) bool {
		if debtors[i].owed != debtors[j].owed {
			return debtors[i].owed > debtors[j].owed
		}
		return debtors[i].id < debtors[j].id
	})
	customers := []any{}
	for i, d := range debtors {
		if i == 20 {
			break
		}
		customers = append(customers, map[string]any{"customer_id": strconv.FormatInt(d.id, 10), "name": a.customers[d.id].name,
			"outstanding": fmtCents(d.owed), "buckets": aging(d.aging)})
	}
	return map[string]any{"as_of": asOf, "currency": "GHS", "outstanding": fmtCents(total), "open_sales": open,
		"buckets": aging(all), "customers": customers}
}

func (x *mItem) status() string {
	switch {
	case x.qty.IsZero():
		return business.StockOut
	case x.qty.LessThanOrEqual(x.minAlert):
		return business.StockLow
	}
	return business.StockIn
}

// wantInventory is the inventory report the model's items give: values
// summed exactly and rounded once, half away from zero.
func (a *mAccount) wantInventory() map[string]any {
	cost, retail := decimal.Zero, decimal.Zero
	counts := map[string]any{business.StockIn: 0, business.StockLow: 0, business.StockOut: 0}
	var short []*mItem
	for _, x := range a.items {
		cost = cost.Add(x.qty.Mul(x.cost))
		retail = retail.Add(x.qty.Mul(decimal.RequireFromString(x.price)))
		st := x.status()
		counts[st] = counts[st].(int) + 1
		if st != business.StockIn {
			short = append(short, x)
		}
	}
	sort.Slice(short, func(i, j int) bool {
		x, y := short[i], short[j]
		if xo, yo := x.qty.IsZero(), y.qty.IsZero(); xo != yo {
			return xo
		}
		if c := x.qty.Cmp(y.qty); c != 0 {
			return c < 0
		}
		return x.code < y.code
	})
	alerts := []any{}
	for i, x := range short {
		if i == 100 {
			break
		}
		alerts = append(alerts, map[string]any{"item_code": x.code, "item_name": x.name, "quantity": money.MustQuantity(x.qty.String()).String(),
			"minimum_qty_alert": money.MustQuantity(x.minAlert.String()).String(), "status": x.status()})
	}
	return map[string]any{"currency": "GHS", "items_count": len(a.items), "stock_value": cost.Round(2).StringFixed(2),
		"retail_value": retail.Round(2).StringFixed(2), "counts": counts, "low_and_out_items": alerts,
		"low_and_out_truncated": len(short) > 100}
}

// reportBusyMessage is the 503 of a report asked while more than 100
// changes wait to be added to the figures: each ask adds 100.
const reportBusyMessage = "Report figures are catching up"

// report asks for a report; again while the store says figures are still
// being applied.
func (m *model) report(a *mAccount, path string) reply {
	for tries := 0; ; tries++ {
		r := m.sendAllowing("GET", path, a.key, nil, nil, true)
		if r.code != http.StatusServiceUnavailable {
			return r
		}
		if !strings.Contains(string(r.raw), reportBusyMessage) || tries > 100 {
			m.t.Fatalf("%s: %s", path, r.raw)
		}
	}
}

// checkReport compares a report's answer with want, or with a 400 naming
// bad when bad is not "".
func (m *model) checkReport(a *mAccount, r reply, path string, want map[string]any, bad string) {
	if bad != "" {
		m.expect(r, 400, path)
		if r.field(bad) == "" {
			m.t.Fatalf("%s: 400 does not name %s: %s", path, bad, r.raw)
		}
		return
	}
	m.expect(r, 200, path)
	if d := jsonDiff("report", r.obj("report"), want); d != "" || r.body["message"] != "Report ready" {
		m.t.Fatalf("%s at %s: %s\nthe books:%s", path, m.clk.now().Format(time.RFC3339Nano), d, a.booksText())
	}
}

// booksText shows the account's timezone history and facts, for a failure.
func (a *mAccount) booksText() string {
	var out strings.Builder
	for _, s := range a.tz {
		fmt.Fprintf(&out, "\n  zone %s from %v", s.name, stampOrNull(s.from))
	}
	for _, f := range a.facts {
		fmt.Fprintf(&out, "\n  %s (%s): count %d invoiced %s collected %s %v refunded %s expenses %s %v", f.at.Format(business.TimeFormat),
			a.localDate(f.at), f.count, fmtCents(f.invoiced), fmtCents(f.collected), f.byMethod, fmtCents(f.refunded), fmtCents(f.expenses), f.byType)
	}
	return out.String()
}

// jsonDiff is where got (decoded JSON) first differs from want, "" when
// they are the same JSON.
func jsonDiff(path string, got, want any) string {
	var w any
	if err := json.Unmarshal([]byte(canonical(want)), &w); err != nil {
		panic(err)
	}
	switch wv := w.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s is %s, want %s", path, canonical(got), canonical(w))
		}
		for _, k := range slices.Sorted(maps.Keys(g)) {
			if _, ok := wv[k]; !ok {
				return fmt.Sprintf("%s.%s is %s, want no such field", path, k, canonical(g[k]))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(wv)) {
			if _, ok := g[k]; !ok {
				return fmt.Sprintf("%s has no %s, want %s", path, k, canonical(wv[k]))
			}
			if d := jsonDiff(path+"."+k, g[k], wv[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(wv) {
			return fmt.Sprintf("%s is %.3000s, want %.3000s", path, canonical(got), canonical(w))
		}
		for i := range wv {
			if d := jsonDiff(fmt.Sprintf("%s[%d]", path, i), g[i], wv[i]); d != "" {
				return fmt.Sprintf("%s\n  %s[%d] is %s\n  want %s", d, path, i, canonical(g[i]), canonical(wv[i]))
			}
		}
		return ""
	}
	if canonical(got) != canonical(w) {
		return fmt.Sprintf("%s is %s, want %s", path, canonical(got), canonical(w))
	}
	return ""
}

// summaryPath is the path of a summary for from, to and group ("" left out).
func summaryPath(from, to, group string) string {
	q := url.Values{}
	for k, v := range map[string]string{"from": from, "to": to, "group_by": group} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if len(q) == 0 {
		return "/api/v1/reports/summary"
	}
	return "/api/v1/reports/summary?" + q.Encode()
}

func (m *model) checkSummary(a *mAccount, from, to, group string) {
	path := summaryPath(from, to, group)
	want, bad := a.wantSummary(from, to, group, m.clk.now())
	m.checkReport(a, m.report(a, path), path, want, bad)
}

func receivablesPath(asOf string) string {
	if asOf == "" {
		return "/api/v1/reports/receivables"
	}
	return "/api/v1/reports/receivables?as_of=" + asOf
}

func (m *model) checkReceivables(a *mAccount, asOf string) {
	path := receivablesPath(asOf)
	m.checkReport(a, m.report(a, path), path, a.wantReceivables(asOf, m.clk.now()), "")
}

func (m *model) checkInventory(a *mAccount) {
	const path = "/api/v1/reports/inventory"
	m.checkReport(a, m.report(a, path), path, a.wantInventory(), "")
}

// checkToday compares the figures of every day the books have facts on
// (and today) with them.
func (m *model) checkToday(a *mAccount) {
	first, last := a.localDate(m.clk.now()), a.localDate(m.clk.now())
	for _, f := range a.facts {
		d := a.localDate(f.at)
		first, last = min(first, d), max(last, d)
	}
	m.checkSummary(a, first, last, "day")
}

// drawDate draws a report date around the books: today's or a fact's local
// date, or days to a year either side; or "" (left out).
func (m *model) drawDate(t *rapid.T, a *mAccount, label string) string {
	if rapid.IntRange(0, 4).Draw(t, label+"LeftOut") == 0 {
		return ""
	}
	dates := []string{a.localDate(m.clk.now())}
	for _, f := range a.facts {
		dates = append(dates, a.localDate(f.at))
	}
	slices.Sort(dates)
	d, _ := time.Parse(business.DateFormat, rapid.SampledFrom(slices.Compact(dates)).Draw(t, label))
	shift := rapid.SampledFrom([]int{0, 0, -1, 1, -6, 7, -31, 40, -400, 366}).Draw(t, label+"Shift")
	return d.AddDate(0, 0, shift).Format(business.DateFormat)
}

// summary asks for a summary around the books, by a drawn grouping (or
// the default), and compares it with them.
func (m *model) summary(t *rapid.T) {
	a := m.acct(t)
	from, to := m.drawDate(t, a, "from"), m.drawDate(t, a, "to")
	if from != "" && to != "" && to < from {
		from, to = to, from
	}
	m.checkSummary(a, from, to, rapid.SampledFrom([]string{"", "day", "week", "month"}).Draw(t, "groupBy"))
}

// agingEdges are the days after a due date receivables are asked on: long
// before and the day before it, on it, and either side of each edge of a
// bucket (1, 30, 31, 60, 61, 90, 91 days late), and long after.
var agingEdges = []int{-400, -1, 0, 1, 30, 31, 60, 61, 90, 91, 400}

// receivables asks for the receivables today, then on each of agingEdges
// around a due date: an open sale's, most times.
func (m *model) receivables(t *rapid.T) {
	a := m.acct(t)
	m.checkReceivables(a, "")
	var open []string
	for _, s := range a.sales {
		if s.status == business.StatusDraft || s.status == business.StatusPartial {
			open = append(open, s.dueDate)
		}
	}
	slices.Sort(open)
	dues := slices.Compact(open)
	if len(dues) == 0 || rapid.IntRange(0, 3).Draw(t, "anyDue") == 0 {
		dues = m.dueDates()
	}
	d, _ := time.Parse(business.DateFormat, rapid.SampledFrom(dues).Draw(t, "due"))
	for _, late := range agingEdges {
		m.checkReceivables(a, d.AddDate(0, 0, late).Format(business.DateFormat))
	}
}

func (m *model) inventoryReport(t *rapid.T) { m.checkInventory(m.acct(t)) }

// inParallel sends n requests, send(i) the i-th, four at a time, and
// returns their answers by i.
func inParallel(n int, send func(i int) reply) []reply {
	out := make([]reply, n)
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				out[i] = send(int(i))
			}
		}()
	}
	wg.Wait()
	return out
}

// byID checks that every answer is 200 and orders them by the id of the
// record in their data under key.
func (m *model) byID(rs []reply, key, what string) {
	for _, r := range rs {
		m.expect(r, 200, what)
	}
	slices.SortFunc(rs, func(x, y reply) int {
		return int(x.obj(key)["id"].(float64) - y.obj(key)["id"].(float64))
	})
}

// openSaleBody is a sale of no lines to cust due on due.
func openSaleBody(cust int64, due string, total, paid money.Amount) map[string]any {
	return map[string]any{"customer_id": cust, "sub_total_amount": total, "total_amount": total, "amount_paid": paid,
		"invoice_type": "main", "payment_type": "Cash", "due_date": due}
}

// keepOpenSale checks the answer r to openSaleBody and adds the sale to the
// books.
func (m *model) keepOpenSale(a *mAccount, r reply, cust int64, due string, total, paid money.Amount) {
	m.expect(r, 200, "add sale")
	s := r.obj("sales")
	code, id := fmt.Sprint(s["invoice_code"]), int64(s["id"].(float64))
	m.newID(a, "sale", id)
	pays := 0
	if !paid.IsZero() {
		pays = 1
	}
	ms := &mSale{code: code, number: s["invoice_number"].(string), invoiceType: "main", status: business.DeriveStatus(paid, total),
		dueDate: due, created: s["created_at"].(string), customer: cust, sub: total, total: total, paid: paid, payments: pays,
		id: id, payType: "Cash"}
	if msg := checkSale(ms, r); msg != "" {
		m.t.Fatalf("add sale: %s: %s", msg, r.raw)
	}
	m.checkNewSale(a, ms, r)
	a.bookNewSale(ms, paid)
	a.sales[code] = ms
	a.numbers[ms.number] = true
}

// midnightZones are the zones an account moves to for its receivables to
// age across a local midnight: none of them UTC.
var midnightZones = []string{"Africa/Nairobi", "America/New_York", "Asia/Kathmandu", "Pacific/Chatham", "America/St_Johns", "Etc/GMT+3"}

// nextMidnight is the first local midnight of zone after t.
func nextMidnight(zone string, t time.Time) time.Time {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		panic(err)
	}
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, loc)
}

// midnightAging moves the clock across a local midnight of the account's
// timezone (not UTC: moved to a zone whose midnight comes before the
// sequence ends when it must) with sales open that are due that day, and
// 30, 60 or 90 days before it: receivables asked without as_of just before
// the midnight age them on that day, and just after it on the next, each
// such sale then a bucket older.
func (m *model) midnightAging(t *rapid.T) {
	a := m.acct(t)
	m.advance(zoneDelay + time.Second) // a change of zone still waiting takes effect
	before := rapid.SampledFrom([]time.Duration{time.Second, 500 * time.Millisecond, 2 * time.Minute}).Draw(t, "beforeMidnight")
	after := rapid.SampledFrom([]time.Duration{0, time.Millisecond, time.Second, 90 * time.Second}).Draw(t, "afterMidnight")
	reach := func(zone string, from time.Time) bool {
		return zone != "UTC" && !nextMidnight(zone, from).Add(after).After(m.end)
	}
	now := m.clk.now()
	zone := a.zoneAt(now).String()
	if !reach(zone, now) || rapid.IntRange(0, 3).Draw(t, "moveZone") == 0 {
		from := now.Add(zoneDelay + time.Second)
		var fits []string
		for _, z := range midnightZones {
			if reach(z, from) && nextMidnight(z, from).Sub(from) > 5*time.Minute {
				fits = append(fits, z)
			}
		}
		if len(fits) == 0 {
			return // the sequence ends before any zone's next midnight
		}
		zone = rapid.SampledFrom(fits).Draw(t, "zone")
		m.putSettings(a, map[string]any{"timezone": zone}, "")
		m.advance(zoneDelay + time.Second)
	}
	midnight := nextMidnight(zone, m.clk.now())
	if d := midnight.Add(-before).Sub(m.clk.now()); d > 0 {
		m.advance(d)
	}
	today, _ := time.Parse(business.DateFormat, a.localDate(m.clk.now()))
	for _, late := range rapid.SliceOfNDistinct(rapid.SampledFrom([]int{0, 30, 60, 90}), 1, 4, rapid.ID[int]).Draw(t, "dueDaysAgo") {
		cust := m.buyer(t, a)
		due := today.AddDate(0, 0, -late).Format(business.DateFormat)
		total := money.MustAmount(rapid.SampledFrom([]string{"25.00", "0.02", "99999999.99"}).Draw(t, "openTotal"))
		paid := rapid.SampledFrom([]money.Amount{money.Zero, money.MustAmount("0.01")}).Draw(t, "openPaid")
		m.keepOpenSale(a, m.send("POST", "/api/v1/sales/add", a.key, openSaleBody(cust, due, total, paid), nil), cust, due, total, paid)
	}
	wantBefore := a.wantReceivables("", m.clk.now())
	m.checkReceivables(a, "")
	m.advance(midnight.Add(after).Sub(m.clk.now()))
	if canonical(a.wantReceivables("", m.clk.now())["buckets"]) == canonical(wantBefore["buckets"]) {
		m.t.Fatalf("the model's receivables did not age across the midnight of %s at %s", zone, midnight)
	}
	m.checkReceivables(a, "")
}

// manyDebtors, one time in three, makes customers, each owing on one sale
// (amounts that tie), till more customers owe than a receivables report
// names, or exactly as many: it names the 20 who owe most, ties by id.
func (m *model) manyDebtors(t *rapid.T) {
	if rapid.IntRange(0, 2).Draw(t, "manyDebtors") > 0 {
		return
	}
	a := m.acct(t)
	owing := map[int64]bool{}
	for _, s := range a.sales {
		if s.status == business.StatusDraft || s.status == business.StatusPartial {
			owing[s.customer] = true
		}
	}
	n := business.MaxDebtors + rapid.IntRange(-1, 2).Draw(t, "beyond") - len(owing)
	if n <= 0 {
		return
	}
	dues, totals := make([]string, n), make([]money.Amount, n)
	for i := range n {
		dues[i] = rapid.SampledFrom(m.dueDates()).Draw(t, "due")
		totals[i] = money.MustAmount(rapid.SampledFrom([]string{"5.00", "5.00", "7.50", "0.01"}).Draw(t, "owes"))
	}
	made := inParallel(n, func(i int) reply {
		return m.send("POST", "/api/v1/customers/add", a.full.secret, map[string]any{"name": fmt.Sprintf("Debtor %d", i)}, nil)
	})
	m.byID(made, "customers", "add customer")
	custs := make([]int64, n)
	for i, r := range made {
		m.expect(r, 200, "add customer")
		c := r.obj("customers")
		custs[i] = int64(c["id"].(float64))
		m.newID(a, "customer", custs[i])
		a.customers[custs[i]] = &mCustomer{id: custs[i], name: c["name"].(string), created: c["created_at"].(string)}
	}
	sold := inParallel(n, func(i int) reply {
		return m.send("POST", "/api/v1/sales/add", a.full.secret, openSaleBody(custs[i], dues[i], totals[i], money.Zero), nil)
	})
	at := map[string]int{}
	for i, c := range custs {
		at[fmt.Sprint(c)] = i
	}
	m.byID(sold, "sales", "add sale")
	for _, r := range sold {
		m.expect(r, 200, "add sale")
		i := at[fmt.Sprint(r.obj("sales")["customer_id"])]
		m.keepOpenSale(a, r, custs[i], dues[i], totals[i], money.Zero)
	}
	m.checkReceivables(a, "")
}

// manyAlerts, one time in six, adds items low or out of stock (quantities
// that tie) till 100 to 102 are, then brings those past 100 back in stock:
// the inventory report lists 100 (truncated when more are short), out of
// stock first, then low, each by quantity and then item code.
func (m *model) manyAlerts(t *rapid.T) {
	if rapid.IntRange(0, 5).Draw(t, "manyAlerts") > 0 {
		return
	}
	a := m.acct(t)
	short := 0
	for _, x := range a.items {
		if x.status() != business.StockIn {
			short++
		}
	}
	extra := rapid.IntRange(0, 2).Draw(t, "extra")
	n := business.MaxStockAlerts + extra - short
	if n <= 0 {
		return
	}
	cat := m.stockCategory(a)
	codes, qtys := make([]string, n), make([]string, n)
	for i := range n {
		codes[i] = fmt.Sprintf("ALERT-%d-%03d", a.lastID["item"], (i*103)%n) // made out of their order
		qtys[i] = rapid.SampledFrom([]string{"0", "0.5", "1", "1", "9.999"}).Draw(t, "alertQty")
	}
	made := inParallel(n, func(i int) reply {
		return m.send("POST", "/api/v1/inventory/items/add", a.full.secret, map[string]any{"item_code": codes[i], "item_name": "Low " + codes[i],
			"category_id": cat, "item_price": "0.05", "unit_cost": "0.99", "quantity": qtys[i], "minimum_qty_alert": "10"}, nil)
	})
	at := map[string]int{}
	for i, c := range codes {
		at[c] = i
	}
	m.byID(made, "items", "add item")
	for _, r := range made {
		m.expect(r, 200, "add item")
		x := r.obj("items")
		id := int64(x["id"].(float64))
		m.newID(a, "item", id)
		code := x["item_code"].(string)
		q := decimal.RequireFromString(qtys[at[code]])
		it := &mItem{code: code, name: "Low " + code, id: id, category: cat, qty: q, price: "0.05",
			cost: decimal.RequireFromString("0.99"), minAlert: decimal.NewFromInt(10), created: x["created_at"].(string)}
		if !q.IsZero() {
			it.moves = []mMove{{kind: "initial", change: q}}
		}
		a.items[code] = it
	}
	m.checkInventory(a)
	for range extra {
		var low []string
		for code, x := range a.items {
			if x.status() != business.StockIn && x.minAlert.LessThan(decimal.NewFromInt(1000)) {
				low = append(low, code)
			}
		}
		slices.Sort(low)
		code := rapid.SampledFrom(low).Draw(t, "restock")
		x := a.items[code]
		r := m.send("PUT", "/api/v1/inventory/items/"+code, a.full.secret, map[string]any{"quantity": "1000"}, nil)
		m.expect(r, 200, "restock item")
		a.setQuantity(x, decimal.NewFromInt(1000))
		m.checkInventory(a)
	}
}

// badReport asks for reports with queries they refuse: 400 naming the
// parameter.
func (m *model) badReport(t *rapid.T) {
	a := m.acct(t)
	q := rapid.SampledFrom([]struct{ path, param string }{
		{"/api/v1/reports/summary?from=2026-02-30", "from"},
		{"/api/v1/reports/summary?from=2026-1-05&to=2026-03-01", "from"},
		{"/api/v1/reports/summary?from=2026-11-01&to=2026-13-01", "to"},
		{"/api/v1/reports/summary?to=2026-02-30", "to"},
		{"/api/v1/reports/summary?from=2026-12-10&to=2026-12-01", "to"},
		{"/api/v1/reports/summary?group_by=year", "group_by"},
		{"/api/v1/reports/summary?group_by=day&group_by=week", "group_by"},
		{"/api/v1/reports/summary?from=", "from"},
		{"/api/v1/reports/summary?colour=red", "colour"},
		{"/api/v1/reports/summary?from=2025-01-01&to=2026-02-05&group_by=day", "to"},
		{"/api/v1/reports/summary?from=2020-01-01&to=2026-01-01&group_by=week", "to"},
		{"/api/v1/reports/summary?from=2010-01-01&to=2026-01-01", "to"},
		{"/api/v1/reports/receivables?as_of=2026-02-30", "as_of"},
		{"/api/v1/reports/receivables?from=2026-01-01", "from"},
		{"/api/v1/reports/inventory?as_of=2026-01-01", "as_of"},
	}).Draw(t, "query")
	r := m.send("GET", q.path, a.key, nil, nil)
	m.expect(r, 400, q.path)
	if r.field(q.param) == "" {
		m.t.Fatalf("%s: 400 does not name %s: %s", q.path, q.param, r.raw)
	}
}

// sideReport is nil, or a report to ask during a burst: it must answer (the
// books are compared after the burst).
func (m *model) sideReport(t *rapid.T, a *mAccount) func() {
	if !rapid.Bool().Draw(t, "sideReport") {
		return nil
	}
	path := rapid.SampledFrom([]string{summaryPath("", "", "day"), receivablesPath(""), "/api/v1/reports/inventory"}).Draw(t, "sidePath")
	return func() {
		if r := m.sendAllowing("GET", path, a.key, nil, nil, true); r.code != 200 && r.code != http.StatusServiceUnavailable {
			m.t.Fatalf("%s during a burst: %d %s", path, r.code, r.raw)
		}
	}
}

// concurrentReports asks two to four reports at once: each applies the
// changes still waiting, and each must answer the books (every change
// counted once, whoever applied it).
func (m *model) concurrentReports(t *rapid.T) {
	a := m.acct(t)
	type ask struct {
		path string
		want map[string]any
		r    reply
	}
	asks := make([]*ask, rapid.IntRange(2, 4).Draw(t, "n"))
	now := m.clk.now()
	for i := range asks {
		switch rapid.SampledFrom([]string{"summary", "summary", "receivables", "inventory"}).Draw(t, "report") {
		case "summary":
			group := rapid.SampledFrom([]string{"day", "week", "month"}).Draw(t, "groupBy")
			want, _ := a.wantSummary("", "", group, now)
			asks[i] = &ask{path: summaryPath("", "", group), want: want}
		case "receivables":
			asks[i] = &ask{path: receivablesPath(""), want: a.wantReceivables("", now)}
		default:
			asks[i] = &ask{path: "/api/v1/reports/inventory", want: a.wantInventory()}
		}
	}
	var wg sync.WaitGroup
	for _, x := range asks {
		wg.Add(1)
		go func() { defer wg.Done(); x.r = m.sendAllowing("GET", x.path, a.key, nil, nil, true) }()
	}
	wg.Wait()
	for _, x := range asks {
		if x.r.code == http.StatusServiceUnavailable { // busy applying, or more than 100 waited: ask again
			x.r = m.report(a, x.path)
		}
		m.checkReport(a, x.r, x.path, x.want, "")
	}
}

// manyChanges, one time in five, makes 100 to 250 expenses without a
// report between them, then asks for one: the report applies them all at
// once (it answers 503 only past 1,000 waiting) and counts each change once.
func (m *model) manyChanges(t *rapid.T) {
	if rapid.IntRange(0, 4).Draw(t, "many") > 0 {
		return
	}
	a := m.acct(t)
	m.checkToday(a) // nothing waits
	n := rapid.SampledFrom([]int{100, 101, 250}).Draw(t, "n")
	answers := make([]reply, n)
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				answers[i] = m.send("POST", "/api/v1/expenses/add", a.full.secret, map[string]any{"expense_type": "Stock count",
					"expense_amount": "0.01", "payment_method": "Cash", "created_by": "Ama"}, nil)
			}
		}()
	}
	wg.Wait()
	slices.SortFunc(answers, func(x, y reply) int {
		return int(x.obj("expense")["id"].(float64) - y.obj("expense")["id"].(float64))
	})
	for _, r := range answers {
		m.expect(r, 200, "add expense")
		x := r.obj("expense")
		id := int64(x["id"].(float64))
		m.newID(a, "expense", id)
		m.stamped("new expense's created_at", x["created_at"])
		a.expenses[id] = &mExpense{id: id, typ: "Stock count", created: x["created_at"].(string), amount: "0.01"}
		a.book(mFact{at: m.clk.stamp(), expenses: 1, byType: map[string]int64{"Stock count": 1}})
	}
	path := summaryPath("", "", "day")
	busy := 0
	r := m.sendAllowing("GET", path, a.key, nil, nil, true)
	for ; r.code == http.StatusServiceUnavailable && busy <= n/25; busy++ {
		if !strings.Contains(string(r.raw), reportBusyMessage) {
			m.t.Fatalf("%s: %s", path, r.raw)
		}
		r = m.sendAllowing("GET", path, a.key, nil, nil, true)
	}
	// A report applies up to 1,000 waiting changes: a few hundred (a
	// busy account's second) never make it answer 503.
	if busy > 0 {
		m.t.Fatalf("%d changes waiting: %d asks answered 503 before the report: %s", n, busy, short(string(r.raw)))
	}
	want, _ := a.wantSummary("", "", "day", m.clk.now())
	m.checkReport(a, r, path, want, "")
}

// consumer applies the account's waiting report figures as the stream's
// consumer does (store.ApplyFigures), at once with a report and, now and
// then, with the same batch handed again (a stream hands a batch again when
// its answer is lost): together they apply each change once, and the
// reports then answer the books.
func (m *model) consumer(t *rapid.T) {
	a := m.acct(t)
	ctx := context.Background()
	items, err := m.st.WaitingFigures(ctx, a.id)
	if err != nil {
		m.t.Fatal(err)
	}
	appliers := rapid.IntRange(1, 2).Draw(t, "appliers")
	side := m.sideReport(t, a)
	applied := make([]int, appliers)
	errs := make([]error, appliers)
	var wg sync.WaitGroup
	for i := range appliers {
		wg.Add(1)
		go func() { defer wg.Done(); applied[i], errs[i] = m.st.ApplyFigures(ctx, a.id, items) }()
	}
	if side != nil {
		wg.Add(1)
		go func() { defer wg.Done(); side() }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		m.t.Fatalf("applying %d waiting figures items: %v", len(items), err)
	}
	n := 0
	for _, x := range applied {
		n += x
	}
	if n > len(items) || side == nil && n != len(items) {
		m.t.Fatalf("%d waiting figures items, applied %v", len(items), applied)
	}
	if left, err := m.st.WaitingFigures(ctx, a.id); err != nil || len(left) > 0 {
		m.t.Fatalf("after the consumer: %d figures items wait (%v)", len(left), err)
	}
	m.checkToday(a)
}
