package api_test

// The model-based test: random sequences of operations on two accounts, sent
// through the real HTTP handler on DynamoDB Local, each response checked
// against what an in-memory model of the API predicts, and the invariants
// checked by an audit that reads everything back. Failures shrink to a
// minimal sequence; each one found is kept as a plain test in
// model_regress_test.go.
//
// `make test` runs a bounded number of sequences; `make check-model` runs
// thousands (MODEL_SEQUENCES).

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
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

	"bizdata/shared/business"
	"bizdata/shared/money"

	"github.com/shopspring/decimal"
	"pgregory.net/rapid"
)

// modelSequences is how many sequences TestModel runs unless -rapid.checks
// or MODEL_SEQUENCES says otherwise.
const modelSequences = 12

func setModelChecks(t *testing.T, def int) {
	t.Helper()
	passed := false
	flag.Visit(func(f *flag.Flag) { passed = passed || f.Name == "rapid.checks" })
	if passed {
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
	e := newEnv(t)
	rapid.Check(t, func(rt *rapid.T) { runModel(rt, e, httpCaller{e}) })
}

// TestModelLambda runs a sample of the model's sequences through the Lambda
// path (API Gateway v2 events into each route's function), so local and
// Lambda behaviour cannot drift apart.
func TestModelLambda(t *testing.T) {
	setModelChecks(t, modelSequences/3)
	e := newEnv(t)
	lc := newLambdaCaller(t, e)
	rapid.Check(t, func(rt *rapid.T) { runModel(rt, e, lc) })
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
	accts []*mAccount
}

type mAccount struct {
	key        string
	customers  map[int64]*mCustomer
	categories map[int64]*mCategory
	items      map[string]*mItem
	sales      map[string]*mSale
	numbers    map[string]bool // invoice numbers in use
	expenses   map[int64]*mExpense
	idem       map[string]*mIdem // route + " " + key
	lastID     map[string]int64
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
	code         string
	id, category int64
	qty          decimal.Decimal
	price        string
	created      string
}

type mSale struct {
	code, number, invoiceType, status, dueDate, created string
	customer, id                                        int64
	sub, total, paid                                    money.Amount
	payments                                            int
}

type mLine struct {
	itemCode string
	qty      money.Quantity
}

type mExpense struct {
	id                   int64
	typ, created, amount string
}

type mIdem struct {
	path string
	body []byte
	resp []byte
}

// modelAccounts numbers the accounts the sequences make: business codes are
// unique per table, and every sequence of a run shares one.
var modelAccounts atomic.Int64

func newAccountModel(rt *rapid.T, e *env, n int) *mAccount {
	_, key := e.newAccount(fmt.Sprintf("Model %d", n), fmt.Sprintf("M%d", modelAccounts.Add(1)))
	return &mAccount{key: key, customers: map[int64]*mCustomer{}, categories: map[int64]*mCategory{},
		items: map[string]*mItem{}, sales: map[string]*mSale{}, numbers: map[string]bool{},
		expenses: map[int64]*mExpense{}, idem: map[string]*mIdem{}, lastID: map[string]int64{}}
}

func runModel(rt *rapid.T, e *env, c caller) {
	m := &model{t: rt, c: c}
	m.accts = []*mAccount{newAccountModel(rt, e, 1), newAccountModel(rt, e, 2)}
	rt.Repeat(map[string]func(*rapid.T){
		"addCustomer":        m.addCustomer,
		"editCustomer":       m.editCustomer,
		"concurrentEdits":    m.concurrentEdits,
		"addCategory":        m.addCategory,
		"addItem":            m.addItem,
		"editItem":           m.editItem,
		"addSale":            m.addSale,
		"editSale":           m.editSale,
		"addExpense":         m.addExpense,
		"replay":             m.replay,
		"concurrentReplay":   m.concurrentReplay,
		"list":               m.list,
		"cursorElsewhere":    m.cursorElsewhere,
		"otherAccountsKey":   m.otherAccountsKey,
		"badQuery":           m.badQuery,
		"longPathAndFilters": m.longPathAndFilters,
		"audit":              m.audit,
		"":                   func(*rapid.T) {},
	})
	// Every sequence ends with a full audit.
	m.audit(rt)
}

// send makes a request and checks what holds for every response: never a
// 5xx, a JSON envelope whose status equals the HTTP status.
func (m *model) send(method, path, key string, body any, headers map[string]string) reply {
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
	if code >= 500 {
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
	return r
}

func (m *model) expect(r reply, code int, what string) {
	m.t.Helper()
	if r.code != code {
		m.t.Fatalf("%s: status %d, want %d: %s", what, r.code, code, r.raw)
	}
}

func (m *model) acct(t *rapid.T) *mAccount {
	return m.accts[rapid.IntRange(0, len(m.accts)-1).Draw(t, "account")]
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
// remembers the key's first answer.
func (m *model) create(t *rapid.T, a *mAccount, path string, body any) reply {
	headers := map[string]string{}
	key := ""
	if rapid.Bool().Draw(t, "withKey") {
		key = fmt.Sprintf("k-%d", rapid.IntRange(0, 1<<30).Draw(t, "key"))
		headers["Idempotency-Key"] = key
	}
	raw, _ := json.Marshal(body)
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
	r := m.send("PUT", fmt.Sprintf("/api/v1/customers/%d", id), a.key, map[string]any{"phone": phone}, nil)
	if len(phone) > 32 {
		m.expect(r, 400, "phone too long")
		return
	}
	m.expect(r, 200, "edit customer")
	got := r.obj("customers")
	if got["phone"] != phone || got["name"] != c.name {
		m.t.Fatalf("edit: %s", r.raw)
	}
	c.phone = phone
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
	a.items[got] = &mItem{code: got, id: id, category: catID, qty: decimal.RequireFromString(qty), price: price,
		created: x["created_at"].(string)}
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
	if newPrice {
		body["item_price"] = "7.25"
	}
	r := m.send("PUT", "/api/v1/inventory/items/"+code, a.key, body, nil)
	m.expect(r, 200, "edit item")
	got := r.obj("items")
	if got["quantity"] != money.MustQuantity(qty).String() {
		m.t.Fatalf("quantity %v, want %s", got["quantity"], qty)
	}
	x.qty = decimal.RequireFromString(qty)
	if newPrice && x.price != "7.25" {
		if want, _ := strconv.ParseFloat(x.price, 64); got["previous_price"] != want {
			m.t.Fatalf("previous_price %v, want %s", got["previous_price"], x.price)
		}
		x.price = "7.25"
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
		if i < 3 && rapid.Bool().Draw(t, "stocked") {
			if code, _, ok := pick(t, a.items, "lineItem"); ok {
				l["item_code"] = code
				mlines = append(mlines, mLine{itemCode: code, qty: qty})
			}
		}
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
	due := rapid.SampledFrom([]string{"2026-01-31", "2026-12-31", "2027-06-30"}).Draw(t, "due")
	body := map[string]any{"customer_id": custID, "sub_total_amount": sub, "total_amount": sentTotal, "amount_paid": paid,
		"invoice_type": typ, "payment_type": "Cash", "due_date": due, "items": lines}
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
	need := map[string]decimal.Decimal{}
	for _, l := range mlines {
		need[l.itemCode] = need[l.itemCode].Add(dec(l.qty))
	}
	short := false
	for c, q := range need {
		if a.items[c].qty.LessThan(q) {
			short = true
		}
	}
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
	for c, q := range need {
		a.items[c].qty = a.items[c].qty.Sub(q)
	}
	a.sales[got] = &mSale{code: got, number: s["invoice_number"].(string), invoiceType: typ, status: status, dueDate: due,
		created: s["created_at"].(string), customer: custID, sub: sub, total: total, paid: paid, payments: len(pays), id: id}
	a.numbers[s["invoice_number"].(string)] = true
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
	op := rapid.SampledFrom([]string{"pay", "note", "customer", "number", "decrease"}).Draw(t, "op")
	want := 200
	var newPaid money.Amount
	switch op {
	case "pay":
		newPaid = s.total
		if rapid.Bool().Draw(t, "partial") && s.total.Cmp(s.paid.Add(money.MustAmount("0.01"))) > 0 {
			newPaid = s.paid.Add(money.MustAmount("0.01"))
		}
		body["amount_paid"] = newPaid
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
	}
	r := m.send("PUT", "/api/v1/sales/edit/"+code, a.key, body, nil)
	m.expect(r, want, "edit sale "+op)
	if want != 200 {
		if want == 400 && !strings.Contains(r.errText(), "finalized") && op != "decrease" {
			m.t.Fatalf("a paid sale's %s: %s", op, r.raw)
		}
		return
	}
	got := r.obj("sales")
	switch op {
	case "pay":
		if newPaid.Cmp(s.paid) > 0 {
			s.payments++
		}
		s.paid = newPaid
		s.status = business.DeriveStatus(s.paid, s.total)
	case "customer":
		s.customer = body["customer_id"].(int64)
	case "number":
		delete(a.numbers, s.number)
		s.number = got["invoice_number"].(string)
		a.numbers[s.number] = true
	}
	if got["payment_status"] != s.status || len(r.list("sales-payment")) != s.payments {
		m.t.Fatalf("edit %s: %s; want status %s and %d payments", op, r.raw, s.status, s.payments)
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
	a.expenses[id] = &mExpense{id: id, typ: typ, created: x["created_at"].(string), amount: amount}
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
		var fields map[string]any
		_ = json.Unmarshal(body, &fields)
		fields[map[string]string{
			"/api/v1/sales/add": "issued_by", "/api/v1/customers/add": "address", "/api/v1/inventory/categories/add": "description",
			"/api/v1/inventory/items/add": "description", "/api/v1/expenses/add": "expense_description",
		}[prev.path]] = "changed"
		body, _ = json.Marshal(fields)
	}
	r := m.send("POST", prev.path, a.key, body, map[string]string{"Idempotency-Key": key})
	m.checkReplay(prev, body, r)
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
		status = rapid.SampledFrom([]string{"draft", "partial", "paid"}).Draw(t, "status")
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
	// Another account's key with this account's cursor.
	b := m.accts[0]
	if b == a {
		b = m.accts[1]
	}
	r = m.send("GET", spec.path+"?limit=1&cursor="+url.QueryEscape(next)+"&"+spec.filters.Encode(), b.key, nil, nil)
	m.expect(r, 400, "another account's cursor")
}

// otherAccountsKey reads and edits one account's records with the other's
// key: 404, exactly as for a record that does not exist.
func (m *model) otherAccountsKey(t *rapid.T) {
	a, b := m.accts[0], m.accts[1]
	if rapid.Bool().Draw(t, "swap") {
		a, b = b, a
	}
	if code, _, ok := pick(t, a.sales, "sale"); ok && b.sales[code] == nil {
		m.expect(m.send("GET", "/api/v1/sales/"+code, b.key, nil, nil), 404, "another account's sale")
	}
	if code, _, ok := pick(t, a.items, "item"); ok && b.items[code] == nil {
		m.expect(m.send("PUT", "/api/v1/inventory/items/"+code, b.key, map[string]any{"item_price": 1}, nil), 404, "another account's item")
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
	for _, p := range []string{"/api/v1/inventory/items/" + long, "/api/v1/sales/" + long} {
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
// invariants: payments sum to amount_paid, stock is what the model says
// (its start less what lines hold, as set by edits).
func (m *model) audit(t *rapid.T) {
	for _, a := range m.accts {
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
		}
		for code, x := range a.items {
			r := m.send("GET", "/api/v1/inventory/items/"+code, a.key, nil, nil)
			m.expect(r, 200, "get item "+code)
			if q, _ := r.obj("items")["quantity"].(string); !decimal.RequireFromString(q).Equal(x.qty) {
				m.t.Fatalf("item %s: stock %v, model %s", code, q, x.qty)
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
	}
}
