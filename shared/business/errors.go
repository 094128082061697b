// Package business holds the product's entities and rules: what a valid sale,
// expense, item, category or customer is, how a sale's status and totals are
// derived, and the one error type every layer uses. It knows nothing of AWS or
// HTTP.
package business

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Error codes. Each maps to exactly one HTTP status in shared/api.
const (
	EINVALID      = "invalid"      // the request is malformed or breaks a rule
	EUNAUTHORIZED = "unauthorized" // no usable credentials
	EFORBIDDEN    = "forbidden"    // the key is valid but may not do this
	ENOTFOUND     = "not_found"    // the record does not exist in this account
	ECONFLICT     = "conflict"     // a unique value is taken, or an idempotency key was reused
	EPRECONDITION = "precondition" // If-Match did not match the current version
	ETOOLARGE     = "too_large"    // the body is over the size limit
	EMEDIATYPE    = "media_type"   // the body is not JSON
	EMETHOD       = "method"       // the route exists, the method does not
	EINTERNAL     = "internal"     // anything else; never shown to the caller
	EBUSY         = "busy"         // too much contention; safe to retry
	EUNAVAILABLE  = "unavailable"  // the database is throttled or unreachable; safe to retry
	ELIMIT        = "rate_limited" // too many requests of a kind; retry after Error.RetryAfter
)

// Error is the product's error: a code for machines, a message for people and,
// for validation failures, a message per offending field.
type Error struct {
	Code    string
	Message string
	Fields  map[string]string
	// Cause is the failure behind an EUNAVAILABLE, for the log; never shown.
	Cause error
	// RetryAfter is, for an ELIMIT, how long until the request may be made
	// again (answered as Retry-After, in whole seconds, at least 1).
	RetryAfter time.Duration
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.Cause }

// Error implements error.
func (e *Error) Error() string {
	if len(e.Fields) == 0 {
		return e.Message
	}
	names := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = k + ": " + e.Fields[k]
	}
	return e.Message + " (" + strings.Join(parts, "; ") + ")"
}

// Errorf returns an *Error with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err's *Error, or EINTERNAL when err carries
// none (including nil-free unexpected failures from below).
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// FieldErrors collects validation failures field by field, so a caller sees
// every problem of a request at once.
type FieldErrors map[string]string

// Add records msg for field unless the field already has a message.
func (f FieldErrors) Add(field, msg string) {
	if _, ok := f[field]; !ok {
		f[field] = msg
	}
}

// Err returns nil when nothing was recorded, else an EINVALID *Error whose
// message names the first field and its problem.
func (f FieldErrors) Err() error {
	if len(f) == 0 {
		return nil
	}
	names := make([]string, 0, len(f))
	for k := range f {
		names = append(names, k)
	}
	sort.Strings(names)
	msg := names[0] + ": " + f[names[0]]
	if len(names) > 1 {
		msg = fmt.Sprintf("%s (and %d more field errors)", msg, len(names)-1)
	}
	return &Error{Code: EINVALID, Message: msg, Fields: map[string]string(f)}
}
