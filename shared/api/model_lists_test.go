package api_test

// Lists in the model: paged through with drawn filters and page sizes,
// cursors used elsewhere, queries that do not parse, and another book's
// records, which must read as missing.

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"bizdata/shared/business"

	"pgregory.net/rapid"
)

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
	f := url.Values{}
	// createdBound draws a created_at filter among times, or none ("").
	createdBound := func(label string, times []string) string {
		if len(times) == 0 || !rapid.Bool().Draw(t, label) {
			return ""
		}
		from := rapid.SampledFrom(times).Draw(t, label+"Value")
		f.Set("created_at", from)
		return from
	}
	// filterBy draws whether to filter on param (the draw labelled by), and
	// its value among values (labelled label); "" for no filter.
	filterBy := func(param, by, label string, values []string) string {
		if !rapid.Bool().Draw(t, by) {
			return ""
		}
		v := rapid.SampledFrom(values).Draw(t, label)
		f.Set(param, v)
		return v
	}
	var rs []rec
	switch rapid.SampledFrom([]string{"sales", "customers", "items", "expenses", "categories"}).Draw(t, "list") {
	case "customers":
		times := createdTimes(a.customers, func(c *mCustomer) string { return c.created })
		slices.Sort(times)
		from := createdBound("created", times)
		for _, c := range a.customers {
			if from == "" || c.created >= from {
				rs = append(rs, rec{id: fmt.Sprint(c.id), order: c.created + pad12(c.id)})
			}
		}
		return listSpec{path: "/api/v1/customers", key: "customers", idField: "id", filters: f, want: sortDesc(rs)}
	case "categories":
		times := createdTimes(a.categories, func(c *mCategory) string { return c.created })
		from := createdBound("created", times)
		name := filterBy("category_name", "byName", "name", []string{"grains", "OILS", "Spices", "none"})
		for _, c := range a.categories {
			if (from == "" || c.created >= from) && (name == "" || business.NameKey(name) == business.NameKey(c.name)) {
				rs = append(rs, rec{id: fmt.Sprint(c.id), order: c.created + pad12(c.id)})
			}
		}
		return listSpec{path: "/api/v1/inventory/categories", key: "categories", idField: "id", filters: f, want: sortDesc(rs)}
	case "items":
		times := createdTimes(a.items, func(x *mItem) string { return x.created })
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
		if cat != 0 {
			f.Set("category_id", fmt.Sprint(cat))
		}
		return listSpec{path: "/api/v1/inventory/items", key: "items", idField: "item_code", filters: f, want: sortDesc(rs)}
	case "expenses":
		times := createdTimes(a.expenses, func(x *mExpense) string { return x.created })
		from := createdBound("created", times)
		typ := filterBy("expense_type", "byType", "type", []string{"RENT", "Fuel", "none"})
		for _, x := range a.expenses {
			if (from == "" || x.created >= from) && (typ == "" || strings.EqualFold(typ, x.typ)) {
				rs = append(rs, rec{id: fmt.Sprint(x.id), order: x.created + pad12(x.id)})
			}
		}
		return listSpec{path: "/api/v1/expenses", key: "expenses", idField: "id", filters: f, want: sortDesc(rs)}
	}
	// Sales, with any combination of filters.
	times := createdTimes(a.sales, func(s *mSale) string { return s.created })
	from := createdBound("created", times)
	cust := int64(0)
	if id, _, ok := pick(t, a.customers, "byCustomer"); ok && rapid.Bool().Draw(t, "filterCustomer") {
		cust = id
	}
	status := filterBy("payment_status", "filterStatus", "status", []string{"draft", "partial", "paid", "void"})
	typ := filterBy("invoice_type", "filterType", "type", []string{"invoice", "pos", "storefront", "main", "order"})
	due := filterBy("due_date", "filterDue", "due", []string{"2026-01-31", "2026-12-30", "2027-06-30"})
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
	if cust != 0 {
		f.Set("customer_id", fmt.Sprint(cust))
	}
	return listSpec{path: "/api/v1/sales", key: "sales", idField: "invoice_code", filters: f, want: sortDesc(rs)}
}

// createdTimes is when each record of records was created, in the map's
// order.
func createdTimes[K comparable, V any](records map[K]V, created func(V) string) []string {
	var out []string
	for _, r := range records {
		out = append(out, created(r))
	}
	return out
}

func pad12(id int64) string { return fmt.Sprintf("#%012d", id) }

// list pages through a random list with a random page size and checks that
// it returns each matching record exactly once, in order.
func (m *model) list(t *rapid.T) {
	a := m.drawAccount(t)
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
	a := m.drawAccount(t)
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
	m.expectRefused(r, "cursor", "cursor used elsewhere")
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
	a := m.drawAccount(t)
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
	m.expectRefused(r, q.param, q.query)
}

// longPathAndFilters sends values beyond DynamoDB's key sizes in paths and
// filters: 404 or 400, never a 500.
func (m *model) longPathAndFilters(t *rapid.T) {
	a := m.drawAccount(t)
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
