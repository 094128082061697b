package api_test

// The model-based test: random sequences of operations on two businesses
// (each with a live book and a test twin's), sent through the real HTTP
// handler on DynamoDB Local, each response checked against what an
// in-memory model of the API predicts, and the invariants checked by an
// audit that reads everything back. Failures shrink to a
// minimal sequence; each one found is kept as a plain test in
// model_regress_test.go.
//
// This file runs the sequences and sends the requests; the model's state
// is in model_state_test.go, and its steps are by subject: records
// (customers, categories, items, expenses, replays), lists, sales,
// corrections (refunds and voids), stock (adjustments and the ledger),
// concurrent (bursts and the serial order that explains them), clock
// (the clock, timezones and settings), books and reports, keys (keys,
// scopes and test mode), invoices (links, the public page and the PDF),
// notices (reminders and overdue sales, sent by the notices' runner to a
// real Mailpit) and audit (every record read back, and the events feed).
//
// `make test` runs a bounded number of sequences; `make check-model` runs
// thousands (MODEL_SEQUENCES).

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"bizdata/shared/testmail"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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

// TestModel runs beside the package's other parallel tests. TestModelLambda
// stays sequential: rapid takes its count from the process-wide
// -rapid.checks flag, which each model test sets for its own run, and the
// sequential tests end before any parallel one goes on.
func TestModel(t *testing.T) {
	t.Parallel()
	setModelChecks(t, modelSequences)
	tables := freshTables(t)
	inbox := testmail.Start(t)
	var pub caller
	var mail *mMail
	var last *env
	rapid.Check(t, func(rt *rapid.T) {
		e, clk := tables()
		if e != last {
			pub, mail, last = newHostedHTTP(t, e), newModelMail(t, inbox, e), e
		}
		runModel(rt, e, httpCaller{e.srv.URL}, pub, mail, clk)
	})
}

// sequencesPerTable is how many sequences share one table: a long run
// (make check-model) moves to a fresh table, and drops the old one, every so
// many sequences, so no table holds more than a few sequences' writes (a
// backlog step alone writes hundreds of changes).
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
	inbox := testmail.Start(t)
	var lc, pub *lambdaCaller
	var mail *mMail
	var last *env
	rapid.Check(t, func(rt *rapid.T) {
		e, clk := tables() // the Lambda handlers share e's store, and so its clock
		if e != last {
			lc, pub, mail, last = newLambdaCaller(t, e), newHostedLambdaCaller(t, e), newModelMail(t, inbox, e), e
		}
		runModel(rt, e, lc, pub, mail, clk)
	})
}

// caller sends one request and returns its status, headers and body.
type caller interface {
	call(method, path, key string, body []byte, headers map[string]string) (int, http.Header, []byte)
}

// httpCaller sends requests to the server at base.
type httpCaller struct{ base string }

func (c httpCaller) call(method, path, key string, body []byte, headers map[string]string) (int, http.Header, []byte) {
	r, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
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
	hdr  http.Header
	raw  []byte
	body map[string]any
}

func (r reply) data() map[string]any { d, _ := r.body["data"].(map[string]any); return d }

func (r reply) obj(key string) map[string]any {
	o, _ := r.data()[key].(map[string]any)
	return o
}

func (r reply) list(key string) []any { l, _ := r.data()[key].([]any); return l }

func (r reply) errText() string { s, _ := r.body["error"].(string); return s }

func (r reply) field(name string) string {
	f, _ := r.body["fields"].(map[string]any)
	s, _ := f[name].(string)
	return s
}

func runModel(rt *rapid.T, e *env, c, pub caller, mail *mMail, clk *fakeClock) {
	m := &model{t: rt, c: c, pub: pub, mail: mail, st: e.store, clk: clk, keys: map[string]*mKey{}}
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
		"invoiceLink":           m.invoiceLink,
		"openInvoice":           m.openInvoice,
		"salePDF":               m.salePDF,
		"setReminder":           m.setReminder,
		"remindedSale":          m.remindedSale,
		"runNotices":            m.runNotices,
		"":                      m.tick, // after every step
	})
	// Every sequence ends with the notices due, a full audit, and the
	// events feed rebuilds every record.
	m.runNotices(rt)
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
// also get the store's 503 for contention it could not outlast. A request
// with a key that lacks the route's scope or mode must be refused 403 with
// the text that says so; it is then sent again with the "*" key of the
// route's mode, so every step goes on as it would (and a refusal that
// changed anything shows in the books' answers).
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
	r := reply{code: code, hdr: hdr, raw: out}
	if err := json.Unmarshal(out, &r.body); err != nil {
		m.t.Fatalf("%s %s: not JSON: %s", method, path, out)
	}
	if st, _ := r.body["status"].(float64); int(st) != code {
		m.t.Fatalf("%s %s: body status %v, HTTP %d", method, path, r.body["status"], code)
	}
	m.stampKey(method, path, key, r)
	return r
}

// stampKey notes that key, when a key of the model, was used by the request
// r answers, if that request authenticated it.
func (m *model) stampKey(method, path, key string, r reply) {
	if k := m.keys[key]; k != nil && r.code != http.StatusUnauthorized {
		// What no route serves authenticates no key; a route refusing the
		// key for its scope or mode stamps nothing.
		if _, routed := modelRoute(method, path); routed && (r.code != http.StatusForbidden || r.errText() != m.routeRefusal(method, path, k)) {
			k.used.Store(true)
		}
	}
}

func (m *model) expect(r reply, code int, what string) {
	m.t.Helper()
	if r.code != code {
		m.t.Fatalf("%s: status %d, want %d: %s", what, r.code, code, r.raw)
	}
}

// expectRefused checks that r is a 400 naming the field (or parameter)
// field.
func (m *model) expectRefused(r reply, field, what string) {
	m.t.Helper()
	m.expect(r, 400, what)
	if r.field(field) == "" {
		m.t.Fatalf("%s: 400 does not name %s: %s", what, field, r.raw)
	}
}

// drawAccount draws a business and one of its keys: the step acts with that key,
// on the book of its mode.
func (m *model) drawAccount(t *rapid.T) *mAccount {
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

// newRecord returns the record a 200 answer made (its data.key) and its id,
// once newID has checked it.
func (m *model) newRecord(a *mAccount, r reply, key, kind string) (map[string]any, int64) {
	x := r.obj(key)
	id := int64(x["id"].(float64))
	m.newID(a, kind, id)
	return x, id
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
