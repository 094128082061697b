package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestEventsExpireAfter30Days: an event carries DynamoDB's TTL attribute 30
// days on, and once those days have passed the feed and the event's read
// leave it out even while DynamoDB has not deleted it yet (TTL deletes late).
func TestEventsExpireAfter30Days(t *testing.T) {
	f := newFixture(t)
	if _, err := f.st.CreateCustomer(f.ctx, f.acct, business.Customer{Name: "Ama"}, nil, render[business.Customer]); err != nil {
		t.Fatal(err)
	}
	p, err := f.st.ListEvents(f.ctx, f.acct, store.EventFilter{}, 10, "")
	if err != nil || len(p.Items) != 1 {
		t.Fatalf("events after one create: %d, %v", len(p.Items), err)
	}
	var ev business.Event
	if err := json.Unmarshal(p.Items[0], &ev); err != nil {
		t.Fatal(err)
	}
	out, err := f.st.Client().GetItem(f.ctx, &dynamodb.GetItemInput{TableName: aws.String(f.st.Table()), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "A#" + f.acct + "#EVENT#" + ev.ID}, "SK": &types.AttributeValueMemberS{Value: "EVENT"}}})
	if err != nil {
		t.Fatal(err)
	}
	ttl, _ := out.Item[store.TTLAttribute].(*types.AttributeValueMemberN)
	if ttl == nil {
		t.Fatalf("event item has no %s", store.TTLAttribute)
	}
	var exp int64
	_ = json.Unmarshal([]byte(ttl.Value), &exp)
	if d := time.Until(time.Unix(exp, 0)); d < 29*24*time.Hour || d > 31*24*time.Hour {
		t.Fatalf("event expires in %s, want 30 days", d)
	}

	f.st.SetClock(func() time.Time { return time.Now().Add(business.EventRetention + time.Hour) })
	p, err = f.st.ListEvents(f.ctx, f.acct, store.EventFilter{}, 10, "")
	if err != nil || len(p.Items) != 0 {
		t.Fatalf("expired events listed: %d, %v", len(p.Items), err)
	}
	_, err = f.st.FindEvent(f.ctx, f.acct, ev.ID)
	wantCode(t, err, business.ENOTFOUND)
}

// TestCatchUpSettles: catching up (EventFilter.After) stops EventSettle
// short of now, so an event whose transaction commits late can never appear
// behind one a client already read; newest first shows everything at once.
func TestCatchUpSettles(t *testing.T) {
	f := newFixture(t)
	if _, err := f.st.CreateCustomer(f.ctx, f.acct, business.Customer{Name: "Ama"}, nil, render[business.Customer]); err != nil {
		t.Fatal(err)
	}
	since := business.EventIDAt(time.Now().Add(-time.Hour))
	p, err := f.st.ListEvents(f.ctx, f.acct, store.EventFilter{After: since}, 10, "")
	if err != nil || len(p.Items) != 0 {
		t.Fatalf("catching up listed %d events younger than %s, %v", len(p.Items), store.EventSettle, err)
	}
	if p, err = f.st.ListEvents(f.ctx, f.acct, store.EventFilter{}, 10, ""); err != nil || len(p.Items) != 1 {
		t.Fatalf("newest first: %d events, %v", len(p.Items), err)
	}
	f.st.SetClock(func() time.Time { return time.Now().Add(store.EventSettle + time.Second) })
	if p, err = f.st.ListEvents(f.ctx, f.acct, store.EventFilter{After: since}, 10, ""); err != nil || len(p.Items) != 1 {
		t.Fatalf("catching up once settled: %d events, %v", len(p.Items), err)
	}
}
