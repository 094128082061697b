package store_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// legacyEvent writes ev as the release before the sharded feed stored it:
// PK A#<acct>#EVENT#<id>, SK EVENT, its JSON in the view and the keys of
// the four feed indexes, expiring at expires. It returns the JSON.
func legacyEvent(f *fixture, ev business.Event, expires time.Time) []byte {
	f.t.Helper()
	body, err := json.Marshal(ev)
	if err != nil {
		f.t.Fatal(err)
	}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	ttl := &types.AttributeValueMemberN{Value: fmt.Sprint(expires.Unix())}
	base := "A#" + f.acct + "#EVENT"
	_, err = f.st.Client().PutItem(f.ctx, &dynamodb.PutItemInput{TableName: aws.String(f.st.Table()), Item: map[string]types.AttributeValue{
		"PK": s(base + "#" + ev.ID), "SK": s("EVENT"),
		"type": s("event"), "account_id": s(f.acct), "event_id": s(ev.ID), "event_type": s(ev.Type),
		store.TTLAttribute: ttl,
		"v":                &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"body": s(string(body)), store.TTLAttribute: ttl}},
		"GSI1PK":           s(base), "GSI1SK": s(ev.ID),
		"GSI2PK": s(base + "#TYPE#" + ev.Type), "GSI2SK": s(ev.ID),
		"GSI3PK": s(base + "#RES#" + ev.Resource.Type + "#" + ev.Resource.ID), "GSI3SK": s(ev.ID),
		"GSI4PK": s(base + "#FAM#" + business.EventFamily(ev.Type)), "GSI4SK": s(ev.ID),
	}})
	if err != nil {
		f.t.Fatal(err)
	}
	return body
}

// TestMoveLegacyEvents: events stored before the feed was sharded are moved
// by MoveLegacyEvents (two runs at once move each exactly once), after which
// the feed, newest first and by type, family and resource, and the event's
// read find them with the same ids and JSON, their expiry kept; the earlier
// items are gone, an expired one is left to its TTL, and a further run moves
// nothing.
func TestMoveLegacyEvents(t *testing.T) {
	f := newFixture(t)
	f.st.SetEventSettle(0)
	// One event written as the API writes it now, beside the earlier ones.
	if _, err := f.st.CreateCustomer(f.ctx, f.acct, business.Customer{Name: "Kofi"}, nil, render[business.Customer]); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	lines := make([]map[string]any, 30)
	for i := range lines {
		lines[i] = map[string]any{"item_name": fmt.Sprintf("Bag of rice, %d kg", i+1), "quantity": "2", "unit_price": "120.00", "amount": "240.00"}
	}
	type legacy struct {
		ev      business.Event
		expires time.Time
	}
	at := func(minutes int) string {
		return business.NewEventIDs(now.Add(-time.Duration(minutes) * time.Minute)).Next()
	}
	res := func(kind, id string, v int64) business.EventResource {
		return business.EventResource{Type: kind, ID: id, Version: v}
	}
	var olds []legacy
	for i, e := range []struct {
		typ string
		res business.EventResource
		// data is what the event carries: a sale's is large (deflated
		// in the sharded layout).
		data any
	}{
		{business.EventCustomerCreated, res(business.ResourceCustomer, "101", 1), map[string]any{"id": 101, "name": "Ama"}},
		{business.EventCustomerCreated, res(business.ResourceCustomer, "102", 1), map[string]any{"id": 102, "name": "Esi"}},
		{business.EventCustomerUpdated, res(business.ResourceCustomer, "101", 2), map[string]any{"id": 101, "name": "Ama Mensah"}},
		{business.EventSaleCreated, res(business.ResourceSale, "100001", 1), map[string]any{"invoice_code": "100001", "lines": lines}},
		{business.EventPaymentReceived, res(business.ResourceSale, "100001", 2), map[string]any{"invoice_code": "100001", "lines": lines, "amount_paid": "50.00"}},
		{business.EventItemCreated, res(business.ResourceItem, "RICE", 1), map[string]any{"item_code": "RICE"}},
	} {
		ev := business.Event{ID: at(60 - i), Type: e.typ, CreatedAt: now.Format(time.DateTime), Livemode: true, Resource: e.res, Data: e.data}
		olds = append(olds, legacy{ev, now.Add(business.EventRetention - time.Duration(i)*time.Hour).Truncate(time.Second)})
	}
	bodies := map[string]string{}
	for _, o := range olds {
		bodies[o.ev.ID] = string(legacyEvent(f, o.ev, o.expires))
	}
	// An event whose 30 days have passed (TTL deletes late): left as it is.
	expired := business.Event{ID: at(90), Type: business.EventCategoryCreated, CreatedAt: now.Format(time.DateTime), Livemode: true,
		Resource: res(business.ResourceCategory, "7", 1), Data: map[string]any{"id": 7}}
	legacyEvent(f, expired, now.Add(-time.Hour))

	before, err := f.st.ListEvents(f.ctx, f.acct, store.EventFilter{}, 50, "")
	if err != nil || len(before.Items) != 1 {
		t.Fatalf("the feed before the move: %d events (%v), want only the one written now", len(before.Items), err)
	}
	var current business.Event
	if err := json.Unmarshal(before.Items[0], &current); err != nil {
		t.Fatal(err)
	}
	bodies[current.ID] = string(before.Items[0])

	// Two runs at once: each event is moved by one of them.
	var wg sync.WaitGroup
	counts, errs := make([]int, 2), make([]error, 2)
	for i := range counts {
		wg.Add(1)
		go func() { defer wg.Done(); counts[i], errs[i] = f.st.MoveLegacyEvents(f.ctx) }()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || counts[0]+counts[1] != len(olds) {
		t.Fatalf("two runs moved %v (%v), want %d events in all", counts, errs, len(olds))
	}
	if n, err := f.st.MoveLegacyEvents(f.ctx); err != nil || n != 0 {
		t.Fatalf("a further run moved %d (%v), want 0", n, err)
	}

	// list returns the ids a filter lists, checking each JSON is the one
	// stored.
	list := func(filter store.EventFilter) []string {
		t.Helper()
		var ids []string
		cursor := ""
		for {
			p, err := f.st.ListEvents(f.ctx, f.acct, filter, 2, cursor)
			if err != nil {
				t.Fatal(err)
			}
			for _, raw := range p.Items {
				var ev business.Event
				if err := json.Unmarshal(raw, &ev); err != nil {
					t.Fatal(err)
				}
				if string(raw) != bodies[ev.ID] {
					t.Fatalf("%+v lists %s as %s, stored as %s", filter, ev.ID, raw, bodies[ev.ID])
				}
				ids = append(ids, ev.ID)
			}
			if p.Next == "" {
				return ids
			}
			cursor = p.Next
		}
	}
	ids := func(pick func(business.Event) bool) []string {
		var out []string
		for _, o := range olds {
			if pick(o.ev) {
				out = append(out, o.ev.ID)
			}
		}
		if pick(current) {
			out = append(out, current.ID)
		}
		slices.Sort(out)
		slices.Reverse(out)
		return out
	}
	for _, c := range []struct {
		filter store.EventFilter
		pick   func(business.Event) bool
	}{
		{store.EventFilter{}, func(business.Event) bool { return true }},
		{store.EventFilter{Type: business.EventCustomerCreated}, func(e business.Event) bool { return e.Type == business.EventCustomerCreated }},
		{store.EventFilter{Type: "customer.*"}, func(e business.Event) bool { return strings.HasPrefix(e.Type, "customer.") }},
		{store.EventFilter{Type: "payment.*"}, func(e business.Event) bool { return e.Type == business.EventPaymentReceived }},
		{store.EventFilter{ResourceType: business.ResourceSale, ResourceID: "100001"}, func(e business.Event) bool { return e.Resource.ID == "100001" }},
		{store.EventFilter{ResourceType: business.ResourceCustomer, ResourceID: "101"}, func(e business.Event) bool { return e.Resource.ID == "101" }},
		{store.EventFilter{After: business.EventIDAt(now.Add(-2 * time.Hour))}, nil},
	} {
		want := []string(nil)
		if c.pick != nil {
			want = ids(c.pick)
		} else {
			want = ids(func(business.Event) bool { return true })
			slices.Reverse(want) // a catch-up lists oldest first
		}
		if got := list(c.filter); !slices.Equal(got, want) {
			t.Errorf("%+v lists %v, want %v", c.filter, got, want)
		}
	}

	for _, o := range olds {
		body, err := f.st.FindEvent(f.ctx, f.acct, o.ev.ID)
		if err != nil || string(body) != bodies[o.ev.ID] {
			t.Fatalf("event %s reads %s (%v), want %s", o.ev.ID, body, err, bodies[o.ev.ID])
		}
		out, err := f.st.Client().GetItem(f.ctx, &dynamodb.GetItemInput{TableName: aws.String(f.st.Table()), Key: store.EventKey(f.acct, o.ev.ID)})
		if err != nil {
			t.Fatal(err)
		}
		if ttl, _ := out.Item[store.TTLAttribute].(*types.AttributeValueMemberN); ttl == nil || ttl.Value != fmt.Sprint(o.expires.Unix()) {
			t.Errorf("event %s expires at %v, want %d as before the move", o.ev.ID, out.Item[store.TTLAttribute], o.expires.Unix())
		}
		if !store.EventMoved(out.Item) {
			t.Errorf("moved event %s is not marked %s", o.ev.ID, store.EventMovedAttribute)
		}
		if v, ok := out.Item["v"].(*types.AttributeValueMemberM); ok && v.Value["body"] != nil {
			t.Errorf("moved event %s keeps the earlier layout's view", o.ev.ID)
		}
	}
	if _, err := f.st.FindEvent(f.ctx, f.acct, expired.ID); business.ErrorCode(err) != business.ENOTFOUND {
		t.Fatalf("the expired event reads (%v), want ENOTFOUND", err)
	}
	// Of the earlier items only the expired one is left.
	out, err := f.st.Client().Scan(f.ctx, &dynamodb.ScanInput{TableName: aws.String(f.st.Table()),
		FilterExpression: aws.String("SK = :sk"), ExpressionAttributeValues: map[string]types.AttributeValue{":sk": &types.AttributeValueMemberS{Value: "EVENT"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != 1 || out.Items[0]["event_id"].(*types.AttributeValueMemberS).Value != expired.ID {
		t.Fatalf("%d items of the earlier layout left, want only the expired one", len(out.Items))
	}
}
