package store_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
)

// TestLegacyEventsPageByResourceBeforeMove: until `admin migrate` moves
// them, events of the earlier layout still have their entries in the
// resource's partition of IX3 (its key is unchanged), whose table sort key
// is EVENT, not the id. Following next_cursor, newest first and catching
// up, must end, list no event twice, and list the resource's events either
// all, in order, or none.
func TestLegacyEventsPageByResourceBeforeMove(t *testing.T) {
	f := newFixture(t)
	f.st.SetEventSettle(0)
	now := time.Now().UTC()
	var ids []string
	for i := range 3 {
		ev := business.Event{ID: business.NewEventIDs(now.Add(-time.Duration(30-i) * time.Minute)).Next(),
			Type: business.EventCustomerUpdated, CreatedAt: now.Format(time.DateTime), Livemode: true,
			Resource: business.EventResource{Type: business.ResourceCustomer, ID: "101", Version: int64(i + 1)},
			Data:     map[string]any{"id": 101}}
		legacyEvent(f, ev, now.Add(business.EventRetention))
		ids = append(ids, ev.ID)
	}
	for _, c := range []struct {
		name   string
		filter store.EventFilter
		want   []string
	}{
		{"newest first", store.EventFilter{ResourceType: business.ResourceCustomer, ResourceID: "101"}, []string{ids[2], ids[1], ids[0]}},
		{"catching up", store.EventFilter{ResourceType: business.ResourceCustomer, ResourceID: "101", After: business.EventIDAt(now.Add(-time.Hour))}, ids},
	} {
		var got []string
		cursor, pages := "", 0
		for ; pages < 10; pages++ {
			p, err := f.st.ListEvents(f.ctx, f.acct, c.filter, 1, cursor)
			if err != nil {
				t.Fatal(err)
			}
			for _, raw := range p.Items {
				var ev business.Event
				if err := json.Unmarshal(raw, &ev); err != nil {
					t.Fatal(err)
				}
				got = append(got, ev.ID)
			}
			if cursor = p.Next; cursor == "" {
				break
			}
		}
		if pages == 10 || len(got) > 0 && !slices.Equal(got, c.want) {
			t.Errorf("%s: %d pages list %v, want %v (or none)", c.name, pages, got, c.want)
		}
	}
}
