package business

import (
	"time"
)

// The notices a sale sends on its own: the reminder to the customer on
// reminder_date, and the overdue event on the day after due_date.
const (
	NoticeReminder = "reminder"
	NoticeOverdue  = "overdue"
)

// NoticeKinds lists the kinds, in the order a sale's notices are planned.
var NoticeKinds = []string{NoticeReminder, NoticeOverdue}

// Notice is one notice of a sale: its kind, the merchant's local date it
// falls on, and At, the instant that date begins in the merchant's zone.
type Notice struct {
	Kind string
	Date string
	At   time.Time
}

// NoticeDate returns the local date a kind of notice of s falls on, or ""
// when s has none of that kind: its reminder_date, or the day after its
// due_date.
func NoticeDate(s Sale, kind string) string {
	switch kind {
	case NoticeReminder:
		return s.ReminderDate
	case NoticeOverdue:
		if d, err := time.Parse(DateFormat, s.DueDate); err == nil {
			return d.AddDate(0, 0, 1).Format(DateFormat)
		}
	}
	return ""
}

// Unpaid reports whether s is open: neither paid nor void.
func (s *Sale) Unpaid() bool { return s.PaymentStatus != StatusPaid && s.PaymentStatus != StatusVoid }

// Owes reports whether s still asks its customer for money: open, with
// something left to pay (a draft of 0.00 asks nothing).
func (s *Sale) Owes() bool { return s.Unpaid() && s.AmountPaid.Cmp(s.Total) < 0 }

// PlanNotices returns the notices to schedule for s as of now: each kind
// whose date has not yet passed in the merchant's newest zone (a date set
// in the past sends nothing; today's is sent at once), while s owes.
// The instant each begins is in that zone.
func PlanNotices(s Sale, hist TimezoneHistory, now time.Time) []Notice {
	if !s.Owes() {
		return nil
	}
	today := now.In(newestZone(hist)).Format(DateFormat)
	var out []Notice
	for _, kind := range NoticeKinds {
		date := NoticeDate(s, kind)
		if date == "" || date < today {
			continue
		}
		out = append(out, Notice{Kind: kind, Date: date, At: NoticeInstant(date, hist)})
	}
	return out
}

// NoticeInstant is the instant date begins in the account's newest zone.
func NoticeInstant(date string, hist TimezoneHistory) time.Time {
	at, err := time.ParseInLocation(DateFormat, date, newestZone(hist))
	if err != nil {
		return time.Time{}
	}
	return at.UTC()
}

func newestZone(hist TimezoneHistory) *time.Location {
	loc, err := LoadTimezone(hist.Current().Name)
	if err != nil {
		return time.UTC
	}
	return loc
}

// NextNotice returns the earliest of the notices PlanNotices gives s that
// is not yet handled (handled reports a kind and date sent, or the one just
// dealt with), or nil. A sale keeps one notice in the schedule at a time:
// the next, so a create or an edit adds at most one write to its
// transaction, and the scheduler plans the one after when it handles it.
func NextNotice(s Sale, hist TimezoneHistory, now time.Time, handled func(kind, date string) bool) *Notice {
	var next *Notice
	for _, n := range PlanNotices(s, hist, now) {
		if handled != nil && handled(n.Kind, n.Date) {
			continue
		}
		if next == nil || n.At.Before(next.At) {
			next = &n
		}
	}
	return next
}

// NoticeOutcome is what the scheduler does with a notice whose instant has
// come.
type NoticeOutcome int

const (
	// NoticeDrop: the notice no longer applies (the sale was paid, voided,
	// or its date moved) and is removed unsent.
	NoticeDrop NoticeOutcome = iota
	// NoticeSend: send it now.
	NoticeSend
	// NoticeLater: its date has not begun where the merchant is now (the
	// account moved west since it was planned); plan it again.
	NoticeLater
)

// DecideNotice says what to do with the notice of kind for date of sale s
// at now: a reminder goes only to a customer with an email address.
func DecideNotice(s Sale, kind, date string, customerEmail string, hist TimezoneHistory, now time.Time) NoticeOutcome {
	if !s.Owes() || NoticeDate(s, kind) != date {
		return NoticeDrop
	}
	if kind == NoticeReminder && customerEmail == "" {
		return NoticeDrop
	}
	if hist.Today(now) < date {
		return NoticeLater
	}
	return NoticeSend
}

// InvoiceStatus is the status the customer sees on the invoice on the
// merchant's date today: void, paid, overdue (unpaid after its due date),
// partially paid or unpaid.
func InvoiceStatus(s Sale, today string) string {
	switch {
	case s.PaymentStatus == StatusVoid:
		return "void"
	case s.PaymentStatus == StatusPaid:
		return "paid"
	case s.DueDate != "" && s.DueDate < today:
		return "overdue"
	case !s.AmountPaid.IsZero():
		return "partially paid"
	}
	return "unpaid"
}

// DefaultReminderText is the reminder's text when the sale has no
// reminder_message.
const DefaultReminderText = "This is a friendly reminder that the invoice below is still open. You can view it, and download it as a PDF, at the link below."
