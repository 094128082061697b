package webhook_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/webhook"
)

// TestSendTestNotification: the test notification reaches the callback URL
// signed with its secret, with the test payload and a msg_test_ webhook-id.
func TestSendTestNotification(t *testing.T) {
	in := newInbox(t)
	in.status.Store(http.StatusNoContent)
	a := business.Account{ID: "acct_1", Currency: "KES", BusinessCode: "SHOP01"}
	wh := business.Webhook{CallbackURL: in.URL, CallbackSecret: "test-secret-0123456789"}
	id, attempt, ok := webhook.NewSender(true).SendTestNotification(context.Background(), a, wh, time.Now())
	if !ok || attempt.Status != http.StatusNoContent || !strings.HasPrefix(id, "msg_test_") || len(in.all()) != 1 {
		t.Fatalf("%s: %+v %v", id, attempt, ok)
	}
	r := in.all()[0]
	if !strings.Contains(string(r.body), `"message":"Test notification"`) || r.header.Get("webhook-id") != id {
		t.Fatalf("receiver got %s %v", r.body, r.header)
	}
	if err := (webhook.Verifier{Secret: wh.CallbackSecret}).Verify(r.header, r.body); err != nil {
		t.Fatalf("the notification does not verify: %v", err)
	}
}

// TestSendTestEvent: the test event reaches the endpoint, even disabled,
// signed with its secret; its delivery, in the endpoint's queue, ends with
// the one attempt: delivered, or failed without a retry.
func TestSendTestEvent(t *testing.T) {
	in := newInbox(t)
	in.status.Store(http.StatusAccepted)
	a := business.Account{ID: "acct_1", Currency: "KES", BusinessCode: "SHOP01"}
	e := business.Endpoint{ID: "ep_1", URL: in.URL, Status: business.EndpointDisabled, Version: 3}
	secret := "whsec_bmV3IHNlY3JldCBvZiB0aGUgZW5kcG9pbnQ="
	sender := webhook.NewSender(true)
	d, err := sender.SendTestEvent(context.Background(), a, e, []string{secret}, time.Now())
	if err != nil || d.State != business.DeliveryDelivered || len(d.Attempts) != 1 || d.WebhookID != d.TransactionID ||
		d.AccountID != store.EndpointQueue(a.ID, e.ID) || d.Attempts[0].Status != http.StatusAccepted || len(in.all()) != 1 {
		t.Fatalf("%v: %+v", err, d)
	}
	r := in.all()[0]
	if !strings.Contains(string(r.body), `"type":"webhook_endpoint.test"`) || r.header.Get("webhook-id") != d.WebhookID {
		t.Fatalf("receiver got %s %v", r.body, r.header)
	}
	if err := (webhook.Verifier{Secret: secret}).Verify(r.header, r.body); err != nil {
		t.Fatalf("the event does not verify: %v", err)
	}

	in.status.Store(http.StatusInternalServerError)
	d, err = sender.SendTestEvent(context.Background(), a, e, []string{secret}, time.Now())
	if err != nil || d.State != business.DeliveryFailed || len(d.Attempts) != 1 || d.Attempts[0].Status != http.StatusInternalServerError {
		t.Fatalf("%v: %+v", err, d)
	}
}
