package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/wire"
)

// The sales pages: the list (the API's list-sales with its filters, one
// page at a time) and one sale with its lines, payments and refunds and the
// forms that record a payment, a refund or a void, each through the API.

// salesFilters are the list-sales query parameters the filter form offers
// (the filters and the page size), passed to the API as they are typed (the
// API checks them) but for created_at, a moment typed in the business's
// timezone (see localFilters). due_date and payment_date are the sale's own
// dates and are matched as they are.
var salesFilters = []string{"invoice_code", "customer_id", "payment_status", "invoice_type", "payment_date", "created_at", "due_date", "limit"}

// saleView is a sale as the pages show it: the API's, with its refund
// status.
type saleView struct{ wire.Sale }

// Refunded reports whether some of the sale's money was given back.
func (s saleView) Refunded() bool { return !s.AmountRefunded.IsZero() }

// RefundStatus is what a refund did to the sale, beside its payment status
// (which counts what was paid, not what was given back): "Refunded" when all
// that was paid went back, "Partly refunded" when some did, "" when none.
func (s saleView) RefundStatus() string {
	switch {
	case !s.Refunded():
		return ""
	case s.AmountRefunded.Cmp(s.AmountPaid) >= 0:
		return "Refunded"
	}
	return "Partly refunded"
}

// salesRow is one row of the list: the sale and its customer's name.
type salesRow struct {
	saleView
	CustomerName string
}

// salesData is what templates/sales.html draws.
type salesData struct {
	Currency string
	Timezone string
	Filters  url.Values // the filters and page size in force, for the form and the pager
	Filtered bool       // some filter narrows the list
	Rows     []salesRow
	Next     string // the API's next_cursor, "" on the last page
	Paged    bool   // this is not the first page
	Failed   bool   // the API refused the filters
}

// salesPage lists sales with the filters of the request's query. A filter
// the API refuses is shown on the page, with the API's status and message,
// beside the form to correct it.
func salesPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	in := r.URL.Query()
	d := salesData{Currency: v.acct.Currency, Timezone: v.acct.Timezone, Filters: url.Values{}}
	for _, name := range salesFilters {
		if val := strings.TrimSpace(in.Get(name)); val != "" {
			d.Filters.Set(name, val)
			d.Filtered = d.Filtered || name != "limit"
		}
	}
	q := localFilters(d.Filters, v.acct.Timezone)
	if c := in.Get("cursor"); c != "" {
		q.Set("cursor", c)
		d.Paged = true
	}
	page, err := s.api.ListSales(r.Context(), v.acct, q)
	if err != nil {
		if !salesRefusal(err) {
			return err
		}
		// Drawn as a page, not the error page: the form stays to fix the filter.
		v.err, d.Failed = err, true
		w = &statusOverride{ResponseWriter: w, status: statusOf(err)}
		return s.render(w, r, v, "sales", "Sales", "sales", d)
	}
	d.Next = page.Next
	ids := make([]string, len(page.Items))
	for i, sale := range page.Items {
		ids[i] = sale.CustomerID
	}
	names := s.salesCustomerNames(r.Context(), v.acct, ids)
	for _, sale := range page.Items {
		d.Rows = append(d.Rows, salesRow{saleView: saleView{sale}, CustomerName: names[sale.CustomerID]})
	}
	return s.render(w, r, v, "sales", "Sales", "sales", d)
}

// salesRefusal reports whether err is the API refusing the request (a 4xx
// a person can act on), as opposed to a fault to answer with the error page.
func salesRefusal(err error) bool {
	var be *business.Error
	st := statusOf(err)
	return errors.As(err, &be) && st >= 400 && st < 500
}

// salesNameLookups bounds how many customers a page looks up at once.
const salesNameLookups = 8

// salesCustomerNames returns the names of the customers ids name (each
// looked up once, a few at a time, through get-customer). A customer that
// cannot be read is left out; the page then shows its number.
func (s *Server) salesCustomerNames(ctx context.Context, acct business.Account, ids []string) map[string]string {
	names := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, salesNameLookups)
	seen := map[string]bool{}
	for _, id := range ids {
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			c, err := s.api.GetCustomer(ctx, acct, id)
			if err == nil && c.Name != "" {
				mu.Lock()
				names[id] = c.Name
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return names
}

func init() {
	funcs["salesFormv"] = salesFormValue
	funcs["salesField"] = salesFieldError
	funcs["salesStatus"] = salesStatusText
}

// salesStatusText is how a person reads the API's payment_status.
func salesStatusText(status string) string {
	switch status {
	case business.StatusPaid:
		return "Paid"
	case business.StatusPartial:
		return "Partly paid"
	case business.StatusDraft:
		return "Unpaid"
	case business.StatusVoid:
		return "Voided"
	}
	return status
}

// salesFormValue is the value the refused form had for name when that form
// was the one named which (its hidden "form" input), else def: the sale
// page's three forms share field names, and only the one sent is refilled.
func salesFormValue(form url.Values, which, name, def string) string {
	if form == nil || form.Get("form") != which {
		return def
	}
	return form.Get(name)
}

// salesFieldError is the API's message for field name when the refused form
// was the one named which, else "".
func salesFieldError(fields map[string]string, form url.Values, which, name string) string {
	if form == nil || form.Get("form") != which {
		return ""
	}
	return fields[name]
}

// saleLineView is a line with what may still be returned of it, and the
// index its refund field is named by (lines[Index].quantity).
type saleLineView struct {
	wire.SaleLine
	Index int
	Left  string
}

// saleData is what templates/sale.html draws.
type saleData struct {
	Currency     string
	Timezone     string
	Sale         saleView
	CustomerName string
	Lines        []saleLineView
	Payments     []wire.SalePayment
	Refunds      []wire.Refund
	Due          string   // total less paid
	Refundable   string   // paid less refunded
	Returnable   bool     // some line has a quantity left to return
	Methods      []string // the payment and refund methods the API accepts
	RefundIdem   string   // this drawing's idempotency keys, so a double submit records once
	VoidIdem     string
	Invoice      invoiceData // the customer's side: the link, the PDF, the reminders
}

// salePage shows one sale with its forms (none once it is void).
func salePage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return drawSale(s, w, r, v, "")
}

// drawSale shows one sale (read as get-sale reads it, with its notices:
// see findSale); madeLink is the URL of the invoice link just made ("" when
// none was), shown this once.
func drawSale(s *Server, w http.ResponseWriter, r *http.Request, v *visit, madeLink string) error {
	code := r.PathValue("invoice_code")
	full, err := s.findSale(r.Context(), v.acct, code)
	if err != nil {
		return err
	}
	rec := wire.SaleData(full.Sale, full.Payments, full.Refunds)
	sale := rec.Sale
	d := saleData{Currency: v.acct.Currency, Timezone: v.acct.Timezone, Sale: saleView{sale},
		Payments: rec.Payments, Refunds: rec.Refunds, Methods: business.PaymentTypes[1:],
		Due: sale.Total.Sub(sale.AmountPaid).String(), Refundable: sale.AmountPaid.Sub(sale.AmountRefunded).String()}
	var email string
	if c, err := s.api.GetCustomer(r.Context(), v.acct, sale.CustomerID); err == nil {
		d.CustomerName, email = c.Name, c.Email
	}
	d.Invoice = invoiceDataOf(full, email, madeLink, v.acct.Timezone, s.now())
	for i, l := range rec.Lines {
		lv := saleLineView{SaleLine: l, Index: i}
		if left, ok := l.Quantity.Sub(l.Returned); ok && !left.IsZero() {
			lv.Left, d.Returnable = left.String(), true
		}
		d.Lines = append(d.Lines, lv)
	}
	d.RefundIdem, _ = business.NewToken()
	d.VoidIdem, _ = business.NewToken()
	return s.render(w, r, v, "sale", "Sale "+sale.InvoiceNumber, "sales", d)
}

// recordPayment records money received on a sale. The API has no payment
// route: edit-sale adds one payment for each increase of amount_paid, so
// this sends the sale's required fields unchanged with amount_paid raised by
// the amount. The form carries the amount paid it showed; if the sale was
// paid meanwhile (another tab, a double submit), it is refused rather than
// recorded twice, and the edit is made only if the sale is still the one
// read (If-Match).
func recordPayment(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	code, f := r.PathValue("invoice_code"), r.PostForm
	amount, err := money.ParseAmount(strings.TrimSpace(f.Get("amount")))
	if err != nil || amount.IsZero() {
		return business.FieldErrors{"amount": "must be an amount above 0 with at most 2 decimals, such as 25.00"}.Err()
	}
	rec, etag, err := s.api.GetSale(r.Context(), v.acct, code)
	if err != nil {
		return err
	}
	sale, paid := rec.Sale, rec.Sale.AmountPaid
	if before, err := money.ParseAmount(f.Get("paid_before")); err != nil || before.Cmp(paid) != 0 {
		return business.Errorf(business.ECONFLICT, "This sale's payments changed since the page was drawn (%s is paid now): check them before recording this payment", paid)
	}
	body := map[string]any{
		"invoice_code": sale.InvoiceCode.String(), "invoice_number": sale.InvoiceNumber, "customer_id": sale.CustomerID,
		"sub_total_amount": sale.SubTotal, "total_amount": sale.Total, "amount_paid": paid.Add(amount).String(),
	}
	if m := strings.TrimSpace(f.Get("payment_type")); m != "" {
		body["payment_type"] = m
	}
	if n := strings.TrimSpace(f.Get("payment_internal_note")); n != "" {
		body["payment_internal_note"] = n
	}
	// If-Match: a payment recorded between the read above and this edit
	// (another tab, a double submit) makes the edit 412, never a second
	// payment.
	err = s.api.EditSale(r.Context(), v.acct, code, body, etag)
	if business.ErrorCode(err) == business.EPRECONDITION {
		return business.Errorf(business.ECONFLICT, "This sale changed while the payment was being recorded: check its payments before recording this one")
	}
	if err != nil {
		return salesRenamed(err, func(name string) string {
			if name == "amount_paid" {
				return "amount"
			}
			return name
		})
	}
	return s.done(w, r, "/dashboard/sales/"+url.PathEscape(code), "Payment of "+formatMoney(amount.String(), v.acct.Currency)+" recorded")
}

// refundLineField matches a refund form's line field, lines[N].quantity,
// N being the line's index in the sale.
var refundLineField = regexp.MustCompile(`^lines\[(\d{1,3})\]\.quantity$`)

// refundSale records a refund through refund-sale: the amount, the reason,
// the method, and the quantities returned of each line (the API puts a
// stocked line's quantity back in stock).
func refundSale(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	code, f := r.PathValue("invoice_code"), r.PostForm
	body := map[string]any{}
	for _, name := range []string{"amount", "reason", "refund_method"} {
		if val := strings.TrimSpace(f.Get(name)); val != "" {
			body[name] = val
		}
	}
	var indexes []int // the sale line index of each entry of lines
	var lines []map[string]any
	for name, vals := range f {
		m := refundLineField.FindStringSubmatch(name)
		if m == nil || strings.TrimSpace(vals[0]) == "" {
			continue
		}
		i, _ := strconv.Atoi(m[1])
		indexes = append(indexes, i)
	}
	slices.Sort(indexes)
	for _, i := range indexes {
		lines = append(lines, map[string]any{"sales_item_id": i + 1, "quantity": strings.TrimSpace(f.Get("lines[" + strconv.Itoa(i) + "].quantity"))})
	}
	if len(lines) > 0 {
		body["lines"] = lines
	}
	if err := s.api.RefundSale(r.Context(), v.acct, code, body, f.Get("idem")); err != nil {
		// The API names lines by their place in the body; the form by the sale's line.
		return salesRenamed(err, func(name string) string {
			var k int
			var rest string
			if n, _ := fmt.Sscanf(name, "lines[%d].%s", &k, &rest); n == 2 && k >= 0 && k < len(indexes) {
				return "lines[" + strconv.Itoa(indexes[k]) + "].quantity"
			}
			return name
		})
	}
	return s.done(w, r, "/dashboard/sales/"+url.PathEscape(code), "Refund recorded")
}

// voidSale voids a sale through void-sale, once the person has confirmed
// that a void cannot be undone.
func voidSale(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	code, f := r.PathValue("invoice_code"), r.PostForm
	if f.Get("confirm") != "yes" {
		return business.FieldErrors{"confirm": "tick “I understand this cannot be undone” to void the sale"}.Err()
	}
	body := map[string]any{}
	if reason := strings.TrimSpace(f.Get("reason")); reason != "" {
		body["reason"] = reason
	}
	if err := s.api.VoidSale(r.Context(), v.acct, code, body, f.Get("idem")); err != nil {
		return err
	}
	return s.done(w, r, "/dashboard/sales/"+url.PathEscape(code), "Sale voided")
}

// salesRenamed returns the API's refusal err with its fields named as the
// form names them (rename maps an API name to the form's), so the message
// sits beside the field it is about; err as it is when no name changes.
func salesRenamed(err error, rename func(string) string) error {
	var be *business.Error
	if !errors.As(err, &be) || len(be.Fields) == 0 {
		return err
	}
	fe, changed := business.FieldErrors{}, false
	for name, msg := range be.Fields {
		to := rename(name)
		changed = changed || to != name
		fe.Add(to, msg)
	}
	if !changed {
		return err
	}
	var out *business.Error
	errors.As(fe.Err(), &out)
	out.Code = be.Code
	return out
}
