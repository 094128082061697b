// Package api is the HTTP face of the product: the route table, the response
// envelope, the one error writer, strict request decoding, API-key
// authentication and the handlers. Each handler is a plain http.Handler, served
// the same way by the local devserver and, one route per function, by Lambda.
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
)

// statusByCode is the one table from error code to HTTP status.
var statusByCode = map[string]int{
	business.EINVALID:      http.StatusBadRequest,
	business.EUNAUTHORIZED: http.StatusUnauthorized,
	business.EFORBIDDEN:    http.StatusForbidden,
	business.ENOTFOUND:     http.StatusNotFound,
	business.EMETHOD:       http.StatusMethodNotAllowed,
	business.ECONFLICT:     http.StatusConflict,
	business.EPRECONDITION: http.StatusPreconditionFailed,
	business.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	business.EMEDIATYPE:    http.StatusUnsupportedMediaType,
	business.ELIMIT:        http.StatusTooManyRequests,
	business.EBUSY:         http.StatusServiceUnavailable,
	business.EUNAVAILABLE:  http.StatusServiceUnavailable,
	business.EINTERNAL:     http.StatusInternalServerError,
}

// statusOf returns the HTTP status for err's code.
func statusOf(err error) int {
	if st, ok := statusByCode[business.ErrorCode(err)]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// envelope is every JSON body the API sends.
type envelope struct {
	Status  int               `json:"status"`
	Message string            `json:"message,omitempty"`
	Data    any               `json:"data,omitempty"`
	Error   string            `json:"error,omitempty"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// successBody encodes the success envelope.
func successBody(status int, message string, data any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(envelope{Status: status, Message: message, Data: data}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeBody writes an already encoded JSON body.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeOK writes a success envelope with status 200.
func writeOK(w http.ResponseWriter, message string, data any) error {
	return writeStatus(w, http.StatusOK, message, data)
}

// writeStatus writes a success envelope with status (a 2xx).
func writeStatus(w http.ResponseWriter, status int, message string, data any) error {
	body, err := successBody(status, message, data)
	if err != nil {
		return err
	}
	writeBody(w, status, body)
	return nil
}

// RetryAfterSeconds is the Retry-After of every 503: contention and outages
// are short, and clients back off further on their own.
const RetryAfterSeconds = "1"

// retryAfter is the Retry-After of a 429: the whole seconds, rounded up and
// at least 1, that err's business.Error says to wait.
func retryAfter(err error) string {
	secs := int64(1)
	var e *business.Error
	if asError(err, &e) {
		secs = max(secs, int64((e.RetryAfter+time.Second-1)/time.Second))
	}
	return strconv.FormatInt(secs, 10)
}

// writeError writes err as an error envelope. Internal errors are logged with
// their cause and shown to the caller only as "Internal server error". A
// database that is throttled or unreachable is 503 with Retry-After (its
// cause logged), so a client can tell an outage from a bug; a rate limit is
// 429 with Retry-After saying when the limit lets the request through.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	err = store.Unavailable(err)
	status := statusOf(err)
	env := envelope{Status: status}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", RetryAfterSeconds)
		if cause := errors.Unwrap(err); cause != nil {
			log.WarnContext(r.Context(), "database unavailable", "request_id", w.Header().Get("X-Request-Id"),
				"method", r.Method, "path", r.URL.Path, "error", cause.Error())
		}
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", retryAfter(err))
	}
	var e *business.Error
	if status == http.StatusInternalServerError || !asError(err, &e) {
		log.ErrorContext(r.Context(), "request failed", "request_id", w.Header().Get("X-Request-Id"),
			"method", r.Method, "path", r.URL.Path, "error", err.Error())
		env.Status = http.StatusInternalServerError
		env.Error = "Internal server error"
		status = http.StatusInternalServerError
	} else {
		env.Error = e.Message
		env.Fields = e.Fields
	}
	b, _ := json.Marshal(env)
	writeBody(w, status, append(b, '\n'))
}

// Unreadable answers 400 to a request that could not be read at all: an API
// Gateway event the Lambda adapter cannot turn into an http.Request (a body
// marked base64 that is not). No handler runs.
func Unreadable(ctx context.Context, w http.ResponseWriter) {
	w.Header().Set("X-Request-Id", requestID(ctx))
	b, _ := json.Marshal(envelope{Status: http.StatusBadRequest, Error: "The request could not be read"})
	writeBody(w, http.StatusBadRequest, append(b, '\n'))
}

// StatusOf returns the HTTP status the API answers err with, for the
// dashboard, which answers its pages' refusals the same way.
func StatusOf(err error) int { return statusOf(err) }
