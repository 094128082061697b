package webhook

import (
	"bytes"
	"crypto/hmac"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultTolerance is how far a webhook-timestamp may be from the receiver's
// clock before the delivery is treated as a replay.
const DefaultTolerance = 5 * time.Minute

// Errors returned by Verify. Each means: answer 401 and do not process.
var (
	ErrBadSignature = errors.New("webhook: signature does not match the body")
	ErrStale        = errors.New("webhook: timestamp outside the tolerance (replay?)")
	ErrUnsigned     = errors.New("webhook: signature headers missing, but a secret is set")
)

// Verifier checks deliveries. With a Secret, every genuine delivery carries
// the Standard Webhooks headers, so Verify requires them (ErrUnsigned when
// one is missing: a forger would simply leave them out); a callback URL's
// deliveries also carry the description's `signature` header, checked when
// present (a webhook endpoint's carry only the Standard ones, whose
// signature alone proves the body). The signatures must match the raw body
// (compared in constant time) and the timestamp must be within Tolerance. Without a
// Secret nothing can be verified and every delivery is processed (the
// description's rule for a merchant with no secret).
//
// Lenient applies the description's receiver rules literally even with a
// Secret: a delivery without the `signature` header is processed, and the
// Standard Webhooks headers are checked only when present. Use it only
// behind something that strips headers; it lets anyone forge a notification.
type Verifier struct {
	Secret    string
	Tolerance time.Duration // DefaultTolerance when zero
	Now       func() time.Time
	Lenient   bool
}

// Verify checks one delivery's headers against its raw body. It returns nil
// when the delivery should be processed.
func (v Verifier) Verify(h http.Header, body []byte) error {
	if v.Secret == "" {
		return nil
	}
	sig := h.Get(HeaderSignature)
	if !v.Lenient && (h.Get(HeaderStandardSignature) == "" || h.Get(HeaderTimestamp) == "" || h.Get(HeaderID) == "") {
		return ErrUnsigned
	}
	if sig != "" {
		got, err := hex.DecodeString(strings.TrimSpace(sig))
		want, _ := hex.DecodeString(Sign(body, v.Secret))
		if err != nil || !hmac.Equal(got, want) {
			return ErrBadSignature
		}
	}
	std := h.Get(HeaderStandardSignature)
	if std == "" {
		return nil
	}
	ts, err := strconv.ParseInt(h.Get(HeaderTimestamp), 10, 64)
	if err != nil {
		return ErrStale
	}
	now := time.Now()
	if v.Now != nil {
		now = v.Now()
	}
	tol := v.Tolerance
	if tol == 0 {
		tol = DefaultTolerance
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tol || d < -tol {
		return ErrStale
	}
	want := SignStandard(h.Get(HeaderID), ts, body, v.Secret)
	for _, s := range strings.Fields(std) { // several signatures may be sent during a secret rotation
		if hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return ErrBadSignature
}

// Handler wraps next so it only sees verified deliveries: a failed check is
// answered 401; otherwise next gets the request with its raw body intact and
// answers (200 when it writes nothing else).
func (v Verifier) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if err := v.Verify(r.Header, body); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}
