package webhook

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/wire"
)

// SendTestNotification posts a test notification of account a
// (NewTestPayload) to its callback URL now, signed as a payment's is, and
// waits TestTimeout for the receiver. No payment and no delivery is
// recorded. It returns the notification's webhook-id, the attempt and
// whether it was delivered.
func (s *Sender) SendTestNotification(ctx context.Context, a business.Account, wh business.Webhook, now time.Time) (string, business.DeliveryAttempt, bool) {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	tx := "test_" + hex.EncodeToString(b)
	d := business.Delivery{AccountID: a.ID, TransactionID: tx, WebhookID: "msg_" + tx, Payload: NewTestPayload(a, tx)}
	attempt, ok := s.SendWithin(ctx, d, wh.CallbackURL, wh.CallbackSecret, now, TestTimeout)
	return d.WebhookID, attempt, ok
}

// SendTestEvent posts a webhook_endpoint.test event of account acct, whose
// data is endpoint e, to e alone now, signed with its secrets as every
// delivery is, and waits TestTimeout for the receiver. It returns the
// event's delivery, for the caller to record, with its one attempt:
// delivered, or failed without retries.
func (s *Sender) SendTestEvent(ctx context.Context, acct business.Account, e business.Endpoint, secrets []string, now time.Time) (business.Delivery, error) {
	evID := business.NewEventIDs(now).Next()
	payload, err := json.Marshal(business.Event{
		ID: evID, Type: business.EventEndpointTest, CreatedAt: now.Format(business.TimeFormat), Livemode: acct.Livemode(),
		Resource: business.EventResource{Type: business.ResourceEndpoint, ID: e.ID, Version: e.Version}, Data: wire.EndpointData(e),
	})
	if err != nil {
		return business.Delivery{}, business.Errorf(business.EINTERNAL, "encode a test event: %v", err)
	}
	d := business.Delivery{AccountID: store.EndpointQueue(acct.ID, e.ID), TransactionID: evID, WebhookID: evID,
		Payload: payload, State: business.DeliveryPending, NextAt: now, CreatedAt: now}
	attempt, ok := s.SendSignedWithin(ctx, d, e.URL, secrets, now, TestTimeout)
	d.Next(attempt, ok, nil)
	return d, nil
}
