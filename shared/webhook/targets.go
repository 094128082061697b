package webhook

import (
	"context"
	"errors"
	"fmt"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
)

// target is where a queue's deliveries go and how they are signed: an
// account's callback URL (its queue is named by the account id) with the
// description's signature header beside the Standard Webhooks ones, or a
// webhook endpoint (its queue named store.EndpointQueue) with the Standard
// Webhooks headers only, signed with each of its secrets.
type target struct {
	url      string
	secret   string   // the callback URL's
	endpoint bool     // a webhook endpoint's queue
	secrets  []string // the endpoint's: the current one first
	// off says the endpoint is disabled or deleted: nothing is attempted and
	// its queue is parked until it is enabled again.
	off bool
}

// offSeenKept is how many endpoint queues found off a dispatcher notes
// before it forgets them all (a note only saves a pass: see endpointOff).
const offSeenKept = 1024

// targetOf reads where the deliveries of a queue go: the account's webhook
// settings, or for an endpoint's queue the endpoint and its secrets. Each
// read is consistent and serves only the attempts one pass of the queue
// starts, never a later pass: a rotation, a disable or a new URL answered
// before a pass began applies to every attempt it starts. A queue whose
// endpoint is off is noted, so that the next pass parks it (endpointOff).
func (s *Service) targetOf(ctx context.Context, queue string, now time.Time) (target, bool) {
	var t target
	var err error
	if account, id, isEndpoint := store.SplitEndpointQueue(queue); isEndpoint {
		t, err = s.readEndpoint(ctx, account, id, now)
	} else {
		var wh business.Webhook
		_, wh, err = s.store.FindAccount(ctx, queue)
		t = target{url: wh.CallbackURL, secret: wh.CallbackSecret}
	}
	if err != nil {
		s.log.WarnContext(ctx, "webhook dispatch: target not read", "account_id", queue, "error", err.Error())
		return target{}, false
	}
	if t.off {
		s.noteOff(queue)
	}
	return t, true
}

// noteOff notes that queue's endpoint was found off.
func (s *Service) noteOff(queue string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.offSeen) >= offSeenKept { // a long-running dispatcher forgets them
		clear(s.offSeen)
	}
	s.offSeen[queue] = true
}

// readEndpoint reads an endpoint's target, consistently: off when it is
// disabled or deleted. The endpoint and its secrets are read side by side
// (one round trip before the attempts, not two).
func (s *Service) readEndpoint(ctx context.Context, account, id string, now time.Time) (target, error) {
	off := target{endpoint: true, off: true}
	var secrets []string
	var secretsErr error
	read := make(chan struct{})
	go func() {
		defer close(read)
		secrets, secretsErr = s.store.EndpointSecrets(ctx, account, id, now)
	}()
	ep, err := s.store.FindEndpointNow(ctx, account, id)
	<-read
	switch {
	case business.ErrorCode(err) == business.ENOTFOUND:
		return off, nil
	case err != nil:
		return target{}, err
	case ep.Status != business.EndpointEnabled:
		return off, nil
	}
	switch err := secretsErr; {
	case business.ErrorCode(err) == business.ENOTFOUND: // deleted meanwhile
		return off, nil
	case err != nil:
		return target{}, err
	}
	return target{url: ep.URL, endpoint: true, secrets: secrets}, nil
}

// endpointOff reports whether q is the queue of an endpoint that is disabled
// or deleted, and then parks it until the endpoint is enabled again (that
// wakes it). Only a queue an earlier read found off is looked at, and its
// endpoint is read again before parking: a re-enable since that read would
// otherwise be missed and its deliveries stranded.
func (s *Service) endpointOff(ctx context.Context, q store.Queue, now time.Time) bool {
	account, id, ok := store.SplitEndpointQueue(q.AccountID)
	if !ok {
		return false
	}
	s.mu.Lock()
	seen := s.offSeen[q.AccountID]
	delete(s.offSeen, q.AccountID)
	s.mu.Unlock()
	if !seen {
		return false
	}
	tg, err := s.readEndpoint(ctx, account, id, now)
	if err != nil {
		s.log.WarnContext(ctx, "webhook dispatch: endpoint not read", "account_id", q.AccountID, "error", err.Error())
		s.noteOff(q.AccountID) // the next pass reads it again
		return true
	}
	if !tg.off {
		return false
	}
	if err := s.store.ParkEndpointQueue(ctx, q); err != nil && !errors.Is(err, store.ErrNotClaimed) {
		s.log.WarnContext(ctx, "webhook dispatch: disabled endpoint's queue not parked", "account_id", q.AccountID, "error", err.Error())
	}
	return true
}

// disableFailing disables the endpoint of queue when every attempt to it
// has failed since since, for DisableAfter or longer; store.DisableEndpoint
// records the webhook_endpoint.disabled event with it. Its queue is then
// parked (see endpointOff): its deliveries wait, and new ones are recorded,
// until its owner enables it again.
func (s *Service) disableFailing(ctx context.Context, queue string, since, now time.Time) {
	account, id, ok := store.SplitEndpointQueue(queue)
	if !ok || s.DisableAfter <= 0 || since.IsZero() || now.Sub(since) < s.DisableAfter {
		return
	}
	reason := fmt.Sprintf("every delivery attempt failed for %s (since %s)", s.DisableAfter, since.UTC().Format(time.RFC3339))
	if disabled, _ := s.disableEndpoint(ctx, queue, account, id, reason, now); disabled {
		s.log.WarnContext(ctx, "webhook endpoint disabled: every attempt failed", "account_id", account, "endpoint_id", id,
			"failing_since", since, "disable_after", s.DisableAfter.String())
	}
}

// disableEndpoint disables the endpoint of queue with reason
// (store.DisableEndpoint records its webhook_endpoint.disabled event, once
// however many attempts ask) and notes its queue off, so the next pass parks
// it. It returns whether this call disabled it, and whether the endpoint is
// off now (disabled, by this call or before, or deleted); off is false when
// the disable could not be written (logged).
func (s *Service) disableEndpoint(ctx context.Context, queue, account, id, reason string, now time.Time) (disabled, off bool) {
	disabled, err := s.store.DisableEndpoint(ctx, account, id, reason, now)
	if err != nil && business.ErrorCode(err) != business.ENOTFOUND {
		s.log.WarnContext(ctx, "webhook endpoint not disabled", "account_id", account, "endpoint_id", id, "error", err.Error())
		return false, false
	}
	s.noteOff(queue)
	return disabled, true
}

// disableGone disables the endpoint of queue, which answered an attempt 410
// Gone: its receiver is gone for good, so retrying it for days would only
// fail (the Standard Webhooks guidance). It reports whether the endpoint is
// off now (see disableEndpoint); false when the disable could not be
// written, and the next 410 tries again.
func (s *Service) disableGone(ctx context.Context, queue string, now time.Time) bool {
	account, id, ok := store.SplitEndpointQueue(queue)
	if !ok {
		return false
	}
	disabled, off := s.disableEndpoint(ctx, queue, account, id, "the endpoint answered 410 Gone", now)
	if disabled {
		s.log.WarnContext(ctx, "webhook endpoint disabled: it answered 410 Gone", "account_id", account, "endpoint_id", id)
	}
	return off
}
