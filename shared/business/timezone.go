package business

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // every IANA zone, whatever the machine has installed
)

// DefaultTimezone is an account's timezone until its owner sets one.
const DefaultTimezone = "UTC"

// TimezoneDelay is how long after a timezone change the new zone takes
// effect. The figures of a change are dated when they are applied, which may
// be a moment after the change itself (see the store); a delay longer than
// any settings write can take means the history an applier reads always
// holds every zone in effect at the instant it dates.
const TimezoneDelay = 15 * time.Second

// MaxTimezoneChanges bounds an account's timezone history (it lives in the
// account item).
const MaxTimezoneChanges = 100

// LoadTimezone returns the IANA zone named name ("Africa/Nairobi", "UTC").
// Returns EINVALID naming timezone for anything else, "Local" included.
func LoadTimezone(name string) (*time.Location, error) {
	if name == "" || name == "Local" || len(name) > 64 || strings.ContainsAny(name, " \\") {
		return nil, FieldErrors{"timezone": fmt.Sprintf("%q is not an IANA timezone name such as Africa/Nairobi or UTC", name)}.Err()
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, FieldErrors{"timezone": fmt.Sprintf("%q is not an IANA timezone name such as Africa/Nairobi or UTC", name)}.Err()
	}
	return loc, nil
}

// TimezoneSpan is one entry of an account's timezone history: Name is in
// effect from From (the zero time: from the start) until the next entry's.
type TimezoneSpan struct {
	Name string
	From time.Time
}

// TimezoneHistory is every timezone an account has had, oldest first. A
// change never rewrites the past: each instant is dated, once and for good,
// in the zone in effect at that instant.
type TimezoneHistory []TimezoneSpan

// Current returns the newest zone (which may take effect a few seconds from
// now) and when it took or takes effect (zero: from the start).
func (h TimezoneHistory) Current() TimezoneSpan {
	if len(h) == 0 {
		return TimezoneSpan{Name: DefaultTimezone}
	}
	return h[len(h)-1]
}

// At returns the zone in effect at t.
func (h TimezoneHistory) At(t time.Time) *time.Location {
	name := DefaultTimezone
	for _, s := range h {
		if s.From.After(t) {
			break
		}
		name = s.Name
	}
	loc, err := time.LoadLocation(name)
	if err != nil { // names are checked when set
		return time.UTC
	}
	return loc
}

// LocalDate returns the date of instant t where the account was at t.
func (h TimezoneHistory) LocalDate(t time.Time) string {
	return t.In(h.At(t)).Format(DateFormat)
}

// Today returns the local date of now in the newest zone in effect.
func (h TimezoneHistory) Today(now time.Time) string { return h.LocalDate(now) }

// Change returns the history with name in effect from TimezoneDelay after
// now (whole seconds), and that instant. The history only grows: a change
// made while another still waits to take effect follows it (the earlier one
// is in effect for the seconds between), so no instant is ever dated in a
// zone other than the one a reader of the history found for it. Setting the
// newest zone again changes nothing. Returns EINVALID for an unknown zone and
// ECONFLICT when the history is full (MaxTimezoneChanges changes).
func (h TimezoneHistory) Change(name string, now time.Time) (TimezoneHistory, time.Time, error) {
	if _, err := LoadTimezone(name); err != nil {
		return nil, time.Time{}, err
	}
	cur := h.Current()
	if cur.Name == name {
		return h, cur.From, nil
	}
	from := now.Truncate(time.Second).Add(TimezoneDelay)
	if !from.After(cur.From) {
		from = cur.From.Add(time.Second)
	}
	out := append(TimezoneHistory(nil), h...)
	if len(out) == 0 {
		out = TimezoneHistory{{Name: DefaultTimezone}}
	}
	if len(out) > MaxTimezoneChanges {
		return nil, time.Time{}, Errorf(ECONFLICT, "timezone has been changed %d times, the most an account keeps", MaxTimezoneChanges)
	}
	return append(out, TimezoneSpan{Name: name, From: from}), from, nil
}
