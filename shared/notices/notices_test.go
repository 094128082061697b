package notices_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/mail"
	"bizdata/shared/notices"
	"bizdata/shared/store"
)

var linkRE = regexp.MustCompile(regexp.QuoteMeta(baseURL) + `/invoices/[A-Za-z0-9_-]+`)

// reminderLink checks a reminder's text (its message, the amount due) and
// returns the invoice link it holds.
func reminderLink(t *testing.T, text, message, amountDue string) string {
	t.Helper()
	if !strings.Contains(text, message) {
		t.Errorf("the reminder lacks its message %q:\n%s", message, text)
	}
	if !strings.Contains(text, "Amount due: GHS "+amountDue) {
		t.Errorf("the reminder lacks the amount due %s:\n%s", amountDue, text)
	}
	links := linkRE.FindAllString(text, -1)
	if len(links) != 1 {
		t.Fatalf("the reminder holds %d invoice links, want 1:\n%s", len(links), text)
	}
	return links[0]
}

// A reminder goes once, on its date, with the sale's message, the amount
// due and a link that opens the invoice: a new one for a sale without, the
// sale's own for a sale with one.
func TestReminderSentOnceOnItsDate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "2026-12-01T08:00:00Z")
	ctx := context.Background()
	ana, bo := newAddress(), newAddress()
	const message = "Dear Kofi, the invoice for the October deliveries is still open. Medaase!"
	unlinked := f.sale(t, saleSpec{customer: f.customer(t, ana), reminder: "2026-12-02", due: "2026-12-10", message: message, paid: "20.00"})
	linked := f.sale(t, saleSpec{customer: f.customer(t, bo), reminder: "2026-12-02", due: "2026-12-10"})
	rec, err := f.st.CreateInvoiceLink(ctx, f.account, linked)
	if err != nil {
		t.Fatal(err)
	}
	token := rec.Sale.Link.Token

	f.run(t, notices.Result{})
	f.clock.at(t, "2026-12-01T23:59:59Z")
	f.run(t, notices.Result{})
	f.wantMail(t, ana, 0)

	f.clock.at(t, "2026-12-02T00:00:00Z")
	f.run(t, notices.Result{Reminded: 2})
	f.run(t, notices.Result{})
	f.clock.at(t, "2026-12-02T18:00:00Z")
	f.run(t, notices.Result{})

	got := f.wantMail(t, ana, 1)
	link := reminderLink(t, got[0].Text, message, "100.50")
	if !strings.Contains(got[0].Subject, f.find(t, unlinked).Sale.InvoiceNumber) {
		t.Errorf("subject %q", got[0].Subject)
	}
	status, page := f.openLink(t, link)
	if status != http.StatusOK || !strings.Contains(page, f.find(t, unlinked).Sale.InvoiceNumber) {
		t.Fatalf("the reminder's link answers %d", status)
	}
	if f.find(t, unlinked).Sale.Link == nil {
		t.Error("the sale has no link after its reminder")
	}
	got = f.wantMail(t, bo, 1)
	if link := reminderLink(t, got[0].Text, business.DefaultReminderText, "120.50"); link != baseURL+"/invoices/"+token {
		t.Errorf("the reminder links to %s, not the sale's link", link)
	}

	for _, code := range []string{unlinked, linked} {
		f.wantEvents(t, business.EventSaleReminderSent, code, 1)
		f.wantEvents(t, business.EventSaleOverdue, code, 0)
		// The event shows the sale as it is once reminded: its version,
		// with the link the reminder made.
		var ev struct {
			Resource struct{ Version int64 }
			Data     struct {
				Sale struct {
					InvoiceLinkActive bool `json:"invoice_link_active"`
				} `json:"sales"`
			}
		}
		if err := json.Unmarshal(f.events(t, business.EventSaleReminderSent, code)[0], &ev); err != nil {
			t.Fatal(err)
		}
		if v := f.find(t, code).Sale.Version; ev.Resource.Version != v || !ev.Data.Sale.InvoiceLinkActive {
			t.Errorf("sale %s at version %d: the reminder's event shows version %d, link active %v", code, v, ev.Resource.Version, ev.Data.Sale.InvoiceLinkActive)
		}
		sent := f.find(t, code).Notices
		if len(sent) != 1 || sent[0].Kind != business.NoticeReminder || sent[0].Date != "2026-12-02" || sent[0].Sending {
			t.Errorf("sale %s: notices %+v", code, sent)
		}
	}
	// The next notice of each is its overdue day.
	f.clock.at(t, "2026-12-11T00:00:00Z")
	if due := f.wantDue(t, 2); due[0].Kind != business.NoticeOverdue || due[0].Date != "2026-12-11" {
		t.Errorf("due %+v", due)
	}
	f.wantLogClean(t, ana, bo, token, strings.TrimPrefix(link, baseURL+"/invoices/"), message)
}

// A sale paid or voided after its reminder was planned sends nothing, now
// or on its overdue day.
func TestNoReminderForPaidOrVoidSale(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "2026-12-01T08:00:00Z")
	ctx := context.Background()
	paidTo, voidTo := newAddress(), newAddress()
	paid := f.sale(t, saleSpec{customer: f.customer(t, paidTo), reminder: "2026-12-02", due: "2026-12-05"})
	void := f.sale(t, saleSpec{customer: f.customer(t, voidTo), reminder: "2026-12-02", due: "2026-12-05"})
	f.edit(t, paid, func(s *business.Sale) { s.AmountPaid, s.PaymentType = s.Total, "Cash" })
	if _, err := f.st.VoidSale(ctx, f.account, void, "entered twice", nil, func(store.SaleRecord) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}

	f.clock.at(t, "2026-12-02T00:00:00Z")
	f.run(t, notices.Result{Dropped: 2})
	f.clock.at(t, "2026-12-06T00:00:00Z")
	f.wantDue(t, 0)
	f.run(t, notices.Result{})
	for code, to := range map[string]string{paid: paidTo, void: voidTo} {
		f.wantMail(t, to, 0)
		f.wantEvents(t, business.EventSaleReminderSent, code, 0)
		f.wantEvents(t, business.EventSaleOverdue, code, 0)
	}
}

// A customer without an email address gets no reminder, and the sale no
// reminder event; its overdue day still comes.
func TestNoReminderWithoutEmail(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "2026-12-01T08:00:00Z")
	code := f.sale(t, saleSpec{customer: f.customer(t, ""), reminder: "2026-12-02", due: "2026-12-05"})
	f.clock.at(t, "2026-12-02T00:00:00Z")
	f.run(t, notices.Result{Dropped: 1})
	f.run(t, notices.Result{})
	f.wantEvents(t, business.EventSaleReminderSent, code, 0)
	if sent := f.find(t, code).Notices; len(sent) != 0 {
		t.Errorf("notices %+v", sent)
	}
	f.clock.at(t, "2026-12-06T00:00:00Z")
	f.run(t, notices.Result{Overdue: 1})
	f.wantEvents(t, business.EventSaleOverdue, code, 1)
}

// A reminder date moved away and back sends once: after the reminder was
// sent (the same date again), and before (the old date's item and the new
// one's are one).
func TestReminderDateMovedBackAndForth(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "2026-12-01T08:00:00Z")
	sentTo, pendingTo := newAddress(), newAddress()
	sent := f.sale(t, saleSpec{customer: f.customer(t, sentTo), reminder: "2026-12-02", due: "2026-12-20"})
	pending := f.sale(t, saleSpec{customer: f.customer(t, pendingTo), reminder: "2026-12-03", due: "2026-12-20"})
	moveReminder := func(code, date string) {
		f.edit(t, code, func(s *business.Sale) { s.ReminderDate = date })
	}
	moveReminder(pending, "2026-12-04")
	moveReminder(pending, "2026-12-03")

	f.clock.at(t, "2026-12-02T09:00:00Z")
	f.run(t, notices.Result{Reminded: 1})
	moveReminder(sent, "2026-12-05")
	moveReminder(sent, "2026-12-02")
	f.run(t, notices.Result{})

	f.clock.at(t, "2026-12-03T09:00:00Z")
	f.run(t, notices.Result{Reminded: 1})
	f.clock.at(t, "2026-12-05T09:00:00Z")
	// The items of the 4th and the 5th: their dates moved.
	f.run(t, notices.Result{Dropped: 2})
	for code, to := range map[string]string{sent: sentTo, pending: pendingTo} {
		f.wantMail(t, to, 1)
		f.wantEvents(t, business.EventSaleReminderSent, code, 1)
	}
}

// A reminder date already past when it is set sends nothing, at creation
// or by an edit.
func TestReminderDateInThePast(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "2026-12-02T10:00:00Z")
	created, edited := newAddress(), newAddress()
	a := f.sale(t, saleSpec{customer: f.customer(t, created), reminder: "2026-12-01", due: "2026-12-20"})
	b := f.sale(t, saleSpec{customer: f.customer(t, edited), reminder: "2026-12-10", due: "2026-12-20"})
	f.edit(t, b, func(s *business.Sale) { s.ReminderDate = "2026-11-30" })
	f.run(t, notices.Result{})
	f.clock.at(t, "2026-12-10T10:00:00Z")
	f.run(t, notices.Result{Dropped: 1}) // the 10th's item: its date moved
	for code, to := range map[string]string{a: created, b: edited} {
		f.wantMail(t, to, 0)
		f.wantEvents(t, business.EventSaleReminderSent, code, 0)
	}
}

// sale.overdue comes once, when the day after the due date begins where the
// merchant is (UTC+14), not before, and sends no email.
func TestOverdueInFarEastTimezone(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "2026-12-01T08:00:00Z")
	f.moveTo(t, "Pacific/Kiritimati")
	to := newAddress()
	code := f.sale(t, saleSpec{customer: f.customer(t, to), due: "2026-12-02"})
	// The 3rd begins in Kiritimati at 10:00 UTC on the 2nd.
	f.clock.at(t, "2026-12-02T09:59:59Z")
	f.run(t, notices.Result{})
	f.wantEvents(t, business.EventSaleOverdue, code, 0)
	f.clock.at(t, "2026-12-02T10:00:00Z")
	f.run(t, notices.Result{Overdue: 1})
	f.run(t, notices.Result{})
	f.clock.at(t, "2026-12-04T10:00:00Z")
	f.run(t, notices.Result{})
	f.wantEvents(t, business.EventSaleOverdue, code, 1)
	f.wantEvents(t, business.EventSaleReminderSent, code, 0)
	f.wantMail(t, to, 0)
}

// An account that moved west (UTC-11) after its sale's overdue day was
// planned gets it when that day begins where it is now.
func TestOverdueAfterMovingWest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "2026-12-01T08:00:00Z")
	code := f.sale(t, saleSpec{customer: f.customer(t, ""), due: "2026-12-02"})
	f.moveTo(t, "Pacific/Pago_Pago")
	// Planned at midnight UTC on the 3rd, still the 2nd in Pago Pago.
	f.clock.at(t, "2026-12-03T00:00:00Z")
	f.run(t, notices.Result{Deferred: 1})
	f.clock.at(t, "2026-12-03T10:59:59Z")
	f.run(t, notices.Result{})
	f.wantEvents(t, business.EventSaleOverdue, code, 0)
	f.clock.at(t, "2026-12-03T11:00:00Z")
	f.run(t, notices.Result{Overdue: 1})
	f.run(t, notices.Result{})
	f.wantEvents(t, business.EventSaleOverdue, code, 1)
}

// A refused SMTP connection fails the run and leaves nothing recorded: the
// claim is released, the notice is planned again an hour on (so refused
// ones never fill a run ahead of others), and the first run after that
// with a working server sends it once. The log says which sale failed,
// with no address, link or text.
func TestReminderRetriedAfterSMTPRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "2026-12-02T08:00:00Z")
	to := newAddress()
	const message = "Kindly settle the balance for the school uniforms."
	code := f.sale(t, saleSpec{customer: f.customer(t, to), reminder: "2026-12-02", due: "2026-12-20", message: message})
	working := f.runner.Mail
	f.runner.Mail = mail.NewSMTP(deadSMTP(t), "invoices@bizdata.localhost")
	res, err := f.runner.Run(context.Background())
	if !errors.Is(err, mail.ErrNotSent) || res != (notices.Result{Failed: 1}) {
		t.Fatalf("run with SMTP refused: %+v, %v", res, err)
	}
	if sent := f.find(t, code).Notices; len(sent) != 0 {
		t.Fatalf("after a failed send the sale has notices %+v", sent)
	}
	f.wantEvents(t, business.EventSaleReminderSent, code, 0)
	f.wantDue(t, 0)
	if !strings.Contains(f.log.String(), `"invoice_code":"`+code+`"`) {
		t.Errorf("the log does not name the sale that failed:\n%s", f.log.String())
	}

	f.runner.Mail = working
	f.run(t, notices.Result{}) // not yet: an hour on
	f.clock.at(t, "2026-12-02T09:00:01Z")
	f.wantDue(t, 1)
	f.run(t, notices.Result{Reminded: 1})
	f.run(t, notices.Result{})
	got := f.wantMail(t, to, 1)
	link := reminderLink(t, got[0].Text, message, "120.50")
	f.wantEvents(t, business.EventSaleReminderSent, code, 1)
	f.wantLogClean(t, to, strings.TrimPrefix(link, baseURL+"/invoices/"), message)
}

// A reminder refused for more than three days past its date is given up,
// and the sale's overdue notice is planned in its place; without a sender
// at all (no MailFromAddress) a reminder is dropped at once, its overdue
// notice still sent.
func TestReminderGivenUp(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "2026-12-05T08:00:00Z")
	to := newAddress()
	refused := f.sale(t, saleSpec{customer: f.customer(t, to), reminder: "2026-12-06", due: "2026-12-10"})
	working := f.runner.Mail
	f.runner.Mail = mail.NewSMTP(deadSMTP(t), "invoices@bizdata.localhost")
	f.clock.at(t, "2026-12-09T23:00:00Z") // more than 3 days past the reminder's date
	if _, err := f.runner.Run(context.Background()); !errors.Is(err, mail.ErrNotSent) {
		t.Fatalf("run with SMTP refused: %v", err)
	}
	f.runner.Mail = working
	f.clock.at(t, "2026-12-11T00:00:01Z")
	f.run(t, notices.Result{Overdue: 1})
	f.wantEvents(t, business.EventSaleReminderSent, refused, 0)
	f.wantEvents(t, business.EventSaleOverdue, refused, 1)
	f.wantMail(t, to, 0)

	unsent := f.sale(t, saleSpec{customer: f.customer(t, newAddress()), reminder: "2026-12-12", due: "2026-12-11"})
	f.runner.Mail = mail.None()
	f.clock.at(t, "2026-12-12T00:00:01Z")
	f.run(t, notices.Result{Dropped: 1})
	f.run(t, notices.Result{Overdue: 1})
	f.wantEvents(t, business.EventSaleReminderSent, unsent, 0)
	f.wantEvents(t, business.EventSaleOverdue, unsent, 1)
}

// A schedule longer than a run's limit is handled over several runs,
// oldest first.
func TestScheduleLongerThanOneRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "2026-12-02T08:00:00Z")
	customer := f.customer(t, "")
	// The later ones are created first: a run takes by instant, not by
	// creation.
	const late = 5
	var lateCodes []string
	for range late {
		lateCodes = append(lateCodes, f.sale(t, saleSpec{customer: customer, due: "2026-12-02"}))
	}
	var wg sync.WaitGroup
	work := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				// Overdue from the 2nd: due at once.
				if _, err := f.createSale(saleSpec{customer: customer, due: "2026-12-01"}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for range notices.MaxPerRun {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	f.clock.at(t, "2026-12-03T08:00:00Z")
	f.run(t, notices.Result{Overdue: notices.MaxPerRun})
	for _, code := range lateCodes {
		f.wantEvents(t, business.EventSaleOverdue, code, 0)
	}
	f.run(t, notices.Result{Overdue: late})
	f.run(t, notices.Result{})
	for _, code := range lateCodes {
		f.wantEvents(t, business.EventSaleOverdue, code, 1)
	}
}

// Runs at once send each reminder once: the claim lets one send.
func TestConcurrentRunsSendOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "2026-12-02T08:00:00Z")
	var to []string
	for range 3 {
		to = append(to, newAddress())
		f.sale(t, saleSpec{customer: f.customer(t, to[len(to)-1]), reminder: "2026-12-02", due: "2026-12-20"})
	}
	results := make([]notices.Result, 3)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if results[i], err = f.runner.Run(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	reminded := 0
	for _, r := range results {
		reminded += r.Reminded
	}
	if reminded != 3 {
		t.Errorf("runs %+v reminded %d, want 3", results, reminded)
	}
	for _, address := range to {
		f.wantMail(t, address, 1)
	}
}

// A run that stopped between sending and recording leaves its claim: other
// runs leave the reminder alone while it may still be sending, then record
// it sent without sending it again.
func TestStaleClaimRecordedNotResent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "2026-12-02T08:00:00Z")
	to := newAddress()
	code := f.sale(t, saleSpec{customer: f.customer(t, to), reminder: "2026-12-02", due: "2026-12-20"})
	due := f.wantDue(t, 1)
	if _, err := f.st.ClaimNotice(context.Background(), due[0]); err != nil {
		t.Fatal(err)
	}
	f.run(t, notices.Result{Deferred: 1})
	f.clock.set(f.clock.now().Add(9 * time.Minute))
	f.run(t, notices.Result{Deferred: 1})
	f.clock.set(f.clock.now().Add(time.Minute))
	f.run(t, notices.Result{Dropped: 1})
	f.run(t, notices.Result{})
	f.wantMail(t, to, 0)
	f.wantEvents(t, business.EventSaleReminderSent, code, 1)
	if sent := f.find(t, code).Notices; len(sent) != 1 || sent[0].Sending {
		t.Errorf("notices %+v", sent)
	}
}

// A notice planned in a zone that takes effect in a few seconds waits for
// it, without failing the run.
func TestNoticeInZoneNotYetInEffect(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "2026-12-01T14:00:00Z")
	zone := "Pacific/Kiritimati"
	if _, err := f.st.UpdateSettings(context.Background(), f.account, store.SettingsChange{Timezone: &zone}); err != nil {
		t.Fatal(err)
	}
	to := newAddress()
	// The 2nd began in Kiritimati at 10:00 UTC, but the account is in UTC
	// until 14:00:15.
	code := f.sale(t, saleSpec{customer: f.customer(t, to), reminder: "2026-12-02", due: "2026-12-20"})
	f.wantDue(t, 1)
	f.run(t, notices.Result{Deferred: 1})
	f.clock.set(f.clock.now().Add(business.TimezoneDelay))
	f.run(t, notices.Result{Reminded: 1})
	f.wantMail(t, to, 1)
	f.wantEvents(t, business.EventSaleReminderSent, code, 1)
}

// A send whose outcome is unknown (the server took the message, its answer
// was lost) is not sent again: the claim stays, and once it is older than
// any run the reminder is recorded sent.
func TestReminderNotResentAfterLostReply(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "2026-12-02T08:00:00Z")
	to := newAddress()
	code := f.sale(t, saleSpec{customer: f.customer(t, to), reminder: "2026-12-02", due: "2026-12-20"})
	working := f.runner.Mail
	f.runner.Mail = mail.NewSMTP(lostReplyProxy(t, f.inbox.SMTPAddr()), "invoices@bizdata.localhost")
	res, err := f.runner.Run(context.Background())
	if err == nil || errors.Is(err, mail.ErrNotSent) || res != (notices.Result{Failed: 1}) {
		t.Fatalf("run with the reply lost: %+v, %v", res, err)
	}
	f.wantMail(t, to, 1) // the server has it

	f.runner.Mail = working
	f.run(t, notices.Result{Deferred: 1})
	f.clock.set(f.clock.now().Add(10 * time.Minute))
	f.run(t, notices.Result{Dropped: 1})
	f.run(t, notices.Result{})
	f.wantMail(t, to, 1)
	f.wantEvents(t, business.EventSaleReminderSent, code, 1)
}
