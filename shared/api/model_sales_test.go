package api_test

// Sales in the model: made and edited (payments, customers, numbers and
// lines), with and without stocked items.

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/money"

	"github.com/shopspring/decimal"
	"pgregory.net/rapid"
)

var invoiceTypes = []string{"main", "pos", "order"}

func (m *model) addSale(t *rapid.T) {
	a := m.drawAccount(t)
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
	reminder := m.drawReminder(t)
	if reminder != "" {
		body["reminder_date"] = reminder
	}
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
	status := business.DeriveStatus(paid, total)
	if s["payment_status"] != status || s["amount_paid"] != paid.String() || s["total_amount"] != total.String() {
		m.t.Fatalf("sale %s: want status %s paid %s total %s", r.raw, status, paid, total)
	}
	pays := r.list("sales-payment")
	if (paid.IsZero() && len(pays) != 0) || (!paid.IsZero() && len(pays) != 1) {
		m.t.Fatalf("payments %v for amount_paid %s", pays, paid)
	}
	ms := m.keepNewSale(a, r, &mSale{invoiceType: typ, status: status, dueDate: due, customer: custID, sub: sub, total: total,
		paid: paid, payments: len(pays), lines: mlines, sent: lines, payType: payType, reminder: reminder})
	if code != "" && ms.code != code {
		m.t.Fatalf("invoice_code %s, want %s", ms.code, code)
	}
	a.moveStock(take, mMove{kind: "sale", invoice: ms.code})
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

// keepNewSale adds to the book the sale a 200 answer made, s as sent with
// its code, number, id and created_at as answered, once it has checked the
// answer against s, and what it says of when the sale was made (the store's
// clock), of its first payment's method and of its payment_date (none is
// sent): the business's date of that payment.
func (m *model) keepNewSale(a *mAccount, r reply, s *mSale) *mSale {
	var got map[string]any
	got, s.id = m.newRecord(a, r, "sales", "sale")
	s.code, s.number, s.created = fmt.Sprint(got["invoice_code"]), got["invoice_number"].(string), got["created_at"].(string)
	if msg := checkSale(s, r); msg != "" {
		m.t.Fatalf("new sale: %s: %s", msg, r.raw)
	}
	m.stamped("new sale's created_at", got["created_at"])
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
	s.sure = m.sureReminder(a, s)
	a.bookNewSale(s)
	a.sales[s.code] = s
	a.numbers[s.number] = true
	return s
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

func (m *model) editSale(t *rapid.T) {
	a := m.drawAccount(t)
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
		s.sure = false // the new customer's email, or none
	case "number":
		delete(a.numbers, s.number)
		s.number = got["invoice_number"].(string)
		a.numbers[s.number] = true
	case "lines":
		a.moveStock(lineStock(s.lines).sub(lineStock(newLines)), mMove{kind: "sale_edit", invoice: code})
		a.book(mFact{at: parseStamp(s.created), invoiced: cents(total) - cents(s.total)})
		s.lines, s.sent, s.sub, s.total = newLines, sent, sub, total
		s.status = business.DeriveStatus(s.paid, s.total)
		s.sure = false // a paid sale may ask for money again
	}
	if msg := checkSale(s, r); msg != "" {
		m.t.Fatalf("edit %s: %s: %s", op, msg, r.raw)
	}
}

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
	case got["invoice_link_active"] != (s.link != ""):
		return fmt.Sprintf("model: invoice link active %v", s.link != "")
	case strOrEmpty(got["reminder_date"]) != s.reminder:
		return fmt.Sprintf("model: reminder date %q", s.reminder)
	}
	for i, x := range r.list("sales-item") {
		l, ml := x.(map[string]any), s.lines[i]
		if strOrEmpty(l["item_code"]) != ml.itemCode || l["quantity"] != ml.qty.String() || !decEq(l["quantity_returned"], ml.returned) {
			return fmt.Sprintf("line %d: model: item %q, quantity %s, returned %s", i+1, ml.itemCode, ml.qty, ml.returned)
		}
	}
	return ""
}

// stockedSale sells one or two stocked items, paid in full or in part,
// making first what it needs (a customer, a category, items in stock): the
// sales that refunds with returns, voids and the ledger work on, which
// random adds reach too rarely in a sequence.
func (m *model) stockedSale(t *rapid.T) {
	a := m.drawAccount(t)
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
	ms := m.keepNewSale(a, r, &mSale{invoiceType: "pos", status: business.DeriveStatus(paid, total), dueDate: "2026-12-31",
		customer: cust, sub: sub, total: total, paid: paid, payments: 1, lines: lines, sent: sent, payType: "Cash"})
	a.moveStock(take, mMove{kind: "sale", invoice: ms.code})
}

// openSaleBody is a sale of no lines to cust due on due.
func openSaleBody(cust int64, due string, total, paid money.Amount) map[string]any {
	return map[string]any{"customer_id": cust, "sub_total_amount": total, "total_amount": total, "amount_paid": paid,
		"invoice_type": "main", "payment_type": "Cash", "due_date": due}
}

// keepOpenSale checks the answer r to openSaleBody (with reminder as its
// reminder_date, "" for none) and adds the sale to the books.
func (m *model) keepOpenSale(a *mAccount, r reply, cust int64, due, reminder string, total, paid money.Amount) {
	m.expect(r, 200, "add sale")
	pays := 0
	if !paid.IsZero() {
		pays = 1
	}
	m.keepNewSale(a, r, &mSale{invoiceType: "main", status: business.DeriveStatus(paid, total), dueDate: due, customer: cust,
		sub: total, total: total, paid: paid, payments: pays, payType: "Cash", reminder: reminder})
}
