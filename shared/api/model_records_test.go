package api_test

// Customers, categories, items and expenses in the model, and creates sent
// again with their Idempotency-Key.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"bizdata/shared/business"
	"bizdata/shared/money"

	"github.com/shopspring/decimal"
	"pgregory.net/rapid"
)

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
	a := m.drawAccount(t)
	name, ok := drawText(t, "name", 200)
	body := map[string]any{"name": name}
	if rapid.Bool().Draw(t, "email") { // of the next id: the address is the customer's alone
		body["email"] = customerEmail(a, a.lastID["customer"]+1, 0)
	}
	r := m.create(t, a, "/api/v1/customers/add", body)
	if r.code == -1 {
		return
	}
	if !ok {
		m.expectRefused(r, "name", "customer with bad name")
		return
	}
	m.expect(r, 200, "add customer")
	c := r.obj("customers")
	if c["name"] != strings.TrimSpace(name) {
		m.t.Fatalf("name %q, want %q", c["name"], name)
	}
	m.stamped("new customer's created_at", c["created_at"])
	m.keepCustomer(a, r)
}

// keepCustomer adds to the book the customer a 200 answer made, and returns
// its id.
func (m *model) keepCustomer(a *mAccount, r reply) int64 {
	c, id := m.newRecord(a, r, "customers", "customer")
	a.customers[id] = &mCustomer{id: id, name: c["name"].(string), email: strOrEmpty(c["email"]), created: c["created_at"].(string)}
	return id
}

func (m *model) editCustomer(t *rapid.T) {
	a := m.drawAccount(t)
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
	a := m.drawAccount(t)
	id, c, ok := pick(t, a.customers, "customer")
	if !ok {
		return
	}
	n := rapid.IntRange(0, 1<<20).Draw(t, "n")
	email, phone := customerEmail(a, id, n), fmt.Sprintf("0%d", n)
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
	a := m.drawAccount(t)
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
	m.keepCategory(a, r)
}

// keepCategory adds to the book the category a 200 answer made, and returns
// its id.
func (m *model) keepCategory(a *mAccount, r reply) int64 {
	c, id := m.newRecord(a, r, "categories", "category")
	a.categories[id] = &mCategory{id: id, name: c["category_name"].(string), created: c["created_at"].(string)}
	return id
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
	a := m.drawAccount(t)
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
	if got := x["item_code"].(string); code != "" && got != code {
		m.t.Fatalf("item_code %q, want %q", got, code)
	}
	if x["quantity"] != money.MustQuantity(qty).String() {
		m.t.Fatalf("quantity %v, want %s", x["quantity"], qty)
	}
	m.stamped("new item's created_at", x["created_at"])
	m.keepItem(a, r, &mItem{category: catID, qty: decimal.RequireFromString(qty), price: price, cost: cost, minAlert: minAlert})
}

// keepItem adds to the book the item a 200 answer made: it as sent, with
// its code, name, id and created_at as answered, and its initial stock as
// its first movement.
func (m *model) keepItem(a *mAccount, r reply, it *mItem) {
	var x map[string]any
	x, it.id = m.newRecord(a, r, "items", "item")
	it.code, it.name, it.created = x["item_code"].(string), x["item_name"].(string), x["created_at"].(string)
	if !it.qty.IsZero() {
		it.moves = []mMove{{kind: "initial", change: it.qty}}
	}
	a.items[it.code] = it
}

func (m *model) editItem(t *rapid.T) {
	a := m.drawAccount(t)
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

func (m *model) addExpense(t *rapid.T) {
	a := m.drawAccount(t)
	typ := rapid.SampledFrom([]string{"Rent", "rent", "Fuel", strings.Repeat("x", 100)}).Draw(t, "type")
	amount := rapid.SampledFrom([]string{"10.00", "99999999.99", "100000000.00", "1.005"}).Draw(t, "amount")
	body := map[string]any{"expense_type": typ, "expense_amount": amount, "payment_method": "Cash", "created_by": "Ama"}
	r := m.create(t, a, "/api/v1/expenses/add", body)
	if r.code == -1 {
		return
	}
	if _, err := money.ParseAmount(amount); err != nil {
		m.expectRefused(r, "expense_amount", "bad expense amount")
		return
	}
	m.expect(r, 200, "add expense")
	m.keepExpense(a, r, typ, amount)
}

// keepExpense adds to the book, and to the books, the expense of type typ
// and amount a 200 answer made.
func (m *model) keepExpense(a *mAccount, r reply, typ, amount string) {
	x, id := m.newRecord(a, r, "expense", "expense")
	m.stamped("new expense's created_at", x["created_at"])
	e := &mExpense{id: id, typ: typ, created: x["created_at"].(string), amount: amount}
	c := cents(money.MustAmount(amount))
	a.book(mFact{at: parseStamp(e.created), expenses: c, byType: map[string]int64{typ: c}})
	a.expenses[id] = e
}

// editExpense edits an expense's amount and type (or a missing expense's:
// 404): the books move by the difference on the day it was created.
func (m *model) editExpense(t *rapid.T) {
	a := m.drawAccount(t)
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
		m.expectRefused(r, "expense_amount", "bad expense amount")
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
	a := m.drawAccount(t)
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
	a := m.drawAccount(t)
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
	m.keepCustomer(a, replies[0])
	a.idem["/api/v1/customers/add "+key] = &mIdem{path: "/api/v1/customers/add", body: body, resp: replies[0].raw}
}

// buyer draws a customer of the book, or adds one when it has none.
func (m *model) buyer(t *rapid.T, a *mAccount) int64 {
	cust, _, ok := pick(t, a.customers, "customer")
	if !ok {
		r := m.send("POST", "/api/v1/customers/add", a.key, map[string]any{"name": "Stock Buyer"}, nil)
		m.expect(r, 200, "add customer")
		cust = m.keepCustomer(a, r)
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
	return m.keepCategory(a, r)
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
	m.keepItem(a, r, &mItem{category: cat, qty: decimal.NewFromInt(10), price: "2.50", cost: decimal.RequireFromString("1.15"),
		minAlert: decimal.RequireFromString("8.5")})
	return code
}
