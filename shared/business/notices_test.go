package business

import (
	"testing"
	"time"

	"bizdata/shared/money"
)

// noticeSale is an unpaid sale of 100.00 with a reminder on reminder and
// its due date on due.
func noticeSale(reminder, due string) Sale {
	return Sale{InvoiceCode: "123456", Total: money.MustAmount("100"), PaymentStatus: StatusDraft,
		ReminderDate: reminder, DueDate: due}
}

func zoned(name string) TimezoneHistory {
	return TimezoneHistory{{Name: DefaultTimezone}, {Name: name, From: time.Unix(1, 0)}}
}

func utcAt(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// wantNotices fails unless got is exactly want, kinds, dates and instants.
func wantNotices(t *testing.T, got []Notice, want ...Notice) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("notices %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Kind != want[i].Kind || got[i].Date != want[i].Date || !got[i].At.Equal(want[i].At) || got[i].At.Location() != time.UTC {
			t.Errorf("notice %d: %+v, want %+v (in UTC)", i, got[i], want[i])
		}
	}
}

func TestPlanNotices(t *testing.T) {
	now := utcAt(t, "2026-11-28T10:00:00Z")
	t.Run("PastDateSendsNothing", func(t *testing.T) {
		// The reminder was yesterday and the overdue day too (due the 26th).
		wantNotices(t, PlanNotices(noticeSale("2026-11-27", "2026-11-26"), nil, now))
	})
	t.Run("TodayIsPlanned", func(t *testing.T) {
		// Today's reminder begins at midnight, already past: it goes at once.
		// The overdue day is the day after the due date.
		wantNotices(t, PlanNotices(noticeSale("2026-11-28", "2026-11-30"), nil, now),
			Notice{NoticeReminder, "2026-11-28", utcAt(t, "2026-11-28T00:00:00Z")},
			Notice{NoticeOverdue, "2026-12-01", utcAt(t, "2026-12-01T00:00:00Z")})
	})
	t.Run("NoReminderDate", func(t *testing.T) {
		wantNotices(t, PlanNotices(noticeSale("", "2026-11-28"), nil, now),
			Notice{NoticeOverdue, "2026-11-29", utcAt(t, "2026-11-29T00:00:00Z")})
	})
	t.Run("PaidOrVoidPlansNothing", func(t *testing.T) {
		for _, status := range []string{StatusPaid, StatusVoid} {
			s := noticeSale("2026-12-01", "2026-12-05")
			s.PaymentStatus = status
			if got := PlanNotices(s, nil, now); got != nil {
				t.Errorf("%s: %+v", status, got)
			}
		}
	})
	t.Run("PartlyPaidIsPlanned", func(t *testing.T) {
		s := noticeSale("2026-12-01", "")
		s.PaymentStatus, s.AmountPaid = StatusPartial, money.MustAmount("40")
		wantNotices(t, PlanNotices(s, nil, now), Notice{NoticeReminder, "2026-12-01", utcAt(t, "2026-12-01T00:00:00Z")})
	})
	// The instants are the local midnights, 25 hours apart for one date.
	t.Run("Kiritimati", func(t *testing.T) { // UTC+14
		wantNotices(t, PlanNotices(noticeSale("2026-12-01", "2026-12-01"), zoned("Pacific/Kiritimati"), now),
			Notice{NoticeReminder, "2026-12-01", utcAt(t, "2026-11-30T10:00:00Z")},
			Notice{NoticeOverdue, "2026-12-02", utcAt(t, "2026-12-01T10:00:00Z")})
	})
	t.Run("PagoPago", func(t *testing.T) { // UTC-11
		wantNotices(t, PlanNotices(noticeSale("2026-12-01", "2026-12-01"), zoned("Pacific/Pago_Pago"), now),
			Notice{NoticeReminder, "2026-12-01", utcAt(t, "2026-12-01T11:00:00Z")},
			Notice{NoticeOverdue, "2026-12-02", utcAt(t, "2026-12-02T11:00:00Z")})
	})
	t.Run("TodayIsTheMerchants", func(t *testing.T) {
		// At 12:00 UTC on the 30th it is already the 1st in Kiritimati and
		// still the 30th in Pago Pago: a reminder on the 30th is past in
		// one and today in the other.
		at := utcAt(t, "2026-11-30T12:00:00Z")
		s := noticeSale("2026-11-30", "")
		wantNotices(t, PlanNotices(s, zoned("Pacific/Kiritimati"), at))
		wantNotices(t, PlanNotices(s, zoned("Pacific/Pago_Pago"), at),
			Notice{NoticeReminder, "2026-11-30", utcAt(t, "2026-11-30T11:00:00Z")})
	})
	t.Run("NewestZoneEvenBeforeItTakesEffect", func(t *testing.T) {
		// A change made a moment ago plans in the new zone: a notice is
		// planned once, and the scheduler defers one its date has not begun.
		hist, _, err := TimezoneHistory(nil).Change("Pacific/Kiritimati", now)
		if err != nil {
			t.Fatal(err)
		}
		wantNotices(t, PlanNotices(noticeSale("2026-12-01", ""), hist, now),
			Notice{NoticeReminder, "2026-12-01", utcAt(t, "2026-11-30T10:00:00Z")})
	})
}

func TestNoticeInstant(t *testing.T) {
	if at := NoticeInstant("2026-12-01", zoned("Pacific/Kiritimati")); !at.Equal(utcAt(t, "2026-11-30T10:00:00Z")) {
		t.Errorf("Kiritimati: %v", at)
	}
	if at := NoticeInstant("not a date", nil); !at.IsZero() {
		t.Errorf("a bad date begins at %v", at)
	}
}

func TestNextNotice(t *testing.T) {
	now := utcAt(t, "2026-11-28T10:00:00Z")
	// The overdue day (the 2nd) comes before the reminder (the 5th).
	s := noticeSale("2026-12-05", "2026-12-01")
	handled := map[string]bool{}
	isHandled := func(kind, date string) bool { return handled[kind+" "+date] }
	n := NextNotice(s, nil, now, isHandled)
	if n == nil || n.Kind != NoticeOverdue || n.Date != "2026-12-02" || !n.At.Equal(utcAt(t, "2026-12-02T00:00:00Z")) {
		t.Fatalf("first %+v, want the overdue on the 2nd", n)
	}
	if again := NextNotice(s, nil, now, nil); again == nil || *again != *n {
		t.Fatalf("without handled: %+v, want %+v", again, n)
	}
	handled[NoticeOverdue+" 2026-12-02"] = true
	if n = NextNotice(s, nil, now, isHandled); n == nil || n.Kind != NoticeReminder || n.Date != "2026-12-05" {
		t.Fatalf("after the overdue: %+v, want the reminder on the 5th", n)
	}
	// A reminder sent on another date does not count for this one.
	handled[NoticeReminder+" 2026-12-04"] = true
	if n = NextNotice(s, nil, now, isHandled); n == nil || n.Kind != NoticeReminder {
		t.Fatalf("after a reminder of another date: %+v", n)
	}
	handled[NoticeReminder+" 2026-12-05"] = true
	if n = NextNotice(s, nil, now, isHandled); n != nil {
		t.Fatalf("all handled: %+v", n)
	}
	s.PaymentStatus = StatusPaid
	if n = NextNotice(s, nil, now, nil); n != nil {
		t.Fatalf("paid: %+v", n)
	}
	// A draft of 0.00 asks the customer for nothing: no reminder, no
	// overdue day, and one planned before is dropped.
	free := noticeSale("2026-12-05", "2026-12-10")
	free.Total, free.SubTotal = money.Zero, money.Zero
	if n = NextNotice(free, nil, now, nil); n != nil {
		t.Fatalf("a draft of 0.00: %+v", n)
	}
	if got := DecideNotice(free, NoticeReminder, "2026-12-05", "ama@example.com", nil, now.AddDate(0, 0, 3)); got != NoticeDrop {
		t.Fatalf("a draft of 0.00's reminder: %v, want drop", got)
	}
}

func TestDecideNotice(t *testing.T) {
	now := utcAt(t, "2026-12-01T05:00:00Z")
	s := noticeSale("2026-12-01", "2026-11-30")
	const email = "ana@example.com"
	t.Run("Send", func(t *testing.T) {
		if got := DecideNotice(s, NoticeReminder, "2026-12-01", email, nil, now); got != NoticeSend {
			t.Errorf("reminder: %v", got)
		}
		// The overdue event needs no email.
		if got := DecideNotice(s, NoticeOverdue, "2026-12-01", "", nil, now); got != NoticeSend {
			t.Errorf("overdue: %v", got)
		}
		// A date past in the merchant's zone is sent late rather than never.
		if got := DecideNotice(s, NoticeOverdue, "2026-12-01", "", zoned("Pacific/Kiritimati"), now.AddDate(0, 0, 2)); got != NoticeSend {
			t.Errorf("late overdue: %v", got)
		}
	})
	t.Run("DropPaidOrVoid", func(t *testing.T) {
		for _, status := range []string{StatusPaid, StatusVoid} {
			paid := s
			paid.PaymentStatus = status
			for _, kind := range NoticeKinds {
				if got := DecideNotice(paid, kind, NoticeDate(s, kind), email, nil, now); got != NoticeDrop {
					t.Errorf("%s %s: %v", status, kind, got)
				}
			}
		}
	})
	t.Run("DropDateMoved", func(t *testing.T) {
		if got := DecideNotice(s, NoticeReminder, "2026-11-29", email, nil, now); got != NoticeDrop {
			t.Errorf("reminder: %v", got)
		}
		if got := DecideNotice(s, NoticeOverdue, "2026-11-30", email, nil, now); got != NoticeDrop {
			t.Errorf("overdue: %v", got)
		}
		gone := noticeSale("", "2026-11-30")
		if got := DecideNotice(gone, NoticeReminder, "2026-12-01", email, nil, now); got != NoticeDrop {
			t.Errorf("reminder date removed: %v", got)
		}
	})
	t.Run("DropReminderWithoutEmail", func(t *testing.T) {
		if got := DecideNotice(s, NoticeReminder, "2026-12-01", "", nil, now); got != NoticeDrop {
			t.Errorf("%v", got)
		}
	})
	t.Run("LaterBeforeTheMerchantsDate", func(t *testing.T) {
		// 05:00 UTC on the 1st is 18:00 on the 30th in Pago Pago.
		for _, kind := range NoticeKinds {
			if got := DecideNotice(s, kind, NoticeDate(s, kind), email, zoned("Pacific/Pago_Pago"), now); got != NoticeLater {
				t.Errorf("%s: %v", kind, got)
			}
		}
		// From its local midnight on, it is sent.
		if got := DecideNotice(s, NoticeReminder, "2026-12-01", email, zoned("Pacific/Pago_Pago"), utcAt(t, "2026-12-01T11:00:00Z")); got != NoticeSend {
			t.Errorf("at local midnight: %v", got)
		}
	})
}

func TestInvoiceStatus(t *testing.T) {
	const today = "2026-12-01"
	s := noticeSale("", today)
	if got := InvoiceStatus(s, today); got != "unpaid" {
		t.Errorf("due today: %q", got)
	}
	if got := InvoiceStatus(s, "2026-12-02"); got != "overdue" {
		t.Errorf("the day after: %q", got)
	}
	part := s
	part.PaymentStatus, part.AmountPaid = StatusPartial, money.MustAmount("40")
	if got := InvoiceStatus(part, today); got != "partially paid" {
		t.Errorf("partly paid: %q", got)
	}
	if got := InvoiceStatus(part, "2026-12-02"); got != "overdue" {
		t.Errorf("partly paid after the due date: %q", got)
	}
	paid := s
	paid.PaymentStatus, paid.AmountPaid = StatusPaid, s.Total
	if got := InvoiceStatus(paid, "2026-12-02"); got != "paid" {
		t.Errorf("paid after the due date: %q", got)
	}
	void := part
	void.PaymentStatus = StatusVoid
	if got := InvoiceStatus(void, "2026-12-02"); got != "void" {
		t.Errorf("void: %q", got)
	}
	noDue := noticeSale("", "")
	if got := InvoiceStatus(noDue, today); got != "unpaid" {
		t.Errorf("no due date: %q", got)
	}
}
