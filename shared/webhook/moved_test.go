package webhook_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/events"
)

// TestMoveLegacyEventRecordsNoDelivery: the insert of an event `admin
// migrate` moved into the sharded feed (marked moved_at) records no
// delivery, even to an endpoint that subscribes to it; the same insert
// unmarked records one.
func TestMoveLegacyEventRecordsNoDelivery(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "SHOP1")
	rc := newInbox(t)
	ep, err := st.CreateEndpoint(ctx, a.ID, business.Endpoint{URL: rc.URL, EnabledEvents: []string{"customer.*"}}, business.NewEndpointSecret())
	if err != nil {
		t.Fatal(err)
	}
	const evt = "evt_019c1a2b3c4d012345678901"
	insert := fixtureBatch(t, a.ID).Records[3] // the event insert
	moved := insert
	moved.Change.NewImage = maps.Clone(insert.Change.NewImage)
	moved.Change.NewImage[store.EventMovedAttribute] = events.NewStringAttribute("2026-11-27 10:00:00")
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Second}, testdb.Quiet())
	queue := store.EndpointQueue(a.ID, ep.ID)

	resp, err := svc.HandleStream(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{moved}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("moved event: %v, failures %+v", err, resp.BatchItemFailures)
	}
	if d, err := st.FindDelivery(ctx, queue, evt); business.ErrorCode(err) != business.ENOTFOUND {
		t.Fatalf("a moved event recorded delivery %s in state %s (%v), want none", d.WebhookID, d.State, err)
	}
	if err := svc.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(rc.all()); n != 0 {
		t.Fatalf("the endpoint got %d deliveries of a moved event", n)
	}

	// The same event's insert as a change writes it: delivered.
	if _, err := svc.HandleStream(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{insert}}); err != nil {
		t.Fatal(err)
	}
	if d, err := st.FindDelivery(ctx, queue, evt); err != nil || d.WebhookID != evt {
		t.Fatalf("the event's insert recorded %q (%v), want its delivery", d.WebhookID, err)
	}
}
