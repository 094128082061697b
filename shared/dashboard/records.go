package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/wire"
)

// The expenses and customers pages, and what the list pages of this file and
// inventory.go share: reading a list's filters, showing a refused filter
// beside the filter form, and paging with the API's cursor.

// recordsPaging is what every list page shows around its rows: the filters it
// was given (to fill the filter form and to keep in the pager's links), the
// cursor of the next page, and a refused filter's message and field errors.
type recordsPaging struct {
	// Query holds the list's non-empty filters, limit and cursor, as sent to
	// the API; the pager's links are this with the cursor changed.
	Query url.Values
	// Next is the API's next_cursor; "" on the last page.
	Next string
	// FilterError and FilterFields are the API's refusal of the filters
	// (such as a date it cannot read). They are kept apart from the
	// layout's Error and Fields so an add form's field of the same name is
	// not marked wrong.
	FilterError  string
	FilterFields map[string]string
}

// Paged reports whether the page shown is not the first, so the pager
// offers the way back to it.
func (p recordsPaging) Paged() bool { return p.Query.Get("cursor") != "" }

// recordsQuery returns the API query of a list page: the request's values of
// limit, cursor and the named filters, trimmed, leaving out empty ones. The
// API refuses an empty filter, but an empty box in the filter form means
// "do not filter by it".
func recordsQuery(r *http.Request, filters ...string) url.Values {
	in := r.URL.Query()
	out := url.Values{}
	for _, name := range append([]string{"limit", "cursor"}, filters...) {
		if val := strings.TrimSpace(in.Get(name)); val != "" {
			out.Set(name, val)
		}
	}
	return out
}

// recordsList runs list with p's query and returns its records, keeping
// its next_cursor in p.Next. A query the API refuses (400, such as a bad
// date) is not the page's failure: it is kept in p to show beside the
// filter form, w is turned to answer 400, and recordsList returns no
// records and no error. Any other error is returned for the page to fail
// with.
func recordsList[T any](w *http.ResponseWriter, r *http.Request, v *visit, p *recordsPaging,
	list func(context.Context, business.Account, url.Values) (listPage[T], error),
) ([]T, error) {
	page, err := list(r.Context(), v.acct, localFilters(p.Query, v.acct.Timezone))
	var be *business.Error
	if errors.As(err, &be) && be.Code == business.EINVALID {
		p.FilterError, p.FilterFields = businessMessage(err), be.Fields
		*w = &statusOverride{ResponseWriter: *w, status: http.StatusBadRequest}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p.Next = page.Next
	return page.Items, nil
}

// localFilters returns q with its filters on a moment, typed as local
// dates (YYYY-MM-DD) or local times (YYYY-MM-DD HH:MM:SS) in timezone, as
// the API's UTC times: created_at (added on or after) from the start of its
// local day, updated_at (changed on or before) to that day's last second.
// The API reads them in UTC, as it stores moments; the dashboard's forms take
// them in the business's timezone, the one every date it shows is in. A value
// it cannot read is sent as typed, for the API to refuse with its own
// message.
func localFilters(q url.Values, timezone string) url.Values {
	out := url.Values{}
	for k, vs := range q {
		out[k] = vs
	}
	loc, err := business.LoadTimezone(timezone)
	if err != nil {
		return out
	}
	for name, upper := range map[string]bool{"created_at": false, "updated_at": true} {
		if v := q.Get(name); v != "" {
			out.Set(name, localMoment(v, loc, upper))
		}
	}
	return out
}

// localMoment is v, a local date or time in loc, as the API's UTC time
// (see localFilters); v itself when it is neither.
func localMoment(v string, loc *time.Location, upper bool) string {
	var t time.Time
	if d, err := time.Parse(business.DateFormat, v); err == nil {
		t = localDayStart(d.Year(), d.Month(), d.Day(), loc)
		if upper {
			t = localDayStart(d.Year(), d.Month(), d.Day()+1, loc).Add(-time.Second)
		}
	} else if d, err := time.ParseInLocation("2006-01-02 15:4:5", v, loc); err == nil {
		t = d
	} else if d, err := time.ParseInLocation("2006-01-02T15:4:5", v, loc); err == nil {
		t = d
	} else {
		return v
	}
	if u := t.UTC(); u.Year() >= 1 && u.Year() <= 9999 {
		return u.Format(business.TimeFormat)
	}
	return v
}

// localDayStart returns the first instant whose local date in loc is the
// day y-m-d (d may overflow, as in time.Date). That is midnight, except
// where the clocks jump forward at midnight (Santiago, Asunción, Havana,
// Beirut in spring): the day then begins at the jump, 01:00, and
// time.Date's reading of the missing midnight falls in the day before.
func localDayStart(y int, m time.Month, d int, loc *time.Location) time.Time {
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	if ty, tm, td := t.Date(); time.Date(ty, tm, td, 0, 0, 0, 0, time.UTC).Before(day) {
		if _, end := t.ZoneBounds(); !end.IsZero() {
			t = end
		}
	}
	return t
}

// recordsIdemKey is the hidden idem input of a create form: a fresh
// random token each time the form is drawn, sent as the create's
// Idempotency-Key so a double submit records once.
func recordsIdemKey() string {
	t, _ := business.NewToken()
	return t
}

// recordsFormBody is the JSON body a create route takes, read from a posted form:
// each named field's trimmed value, leaving out empty ones, so a missing
// required field gets the API's own "required" message naming it.
func recordsFormBody(form url.Values, names ...string) map[string]string {
	body := map[string]string{}
	for _, name := range names {
		if val := strings.TrimSpace(form.Get(name)); val != "" {
			body[name] = val
		}
	}
	return body
}

// expensesData is the expenses page: the add form's idempotency key and
// default "recorded by", and one page of the list.
type expensesData struct {
	recordsPaging
	Expenses  []wire.Expense
	Idem      string
	CreatedBy string
}

// expenseFields are the add-expense body's fields, as the form names them.
var expenseFields = []string{"expense_type", "expense_description", "expense_amount", "payment_method", "expense_image", "created_by"}

// expensesPage lists the expenses, filtered by type and dates as
// list-expenses allows, with the form to add one.
func expensesPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	d := expensesData{recordsPaging: recordsPaging{Query: recordsQuery(r, "expense_type", "created_at", "updated_at")},
		Idem: recordsIdemKey(), CreatedBy: v.session.Email}
	var err error
	if d.Expenses, err = recordsList(&w, r, v, &d.recordsPaging, s.api.ListExpenses); err != nil {
		return err
	}
	return s.render(w, r, v, "expenses", "Expenses", "expenses", d)
}

// addExpense records the posted expense through add-expense, once per form
// drawn (its idem key).
func addExpense(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	added, err := s.api.AddExpense(r.Context(), v.acct, recordsFormBody(r.PostForm, expenseFields...), r.PostForm.Get("idem"))
	if err != nil {
		return err
	}
	return s.done(w, r, "/dashboard/expenses", "Expense recorded: "+formatMoney(added.Amount.String(), v.acct.Currency)+" for "+added.ExpenseType)
}

// customersData is the customers page: the add form's idempotency key and
// one page of the list.
type customersData struct {
	recordsPaging
	Customers []wire.Customer
	Idem      string
}

// customerFields are the add-customer body's fields, as the form names them.
var customerFields = []string{"name", "email", "phone", "address"}

// customersPage lists the customers (list-customers filters only by the
// date they were added) with the form to add one.
func customersPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	d := customersData{recordsPaging: recordsPaging{Query: recordsQuery(r, "created_at")}, Idem: recordsIdemKey()}
	var err error
	if d.Customers, err = recordsList(&w, r, v, &d.recordsPaging, s.api.ListCustomers); err != nil {
		return err
	}
	return s.render(w, r, v, "customers", "Customers", "customers", d)
}

// addCustomer adds the posted customer through add-customer, once per form
// drawn (its idem key).
func addCustomer(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	added, err := s.api.AddCustomer(r.Context(), v.acct, recordsFormBody(r.PostForm, customerFields...), r.PostForm.Get("idem"))
	if err != nil {
		return err
	}
	return s.done(w, r, "/dashboard/customers", "Customer added: "+added.Name)
}
