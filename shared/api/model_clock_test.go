package api_test

// The clock and the timezone in the model. The store's clock is the
// model's: stopped, at the start of each sequence, a second to half an hour
// before a local midnight (some days the last of a month, or a Sunday) and
// moved forward only by steps, so that facts fall on both sides of local
// midnights; every write's stamp is checked against it. Steps change the
// account's timezone (to zones off the hour, far east and west; twice in a
// row now and then, before the first change takes effect), and the model
// keeps the history each change answers, once it has checked that it never
// rewrites the past.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"bizdata/shared/business"

	"pgregory.net/rapid"
)

// fakeClock is the store's clock in the model (the env's clock, which
// newEnvTTL gives the store before it serves): set at the start of each
// sequence and moved forward only by the model's steps (never during a
// burst), read by every request at once. Safe for concurrent use.
type fakeClock struct{ c *clock }

func (f *fakeClock) now() time.Time { return f.c.now() }

func (f *fakeClock) set(t time.Time) { t = t.UTC(); f.c.at.Store(&t) }

// stamp is the instant a write made now is stamped with: whole seconds.
func (f *fakeClock) stamp() time.Time { return f.now().Truncate(time.Second) }

func (f *fakeClock) stampText() string { return f.stamp().Format(business.TimeFormat) }

// useFakeClock stops e's clock, the store's, for the model to move.
func useFakeClock(e *env) *fakeClock {
	f := &fakeClock{c: &e.clock}
	f.set(time.Now())
	return f
}

// zoneDelay is how long after a change of timezone the new zone takes
// effect.
const zoneDelay = business.TimezoneDelay

// maxAdvance bounds how far a sequence moves the clock: well inside the 24
// hours the clock keeps Idempotency-Key records.
const maxAdvance = 20 * time.Hour

// clockZones are the zones a sequence's clock starts near a midnight of:
// east of UTC, UTC, west of it, and a zone 45 minutes off the hour.
var clockZones = []string{"Africa/Nairobi", "UTC", "America/New_York", "Asia/Kathmandu"}

// startClock sets the clock a second to half an hour before a local
// midnight of a drawn zone, which it returns (less the 11 s startZones
// takes). The midnight is hours to days ahead of the real time: events'
// ids take the real time, and the feed keeps events 30 days by the clock
// and lists them up to it, so the clock stays ahead of the real time and
// within 30 days of it. Some sequences start before the midnight that ends
// a month, or a week (Sunday to Monday).
func (m *model) startClock(t *rapid.T) string {
	zone := rapid.SampledFrom(clockZones).Draw(t, "startZone")
	loc, err := time.LoadLocation(zone)
	if err != nil {
		m.t.Fatal(err)
	}
	soon := time.Now().Add(4 * time.Hour).In(loc)
	midnight := time.Date(soon.Year(), soon.Month(), soon.Day()+1, 0, 0, 0, 0, loc)
	switch rapid.SampledFrom([]string{"day", "monthEnd", "sunday"}).Draw(t, "startDay") {
	case "day":
		midnight = midnight.AddDate(0, 0, rapid.IntRange(0, 20).Draw(t, "days"))
	case "monthEnd":
		next := midnight
		for next.Day() != 1 {
			next = next.AddDate(0, 0, 1)
		}
		if next.Sub(midnight) < 25*24*time.Hour {
			midnight = next
		}
	case "sunday":
		for midnight.Weekday() != time.Monday {
			midnight = midnight.AddDate(0, 0, 1)
		}
	}
	before := rapid.SampledFrom([]time.Duration{time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute}).Draw(t, "beforeMidnight")
	start := midnight.Add(-before - zoneDelay - time.Second)
	m.clk.set(start)
	m.end = start.Add(maxAdvance)
	m.day = time.Date(midnight.Year(), midnight.Month(), midnight.Day()-1, 0, 0, 0, 0, time.UTC)
	return zone
}

// startZones sets each account's timezone, most times, to the zone the
// clock starts near a midnight of, and lets the change take effect.
func (m *model) startZones(t *rapid.T, zone string) {
	for i, b := range m.bizs {
		a := b.live
		a.key = a.full.secret
		if zone != "UTC" && rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("startZone%d", i)) > 0 {
			m.putSettings(a, map[string]any{"timezone": zone}, "")
		}
	}
	m.advance(zoneDelay + time.Second)
}

// advanceClock moves the clock forward by seconds (some with a fraction),
// minutes or hours.
func (m *model) advanceClock(t *rapid.T) {
	var d time.Duration
	switch rapid.SampledFrom([]string{"seconds", "fraction", "minutes", "hours"}).Draw(t, "unit") {
	case "seconds":
		d = time.Duration(rapid.IntRange(1, 59).Draw(t, "n")) * time.Second
	case "fraction":
		d = time.Duration(rapid.IntRange(1, 5000).Draw(t, "n")) * time.Millisecond
	case "minutes":
		d = time.Duration(rapid.IntRange(1, 59).Draw(t, "n")) * time.Minute
	case "hours":
		d = time.Duration(rapid.IntRange(60, 180).Draw(t, "n")) * time.Minute
	}
	m.advance(d)
}

// tick, after every step, leaves the clock or moves it forward: by seconds
// or minutes (a sequence then crosses the midnight it starts before midway,
// with facts on both sides), rarely by hours.
func (m *model) tick(t *rapid.T) {
	switch rapid.IntRange(0, 31).Draw(t, "tick") {
	case 0, 1, 2, 3, 4, 5, 6, 7, 8:
		m.advance(time.Duration(rapid.IntRange(1, 59).Draw(t, "seconds")) * time.Second)
	case 9:
		m.advance(time.Duration(rapid.IntRange(1, 5000).Draw(t, "millis")) * time.Millisecond)
	case 10, 11, 12, 13:
		m.advance(time.Duration(rapid.IntRange(1, 10).Draw(t, "minutes")) * time.Minute)
	case 14:
		m.advance(time.Duration(rapid.IntRange(1, 3).Draw(t, "hours")) * time.Hour)
	}
}

// advance moves the clock forward by d, never past the sequence's end.
func (m *model) advance(d time.Duration) {
	now := m.clk.now()
	if left := m.end.Sub(now); d > left {
		d = left
	}
	if d > 0 {
		m.clk.set(now.Add(d))
	}
}

// stamped checks that a write's time is the store's clock (whole seconds).
func (m *model) stamped(what string, v any) {
	if want := m.clk.stampText(); v != want {
		m.t.Fatalf("%s is %v, but the store's clock says %s", what, v, want)
	}
}

// mSpan is one entry of an account's timezone history: name is in effect
// from from (zero: from the start) until the next entry's.
type mSpan struct {
	name string
	from time.Time
}

// zoneAt is the zone the account was in at t.
func (a *mAccount) zoneAt(t time.Time) *time.Location {
	name := "UTC"
	for _, s := range a.tz {
		if s.from.After(t) {
			break
		}
		name = s.name
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// localDate is the date of instant t where the account was at t.
func (a *mAccount) localDate(t time.Time) string {
	return t.In(a.zoneAt(t)).Format(business.DateFormat)
}

func stampOrNull(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(business.TimeFormat)
}

// settingsZones are the zones steps change to: those sequences start in,
// zones half or three quarters of an hour off (far east, and west), one
// whose name says the opposite of its offset, and one sent with spaces.
var settingsZones = []string{"Africa/Nairobi", "UTC", "America/New_York", "Asia/Kathmandu", "Pacific/Chatham",
	"America/St_Johns", "Etc/GMT+3", " Asia/Kathmandu "}

// setTimezone changes an account's settings: most times its timezone, now
// and then twice in a row before the first change takes effect (or just as
// it does), and sometimes with a field refused.
func (m *model) setTimezone(t *rapid.T) {
	a := m.drawAccount(t)
	m.changeSettings(t, a, "first")
	if rapid.IntRange(0, 2).Draw(t, "twice") == 0 {
		between := []time.Duration{0, time.Second, 3 * time.Second, 9*time.Second + 500*time.Millisecond, zoneDelay}
		m.advance(rapid.SampledFrom(between).Draw(t, "between"))
		m.changeSettings(t, a, "second")
	}
	if rapid.Bool().Draw(t, "read") {
		m.checkSettings(a, m.send("GET", "/api/v1/user/settings", a.key, nil, nil), "Settings found")
	}
	// The next step's facts just before, at or just after the instant the
	// new zone takes effect.
	m.advance(rapid.SampledFrom([]time.Duration{0, zoneDelay - time.Second, zoneDelay, zoneDelay + time.Second}).Draw(t, "after"))
}

func (m *model) changeSettings(t *rapid.T, a *mAccount, label string) {
	body := map[string]any{"timezone": rapid.SampledFrom(settingsZones).Draw(t, label+"Zone")}
	bad := ""
	switch rapid.IntRange(0, 11).Draw(t, label+"Other") {
	case 0:
		body["timezone"] = rapid.SampledFrom([]string{"Mars/Olympus", "Local", "", "Africa/Nairobi/Extra"}).Draw(t, label+"BadZone")
		bad = "timezone"
	case 1:
		body["timezone"], bad = nil, "timezone"
	case 2:
		body["business_name"] = fmt.Sprintf("Renamed %d", rapid.IntRange(1, 9).Draw(t, label+"Name"))
	case 3:
		body["business_name"], bad = "   ", "business_name"
	case 4: // as GET shows them: they cannot change, but may be sent back
		body["currency"], body["business_code"] = "GHS", a.code
	case 5:
		body["currency"], bad = "USD", "currency"
	case 6:
		body["business_code"], bad = a.code+"X", "business_code"
	case 7:
		delete(body, "timezone")
		body["business_name"] = "Only the name"
	case 8: // read-only, as the currency
		body["invoice_prefix"] = "INV"
	case 9:
		body["invoice_prefix"], bad = "SHOP", "invoice_prefix"
	}
	m.putSettings(a, body, bad)
}

// putSettings sends body to PUT settings and checks the answer: 400 naming
// bad when bad is not "" (nothing changes), else the settings as the model
// changes them.
func (m *model) putSettings(a *mAccount, body map[string]any, bad string) {
	r := m.send("PUT", "/api/v1/user/settings", a.key, body, nil)
	if bad != "" {
		m.expectRefused(r, bad, fmt.Sprintf("settings %v", body))
		return
	}
	m.expect(r, 200, fmt.Sprintf("settings %v", body))
	defer m.mirrorSettings(a)
	if n, ok := body["business_name"].(string); ok {
		a.name = strings.TrimSpace(n)
	}
	if z, ok := body["timezone"].(string); ok {
		got, msg := historyAnswered(r)
		if msg == "" {
			msg = checkHistory(a.tz, strings.TrimSpace(z), m.clk.now(), got)
		}
		if msg != "" {
			m.t.Fatalf("settings %v at %s: %s: %s", body, m.clk.now().Format(time.RFC3339Nano), msg, r.raw)
		}
		a.tz = got
		unsure(a)
	}
	m.checkSettings(a, r, "Settings updated")
}

// historyAnswered reads the timezone history of a settings answer.
func historyAnswered(r reply) ([]mSpan, string) {
	var out []mSpan
	list, _ := r.obj("settings")["timezone_history"].([]any)
	for _, x := range list {
		x, _ := x.(map[string]any)
		name, _ := x["timezone"].(string)
		span := mSpan{name: name}
		if from, ok := x["from"].(string); ok {
			t, err := time.Parse(business.TimeFormat, from)
			if err != nil {
				return nil, "timezone_history: from " + from
			}
			span.from = t
		} else if x["from"] != nil {
			return nil, fmt.Sprintf("timezone_history: from %v", x["from"])
		}
		out = append(out, span)
	}
	return out, ""
}

// checkHistory checks the timezone history got that a change to zone made
// at now answered, given the history before it: "" when it keeps the rules.
// The model keeps the history the answer gives; the rules are that it
// starts with UTC from the start, each later zone takes effect after the
// one before it; the zones in effect at now are kept as they were (a
// eventsOfRequest never rewrites the past); a zone the change adds takes effect no
// sooner than zoneDelay after now (whole seconds), and the newest is the
// one asked for (setting the newest again changes nothing). A change still
// waiting to take effect may be kept or replaced.
func checkHistory(before []mSpan, zone string, now time.Time, got []mSpan) string {
	switch {
	case len(got) == 0 || got[0] != (mSpan{name: "UTC"}):
		return "the history does not start with UTC from the start"
	case got[len(got)-1].name != zone:
		return "the newest zone is not the one asked for"
	case before[len(before)-1].name == zone && !slices.Equal(got, before):
		return "setting the newest zone again changed the history"
	}
	for i := 1; i < len(got); i++ {
		if !got[i].from.After(got[i-1].from) {
			return fmt.Sprintf("zone %d does not take effect after the one before it", i)
		}
	}
	inEffect := 0
	for inEffect < len(before) && !before[inEffect].from.After(now) {
		inEffect++
	}
	if len(got) < inEffect || !slices.Equal(got[:inEffect], before[:inEffect]) {
		return "the zones in effect before the change changed"
	}
	for _, s := range got[inEffect:] {
		if !s.from.After(now) {
			return fmt.Sprintf("%s is in effect already from %s", s.name, s.from)
		}
		if !slices.Contains(before[inEffect:], s) && s.from.Before(now.Truncate(time.Second).Add(zoneDelay)) {
			return fmt.Sprintf("%s takes effect at %s, sooner than %s after the change", s.name, s.from, zoneDelay)
		}
	}
	return ""
}

// checkSettings compares a settings answer with the model's.
func (m *model) checkSettings(a *mAccount, r reply, msg string) {
	m.expect(r, 200, msg)
	hist := make([]any, len(a.tz))
	for i, s := range a.tz {
		hist[i] = map[string]any{"timezone": s.name, "from": stampOrNull(s.from)}
	}
	cur := a.tz[len(a.tz)-1]
	want := map[string]any{"business_name": a.name, "business_code": a.code, "currency": "GHS", "invoice_prefix": "INV",
		"timezone": cur.name, "timezone_effective_at": stampOrNull(cur.from), "timezone_history": hist}
	if d := jsonDiff("settings", r.obj("settings"), want); d != "" || r.body["message"] != msg {
		m.t.Fatalf("settings at %s: %s: %s", m.clk.now().Format(time.RFC3339Nano), d, r.raw)
	}
}
