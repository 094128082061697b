package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"bizdata/shared/business"

	"code.dny.dev/ssrf"
)

// Timeout bounds one delivery attempt.
const Timeout = 10 * time.Second

// TestTimeout bounds a test notification's wait for the receiver (SendWithin),
// so the API answers it within its function's time budget.
const TestTimeout = 5 * time.Second

// Payload is the body of a payment notification: the description's six
// fields plus invoice_code and payment_status.
type Payload struct {
	Status        int    `json:"status"`
	Message       string `json:"message"`
	Amount        string `json:"amount"`
	TransactionID string `json:"transaction_id"`
	Currency      string `json:"currency"`
	BusinessCode  string `json:"business_code"`
	InvoiceCode   string `json:"invoice_code"`
	PaymentStatus string `json:"payment_status"`
	// Type tells a refund ("payment.refunded") from a received payment,
	// whose payload has no type.
	Type string `json:"type,omitempty"`
	// Livemode is false for a payment of a test twin (made with a test key).
	Livemode bool `json:"livemode"`
}

// RefundType is the type of a refund's notification.
const RefundType = "payment.refunded"

// NewPayload returns the exact body announcing payment p of account a.
func NewPayload(a business.Account, p business.Payment) []byte {
	b, _ := json.Marshal(Payload{
		Status: 200, Message: "Payment received", Amount: p.Amount.String(), TransactionID: p.TransactionID,
		Currency: a.Currency, BusinessCode: a.BusinessCode, Livemode: a.Livemode(), InvoiceCode: p.InvoiceCode, PaymentStatus: p.PaymentStatus,
	})
	return b
}

// NewRefundPayload returns the exact body announcing refund r of account a:
// a payment's fields, with message "Payment refunded", the refunded amount,
// the refund's id as transaction_id, and type "payment.refunded".
func NewRefundPayload(a business.Account, r business.Refund) []byte {
	b, _ := json.Marshal(Payload{
		Status: 200, Message: "Payment refunded", Amount: r.Amount.String(), TransactionID: r.RefundID,
		Currency: a.Currency, BusinessCode: a.BusinessCode, Livemode: a.Livemode(), InvoiceCode: r.InvoiceCode, PaymentStatus: r.PaymentStatus,
		Type: RefundType,
	})
	return b
}

// NewTestPayload returns the body of a test notification for account a:
// signed and sent like a real one, with message "Test notification", amount
// 0.00 and a transaction_id starting test_. No payment record exists for it.
func NewTestPayload(a business.Account, transactionID string) []byte {
	b, _ := json.Marshal(Payload{
		Status: 200, Message: "Test notification", Amount: "0.00", TransactionID: transactionID,
		Currency: a.Currency, BusinessCode: a.BusinessCode, Livemode: a.Livemode(),
	})
	return b
}

// guardian decides which addresses deliveries may reach when private
// targets are not allowed: the dialer asks it for every resolved IP, and
// PublicHost for a URL's host before it is stored.
var guardian = ssrf.New(ssrf.WithAnyPort())

// PublicHost reports whether a callback URL's host may be stored where
// private targets are not allowed: not localhost, and not an IP literal the
// dialer would refuse. Names are checked again, on the resolved IP, when
// they are dialled.
func PublicHost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return false
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		return guardian.SafeAddr(ip.Unmap()) == nil
	}
	return true
}

// Sender posts deliveries. Its client refuses redirects and, unless private
// targets are allowed, dials only public addresses (no loopback, private,
// link-local, CGNAT or metadata addresses), checked on the resolved IP so DNS
// tricks do not get around it.
type Sender struct {
	client *http.Client
}

// NewSender returns a Sender; allowPrivate lifts the address check (local
// development and tests only).
func NewSender(allowPrivate bool) *Sender {
	dialer := &net.Dialer{Timeout: Timeout}
	if !allowPrivate {
		dialer.Control = guardian.Safe
	}
	tr := &http.Transport{
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   Timeout,
		ResponseHeaderTimeout: Timeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
	return &Sender{client: &http.Client{
		Transport: tr,
		Timeout:   Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
}

// Send makes one attempt of d to callbackURL and returns its log entry and whether
// it succeeded (a 2xx answer; a redirect is a failure).
func (s *Sender) Send(ctx context.Context, d business.Delivery, callbackURL, secret string, now time.Time) (business.DeliveryAttempt, bool) {
	return s.SendWithin(ctx, d, callbackURL, secret, now, Timeout)
}

// SendWithin is Send with the attempt bounded by limit instead of Timeout
// (a limit above Timeout is cut to it): a receiver that has not answered
// within limit is logged as "timed out after <limit>".
func (s *Sender) SendWithin(ctx context.Context, d business.Delivery, callbackURL, secret string, now time.Time, limit time.Duration) (business.DeliveryAttempt, bool) {
	return s.post(ctx, d, callbackURL, now, limit, func(h http.Header, ts int64) {
		if secret != "" {
			h.Set(HeaderSignature, Sign(d.Payload, secret))
			h.Set(HeaderStandardSignature, SignStandard(d.WebhookID, ts, d.Payload, secret))
		}
	})
}

// SendSigned makes one attempt of d to a webhook endpoint's URL, as Send
// does, but signed the Standard Webhooks way only (no description's
// `signature` header: that one is the callback URL's): `webhook-signature`
// holds one "v1,<signature>" per secret, space-separated, so during a
// secret's rotation a receiver that knows either secret verifies it (the
// spec's libraries accept a delivery when any signature matches).
func (s *Sender) SendSigned(ctx context.Context, d business.Delivery, endpointURL string, secrets []string, now time.Time) (business.DeliveryAttempt, bool) {
	return s.SendSignedWithin(ctx, d, endpointURL, secrets, now, Timeout)
}

// SendSignedWithin is SendSigned with the attempt bounded by limit, as
// SendWithin bounds Send (an endpoint's test send waits TestTimeout).
func (s *Sender) SendSignedWithin(ctx context.Context, d business.Delivery, endpointURL string, secrets []string, now time.Time, limit time.Duration) (business.DeliveryAttempt, bool) {
	return s.post(ctx, d, endpointURL, now, limit, func(h http.Header, ts int64) {
		sigs := make([]string, 0, len(secrets))
		for _, secret := range secrets {
			if secret != "" {
				sigs = append(sigs, SignStandard(d.WebhookID, ts, d.Payload, secret))
			}
		}
		if len(sigs) > 0 {
			h.Set(HeaderStandardSignature, strings.Join(sigs, " "))
		}
	})
}

// post makes one attempt of d to target bounded by limit, sign setting its
// signature headers for the attempt's timestamp.
func (s *Sender) post(ctx context.Context, d business.Delivery, target string, now time.Time, limit time.Duration, sign func(h http.Header, ts int64)) (business.DeliveryAttempt, bool) {
	limit = min(limit, Timeout)
	if limit < Timeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	a := business.DeliveryAttempt{At: now}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(d.Payload))
	if err != nil {
		a.Error = "the callback URL is not a valid URL"
		return a, false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "bizdata-webhooks/1")
	req.Header.Set(HeaderID, d.WebhookID)
	ts := now.Unix()
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	sign(req.Header, ts)
	start := time.Now()
	res, err := s.client.Do(req)
	a.LatencyMS = time.Since(start).Milliseconds()
	if err != nil {
		a.Error = describeError(err, limit)
		return a, false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	a.Status = res.StatusCode
	if res.StatusCode < 200 || res.StatusCode > 299 {
		a.Error = fmt.Sprintf("receiver answered %d", res.StatusCode)
		if loc := res.Header.Get("Location"); res.StatusCode >= 300 && res.StatusCode < 400 && loc != "" {
			a.Error += " (redirects are not followed)"
		}
		if business.HonoursRetryAfter(res.StatusCode) {
			if wait := RetryAfter(res.Header.Get("Retry-After"), time.Now()); wait > 0 {
				// The wait counts from the answer, which came LatencyMS
				// after the attempt began (its At).
				a.RetryAfter = time.Duration(a.LatencyMS)*time.Millisecond + wait
				a.Error += fmt.Sprintf(" (asked to retry after %s)", wait.Round(time.Second))
			}
		}
		return a, false
	}
	return a, true
}

// maxRetryAfter bounds a Retry-After read, far beyond any retry schedule,
// so that a huge number of seconds cannot overflow a Duration.
const maxRetryAfter = 10 * 365 * 24 * time.Hour

// RetryAfter reads a Retry-After header received at now: a number of
// seconds or an HTTP-date (RFC 9110 §10.2.3). It returns 0 for an empty,
// malformed, zero or past value: the retry schedule then decides alone.
func RetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if strings.Trim(v, "0123456789") == "" { // delay-seconds: digits only
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter // only too many digits fail to parse
		}
		return time.Duration(n) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil || !t.After(now) {
		return 0
	}
	return min(t.Sub(now), maxRetryAfter)
}

// describeError turns a transport error of an attempt bounded by limit into
// a short log text.
func describeError(err error, limit time.Duration) string {
	switch {
	case errors.Is(err, ssrf.ErrProhibitedIP), errors.Is(err, ssrf.ErrProhibitedNetwork), errors.Is(err, ssrf.ErrProhibitedPort):
		return "refused: the callback URL resolves to a private or reserved address"
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out after " + limit.String()
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timed out after " + limit.String()
	}
	// The URL may carry a token in its query: log the cause without it.
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
