package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/webhook"
	"bizdata/shared/wire"
)

// The merchant's own settings: its webhook, its deliveries, its API key,
// authenticated by the account's key like every route.

func getWebhook(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	a, settings, err := s.store.FindWebhookSettings(r.Context(), acct.ID)
	if err != nil {
		return err
	}
	return writeOK(w, "Webhook settings found", map[string]any{"webhook": wire.NewWebhookSettings(a, settings.CallbackURL, settings.Signed, settings.UpdatedAt)})
}

type webhookRequest struct {
	CallbackURL    Opt[string] `json:"callback_url"`
	CallbackSecret Opt[string] `json:"callback_secret"`
}

func updateWebhook(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	req, err := readJSON[webhookRequest](r)
	if err != nil {
		return err
	}
	fe := business.FieldErrors{}
	var callbackURL, secret *string
	if req.CallbackURL.Set {
		u := strings.TrimSpace(req.CallbackURL.V)
		if !req.CallbackURL.Null {
			if msg := s.checkCallbackURL(u); msg != "" {
				fe.Add("callback_url", msg)
			}
		}
		callbackURL = &u
	}
	if req.CallbackSecret.Set {
		v := req.CallbackSecret.V
		switch {
		case req.CallbackSecret.Null:
		case strings.ContainsFunc(v, func(c rune) bool { return c <= ' ' || c == 0x7f }):
			fe.Add("callback_secret", "must not contain spaces or control characters")
		case len(v) < 16 || len(v) > 256:
			fe.Add("callback_secret", "must be 16 to 256 characters")
		}
		secret = &v
	}
	if err := fe.Err(); err != nil {
		return err
	}
	settings, err := s.store.UpdateWebhook(r.Context(), acct.ID, callbackURL, secret)
	if err != nil {
		return err
	}
	return writeOK(w, "Webhook settings updated", map[string]any{"webhook": wire.NewWebhookSettings(acct, settings.CallbackURL, settings.Signed, settings.UpdatedAt)})
}

// checkCallbackURL says why u cannot be a callback URL, or "" when it can:
// an absolute https URL whose host is not a private address, unless the
// deployment allows private targets (then http and any host too).
func (s *Server) checkCallbackURL(u string) string {
	if msg := business.CheckURL(u); msg != "" {
		return msg
	}
	if s.allowPrivate {
		return ""
	}
	p, _ := url.Parse(u)
	if p.Scheme != "https" {
		return "must be an https URL"
	}
	if !webhook.PublicHost(p.Hostname()) {
		return "must be a public address (not localhost, private, link-local, CGNAT or metadata)"
	}
	return ""
}

// readNoFields reads the body of a request that carries no fields: none,
// empty, or {}. Anything else is 400 naming the unknown fields (415 when it
// is not JSON, 413 when it is too large).
func readNoFields(r *http.Request) error {
	return readOptionalObject(r, &struct{}{})
}

// DeliveryJSON and DeliveryAttemptJSON are a delivery and its attempts as
// the API answers them (GET /user/webhook/deliveries); their shape is wire's.
type (
	DeliveryJSON        = wire.Delivery
	DeliveryAttemptJSON = wire.DeliveryAttempt
)

func listDeliveries(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	q := parseList(r, "state")
	state := q.oneOf("state", business.DeliveryPending, business.DeliveryHeld, business.DeliveryDelivered, business.DeliveryFailed, business.DeliverySkipped)
	if err := q.err(); err != nil {
		return err
	}
	page, err := s.store.ListDeliveries(r.Context(), acct.ID, state, q.limit, q.cursor)
	if err != nil {
		return err
	}
	return writePage(w, "Deliveries", "deliveries", page, wire.NewDelivery)
}

func redeliverWebhook(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	if err := readNoFields(r); err != nil {
		return err
	}
	tx, err := pathCode(r, "transaction_id", business.ValidTransactionID, "Delivery not found")
	if err != nil {
		return err
	}
	d, err := s.store.Redeliver(r.Context(), acct.ID, tx, time.Now().UTC())
	if err != nil {
		return err
	}
	return writeOK(w, "Delivery queued", map[string]any{"delivery": wire.NewDelivery(d)})
}

// testSendContext bounds the DynamoDB calls a test send makes before it
// posts: they must leave the post its TestTimeout, and the answer margin,
// before the function's deadline (a Lambda's context has one; the
// devserver's has none). Past that point they fail as 503, so a slow
// database never turns into API Gateway's own answer.
func testSendContext(ctx context.Context, margin time.Duration) (context.Context, context.CancelFunc) {
	if deadline, ok := ctx.Deadline(); ok {
		return context.WithDeadline(ctx, deadline.Add(-webhook.TestTimeout-margin))
	}
	return ctx, func() {}
}

// takeTestSend counts one test send of the account at now, or returns 429
// with Retry-After when it has sent TestSendsPerMinute this minute. The
// payment webhook's tests and every endpoint's share the count.
func (s *Server) takeTestSend(ctx context.Context, account string, now time.Time) error {
	allowed, wait, err := s.store.TakeTestSend(ctx, account, TestSendsPerMinute, now)
	if err != nil || allowed {
		return err
	}
	secs := int((wait + time.Second - 1) / time.Second)
	unit := "seconds"
	if secs == 1 {
		unit = "second"
	}
	return &business.Error{Code: business.ELIMIT, RetryAfter: time.Duration(secs) * time.Second,
		Message: fmt.Sprintf("Too many test notifications: at most %d per minute; try again in %d %s", TestSendsPerMinute, secs, unit)}
}

// TestSendsPerMinute is how many test notifications an account may send in
// one minute (a fixed window, counted in the table, so across processes).
const TestSendsPerMinute = 5

// testAnswerMargin is the time a test send leaves, after its receiver's
// TestTimeout, to write the answer before the function's deadline.
const testAnswerMargin = 500 * time.Millisecond

func testWebhook(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	if err := readNoFields(r); err != nil {
		return err
	}
	dbCtx, cancel := testSendContext(r.Context(), testAnswerMargin)
	defer cancel()
	a, wh, err := s.store.FindAccount(dbCtx, acct.ID)
	if err != nil {
		return err
	}
	if wh.CallbackURL == "" {
		return business.Errorf(business.EINVALID, "no callback URL is set: set one with PUT /api/v1/user/webhook first")
	}
	now := time.Now().UTC()
	if err := s.takeTestSend(dbCtx, a.ID, now); err != nil {
		return err
	}
	webhookID, attempt, ok := s.sender.SendTestNotification(r.Context(), a, wh, now)
	out := wire.WebhookTest{Delivered: ok, Error: wire.Nullable(attempt.Error), LatencyMS: attempt.LatencyMS, WebhookID: webhookID}
	if attempt.Status != 0 {
		out.StatusCode = &attempt.Status
	}
	return writeOK(w, "Test notification sent", map[string]any{"delivery": out})
}
