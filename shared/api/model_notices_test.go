package api_test

// Notices in the model: sales carry reminder dates around the midnight the
// clock starts before, and a step runs the notices (the send-notices
// function's runner) at the model's clock, sending through SMTP to a real
// Mailpit. Each customer's address is its own (its book's id in it), so
// every email the model reads is one of its sequence. The rules checked:
// a reminder goes to the sale's customer, never twice for one sale and
// date, never for a paid or void sale, never before its date begins where
// the merchant is, with the sale's current link (or a link it makes); a
// reminder the model is sure of (see sureReminder) goes once its date has
// begun; and the feed has sale.reminder_sent once for each reminder
// emailed, sale.overdue at most once a sale, never early, never for a paid
// or void sale.

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/mail"
	"bizdata/shared/money"
	"bizdata/shared/notices"
	"bizdata/shared/testdb"
	"bizdata/shared/testmail"

	"pgregory.net/rapid"
)

// mMail is the notices' runner of one env and the inbox it sends to.
type mMail struct {
	tb     testing.TB // Mailpit's API fails the test itself: it is not the system under test
	inbox  *testmail.Inbox
	runner *notices.Runner
	seen   map[string]int // messages read so far, by recipient
}

// noticeBase is where the reminders say the hosted invoices are.
const noticeBase = "https://pay.example.test"

func newModelMail(t *testing.T, inbox *testmail.Inbox, e *env) *mMail {
	return &mMail{tb: t, inbox: inbox, seen: map[string]int{}, runner: &notices.Runner{Store: e.store,
		Mail: mail.NewSMTP(inbox.SMTPAddr(), "Model <invoices@bizdata.localhost>"), BaseURL: noticeBase, Log: testdb.Quiet()}}
}

// customerEmail is an address of customer id of book a, n telling one of
// its addresses from another: no other book's customer has it.
func customerEmail(a *mAccount, id int64, n int) string {
	return fmt.Sprintf("c%d.%d.%s@model.example", id, n, strings.ToLower(a.id))
}

// reminderDates are the reminder dates sales are given: the day before the
// clock starts (a date in the past), that day, and the next two (one past
// the midnight the clock starts near, one it never reaches).
func (m *model) reminderDates() []string {
	var out []string
	for d := -1; d <= 2; d++ {
		out = append(out, m.day.AddDate(0, 0, d).Format(business.DateFormat))
	}
	return out
}

// drawReminder draws a new sale's reminder date, "" for none.
func (m *model) drawReminder(t *rapid.T) string {
	return rapid.SampledFrom(append([]string{""}, m.reminderDates()...)).Draw(t, "reminder")
}

// sureReminder reports whether new sale s (reminder date r) must be
// reminded once r begins: its customer has an email (which no step takes
// away), r has not passed where the merchant is and no change of timezone
// is pending (after which the zone in effect and the newest would differ),
// and no overdue notice comes before r (a sale keeps one notice planned at
// a time: a reminder waiting behind an overdue notice can pass unsent when
// a run comes more than a day late). Whatever may move or drop its notice
// later makes it unsure: an edit of its reminder date, customer or lines,
// a refund (its status may go back to unpaid), a change of timezone.
func (m *model) sureReminder(a *mAccount, s *mSale) bool {
	c := a.customers[s.customer]
	now := m.clk.now()
	today := a.localDate(now)
	if s.reminder == "" || c == nil || c.email == "" || s.reminder < today || a.tz[len(a.tz)-1].from.After(now) {
		return false
	}
	od := overdueDate(s.dueDate)
	return !(today <= od && od < s.reminder)
}

func overdueDate(due string) string {
	d, err := time.Parse(business.DateFormat, due)
	if err != nil {
		return ""
	}
	return d.AddDate(0, 0, 1).Format(business.DateFormat)
}

// unsure makes every sale of a's business unsure of its reminder (its
// timezone changed).
func unsure(a *mAccount) {
	for _, x := range []*mAccount{a.biz.live, a.biz.test} {
		if x != nil {
			for _, s := range x.sales {
				s.sure = false
			}
		}
	}
}

// setReminder edits a sale's reminder date: to another date, to one it had
// before, or to none.
func (m *model) setReminder(t *rapid.T) {
	a := m.drawAccount(t)
	code, s, ok := pick(t, a.sales, "sale")
	if !ok {
		return
	}
	date := m.drawReminder(t)
	body := map[string]any{"invoice_code": code, "invoice_number": s.number, "customer_id": s.customer,
		"sub_total_amount": s.sub, "total_amount": s.total, "amount_paid": s.paid, "reminder_date": date}
	if date == "" {
		body["reminder_date"] = nil
	}
	r := m.send("PUT", "/api/v1/sales/edit/"+code, a.key, body, nil)
	if s.void {
		m.expectError(r, 409, "Sale is void", "reminder of a void sale")
		return
	}
	m.expect(r, 200, "set reminder date")
	s.reminder, s.sure = date, false
	if msg := checkSale(s, r); msg != "" {
		m.t.Fatalf("set reminder date: %s: %s", msg, r.raw)
	}
}

// remindedSale makes what reminders need, which random steps reach too
// rarely together: a customer with an email and a sale of theirs, unpaid
// or partly paid, with a reminder date.
func (m *model) remindedSale(t *rapid.T) {
	a := m.drawAccount(t)
	r := m.send("POST", "/api/v1/customers/add", a.key, map[string]any{"name": "Reminded", "email": customerEmail(a, a.lastID["customer"]+1, 0)}, nil)
	m.expect(r, 200, "add customer with an email")
	cust := m.keepCustomer(a, r)
	due := rapid.SampledFrom(m.dueDates()).Draw(t, "due")
	reminder := rapid.SampledFrom(m.reminderDates()).Draw(t, "reminder")
	total, paid := money.MustAmount("25.00"), rapid.SampledFrom([]money.Amount{money.Zero, money.MustAmount("5.00")}).Draw(t, "paid")
	body := openSaleBody(cust, due, total, paid)
	body["reminder_date"] = reminder
	m.keepOpenSale(a, m.send("POST", "/api/v1/sales/add", a.key, body, nil), cust, due, reminder, total, paid)
	if rapid.Bool().Draw(t, "runSoon") { // now, or past the next midnight
		m.advance(rapid.SampledFrom([]time.Duration{0, time.Hour, 12 * time.Hour}).Draw(t, "beforeRun"))
		m.runNotices(t)
	}
}

// maxNoticeRuns bounds the runs one step makes: a run handles what was due
// when it began, and plans each sale's next notice for the next run.
const maxNoticeRuns = 20

// runNotices runs the notices at the model's clock until a run handles
// nothing, then reads every customer's new email and checks it.
func (m *model) runNotices(t *rapid.T) {
	for i := 0; i < maxNoticeRuns; i++ {
		res, err := m.mail.runner.Run(context.Background())
		if err != nil {
			m.t.Fatalf("notices run at %s: %v", m.clk.now().Format(time.RFC3339), err)
		}
		if res.Reminded+res.Overdue+res.Dropped == 0 {
			break
		}
	}
	now := m.clk.now()
	for _, a := range m.accts {
		for _, id := range slices.Sorted(maps.Keys(a.customers)) {
			if c := a.customers[id]; c.email != "" {
				m.readReminders(a, c, now)
			}
		}
		today := a.localDate(now)
		for _, code := range slices.Sorted(maps.Keys(a.sales)) {
			s := a.sales[code]
			if s.sure && s.refunds == 0 && !s.void && s.status != business.StatusPaid && s.reminder <= today && !a.reminded[code+"#"+s.reminder] {
				m.t.Fatalf("sale %s (reminder date %s, due %s, %s) was not reminded on %s (zone history %v)", code, s.reminder, s.dueDate, s.status, today, a.tz)
			}
		}
	}
}

// reminderLink is where a reminder's text gives the invoice's link.
var reminderLink = regexp.MustCompile(regexp.QuoteMeta(noticeBase) + `/invoices/([A-Za-z0-9_-]+)`)

// readReminders checks the emails customer c received since the last read:
// each the reminder of one of c's sales due one, not sent before.
func (m *model) readReminders(a *mAccount, c *mCustomer, now time.Time) {
	msgs := m.mail.inbox.Messages(m.mail.tb, c.email)
	today := a.localDate(now)
	for _, msg := range msgs[m.mail.seen[c.email]:] {
		var s *mSale
		for _, x := range a.sales {
			if x.customer == c.id && strings.HasPrefix(msg.Subject, "Reminder: invoice "+x.number+" from ") {
				s = x
			}
		}
		link := reminderLink.FindStringSubmatch(msg.Text)
		switch {
		case s == nil:
			m.t.Fatalf("customer %d got an email of none of its sales: %q", c.id, msg.Subject)
		case link == nil:
			m.t.Fatalf("sale %s's reminder has no link: %q", s.code, msg.Text)
		case s.void || s.status == business.StatusPaid:
			m.t.Fatalf("a reminder for sale %s, %s", s.code, s.status)
		case s.reminder == "" || s.reminder > today:
			m.t.Fatalf("a reminder for sale %s (reminder date %q) on %s", s.code, s.reminder, today)
		case a.reminded[s.code+"#"+s.reminder]:
			m.t.Fatalf("sale %s reminded twice for %s", s.code, s.reminder)
		case s.link != "" && link[1] != s.link:
			m.t.Fatalf("sale %s's reminder links %s, not its link", s.code, link[1])
		}
		a.reminded[s.code+"#"+s.reminder] = true
		s.link = link[1] // a sale with no link gets one with its reminder
	}
	m.mail.seen[c.email] = len(msgs)
}

// checkNoticeEvents checks a book's sale.reminder_sent and sale.overdue
// events (from its feed): each once for a sale and date, for a sale
// neither paid nor void, once its date began where the merchant was; a
// reminder_sent for each reminder emailed, and no other.
func (m *model) checkNoticeEvents(a *mAccount, evs []map[string]any) {
	seen := map[string]bool{}
	for _, ev := range evs {
		sale, _ := ev["data"].(map[string]any)["sales"].(map[string]any)
		code, status := fmt.Sprint(sale["invoice_code"]), strOrEmpty(sale["payment_status"])
		at, err := time.Parse(business.TimeFormat, strOrEmpty(ev["created_at"]))
		if err != nil {
			m.t.Fatalf("event %s: created_at %v", ev["type"], ev["created_at"])
		}
		date := overdueDate(strOrEmpty(sale["due_date"]))
		if ev["type"] == business.EventSaleReminderSent {
			date = strOrEmpty(sale["reminder_date"])
			if !a.reminded[code+"#"+date] {
				m.t.Fatalf("%s of sale %s for %s, which no email was: %s", ev["type"], code, date, canonical(ev))
			}
		}
		k := fmt.Sprint(ev["type"], " ", code, " ", date)
		switch {
		case seen[k]:
			m.t.Fatalf("%s twice", k)
		case status == business.StatusPaid || status == business.StatusVoid:
			m.t.Fatalf("%s of a sale %s", k, status)
		case date == "" || a.localDate(at) < date:
			m.t.Fatalf("%s at %s (local date %s)", k, ev["created_at"], a.localDate(at))
		}
		seen[k] = true
	}
	for k := range a.reminded {
		code, date, _ := strings.Cut(k, "#")
		if !seen[business.EventSaleReminderSent+" "+code+" "+date] {
			m.t.Fatalf("sale %s's reminder for %s was emailed, but the feed has no %s", code, date, business.EventSaleReminderSent)
		}
	}
}
