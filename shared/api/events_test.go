package api_test

// Contract tests of the events feed, by outcome against DynamoDB
// Local, over HTTP and through the Lambda path: every state-changing route
// writes exactly its events, each naming the record's new version and
// carrying the record as its GET answers it; a refused write writes none;
// and the feed's filters, catch-up and cursors.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"bizdata/shared/business"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// feedEvent is an event as the feed answers it.
type feedEvent struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	CreatedAt string `json:"created_at"`
	Resource  struct {
		Type    string `json:"type"`
		ID      string `json:"id"`
		Version int64  `json:"version"`
	} `json:"resource"`
	Data json.RawMessage `json:"data"`
}

// feedPage lists events at path (a query of /api/v1/events) and the next
// cursor.
func feedPage(t *testing.T, c *client, query string) ([]feedEvent, string) {
	t.Helper()
	r := c.get(t, "/api/v1/events"+query)
	want(t, r, 200, "")
	var out struct {
		Data struct {
			Events     []feedEvent `json:"events"`
			NextCursor *string     `json:"next_cursor"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.raw, &out); err != nil {
		t.Fatal(err)
	}
	if msg := fmt.Sprintf("Events found: %d", len(out.Data.Events)); r.body["message"] != msg {
		t.Fatalf("message %q, want %q", r.body["message"], msg)
	}
	next := ""
	if out.Data.NextCursor != nil {
		next = *out.Data.NextCursor
	}
	return out.Data.Events, next
}

// newestEventID returns the id of the account's newest event.
func newestEventID(t *testing.T, c *client) string {
	t.Helper()
	evs, _ := feedPage(t, c, "?limit=1")
	if len(evs) == 0 {
		t.Fatal("the account has no events")
	}
	return evs[0].ID
}

// eventsAfterID returns every event after id, oldest first, following cursors.
func eventsAfterID(t *testing.T, c *client, id string) []feedEvent {
	t.Helper()
	var all []feedEvent
	cursor := ""
	for {
		q := "?limit=100&since=" + id
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		evs, next := feedPage(t, c, q)
		all = append(all, evs...)
		if next == "" {
			return all
		}
		cursor = next
	}
}

// allEvents returns every event of the account, oldest first.
func allEvents(t *testing.T, c *client) []feedEvent {
	t.Helper()
	return eventsAfterID(t, c, business.EventIDAt(time.Now().Add(-24*time.Hour)))
}

func eventTypes(evs []feedEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type + " " + e.Resource.Type + "/" + e.Resource.ID + fmt.Sprintf("@v%d", e.Resource.Version)
	}
	return out
}

// sameAsGet checks that an event's data is the data path's GET answers now.
func sameAsGet(t *testing.T, c *client, ev feedEvent, path string) {
	t.Helper()
	r := c.get(t, path)
	want(t, r, 200, "")
	var got, wantData any
	if err := json.Unmarshal(ev.Data, &got); err != nil {
		t.Fatal(err)
	}
	wantData = r.body["data"]
	if d := cmp.Diff(wantData, got); d != "" {
		t.Fatalf("%s event's data is not what GET %s answers (-get +event):\n%s", ev.Type, path, d)
	}
	if etag := r.header.Get("ETag"); etag != "" && etag != fmt.Sprintf(`"v%d"`, ev.Resource.Version) {
		t.Fatalf("%s event names version %d; GET %s answers ETag %s", ev.Type, ev.Resource.Version, path, etag)
	}
}

// eventsOfRequest makes one request and returns the events it wrote.
func eventsOfRequest(t *testing.T, c *client, method, path string, body any, wantCode int) []feedEvent {
	t.Helper()
	before := newestEventID(t, c)
	r := c.do(t, method, path, body)
	want(t, r, wantCode, "")
	return eventsAfterID(t, c, before)
}

func wantTypes(t *testing.T, evs []feedEvent, want ...string) {
	t.Helper()
	if d := cmp.Diff(want, eventTypes(evs), cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
}

func TestEveryChangeIsOneEvent(t *testing.T) {
	bothPaths(t, func(t *testing.T, c *client) {
		// The setup's own changes are events already.
		all := allEvents(t, c)
		wantTypes(t, all, "customer.created customer/1@v1", "category.created category/1@v1", "item.created item/SOAP@v1")

		evs := eventsOfRequest(t, c, "POST", "/api/v1/customers/add", map[string]any{"name": "Kojo"}, 200)
		wantTypes(t, evs, "customer.created customer/2@v1")
		sameAsGet(t, c, evs[0], "/api/v1/customers/2")
		evs = eventsOfRequest(t, c, "PUT", "/api/v1/customers/2", map[string]any{"phone": "0244000000"}, 200)
		wantTypes(t, evs, "customer.updated customer/2@v2")
		sameAsGet(t, c, evs[0], "/api/v1/customers/2")

		evs = eventsOfRequest(t, c, "POST", "/api/v1/expenses/add", map[string]any{"expense_type": "Rent", "expense_amount": "100.00", "payment_method": "Cash", "created_by": "Ama"}, 200)
		wantTypes(t, evs, "expense.created expense/1@v1")
		sameAsGet(t, c, evs[0], "/api/v1/expenses/1")
		evs = eventsOfRequest(t, c, "PUT", "/api/v1/expenses/1", map[string]any{"expense_type": "Rent", "expense_amount": "120.00", "payment_method": "Cash", "created_by": "Ama"}, 200)
		wantTypes(t, evs, "expense.updated expense/1@v2")
		sameAsGet(t, c, evs[0], "/api/v1/expenses/1")

		evs = eventsOfRequest(t, c, "PUT", "/api/v1/inventory/categories/1", map[string]any{"description": "Everything"}, 200)
		wantTypes(t, evs, "category.updated category/1@v2")

		evs = eventsOfRequest(t, c, "PUT", "/api/v1/inventory/items/SOAP", map[string]any{"minimum_qty_alert": "3"}, 200)
		wantTypes(t, evs, "item.updated item/SOAP@v2")
		sameAsGet(t, c, evs[0], "/api/v1/inventory/items/SOAP")

		// A sale paid in part: the sale, its payment, and the stock it took.
		evs = eventsOfRequest(t, c, "POST", "/api/v1/sales/add", corrSale("400001", 4, "10.00"), 200)
		wantTypes(t, evs, "sale.created sale/400001@v1", "payment.received sale/400001@v1", "item.updated item/SOAP@v3")
		sameAsGet(t, c, evs[0], "/api/v1/sales/400001")
		if string(evs[0].Data) != string(evs[1].Data) {
			t.Fatal("a sale's events of one change carry different data")
		}
		sameAsGet(t, c, evs[2], "/api/v1/inventory/items/SOAP")

		// Paying the rest is an edit with a payment.
		evs = eventsOfRequest(t, c, "PUT", "/api/v1/sales/edit/400001", corrSale("400001", 4, "25.00"), 200)
		wantTypes(t, evs, "sale.updated sale/400001@v2", "payment.received sale/400001@v2")
		sameAsGet(t, c, evs[0], "/api/v1/sales/400001")

		// A refund returning 1 soap.
		evs = eventsOfRequest(t, c, "POST", refundPath("400001"), map[string]any{"amount": "5.00", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "1"}}}, 200)
		wantTypes(t, evs, "payment.refunded sale/400001@v3", "item.updated item/SOAP@v4")
		sameAsGet(t, c, evs[0], "/api/v1/sales/400001")

		// Adjustments: down to the alert level (low), then to zero (out).
		evs = eventsOfRequest(t, c, "POST", "/api/v1/inventory/items/SOAP/adjustments", map[string]any{"quantity": "-4", "reason": "damaged"}, 200)
		wantTypes(t, evs, "stock.adjusted item/SOAP@v5", "item.stock_low item/SOAP@v5")
		sameAsGet(t, c, evs[0], "/api/v1/inventory/items/SOAP")
		evs = eventsOfRequest(t, c, "POST", "/api/v1/inventory/items/SOAP/adjustments", map[string]any{"quantity": "-3", "reason": "lost"}, 200)
		wantTypes(t, evs, "stock.adjusted item/SOAP@v6", "item.out_of_stock item/SOAP@v6")

		// A refused write writes no event: no stock left.
		evs = eventsOfRequest(t, c, "POST", "/api/v1/sales/add", corrSale("400002", 1, "0"), 400)
		wantTypes(t, evs)

		// A void of an unpaid sale gives its stock back.
		eventsOfRequest(t, c, "POST", "/api/v1/inventory/items/SOAP/adjustments", map[string]any{"quantity": "5", "reason": "received"}, 200)
		eventsOfRequest(t, c, "POST", "/api/v1/sales/add", corrSale("400003", 2, "0"), 200)
		evs = eventsOfRequest(t, c, "POST", voidPath("400003"), map[string]any{"reason": "entered twice"}, 200)
		wantTypes(t, evs, "sale.voided sale/400003@v2", "item.updated item/SOAP@v9")
		sameAsGet(t, c, evs[0], "/api/v1/sales/400003")

		// Ids sort by time and the feed has each once.
		all = allEvents(t, c)
		ids := make([]string, len(all))
		for i, e := range all {
			ids[i] = e.ID
		}
		if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
			t.Fatalf("catch-up is not in id order, or repeats an event: %v", ids)
		}
	})
}

func TestEventFilters(t *testing.T) {
	bothPaths(t, func(t *testing.T, c *client) {
		want(t, c.post(t, "/api/v1/sales/add", corrSale("500001", 1, "10.00")), 200, "")
		for i := range 3 {
			want(t, c.put(t, "/api/v1/customers/1", map[string]any{"phone": fmt.Sprintf("02440000%02d", i)}), 200, "")
		}
		evs, _ := feedPage(t, c, "?type=customer.updated")
		wantTypes(t, evs, "customer.updated customer/1@v4", "customer.updated customer/1@v3", "customer.updated customer/1@v2")
		evs, _ = feedPage(t, c, "?type=sale.*")
		wantTypes(t, evs, "sale.created sale/500001@v1")
		evs, _ = feedPage(t, c, "?type=payment.received")
		wantTypes(t, evs, "payment.received sale/500001@v1")
		evs, _ = feedPage(t, c, "?resource_type=item&resource_id=SOAP")
		wantTypes(t, evs, "item.updated item/SOAP@v2", "item.created item/SOAP@v1")
		evs, _ = feedPage(t, c, "?resource_id=SOAP&type=item.created")
		wantTypes(t, evs, "item.created item/SOAP@v1")
		evs, _ = feedPage(t, c, "?resource_id=1&type=customer.*")
		if len(evs) != 4 {
			t.Fatalf("customer 1 has 4 events, got %v", eventTypes(evs))
		}
		// Category 1 shares customer 1's id, not its events.
		evs, _ = feedPage(t, c, "?resource_type=category&resource_id=1")
		wantTypes(t, evs, "category.created category/1@v1")

		// Pages of 2, newest first, follow on without repeats.
		var pages []feedEvent
		cursor := ""
		for {
			q := "?limit=2"
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			evs, next := feedPage(t, c, q)
			pages = append(pages, evs...)
			if next == "" {
				break
			}
			cursor = next
		}
		all := allEvents(t, c)
		if len(pages) != len(all) || pages[0].ID != all[len(all)-1].ID {
			t.Fatalf("paging newest first found %d events, catching up %d", len(pages), len(all))
		}

		// One event by id; another account cannot see it.
		id := all[0].ID
		r := c.get(t, "/api/v1/events/"+id)
		want(t, r, 200, "Event found")
		if got := r.data()["event"].(map[string]any)["id"]; got != id {
			t.Fatalf("event %s answered %v", id, got)
		}
		_, otherKey := c.e.newAccount("Other Shop", "OTHER1")
		if r := c.e.req("GET", "/api/v1/events/"+id, otherKey, nil); r.code != 404 {
			t.Fatalf("another account's event: %d", r.code)
		}
		want(t, c.get(t, "/api/v1/events/evt_nope"), 404, "Event not found")
		want(t, c.get(t, "/api/v1/events/"+strings.Replace(id, id[len(id)-2:], "ff", 1)), 404, "Event not found")

		// Since a time: everything at or after it.
		since := url.QueryEscape(all[0].CreatedAt)
		evs, _ = feedPage(t, c, "?limit=100&since="+since)
		if len(evs) != len(all) {
			t.Fatalf("since %s found %d events, want %d", all[0].CreatedAt, len(evs), len(all))
		}
	})
}

func TestEventQueriesRefused(t *testing.T) {
	bothPaths(t, func(t *testing.T, c *client) {
		wantField(t, c.get(t, "/api/v1/events?type=sale.deleted"), "type", "sale.*")
		wantField(t, c.get(t, "/api/v1/events?type=nothing.*"), "type", "event type")
		wantField(t, c.get(t, "/api/v1/events?since=yesterday"), "since", "evt_")
		wantField(t, c.get(t, "/api/v1/events?since=2020-01-01+00:00:00"), "since", "30 days")
		wantField(t, c.get(t, "/api/v1/events?since=evt_000000000000000000000000"), "since", "30 days")
		wantField(t, c.get(t, "/api/v1/events?limit=0"), "limit", "1 to")
		wantField(t, c.get(t, "/api/v1/events?cursor=abc"), "cursor", "")
		wantField(t, c.get(t, "/api/v1/events?colour=red"), "colour", "allowed")
		wantField(t, c.get(t, "/api/v1/events?resource_id=1"), "resource_type", "required with resource_id")
		wantField(t, c.get(t, "/api/v1/events?resource_id=1&type=sale.*&resource_type=customer"), "resource_type", "describe a sale")
		wantField(t, c.get(t, "/api/v1/events?resource_type=shoe&resource_id=1"), "resource_type", "one of")
		wantField(t, c.get(t, "/api/v1/events?resource_type=item"), "resource_id", "required")
	})
}
