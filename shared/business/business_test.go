package business

import (
	"testing"
	"time"

	"bizdata/shared/money"
)

func TestDeriveStatus(t *testing.T) {
	for _, c := range []struct{ paid, total, want string }{
		{"0", "10", StatusDraft}, {"0", "0", StatusDraft}, {"4.99", "5", StatusPartial}, {"5", "5", StatusPaid},
	} {
		if got := DeriveStatus(money.MustAmount(c.paid), money.MustAmount(c.total)); got != c.want {
			t.Errorf("DeriveStatus(%s, %s) = %s, want %s", c.paid, c.total, got, c.want)
		}
	}
}

func TestStockMoves(t *testing.T) {
	line := func(code, q string) SaleLine { return SaleLine{ItemCode: code, Quantity: money.MustQuantity(q)} }
	moves := StockMoves(
		[]SaleLine{line("A", "2"), line("B", "1"), line("", "9"), line("C", "1")},
		[]SaleLine{line("A", "1"), line("A", "3"), line("B", "1"), line("D", "0.5")})
	want := map[string]string{"A": "2", "C": "-1", "D": "0.5"}
	if len(moves) != len(want) {
		t.Fatalf("moves %v, want %v", moves, want)
	}
	for code, q := range want {
		if moves[code].String() != q {
			t.Errorf("%s moves %s, want %s", code, moves[code], q)
		}
	}
}

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{"Rice 5kg Bag": "rice-5kg-bag", "  Ama's  Café!! ": "ama-s-caf", "---": ""} {
		if got := Slugify(in); got != want {
			t.Errorf("Slugify(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDeliveryNext(t *testing.T) {
	schedule := []time.Duration{10 * time.Second, time.Minute}
	at := time.Unix(1000, 0)
	d := Delivery{State: DeliveryPending}
	d.Next(DeliveryAttempt{At: at, Status: 500}, false, schedule)
	if d.State != DeliveryPending || d.NextAt.Before(at.Add(9*time.Second)) || d.NextAt.After(at.Add(11*time.Second)) {
		t.Fatalf("after first failure: %+v", d)
	}
	d.Next(DeliveryAttempt{At: at, Status: 500}, false, schedule)
	if d.State != DeliveryPending || d.NextAt.Before(at.Add(54*time.Second)) || d.NextAt.After(at.Add(66*time.Second)) {
		t.Fatalf("after second failure: %+v", d)
	}
	d.Next(DeliveryAttempt{At: at, Status: 500}, false, schedule)
	if d.State != DeliveryFailed || d.Attempt != 3 || len(d.Attempts) != 3 {
		t.Fatalf("after the schedule: %+v", d)
	}
	// A redelivery starts a new round with the whole schedule.
	d.State, d.RoundStart = DeliveryPending, d.Attempt
	d.Next(DeliveryAttempt{At: at, Status: 0, Error: "refused"}, false, schedule)
	if d.State != DeliveryPending {
		t.Fatalf("first failure of a redelivery: %+v", d)
	}
	d.Next(DeliveryAttempt{At: at, Status: 204}, true, schedule)
	if d.State != DeliveryDelivered {
		t.Fatalf("success: %+v", d)
	}
}

// TestDeliveryNextRetryAfter: a receiver's Retry-After on 429 and 503 makes
// the next attempt later than the schedule's wait, never sooner, never
// later than the schedule's longest wait, and uses the retry as any
// failure does; on other statuses, and when absent, the schedule decides.
func TestDeliveryNextRetryAfter(t *testing.T) {
	schedule := []time.Duration{10 * time.Second, time.Minute, 5 * time.Minute}
	at := time.Unix(1000, 0)
	next := func(status int, retryAfter time.Duration) Delivery {
		t.Helper()
		d := Delivery{State: DeliveryPending}
		d.Next(DeliveryAttempt{At: at, Status: status, RetryAfter: retryAfter}, false, schedule)
		if d.State != DeliveryPending || d.Attempt != 1 {
			t.Fatalf("after a %d with Retry-After %s: %+v", status, retryAfter, d)
		}
		return d
	}
	for _, c := range []struct {
		status     int
		retryAfter time.Duration
		min, max   time.Duration // of the wait
	}{
		{429, 120 * time.Second, 120 * time.Second, 120 * time.Second}, // longer than the schedule's 10 s: honoured
		{503, 90 * time.Second, 90 * time.Second, 90 * time.Second},
		{429, time.Hour, 5 * time.Minute, 5 * time.Minute},          // beyond the longest wait: cut to it
		{503, 2 * time.Second, 9 * time.Second, 11 * time.Second},   // shorter: the schedule's wait
		{429, 0, 9 * time.Second, 11 * time.Second},                 // none, or unreadable
		{429, -time.Minute, 9 * time.Second, 11 * time.Second},      // a date in the past
		{500, 120 * time.Second, 9 * time.Second, 11 * time.Second}, // not a status that asks to wait
		{410, 120 * time.Second, 9 * time.Second, 11 * time.Second},
	} {
		d := next(c.status, c.retryAfter)
		if wait := d.NextAt.Sub(at); wait < c.min || wait > c.max {
			t.Errorf("%d with Retry-After %s: next attempt after %s, want %s to %s", c.status, c.retryAfter, wait, c.min, c.max)
		}
	}
	// The ask uses the retry: at the schedule's end the delivery fails.
	d := Delivery{State: DeliveryPending}
	for range schedule {
		d.Next(DeliveryAttempt{At: at, Status: 429, RetryAfter: time.Hour}, false, schedule)
	}
	// The last wait is the longest one's, at least: the schedule's own
	// jitter (a tenth either way) may make it longer, never the ask.
	if wait := d.NextAt.Sub(at); d.State != DeliveryPending || wait < 5*time.Minute || wait > 5*time.Minute+30*time.Second {
		t.Fatalf("after %d asks to wait an hour: %+v", len(schedule), d)
	}
	d.Next(DeliveryAttempt{At: at, Status: 429, RetryAfter: time.Hour}, false, schedule)
	if d.State != DeliveryFailed || d.Attempt != len(schedule)+1 {
		t.Fatalf("after the schedule: %+v", d)
	}
}

func TestParseRetrySchedule(t *testing.T) {
	s, err := ParseRetrySchedule("1s, 2s,4s")
	if err != nil || len(s) != 3 || s[2] != 4*time.Second {
		t.Fatalf("%v %v", s, err)
	}
	for _, bad := range []string{"", "1s,,2s", "0s", "-1s", "soon"} {
		if _, err := ParseRetrySchedule(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSaleRulesMovedFromTheStore(t *testing.T) {
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	s := Sale{InvoiceCode: "123456", AmountPaid: money.MustAmount("10"), Payments: 2, PaymentType: "Cash"}
	if p := NewPayment(s, money.MustAmount("10"), now); p != nil {
		t.Fatalf("no increase, payment %+v", p)
	}
	p := NewPayment(s, money.MustAmount("4"), now)
	if p == nil || p.Amount.String() != "6.00" || p.Seq != 2 || p.Method != "Cash" || !p.PaymentAt.Equal(now) || p.TransactionID == "" {
		t.Fatalf("payment %+v", p)
	}
	// The business's date of the payment, in the zone in effect then:
	// 14:00 UTC is already the next day in Auckland (UTC+12 in May).
	hist := TimezoneHistory{{Name: DefaultTimezone}, {Name: "Pacific/Auckland", From: now}}
	s.DefaultPaymentDate(now.Add(4*time.Hour), hist)
	if s.PaymentDate != "2026-05-05" {
		t.Fatalf("payment_date %q", s.PaymentDate)
	}
	s.PaymentDate = ""
	s.DefaultPaymentDate(now.Add(-time.Second), hist)
	if s.PaymentDate != "2026-05-04" {
		t.Fatalf("payment_date before the change %q", s.PaymentDate)
	}
	s.PaymentDate = "2026-01-01"
	s.DefaultPaymentDate(now, hist)
	unpaid := Sale{}
	unpaid.DefaultPaymentDate(now, hist)
	if s.PaymentDate != "2026-01-01" || unpaid.PaymentDate != "" {
		t.Fatalf("kept %q, unpaid %q", s.PaymentDate, unpaid.PaymentDate)
	}
	old := Item{ItemPrice: money.MustAmount("5")}
	x := old
	x.KeepPreviousPrice(old)
	if !x.PreviousPrice.IsZero() {
		t.Fatalf("unchanged price moved: %s", x.PreviousPrice)
	}
	x.ItemPrice = money.MustAmount("6")
	x.KeepPreviousPrice(old)
	if x.PreviousPrice.String() != "5.00" {
		t.Fatalf("previous price %s", x.PreviousPrice)
	}
	if SuffixedSlug("rice", "ITM-1") != "rice-itm-1" {
		t.Fatal(SuffixedSlug("rice", "ITM-1"))
	}
}
