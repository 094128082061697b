package main

// The events feed and the webhook endpoints: their requests' round trips,
// and the items the feed reads per event it returns.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/store"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// eventCase is one kind of request of the events feed or the webhook
// endpoints: run i of corrRuns.
type eventCase struct {
	function, what, method string
	path                   func(i int) string
	query                  string
	body                   func(i int) any
	after                  func(i int, body string) error // reads the answer
	target                 int                            // sequential round trips at most
	runs                   int                            // corrRuns when 0
	before                 func()                         // made once before the runs, uncounted
}

// eventTrips reports the round trips of the events feed's and the webhook
// endpoints' requests, in a table of their own, and marks their functions
// covered. The endpoints are the add runs' own: each later case's run i
// uses the endpoint run i made, and the delete runs remove them all.
func (b *bench) eventTrips(covered map[string]bool) error {
	b.store.SetEventSettle(0) // the events the steps just wrote count too: the items read per event are measured, not the settling
	defer b.store.SetEventSettle(store.EventSettle)
	feed, err := b.newestEvents(11)
	if err != nil {
		return err
	}
	newest, replayFrom := eventID(feed[0]), eventID(feed[10])
	ids := make([]string, corrRuns)
	tested := make([]string, corrRuns) // the event id of each endpoint's test send
	ep := func(suffix string) func(i int) string {
		return func(i int) string { return "/api/v1/webhook-endpoints/" + ids[i] + suffix }
	}
	same := func(p string) func(int) string { return func(int) string { return p } }
	cases := []eventCase{
		{function: "list-events", what: "feed, newest first (a page of 50)", method: "GET", path: same("/api/v1/events"), target: 1},
		{function: "list-events", what: "type=sale.created (an exact type: its entries, then their events)", method: "GET", path: same("/api/v1/events"),
			query: "type=sale.created", target: 2},
		{function: "list-events", what: "type=sale.* (a family: its entries, then their events)", method: "GET", path: same("/api/v1/events"), query: "type=sale.%2A", target: 2},
		{function: "list-events", what: "resource_id=100042 (a sale's: its entries, then their events)", method: "GET", path: same("/api/v1/events"),
			query: "resource_type=sale&resource_id=100042", target: 2},
		{function: "list-events", what: "since an event id (catching up, oldest first)", method: "GET", path: same("/api/v1/events"),
			query: "since=" + url.QueryEscape(replayFrom), target: 1},
		{function: "get-event", what: "one event", method: "GET", path: same("/api/v1/events/" + newest), target: 1},
		{function: "add-webhook-endpoint", what: "create (enabled_events *)", method: "POST", path: same("/api/v1/webhook-endpoints"),
			body: func(i int) any {
				return map[string]any{"url": fmt.Sprintf("https://hooks.example.com/bench/%d", i), "enabled_events": []string{"*"}, "description": "bench"}
			},
			after: func(i int, body string) error {
				var out struct {
					Data struct {
						Endpoint struct {
							ID string `json:"id"`
						} `json:"webhook_endpoint"`
					} `json:"data"`
				}
				if json.Unmarshal([]byte(body), &out) != nil || out.Data.Endpoint.ID == "" {
					return fmt.Errorf("add-webhook-endpoint answered no id: %.300s", body)
				}
				ids[i] = out.Data.Endpoint.ID
				return nil
			}, target: 2},
		{function: "list-webhook-endpoints", what: fmt.Sprintf("all of the account's (%d)", corrRuns), method: "GET", path: same("/api/v1/webhook-endpoints"), target: 1},
		{function: "get-webhook-endpoint", what: "one endpoint", method: "GET", path: ep(""), target: 1},
		{function: "edit-webhook-endpoint", what: "description", method: "PUT", path: ep(""),
			body: func(i int) any { return map[string]any{"description": fmt.Sprintf("edited %d", i)} }, target: 2},
		{function: "rotate-endpoint-secret", what: "new secret, the old one signing 24 h beside it", method: "POST", path: ep("/rotate-secret"),
			body: func(int) any { return map[string]any{"overlap_hours": 24} }, target: 2},
		{function: "replay-webhook-endpoint", what: "replay of the account's 10 newest events (10 deliveries queued)", method: "POST", path: ep("/replay"),
			body: func(int) any { return map[string]any{"since": replayFrom} }, target: 2},
		{function: "test-webhook-endpoint", what: "a test event, its delivery recorded (the receiver unreachable)", method: "POST", path: ep("/test"),
			runs: testSends, before: freshTestMinute,
			after: func(i int, body string) error {
				var out struct {
					Data struct {
						Delivery struct {
							EventID string `json:"event_id"`
						} `json:"delivery"`
					} `json:"data"`
				}
				if json.Unmarshal([]byte(body), &out) != nil || out.Data.Delivery.EventID == "" {
					return fmt.Errorf("test-webhook-endpoint answered no delivery: %.300s", body)
				}
				tested[i] = out.Data.Delivery.EventID
				return nil
			}, target: 3},
		{function: "redeliver-endpoint-delivery", what: "the test event's delivery queued again", method: "POST", runs: testSends,
			path: func(i int) string {
				return "/api/v1/webhook-endpoints/" + ids[i] + "/deliveries/" + tested[i] + "/redeliver"
			}, target: 3},
		{function: "list-endpoint-deliveries", what: "the endpoint's 10 deliveries (the endpoint read beside them)", method: "GET", path: ep("/deliveries"), target: 1},
		{function: "delete-webhook-endpoint", what: "delete", method: "DELETE", path: ep(""), target: 2},
	}
	b.printf("### Events and webhook endpoints\n\nThe events feed and the webhook endpoints (issue 22), through the Lambda function with the API key cache warm, over the loaded account; each case made %d times, the typical run reported. The endpoints are the create runs' own: run i of every later case uses the endpoint run i created, and the delete runs remove them. Target: 1 sequential for reads (list-endpoint-deliveries reads the endpoint beside its deliveries, as list-webhook-deliveries reads the settings; the unfiltered feed reads its shards' partitions at once), but at most 2 for a filtered feed page (the filter's index entries, which carry keys only, then their events by key), at most 2 sequential for writes, but 3 for a test send (the endpoint and its secrets read at once, the minute's test-send count, the delivery recorded after the post; the receiver is unreachable here) and for redelivering one delivery (the endpoint read consistently, the delivery, the transaction). Every write of a record above (sales, customers, expenses, categories, items, refunds, voids, adjustments) writes its events in its own transaction: they add no call.\n\n",
		corrRuns)
	b.printf(tripsTableHead)
	for _, c := range cases {
		covered[c.function] = true
		runs := corrRuns
		if c.runs > 0 {
			runs = c.runs
		}
		if c.before != nil {
			c.before()
		}
		typical, differed, err := b.typicalRun(runs, func(i int) error {
			body := bodyAt(c.body, i)
			res, err := b.invokeWith(c.function, c.method, c.path(i), c.query, body, nil)
			if err == nil && c.after != nil {
				err = c.after(i, res.Body)
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("%s (%s): %w", c.function, c.what, err)
		}
		target, met := fmt.Sprintf("<= %d", c.target), typical.depth <= c.target
		if c.method == "GET" {
			target = fmt.Sprint(c.target)
		}
		b.printTripRow(c.function, c.what, c.method, typical, differed, target, verdict(met))
		if c.function == "list-events" {
			feedTrips = append(feedTrips, feedTrip{c.what, typical, c.target})
		}
	}
	b.printf("\n")
	return nil
}

// feedTrip is the round trips of one list-events case of the round-trips
// step, which the events step restates beside the items read.
type feedTrip struct {
	what   string
	trips  tripCount
	target int
}

// feedTrips are the round-trips step's list-events cases, in its order
// (none when the step did not run).
var feedTrips []feedTrip

// testSends is how many test sends a case makes: under the account's
// api.TestSendsPerMinute, in a minute of their own (freshTestMinute).
const testSends = api.TestSendsPerMinute - 1

// freshTestMinute waits for the next minute, so a case's test sends fall in
// one window of the account's limit that no earlier request (test-webhook's
// runs) has used.
func freshTestMinute() {
	next := time.Now().Truncate(time.Minute).Add(time.Minute)
	time.Sleep(time.Until(next) + 100*time.Millisecond)
}

// newestEvents returns the account's n newest events, from as many pages
// of the feed as that takes (a page may come short of its limit: it ends
// where the merge of the shards' partitions knows every event).
func (b *bench) newestEvents(n int) ([]json.RawMessage, error) {
	var got []json.RawMessage
	for cursor := ""; len(got) < n; {
		pg, err := b.store.ListEvents(b.ctx, b.acct.ID, store.EventFilter{}, n-len(got), cursor)
		if err != nil {
			return nil, err
		}
		got = append(got, pg.Items...)
		if cursor = pg.Next; cursor == "" {
			break
		}
	}
	if len(got) < n {
		return nil, fmt.Errorf("the account has %d events, want at least %d", len(got), n)
	}
	return got[:n], nil
}

// eventID returns the id of an event's JSON.
func eventID(body json.RawMessage) string {
	var head struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &head)
	return head.ID
}

// eventsRead reports, for the events feed unfiltered and each of its
// filters, the items DynamoDB read per event returned over up to 4 pages of
// 50, on the loaded account (every record the load made wrote its events).
func (b *bench) eventsRead() error {
	b.store.SetEventSettle(0) // the events the steps just wrote count too: the items read per event are measured, not the settling
	defer b.store.SetEventSettle(store.EventSettle)
	if err := b.loaded(); err != nil {
		return err
	}
	if err := b.corrections(); err != nil { // the item with corrMoves movements
		return err
	}
	mix, total, err := b.eventMix()
	if err != nil {
		return err
	}
	// An event 500 back in the feed, for the catch-up rows.
	back, err := b.newestEvents(500)
	if err != nil {
		return err
	}
	mid := eventID(back[499])
	event := func(f store.EventFilter) lister { return pagesOf(b, b.store.ListEvents, f) }
	rows := []struct {
		name string
		l    lister
	}{
		{"events (no filter, newest first)", event(store.EventFilter{})},
		{"events type=sale.created (exact)", event(store.EventFilter{Type: business.EventSaleCreated})},
		{"events type=payment.received (exact)", event(store.EventFilter{Type: business.EventPaymentReceived})},
		{"events type=expense.created (exact)", event(store.EventFilter{Type: business.EventExpenseCreated})},
		{"events type=customer.created (exact, a rare type)", event(store.EventFilter{Type: business.EventCustomerCreated})},
		{"events type=sale.* (family)", event(store.EventFilter{Type: "sale.*"})},
		{"events type=item.* (family)", event(store.EventFilter{Type: "item.*"})},
		{"events type=* (all)", event(store.EventFilter{Type: "*"})},
		{"events resource_id=100042 (a sale)", event(store.EventFilter{ResourceType: business.ResourceSale, ResourceID: "100042"})},
		{fmt.Sprintf("events resource_id=%s (an item with %d stock movements)", corrLedger, corrMoves), event(store.EventFilter{ResourceType: business.ResourceItem, ResourceID: corrLedger})},
		{"events since (catch-up from an event 500 back, oldest first)", event(store.EventFilter{After: mid})},
		{"events since + type=sale.created (catch-up of one type)", event(store.EventFilter{After: mid, Type: business.EventSaleCreated})},
		{"events since + type=sale.* (catch-up of a family)", event(store.EventFilter{After: mid, Type: "sale.*"})},
		{fmt.Sprintf("events resource_id=%s + type=stock.adjusted", corrLedger), event(store.EventFilter{ResourceType: business.ResourceItem, ResourceID: corrLedger, Type: business.EventStockAdjusted})},
		{fmt.Sprintf("events resource_id=%s + type=item.created (its 1 event of that type among %d: the type is checked on the resource's index entries, and only that event is read)", corrLedger, corrMoves),
			event(store.EventFilter{ResourceType: business.ResourceItem, ResourceID: corrLedger, Type: business.EventItemCreated})},
	}
	b.printf("## Items read per item returned: events feed\n\nThe events feed (`GET /api/v1/events`, through store.ListEvents as the route calls it) of the loaded account: %d events (%s), written by the load's creates and the corrections' records in their own transactions. "+
		"Up to 4 pages of 50 per filter. Items read is what store.ListEvents counts (Page.Scanned): the items its Queries evaluated (DynamoDB's ScannedCount), of the %d shards' partitions of the table for the unfiltered feed, "+
		"of the filter's index partitions (keys only) otherwise, plus, for a filtered page, the events it then read by key (one BatchGetItem). Target: at most 2 (an index entry and its event per event returned).\n\n"+
		"| events filter | items read | items returned | read per returned | met |\n|---|---|---|---|---|\n",
		total, mix, store.EventShards)
	for _, r := range rows {
		read, returned, err := readPages(r.l)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		met := "n/a"
		if returned > 0 {
			met = verdict(float64(read) <= 2*float64(returned))
		}
		b.printf("| %s | %d | %d | %s | %s |\n", r.name, read, returned, readRatio(read, returned), met)
	}
	b.printf("\n")
	if len(feedTrips) == 0 {
		b.printf("Round trips of a feed page: the round-trips step did not run with this one, so its list-events rows are not restated here. Target: an unfiltered page 1, a filtered page at most 2 sequential.\n\n")
		return nil
	}
	b.printf("Round trips of a feed page, from the round-trips step's list-events rows (through the Lambda function; calls made in parallel count once). Target: an unfiltered page 1, a filtered page at most 2 sequential.\n\n" +
		"| list-events case | calls | sequential round trips | target | met |\n|---|---|---|---|---|\n")
	for _, t := range feedTrips {
		target, met := fmt.Sprint(t.target), "yes"
		if t.target > 1 {
			target = fmt.Sprintf("at most %d", t.target)
		}
		if t.trips.depth > t.target {
			met = "**no**"
		}
		b.printf("| %s | %d | %d | %s | %s |\n", t.what, t.trips.calls, t.trips.depth, target, met)
	}
	b.printf("\n")
	return nil
}

// eventMix counts the account's events of each type (Select COUNT over each
// type's shards of the type index, A#<acct>#EVENT#TYPE#<type>#<shard>) and
// returns them as "n type, ...", in EventTypes' order, and their total.
func (b *bench) eventMix() (string, int, error) {
	var parts []string
	total := 0
	for _, t := range business.EventTypes {
		n := 0
		for shard := range store.EventShards {
			in := &dynamodb.QueryInput{
				TableName: aws.String(b.cfg.TableName), IndexName: aws.String(store.IndexPrimaryFilter.Name),
				KeyConditionExpression: aws.String(store.IndexPrimaryFilter.PK + " = :pk"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{
					Value: fmt.Sprintf("A#%s#EVENT#TYPE#%s#%d", b.acct.ID, t, shard)}},
				Select: types.SelectCount,
			}
			for pages := dynamodb.NewQueryPaginator(b.db, in); pages.HasMorePages(); {
				out, err := pages.NextPage(b.ctx)
				if err != nil {
					return "", 0, err
				}
				n += int(out.Count)
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, t))
			total += n
		}
	}
	return strings.Join(parts, ", "), total, nil
}
