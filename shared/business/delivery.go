package business

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Delivery states.
const (
	DeliveryPending   = "pending"   // an attempt is due at NextAt
	DeliveryDelivered = "delivered" // the receiver answered 2xx
	DeliveryFailed    = "failed"    // every attempt of the schedule failed
	DeliverySkipped   = "skipped"   // the account had no callback URL
	// DeliveryHeld: the account's endpoint kept failing, so its deliveries
	// wait for the circuit breaker's next probe at NextAt; never dropped.
	DeliveryHeld = "held"
)

// Waiting reports whether the delivery still has an attempt to come
// (pending, or held by the circuit breaker).
func (d *Delivery) Waiting() bool { return d.State == DeliveryPending || d.State == DeliveryHeld }

// Hold puts a waiting delivery aside until the circuit breaker's next probe
// at until, without counting an attempt.
func (d *Delivery) Hold(until time.Time) { d.State, d.NextAt = DeliveryHeld, until }

// Delivery is one payment notification to an account's callback URL and its
// attempts. It lives in the table, so retries can run for days, long after
// the stream record that started it has expired.
type Delivery struct {
	AccountID     string
	TransactionID string
	// WebhookID is the same on every attempt, so receivers can drop repeats.
	WebhookID string
	// Payload is the exact body, fixed when the delivery is created.
	Payload []byte
	State   string
	// Attempt counts the attempts made; RoundStart is its value when the
	// current round (the first delivery or a redelivery) began.
	Attempt    int
	RoundStart int
	NextAt     time.Time
	Attempts   []DeliveryAttempt
	CreatedAt  time.Time
}

// Bounds of a delivery's record, so that it stays far below DynamoDB's
// 400 KB item limit however many rounds it goes through: the log keeps the
// last AttemptLogSize attempts (Attempt still counts them all), and an
// attempt's error text is cut at ErrorTextMax bytes.
const (
	AttemptLogSize = 20
	ErrorTextMax   = 256
)

// DeliveryAttempt is the log of one attempt.
type DeliveryAttempt struct {
	At        time.Time
	Status    int // HTTP status, 0 when no response arrived
	LatencyMS int64
	Error     string
	// RetryAfter is how long after At the receiver asked the next attempt
	// to wait, by its Retry-After header (0 when it sent none, or one that
	// does not parse or lies in the past). Next honours it on the statuses
	// of HonoursRetryAfter. It is not stored: the next attempt's time is.
	RetryAfter time.Duration
}

// HonoursRetryAfter reports whether a receiver's Retry-After is honoured
// on an answer of status: 429 (too many requests) and 503 (unavailable),
// the two whose Retry-After asks a client to come back later.
func HonoursRetryAfter(status int) bool { return status == 429 || status == 503 }

// DefaultRetrySchedule is the wait before each retry after a failed attempt:
// about three days in all.
var DefaultRetrySchedule = []time.Duration{
	5 * time.Second, time.Minute, 5 * time.Minute, 30 * time.Minute,
	2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 24 * time.Hour,
}

// ParseRetrySchedule reads a comma-separated list of durations such as
// "1s,2s,4s".
func ParseRetrySchedule(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("retry schedule %q: %q is not a positive duration", s, part)
		}
		out = append(out, d)
	}
	return out, nil
}

// Next records the outcome of an attempt made at now and moves the delivery
// on: delivered on success; else pending with the next retry time (the
// schedule's wait with ±10% jitter), or failed when the schedule is used up.
// A receiver that answered 429 or 503 with a Retry-After longer than that
// wait gets it, up to the schedule's longest wait: a receiver's ask can
// make a retry later, never sooner, and never later than the schedule's
// longest gap. The attempt still uses its retry, so the schedule also
// bounds how many attempts a receiver's asks can spread out.
func (d *Delivery) Next(a DeliveryAttempt, ok bool, schedule []time.Duration) {
	d.Attempt++
	a.Error = Clip(a.Error, ErrorTextMax)
	d.Attempts = append(d.Attempts, a)
	if n := len(d.Attempts); n > AttemptLogSize {
		d.Attempts = append([]DeliveryAttempt(nil), d.Attempts[n-AttemptLogSize:]...)
	}
	switch retry := d.Attempt - d.RoundStart - 1; {
	case ok:
		d.State = DeliveryDelivered
	case retry < len(schedule):
		wait := schedule[retry]
		jitter := time.Duration(rand.Int64N(int64(wait)/5+1)) - wait/10
		wait += jitter
		if HonoursRetryAfter(a.Status) {
			wait = max(wait, min(a.RetryAfter, slices.Max(schedule)))
		}
		d.State, d.NextAt = DeliveryPending, a.At.Add(wait)
	default:
		d.State = DeliveryFailed
	}
}

// Clip cuts s to at most n bytes, at a character boundary, marking the cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const more = "…"
	cut := n - len(more)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}
