package dashboard

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// datesLateUTC moves b's clock to the next 23:00 UTC, when Auckland (UTC+13
// in its summer, +12 in its winter) is already on the next day: a date read
// in UTC and the same date read in Auckland then name different moments,
// whatever the hour the test runs.
func datesLateUTC(b *board) time.Time {
	now := time.Now().UTC()
	at := time.Date(now.Year(), now.Month(), now.Day(), 23, 0, 0, 0, time.UTC)
	if at.Before(now) {
		at = at.AddDate(0, 0, 1)
	}
	b.later(at.Sub(now))
	return at
}

// datesTypeDateRE finds a date input, which a browser shows in its locale's
// format (such as mm/dd/yyyy) whatever a hint beside it says.
var datesTypeDateRE = regexp.MustCompile(`type="date"`)

// TestDateFiltersAreTheBusinessDays: every list's date filter takes the
// business's local dates, says so (naming its timezone, never UTC), takes
// them as text in the form its hint shows, and finds records by the local
// day they were made, changed, or the sale's own dates; and every date shown
// is written the same way, YYYY-MM-DD.
func TestDateFiltersAreTheBusinessDays(t *testing.T) {
	b := newBoard(t)
	at := datesLateUTC(b)
	const tz = "Pacific/Auckland"
	loc, _ := time.LoadLocation(tz)
	o := b.newOwnerIn("DATES1", tz)
	salesFixture(t, o, "510001", "25.00")
	if st, data := o.callAPI(http.MethodPost, "/api/v1/expenses/add", map[string]any{
		"expense_type": "Rent", "expense_amount": "7.00", "payment_method": "Cash", "created_by": "Ama"}); st != http.StatusOK {
		t.Fatalf("add expense: %d %s", st, data)
	}
	utcDay := at.Format(time.DateOnly)           // the records' day in UTC
	localDay := at.In(loc).Format(time.DateOnly) // their day in Auckland, the next
	nextDay := at.In(loc).AddDate(0, 0, 1).Format(time.DateOnly)
	if utcDay == localDay {
		t.Fatalf("the test needs the UTC day %s and Auckland's %s to differ", utcDay, localDay)
	}

	for _, c := range []struct {
		page, filter, value, record string
		listed                      bool
	}{
		// Made on or after the local day: listed; read in UTC, that day
		// would begin after the records were made.
		{"/dashboard/sales", "created_at", localDay, "510001", true},
		{"/dashboard/sales", "created_at", nextDay, "510001", false},
		{"/dashboard/sales", "created_at", localDay + " 11:00:00", "510001", true},
		{"/dashboard/customers", "created_at", localDay, "Ama Mensah", true},
		{"/dashboard/customers", "created_at", nextDay, "Ama Mensah", false},
		{"/dashboard/expenses", "created_at", localDay, "Rent", true},
		{"/dashboard/inventory", "created_at", localDay, "Rice 5kg", true},
		// Changed on or before the UTC day, which in Auckland is the day
		// before the records were made: not listed.
		{"/dashboard/expenses", "updated_at", utcDay, "Rent", false},
		{"/dashboard/expenses", "updated_at", localDay, "Rent", true},
		{"/dashboard/inventory", "updated_at", utcDay, "Rice 5kg", false},
		{"/dashboard/inventory", "updated_at", localDay, "Rice 5kg", true},
		// A sale's own dates are matched as they are; the payment_date a
		// payment left without one gets is the business's day of it.
		{"/dashboard/sales", "payment_date", localDay, "510001", true},
		{"/dashboard/sales", "payment_date", utcDay, "510001", false},
		{"/dashboard/sales", "due_date", "2099-12-31", "510001", true},
		{"/dashboard/sales", "due_date", "2099-12-30", "510001", false},
	} {
		path := c.page + "?" + url.Values{c.filter: {c.value}}.Encode()
		st, body, _ := o.get(path)
		if st != http.StatusOK {
			t.Errorf("%s: %d", path, st)
			continue
		}
		if got := strings.Contains(body, ">"+c.record+"<"); got != c.listed {
			t.Errorf("%s lists %s: %v, want %v", path, c.record, got, c.listed)
		}
		if !strings.Contains(body, `value="`+c.value+`"`) {
			t.Errorf("%s does not show the filter as typed", path)
		}
	}

	// A date the API cannot read is refused with its message, beside the
	// filter, as typed.
	if st, body, _ := o.get("/dashboard/expenses?created_at=27%2F11%2F2026"); st != http.StatusBadRequest ||
		!strings.Contains(body, "YYYY-MM-DD") || !strings.Contains(body, `value="27/11/2026"`) {
		t.Errorf("a date as 27/11/2026: %d", st)
	}

	for _, page := range []string{"/dashboard", "/dashboard/sales", "/dashboard/sales/510001", "/dashboard/customers", "/dashboard/expenses", "/dashboard/inventory", "/dashboard/inventory/RICE"} {
		_, body, _ := o.get(page)
		if strings.Contains(body, "UTC") {
			t.Errorf("%s speaks of UTC", page)
		}
		if datesTypeDateRE.MatchString(body) {
			t.Errorf("%s has a date input, shown in the browser's locale's format", page)
		}
		if strings.Contains(body, `name="created_at"`) && !strings.Contains(body, "in "+tz+" (the business") {
			t.Errorf("%s's date filter does not name the business's timezone", page)
		}
		// Written dates ("27 Nov 2026", "Fri 27 Nov") are gone: every
		// date shown is YYYY-MM-DD.
		if m := regexp.MustCompile(`\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b|\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{1,2}\b`).FindString(body); m != "" {
			t.Errorf("%s writes a date as %q", page, m)
		}
	}
	// The sale was made at 23:00 UTC: in Auckland, the next day at noon
	// (or 11:00 in its winter).
	_, body, _ := o.get("/dashboard/sales")
	if want := at.In(loc).Format("2006-01-02 15:04"); !strings.Contains(body, want) {
		t.Errorf("the sales list does not show the sale made at %s", want)
	}
}

// TestLocalFiltersAcrossClockChanges: a local date as a bound is the first
// instant whose local date is that day and the last second before the next
// day's, also on days whose midnight the clocks skip (Santiago and São Paulo
// jump from 00:00 to 01:00 in spring, so the day begins at 01:00) or repeat
// (Havana goes back from 01:00 to 00:00, Santiago from 00:00 to 23:00 the
// night before: the day begins at the first midnight and ends after the
// second 23:59:59).
func TestLocalFiltersAcrossClockChanges(t *testing.T) {
	for _, c := range []struct {
		tz, created, updated string // typed local dates
		from, to             string // the UTC moments the API gets
	}{
		// 2026-09-06 begins at 01:00 -03 (04:00 UTC); the day before
		// ends at 23:59:59 -04, its last hour included.
		{"America/Santiago", "2026-09-06", "2026-09-05", "2026-09-06 04:00:00", "2026-09-06 03:59:59"},
		{"America/Santiago", "2026-09-06", "2026-09-06", "2026-09-06 04:00:00", "2026-09-07 02:59:59"},
		{"America/Sao_Paulo", "2018-11-04", "2018-11-03", "2018-11-04 03:00:00", "2018-11-04 02:59:59"},
		// 2026-04-04's 23:00 hour happens twice (-03, then -04): the day
		// ends at the second's end, and 2026-04-05 begins after it.
		{"America/Santiago", "2026-04-05", "2026-04-04", "2026-04-05 04:00:00", "2026-04-05 03:59:59"},
		// 2026-11-01's 00:00 hour happens twice (CDT, then CST): the day
		// begins at the first.
		{"America/Havana", "2026-11-01", "2026-11-01", "2026-11-01 04:00:00", "2026-11-02 04:59:59"},
		{"Asia/Beirut", "2026-03-29", "2026-03-28", "2026-03-28 22:00:00", "2026-03-28 21:59:59"},
		{"UTC", "2026-11-27", "2026-11-27", "2026-11-27 00:00:00", "2026-11-27 23:59:59"},
	} {
		got := localFilters(url.Values{"created_at": {c.created}, "updated_at": {c.updated}}, c.tz)
		if f := got.Get("created_at"); f != c.from {
			t.Errorf("%s: on or after %s is from %s, want %s", c.tz, c.created, f, c.from)
		}
		if u := got.Get("updated_at"); u != c.to {
			t.Errorf("%s: on or before %s is to %s, want %s", c.tz, c.updated, u, c.to)
		}
	}
}
