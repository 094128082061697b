package store_test

import (
	"encoding/json"
	"fmt"
	"strings"
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
	out, err := f.st.Client().GetItem(f.ctx, &dynamodb.GetItemInput{TableName: aws.String(f.st.Table()), Key: store.EventKey(f.acct, ev.ID)})
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

// TestFeedPagesAcrossShards: an account's events spread over EventShards
// partitions, and every list (newest first, catching up, by type, by
// family, by resource) pages through them in id order, each event once,
// whatever the page size; the filters' index entries carry no body.
func TestFeedPagesAcrossShards(t *testing.T) {
	f := newFixture(t)
	f.st.SetEventSettle(0)
	const customers, edited = 40, 10
	for i := range customers {
		if _, err := f.st.CreateCustomer(f.ctx, f.acct, business.Customer{Name: fmt.Sprintf("Customer %d", i)}, nil, render[business.Customer]); err != nil {
			t.Fatal(err)
		}
	}
	for id := int64(1); id <= edited; id++ {
		if _, err := f.st.UpdateCustomer(f.ctx, f.acct, id, func(c *business.Customer) error { c.Phone = "0201234567"; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	// walk pages a list to its end, checking the order, and returns its
	// events' ids.
	walk := func(filter store.EventFilter, limit int, forward bool) []string {
		t.Helper()
		var ids []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 200 {
				t.Fatalf("%+v: no end after 200 pages", filter)
			}
			p, err := f.st.ListEvents(f.ctx, f.acct, filter, limit, cursor)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Items) > limit {
				t.Fatalf("%+v: a page of %d, limit %d", filter, len(p.Items), limit)
			}
			for _, raw := range p.Items {
				var ev business.Event
				if err := json.Unmarshal(raw, &ev); err != nil {
					t.Fatal(err)
				}
				if filter.Type != "" && !business.EventMatches(filter.Type, ev.Type) {
					t.Fatalf("%+v listed a %s", filter, ev.Type)
				}
				if n := len(ids); n > 0 && (forward && ev.ID <= ids[n-1] || !forward && ev.ID >= ids[n-1]) {
					t.Fatalf("%+v: %s after %s", filter, ev.ID, ids[n-1])
				}
				ids = append(ids, ev.ID)
			}
			if p.Next == "" {
				return ids
			}
			cursor = p.Next
		}
	}
	all := walk(store.EventFilter{}, 500, false)
	if len(all) != customers+edited {
		t.Fatalf("one page of all: %d events, want %d", len(all), customers+edited)
	}
	shards := map[string]bool{}
	for _, id := range all {
		shards[store.EventKey(f.acct, id)["PK"].(*types.AttributeValueMemberS).Value] = true
	}
	if len(shards) < store.EventShards/2 {
		t.Fatalf("%d events in %d partitions, want them spread over %d", len(all), len(shards), store.EventShards)
	}
	since := business.EventIDAt(time.Now().Add(-time.Hour))
	for _, c := range []struct {
		filter  store.EventFilter
		want    int
		forward bool
	}{
		{store.EventFilter{}, customers + edited, false},
		{store.EventFilter{After: since}, customers + edited, true},
		{store.EventFilter{Type: business.EventCustomerUpdated}, edited, false},
		{store.EventFilter{Type: "customer.*"}, customers + edited, false},
		{store.EventFilter{Type: "customer.*", After: since}, customers + edited, true},
		{store.EventFilter{ResourceType: business.ResourceCustomer, ResourceID: "3"}, 2, false},
		{store.EventFilter{Type: business.EventCustomerUpdated, ResourceType: business.ResourceCustomer, ResourceID: "3"}, 1, false},
	} {
		for _, limit := range []int{1, 3, 7, 50} {
			if got := walk(c.filter, limit, c.forward); len(got) != c.want {
				t.Errorf("%+v, pages of %d: %d events, want %d", c.filter, limit, len(got), c.want)
			}
		}
	}
	// A cursor continues only the list that made it.
	p, err := f.st.ListEvents(f.ctx, f.acct, store.EventFilter{}, 2, "")
	if err != nil || p.Next == "" {
		t.Fatalf("first page: %v, next %q", err, p.Next)
	}
	_, err = f.st.ListEvents(f.ctx, f.acct, store.EventFilter{Type: "customer.*"}, 2, p.Next)
	wantCode(t, err, business.EINVALID)

	// The index entries of the filters hold the keys and the type, never
	// the body.
	for _, ix := range []struct{ name, pk string }{
		{store.IndexPrimaryFilter.Name, store.IndexPrimaryFilter.PK},
		{store.IndexType.Name, store.IndexType.PK},
		{store.IndexStatus.Name, store.IndexStatus.PK},
	} {
		out, err := f.st.Client().Scan(f.ctx, &dynamodb.ScanInput{TableName: aws.String(f.st.Table()), IndexName: aws.String(ix.name)})
		if err != nil {
			t.Fatal(err)
		}
		entries := 0
		for _, it := range out.Items {
			pk, _ := it[ix.pk].(*types.AttributeValueMemberS)
			if pk == nil || !strings.HasPrefix(pk.Value, "A#"+f.acct+"#EVENT#") {
				continue
			}
			entries++
			for name, v := range it {
				view, isMap := v.(*types.AttributeValueMemberM)
				switch {
				case name == "PK" || name == "SK" || strings.HasPrefix(name, "GSI"):
				case name == "v" && isMap && len(view.Value) == 1 && view.Value["event_type"] != nil:
				default:
					t.Fatalf("%s entry %s carries %s", ix.name, pk.Value, name)
				}
			}
		}
		if entries != customers+edited {
			t.Fatalf("%s holds %d event entries, want %d", ix.name, entries, customers+edited)
		}
	}
}
