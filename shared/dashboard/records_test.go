package dashboard

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// recordsAPI calls the API and fails the test unless it answers 200.
func (o *owner) recordsAPI(method, path string, body any) json.RawMessage {
	o.t.Helper()
	st, data := o.callAPI(method, path, body)
	if st != http.StatusOK {
		o.t.Fatalf("%s %s: %d %s", method, path, st, data)
	}
	return data
}

// recordsCount is how many records the API lists under key at path (one
// page of at most 200).
func (o *owner) recordsCount(path, key string) int {
	o.t.Helper()
	var list map[string][]json.RawMessage
	if err := json.Unmarshal(o.recordsAPI(http.MethodGet, path+"?limit=200", nil), &list); err != nil {
		o.t.Fatal(err)
	}
	return len(list[key])
}

// recordsLink returns the path of the link whose text is text, with the
// query as the page wrote it, for following a pager; "" when there is none.
func recordsLink(page, path, text string) string {
	re := regexp.MustCompile(`<a href="([^"]*)"[^>]*>` + regexp.QuoteMeta(text) + `</a>`)
	m := re.FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return path + html.UnescapeString(m[1])
}

// recordsWalk follows a list page's "next" link from first until it runs
// out, and returns every page's body.
func recordsWalk(t *testing.T, o *owner, first, next string) []string {
	t.Helper()
	path, _, _ := strings.Cut(first, "?")
	var pages []string
	for link := first; link != ""; {
		st, page, _ := o.get(link)
		if st != http.StatusOK {
			t.Fatalf("%s: %d", link, st)
		}
		pages = append(pages, page)
		if len(pages) > 10 {
			t.Fatal("the pager does not end")
		}
		link = recordsLink(page, path, next)
	}
	return pages
}

// TestExpensesPage: expenses made through the API appear with their money,
// a page at a time (the pager keeps the filter), filtered by type; a bad
// date is the API's message beside the filters, answered 400.
func TestExpensesPage(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("RECEXP1")
	for _, e := range []struct{ kind, amount string }{{"Rent", "1250.50"}, {"Transport", "30.00"}, {"Rent", "99.00"}, {"Rent", "10.00"}} {
		o.recordsAPI(http.MethodPost, "/api/v1/expenses/add", map[string]any{"expense_type": e.kind, "expense_amount": e.amount,
			"payment_method": "cash", "created_by": "Kofi"})
	}
	st, page, _ := o.get("/dashboard/expenses")
	if st != http.StatusOK {
		t.Fatalf("expenses: %d", st)
	}
	mustContain(t, page, "GHS 1,250.50", "GHS 30.00", "Transport", `name="idem"`, `<label for="expense_amount">`)

	// Rent only, two a page: three rents on two pages, the filter kept.
	pages := recordsWalk(t, o, "/dashboard/expenses?limit=2&expense_type=Rent", "Next page of expenses")
	if len(pages) != 2 {
		t.Fatalf("rent expenses on %d pages, want 2", len(pages))
	}
	all := strings.Join(pages, "")
	mustContain(t, all, "GHS 1,250.50", "GHS 99.00", "GHS 10.00")
	if strings.Contains(all, "GHS 30.00") {
		t.Error("the type filter was lost on a page")
	}
	mustContain(t, pages[1], "First page of expenses")

	st, page, _ = o.get("/dashboard/expenses?created_at=yesterday")
	if st != http.StatusBadRequest {
		t.Errorf("bad date: %d, want 400", st)
	}
	mustContain(t, page, "must be a datetime YYYY-MM-DD HH:MM:SS or a date YYYY-MM-DD", `id="filter-created_at-err"`, "Add an expense")
}

// TestAddExpenseForm: the form records an expense the API then lists, once
// however often the same form is sent; a refused form shows the API's
// message and field errors, answers 400 and records nothing.
func TestAddExpenseForm(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("RECEXP2")
	_, page, _ := o.get("/dashboard/expenses")
	idem := regexp.MustCompile(`name="idem" value="([^"]+)"`).FindStringSubmatch(page)
	if idem == nil {
		t.Fatal("the form has no idem key")
	}
	form := url.Values{"idem": {idem[1]}, "expense_type": {"Electricity"}, "expense_amount": {"412.75"},
		"payment_method": {"mobile money"}, "created_by": {"Ama"}, "expense_description": {"March bill"}}
	for range 2 {
		st, page, path := o.post("/dashboard/expenses", form)
		if st != http.StatusOK || path != "/dashboard/expenses" {
			t.Fatalf("add expense: %d at %s", st, path)
		}
		mustContain(t, page, "Expense recorded: GHS 412.75 for Electricity", "March bill")
	}
	list := string(o.recordsAPI(http.MethodGet, "/api/v1/expenses", nil))
	if n := o.recordsCount("/api/v1/expenses", "expenses"); n != 1 || !strings.Contains(list, `"expense_amount":"412.75"`) {
		t.Fatalf("API lists %d expenses, want the one sent twice: %s", n, list)
	}

	st, page, _ := o.post("/dashboard/expenses", url.Values{"expense_type": {"Water"}, "payment_method": {"cash"}, "created_by": {"Ama"}})
	if st != http.StatusBadRequest {
		t.Errorf("expense without an amount: %d, want 400", st)
	}
	mustContain(t, page, `role="alert"`, "expense_amount", `id="expense_amount-err"`, `aria-invalid="true"`, `value="Water"`)
	if n := o.recordsCount("/api/v1/expenses", "expenses"); n != 1 {
		t.Errorf("a refused expense was recorded: %d expenses", n)
	}
}

// TestCustomersPage: customers made through the API appear, a page at a
// time; a bad date filter is the API's message, answered 400.
func TestCustomersPage(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("RECCUS1")
	for _, name := range []string{"Ama Mensah", "Kofi Boateng", "Esi Owusu"} {
		o.recordsAPI(http.MethodPost, "/api/v1/customers/add", map[string]any{"name": name, "phone": "0244000000"})
	}
	pages := recordsWalk(t, o, "/dashboard/customers?limit=2", "Next page of customers")
	if len(pages) != 2 {
		t.Fatalf("customers on %d pages, want 2", len(pages))
	}
	mustContain(t, strings.Join(pages, ""), "Ama Mensah", "Kofi Boateng", "Esi Owusu", "0244000000")

	st, page, _ := o.get("/dashboard/customers?created_at=2024-13-01")
	if st != http.StatusBadRequest {
		t.Errorf("bad date: %d, want 400", st)
	}
	mustContain(t, page, "created_at", `id="filter-created_at-err"`, "Add a customer")
}

// TestAddCustomerForm: the form adds a customer the API then lists; a bad
// email is refused with the API's message beside the field, 400, and
// nothing added.
func TestAddCustomerForm(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("RECCUS2")
	st, page, path := o.post("/dashboard/customers", url.Values{"name": {"Yaw Darko"}, "email": {"yaw@example.com"}, "address": {"Osu, Accra"}})
	if st != http.StatusOK || path != "/dashboard/customers" {
		t.Fatalf("add customer: %d at %s", st, path)
	}
	mustContain(t, page, "Customer added: Yaw Darko", "yaw@example.com", "Osu, Accra")
	if list := string(o.recordsAPI(http.MethodGet, "/api/v1/customers", nil)); !strings.Contains(list, `"name":"Yaw Darko"`) {
		t.Fatalf("API lacks the customer: %s", list)
	}

	st, page, _ = o.post("/dashboard/customers", url.Values{"name": {"Abena"}, "email": {"not an email"}})
	if st != http.StatusBadRequest {
		t.Errorf("bad email: %d, want 400", st)
	}
	mustContain(t, page, "must be an email address", `id="email-err"`, `value="Abena"`)
	if n := o.recordsCount("/api/v1/customers", "customers"); n != 1 {
		t.Errorf("a refused customer was added: %d customers", n)
	}
}
