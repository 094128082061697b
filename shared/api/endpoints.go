package api

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/wire"
)

// Webhook endpoints: where the account's events are delivered, each
// endpoint with the event types it subscribes to, its own signing secret
// (shown only when created or rotated) and its own queue of deliveries.

// ReplayBatch bounds the events one replay request reads; the answer's
// next_since continues after them.
const ReplayBatch = 1000

// DefaultSecretOverlap is how long a rotated-away secret keeps signing when
// the request does not say.
const DefaultSecretOverlap = business.MaxSecretOverlap

const errEndpointNotFound = "Webhook endpoint not found"

// endpointRequest is the body of create and edit (status only on edit).
type endpointRequest struct {
	URL           Opt[string]   `json:"url"`
	EnabledEvents Opt[[]string] `json:"enabled_events"`
	Description   Opt[string]   `json:"description"`
	Status        Opt[string]   `json:"status"`
}

// apply copies the fields the request lists onto e (absent keeps a field,
// null clears the description) and checks each; create requires url and
// enabled_events.
func (req endpointRequest) apply(s *Server, e *business.Endpoint, create bool) error {
	fe := business.FieldErrors{}
	switch {
	case req.URL.Set && !req.URL.Null:
		e.URL = strings.TrimSpace(req.URL.V)
		if msg := s.checkCallbackURL(e.URL); msg != "" {
			fe.Add("url", msg)
		}
	case req.URL.Null || create:
		fe.Add("url", "is required: the URL the events are posted to")
	}
	switch {
	case req.EnabledEvents.Set && !req.EnabledEvents.Null:
		e.EnabledEvents = business.CheckEnabledEvents(fe, "enabled_events", req.EnabledEvents.V)
	case req.EnabledEvents.Null || create:
		business.CheckEnabledEvents(fe, "enabled_events", nil)
	}
	if req.Description.Set {
		e.Description = strings.TrimSpace(req.Description.V)
		business.CheckText(fe, "description", e.Description, false, business.MaxEndpointDescription)
	}
	if req.Status.Set {
		switch v := req.Status.V; {
		case create:
			fe.Add("status", "is not a known field of a new endpoint, which starts enabled; change it with PUT")
		case !req.Status.Null && (v == business.EndpointEnabled || v == business.EndpointDisabled):
			e.Status = v
		default:
			fe.Add("status", "must be one of: "+business.EndpointEnabled+", "+business.EndpointDisabled)
		}
	}
	return fe.Err()
}

// pathEndpoint reads the {id} path value; anything that cannot be an
// endpoint's id is the endpoint's 404.
func pathEndpoint(r *http.Request) (string, error) {
	return pathCode(r, "id", business.ValidEndpointID, errEndpointNotFound)
}

// pathEndpointWithoutBody reads the {id} path value of an action that takes
// no fields: an id that cannot be an endpoint's is 404 before the body is
// read, and a body with any field is 400.
func pathEndpointWithoutBody(r *http.Request) (string, error) {
	id, err := pathEndpoint(r)
	if err != nil {
		return "", err
	}
	return id, readNoFields(r)
}

func listEndpoints(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	q := parseList(r)
	for name := range q.values {
		q.fe[name] = "is not a known query parameter: this list has none, it answers all of the account's endpoints (at most " +
			strconv.Itoa(business.MaxEndpoints) + ")"
	}
	if err := q.err(); err != nil {
		return err
	}
	es, err := s.store.ListEndpoints(r.Context(), acct.ID)
	if err != nil {
		return err
	}
	return writePage(w, "Webhook endpoints", "webhook_endpoints", store.Page[business.Endpoint]{Items: es}, wire.NewEndpoint)
}

func addEndpoint(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	req, err := readJSON[endpointRequest](r)
	if err != nil {
		return err
	}
	var e business.Endpoint
	if err := req.apply(s, &e, true); err != nil {
		return err
	}
	secret := business.NewEndpointSecret()
	e, err = s.store.CreateEndpoint(r.Context(), acct.ID, e, secret)
	if err != nil {
		return err
	}
	setETag(w, e.Version)
	return writeOK(w, "Webhook endpoint created", map[string]any{"webhook_endpoint": wire.EndpointWithSecret{Endpoint: wire.NewEndpoint(e), Secret: secret}})
}

func getEndpoint(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	id, err := pathEndpoint(r)
	if err != nil {
		return err
	}
	e, err := s.store.FindEndpoint(r.Context(), acct.ID, id)
	if err != nil {
		return err
	}
	setETag(w, e.Version)
	return writeOK(w, "Webhook endpoint found", wire.EndpointData(e))
}

func editEndpoint(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	id, err := pathEndpoint(r)
	if err != nil {
		return err
	}
	req, err := readJSON[endpointRequest](r)
	if err != nil {
		return err
	}
	// The fields are checked before the read, so a bad body is 400 whatever
	// the endpoint holds; the store's read-modify-write applies them again.
	if err := req.apply(s, &business.Endpoint{}, false); err != nil {
		return err
	}
	ifMatch := ifMatchHeader(r)
	e, err := s.store.UpdateEndpoint(r.Context(), acct.ID, id, func(e *business.Endpoint) error {
		if err := checkIfMatch(ifMatch, e.Version); err != nil {
			return err
		}
		return req.apply(s, e, false)
	})
	if err != nil {
		return err
	}
	setETag(w, e.Version)
	return writeOK(w, "Webhook endpoint updated", wire.EndpointData(e))
}

func deleteEndpoint(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	id, err := pathEndpointWithoutBody(r)
	if err != nil {
		return err
	}
	if err := s.store.DeleteEndpoint(r.Context(), acct.ID, id); err != nil {
		return err
	}
	return writeOK(w, "Webhook endpoint deleted", map[string]any{"webhook_endpoint": wire.Deleted{ID: id}})
}

// rotateRequest is the body of rotate-secret; the whole body may be absent.
type rotateRequest struct {
	OverlapHours Opt[int] `json:"overlap_hours"`
}

func rotateEndpointSecret(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	id, err := pathEndpoint(r)
	if err != nil {
		return err
	}
	var req rotateRequest
	if err := readOptionalObject(r, &req); err != nil {
		return err
	}
	overlap := DefaultSecretOverlap
	maxHours := int(business.MaxSecretOverlap / time.Hour)
	if req.OverlapHours.Set && !req.OverlapHours.Null {
		if h := req.OverlapHours.V; h < 0 || h > maxHours {
			return business.FieldErrors{"overlap_hours": "must be an integer from 0 to " + strconv.Itoa(maxHours) +
				": the hours the replaced secret keeps signing beside the new one (default " + strconv.Itoa(maxHours) + "; 0 stops it at once)"}.Err()
		}
		overlap = time.Duration(req.OverlapHours.V) * time.Hour
	}
	now := time.Now().UTC()
	secret := business.NewEndpointSecret()
	if err := s.store.RotateEndpointSecret(r.Context(), acct.ID, id, secret, overlap, now); err != nil {
		return err
	}
	rotated := wire.RotatedSecret{ID: id, Secret: secret}
	if overlap > 0 {
		rotated.PreviousSecretExpiresAt = wire.Nullable(now.Add(overlap).Format(business.TimeFormat))
	}
	return writeOK(w, "Webhook endpoint secret rotated", map[string]any{"webhook_endpoint": rotated})
}

// readOptionalObject decodes a body that may be absent or empty (dst keeps
// its zero value) into dst, strictly (see decodeObject).
func readOptionalObject(r *http.Request, dst any) error {
	if r.ContentLength == 0 {
		return nil
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	return decodeObject(body, dst, "")
}

type replayRequest struct {
	Since Opt[string] `json:"since"`
}

func replayEndpoint(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	id, err := pathEndpoint(r)
	if err != nil {
		return err
	}
	req, err := readJSON[replayRequest](r)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	since := strings.TrimSpace(req.Since.V)
	if since == "" {
		return business.FieldErrors{"since": "is required: the event id (evt_…) after which, or the date and time YYYY-MM-DD HH:MM:SS (UTC) from which, to send the events again"}.Err()
	}
	after, err := eventsAfter(since, now)
	if errors.Is(err, errSinceTooOld) {
		oldest := now.Add(-business.EventRetention).Format(business.TimeFormat)
		return business.FieldErrors{"since": "is older than the 30 days events are kept: replay from " + oldest + " or later"}.Err()
	}
	if err != nil {
		return business.FieldErrors{"since": err.Error()}.Err()
	}
	// Read consistently: a replay must not queue deliveries, and wake the
	// queue, of an endpoint deleted a moment ago.
	e, err := s.store.FindEndpointNow(r.Context(), acct.ID, id)
	if err != nil {
		return err
	}
	queued, more, last, err := s.store.ReplayEndpoint(r.Context(), acct.ID, e, after, ReplayBatch, now)
	if err != nil {
		return err
	}
	return writeOK(w, "Events queued for replay: "+strconv.Itoa(queued), wire.Replay{More: more, NextSince: wire.Nullable(last), Queued: queued})
}

func listEndpointDeliveries(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	id, err := pathEndpoint(r)
	if err != nil {
		return err
	}
	q := parseList(r, "state")
	state := q.oneOf("state", business.DeliveryPending, business.DeliveryHeld, business.DeliveryDelivered, business.DeliveryFailed, business.DeliverySkipped)
	if err := q.err(); err != nil {
		return err
	}
	// The endpoint is read beside its deliveries (one round trip): an id
	// that is not the account's is 404, whatever the list found.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var findErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, findErr = s.store.FindEndpoint(ctx, acct.ID, id); findErr != nil {
			cancel()
		}
	}()
	page, err := s.store.ListDeliveries(ctx, store.EndpointQueue(acct.ID, id), state, q.limit, q.cursor)
	wg.Wait()
	if findErr != nil {
		return findErr
	}
	if err != nil {
		return err
	}
	return writePage(w, "Deliveries", "deliveries", page, wire.NewEndpointDelivery)
}

// EndpointTestMargin is the time an endpoint's test send leaves, after its
// receiver's TestTimeout, to record the delivery and answer before the
// function's deadline (its function's Timeout counts it).
const EndpointTestMargin = 1500 * time.Millisecond

// testEndpoint posts a webhook_endpoint.test event, whose data is the
// endpoint, to that endpoint alone, now, signed with its secrets as every
// delivery is, whatever events it subscribes to and even while it is
// disabled (so a receiver can be checked before the endpoint is enabled
// again). The send is recorded among the endpoint's deliveries with its one
// attempt: delivered, or failed without retries (redeliver sends it
// again). It counts against the account's TestSendsPerMinute.
func testEndpoint(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	id, err := pathEndpointWithoutBody(r)
	if err != nil {
		return err
	}
	dbCtx, cancel := testSendContext(r.Context(), EndpointTestMargin)
	defer cancel()
	now := time.Now().UTC()
	// The endpoint and its secrets are read at once (one round trip); an id
	// that is not the account's endpoint is 404 from either.
	var secrets []string
	var secretsErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); secrets, secretsErr = s.store.EndpointSecrets(dbCtx, acct.ID, id, now) }()
	e, err := s.store.FindEndpoint(dbCtx, acct.ID, id)
	wg.Wait()
	if err == nil {
		err = secretsErr
	}
	if err != nil {
		return err
	}
	if err := s.takeTestSend(dbCtx, acct.ID, now); err != nil {
		return err
	}
	d, err := s.sender.SendTestEvent(r.Context(), acct, e, secrets, now)
	if err != nil {
		return err
	}
	// The event was sent: it is recorded even when the client has gone,
	// within the margin kept for it, so a slow write is the API's 503.
	recordCtx, cancelRecord := recordContext(r.Context())
	defer cancelRecord()
	if _, err := s.store.CreateDelivery(recordCtx, d); err != nil {
		return err
	}
	return writeOK(w, "Test event sent", map[string]any{"delivery": wire.NewEndpointDelivery(d)})
}

// recordContext is a context for a write that must follow what a request
// already did: not cancelled with the request (a client that hangs up does
// not undo a send), and ending testAnswerMargin before the request's
// deadline (a Lambda's), so a slow write is the API's 503 rather than a
// timed-out function. Without a deadline (the devserver) it ends after
// recordTimeout.
func recordContext(ctx context.Context) (context.Context, context.CancelFunc) {
	detached := context.WithoutCancel(ctx)
	if deadline, ok := ctx.Deadline(); ok {
		return context.WithDeadline(detached, deadline.Add(-testAnswerMargin))
	}
	return context.WithTimeout(detached, recordTimeout)
}

// recordTimeout bounds recordContext's write where the request has no
// deadline: a function's usual Timeout.
const recordTimeout = 10 * time.Second

// redeliverEndpointDelivery queues one of an endpoint's deliveries that is
// not waiting for a new round of attempts, with the same event id (so
// receivers that already have it can drop it). A disabled endpoint's
// deliveries wait until it is enabled again.
func redeliverEndpointDelivery(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	id, err := pathEndpointWithoutBody(r)
	if err != nil {
		return err
	}
	eventID, err := pathCode(r, "event_id", business.ValidEventID, "Delivery not found")
	if err != nil {
		return err
	}
	// Read consistently: a redelivery must not wake the queue of an
	// endpoint deleted a moment ago.
	if _, err := s.store.FindEndpointNow(r.Context(), acct.ID, id); err != nil {
		return err
	}
	d, err := s.store.Redeliver(r.Context(), store.EndpointQueue(acct.ID, id), eventID, time.Now().UTC())
	if err != nil {
		return err
	}
	return writeOK(w, "Delivery queued", map[string]any{"delivery": wire.NewEndpointDelivery(d)})
}
