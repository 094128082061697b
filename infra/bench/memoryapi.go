package main

// The memory step's plans of the API functions the round-trips step calls.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/store"
)

// memoryPlan is what each function is sent. Every function needs one: a
// function without one fails the step (errNoPlan), so none goes unmeasured.
var errNoPlan = errors.New("no memory plan: give it a representative sequence of events (memoryPlan)")

func (b *bench) memoryPlan(name string, load *dispatchLoad) (fnPlan, error) {
	if p, ok, err := b.memoryOwnPlan(name, load); ok || err != nil {
		return p, err
	}
	switch name {
	case "deliver-webhooks":
		p := fnPlan{cold: b.streamBatch(1), deadline: time.Minute}
		for range 4 {
			p.sequence = append(p.sequence, asOrdinary(b.streamBatch(25)))
		}
		return p, nil
	case "retry-webhooks":
		p := fnPlan{cold: load.scheduledRun(0), deadline: hookWindow, env: []string{"TABLE_NAME=" + load.st.Table(), "DYNAMODB_ENDPOINT=" + load.endpoint}}
		p.sequence = []fnEvent{load.scheduledRun(0)}
		for range 3 {
			p.sequence = append(p.sequence, asOrdinary(load.scheduledRun(hookBacklog)))
		}
		return p, nil
	case api.DefaultFunction:
		p := fnPlan{cold: b.apiRequest(call{}, "GET", "/api/v1/no-such-route", "", "", 404), deadline: 10 * time.Second}
		for i := range 4 {
			p.sequence = append(p.sequence, asOrdinary(b.apiRequest(call{}, "GET", fmt.Sprintf("/api/v1/no-such-route/%d", i), "", "", 404)))
		}
		p.sequence = append(p.sequence, b.apiRequest(call{}, "POST", "/api/v1/no-such-route", "", overLimit(), 404))
		return p, nil
	}
	calls := b.benchCalls() // counters of its own, so edit-sale's payments stay under its total
	var c call
	path := func(int) string { return c.path }
	if i := slices.IndexFunc(calls, func(c call) bool { return c.function == name }); i >= 0 {
		c = calls[i]
		if name == "redeliver-webhook" { // each delivery once: a queued one is 409
			path = func(i int) string { return fmt.Sprintf("/api/v1/user/webhook/deliveries/txn_mem_%03d/redeliver", i) }
		}
	} else {
		var ok bool
		var err error
		c, path, ok, err = b.memoryCorrection(name)
		if err == nil && !ok {
			c, path, ok, err = b.memoryEvent(name)
		}
		if err != nil {
			return fnPlan{}, err
		}
		if !ok {
			return fnPlan{}, fmt.Errorf("function %s: %w", name, errNoPlan)
		}
	}
	deadline := 10 * time.Second // the template's Timeout
	if name == "test-webhook" {
		deadline = 15 * time.Second
	}
	body := func(i int) string {
		if c.body == nil {
			return ""
		}
		j, _ := json.Marshal(c.body(i))
		return string(j)
	}
	// Cold, then 4 ordinary requests: test-webhook may send 5 a minute.
	p := fnPlan{cold: b.apiRequest(c, c.method, path(0), c.query, body(0), 200), deadline: deadline}
	for i := 1; i <= 4; i++ {
		p.sequence = append(p.sequence, asOrdinary(b.apiRequest(c, c.method, path(i), c.query, body(i), 200)))
	}
	if c.body != nil {
		var m map[string]any
		_ = json.Unmarshal([]byte(body(5)), &m)
		p.sequence = append(p.sequence, b.apiRequest(c, c.method, path(5), c.query, fillToLimits(name, m), 200))
	}
	if strings.HasPrefix(name, "list-") && name != "list-webhook-endpoints" { // that list is every endpoint (16 at most), no pages
		p.sequence = append(p.sequence, b.apiRequest(c, c.method, c.path, "limit=200", "", 200))
	}
	want := http.StatusRequestEntityTooLarge
	if c.method == "GET" {
		want = 200 // a GET route never reads a body
	}
	p.sequence = append(p.sequence, b.apiRequest(c, c.method, path(6), c.query, overLimit(), want))
	return p, nil
}

func asOrdinary(r fnEvent) fnEvent { r.ordinary = true; return r }

// apiRequest is an API Gateway HTTP API (v2) event with the bench's key
// whose answer must carry status want; c's afterCall reads the answer (a
// rotated key).
func (b *bench) apiRequest(c call, method, path, query, body string, want int) fnEvent {
	return b.gatewayFunctionEvent(c.function, gatewayRequest{method: method, path: path, query: query, body: body, want: want,
		key: func() string { return b.key }})
}

// overLimit is a 2 MiB JSON body, twice what the API accepts.
func overLimit() string {
	return `{"name":"` + strings.Repeat("x", 2<<20) + `"}`
}

// fillToLimits returns body with every text field of the route at its
// longest, in "é" escaped as \u00e9, the largest body the route accepts.
func fillToLimits(function string, body map[string]any) string {
	long := func(n int) string { return strings.Repeat("é", n) }
	url := func(host string) string { return "https://" + host + ".example.com/" + strings.Repeat("a", 2000) }
	switch kind := function[strings.Index(function, "-")+1:]; {
	case function == "refund-sale": // a unit back of each line of a 100-line sale
		var lines []any
		for i := range business.MaxSaleLines {
			lines = append(lines, map[string]any{"sales_item_id": i + 1, "quantity": "1"})
		}
		body["lines"], body["reason"], body["issued_by"] = lines, long(500), long(255)
	case function == "void-sale":
		body["reason"] = long(500)
	case function == "adjust-stock":
		body["note"] = long(1000)
	case kind == "sale": // 100 lines, sized to stay under 1 MiB and DynamoDB's 400 KB item
		var lines []any
		for i := range business.MaxSaleLines {
			lines = append(lines, map[string]any{"item_name": fmt.Sprintf("Line %d", i), "description": long(1700), "unit_price": "0.50", "quantity": "1"})
		}
		body["items"], body["sub_total_amount"], body["total_amount"] = lines, "50.00", "50.00"
	case kind == "expense":
		body["expense_description"], body["created_by"], body["expense_image"] = long(2000), long(200), url("img")
	case kind == "item":
		var images []any
		for range business.MaxItemImages {
			images = append(images, map[string]any{"image_url": url("img")})
		}
		body["description"], body["item_location"], body["unit"], body["item_images"] = long(2000), long(200), long(32), images
	case kind == "category":
		body["description"] = long(2000)
	case kind == "customer":
		body["name"], body["address"] = long(200), long(500)
	case kind == "webhook-settings":
		body["callback_url"], body["callback_secret"] = url("hooks"), strings.Repeat("s", 256)
	}
	j, _ := json.Marshal(body)
	return string(bytes.ReplaceAll(j, []byte("é"), []byte(`\u00e9`)))
}

// memoryCorrection is the memory step's call of a correction function and
// the path of its request i (memoryPlan sends 0 cold, 1 to 4 ordinary, 5 the
// largest body, 6 one over the limit): the round-trips step's cases by
// turns, each on a record of the step's own that takes it. ok is false for
// a function with no correction case.
func (b *bench) memoryCorrection(name string) (c call, path func(i int) string, ok bool, err error) {
	var cases []correctionCase
	for _, k := range b.correctionCases() {
		if k.function == name {
			cases = append(cases, k)
		}
	}
	if len(cases) == 0 {
		return c, nil, false, nil
	}
	if err := b.corrections(); err != nil {
		return c, nil, true, err
	}
	turn := func(i int) correctionCase { return cases[i%len(cases)] }
	path = func(i int) string { return turn(i).path(i) }
	switch name {
	case "refund-sale":
		path = func(i int) string {
			if i == 5 {
				return fmt.Sprintf("/api/v1/sales/%d/refunds", refundLines)
			}
			return fmt.Sprintf("/api/v1/sales/%d/refunds", refundMemory)
		}
	case "void-sale":
		if len(cases) != 2 { // voidMemory's sales: by turns without and with stocked lines
			return c, nil, true, fmt.Errorf("void-sale has %d correction cases; its memory sales are made for 2", len(cases))
		}
		path = func(i int) string { return fmt.Sprintf("/api/v1/sales/%d/void", voidMemory+i) }
	}
	c = call{function: name, method: cases[0].method, path: path(0), query: cases[0].query}
	if cases[0].body != nil {
		c.body = func(i int) any { return turn(i).body(i) }
	}
	return c, path, true, nil
}

// memoryEvent is the memory step's call of an events or webhook-endpoint
// function and the path of its request i, as memoryCorrection's: each
// endpoint it reads, changes or deletes made for it. ok is false for a
// function that is neither.
func (b *bench) memoryEvent(name string) (c call, path func(i int) string, ok bool, err error) {
	made := func(n int) ([]string, error) {
		ids := make([]string, n)
		for i := range ids {
			e, err := b.store.CreateEndpoint(b.ctx, b.acct.ID, business.Endpoint{URL: fmt.Sprintf("https://hooks.example.com/memory/%s/%d", name, i),
				EnabledEvents: []string{"*"}, Description: "memory step"}, business.NewEndpointSecret())
			if err != nil {
				return nil, fmt.Errorf("endpoint for %s: %w", name, err)
			}
			ids[i] = e.ID
		}
		return ids, nil
	}
	one := func() (string, error) {
		ids, err := made(1)
		if err != nil {
			return "", err
		}
		return ids[0], nil
	}
	same := func(p string) func(int) string { return func(int) string { return p } }
	switch name {
	case "list-events":
		return call{function: name, method: "GET", path: "/api/v1/events", query: "type=sale.%2A"}, same("/api/v1/events"), true, nil
	case "get-event":
		feed, err := b.store.ListEvents(b.ctx, b.acct.ID, store.EventFilter{}, 1, "")
		if err != nil || len(feed.Items) == 0 {
			return c, nil, true, fmt.Errorf("an event to read: %d, %v", len(feed.Items), err)
		}
		p := "/api/v1/events/" + eventID(feed.Items[0])
		return call{function: name, method: "GET", path: p}, same(p), true, nil
	case "list-webhook-endpoints":
		return call{function: name, method: "GET", path: "/api/v1/webhook-endpoints"}, same("/api/v1/webhook-endpoints"), true, nil
	case "add-webhook-endpoint":
		c = call{function: name, method: "POST", path: "/api/v1/webhook-endpoints", body: func(i int) any {
			return map[string]any{"url": fmt.Sprintf("https://hooks.example.com/memory/add/%d", i), "enabled_events": []string{"sale.*", "payment.received"}, "description": strings.Repeat("d", business.MaxEndpointDescription)}
		}}
		return c, same(c.path), true, nil
	case "delete-webhook-endpoint":
		ids, err := made(memRuns)
		if err != nil {
			return c, nil, true, err
		}
		path = func(i int) string { return "/api/v1/webhook-endpoints/" + ids[i%len(ids)] }
		return call{function: name, method: "DELETE", path: path(0)}, path, true, nil
	case "get-webhook-endpoint", "edit-webhook-endpoint", "rotate-endpoint-secret", "replay-webhook-endpoint", "list-endpoint-deliveries":
		id, err := one()
		if err != nil {
			return c, nil, true, err
		}
		p := "/api/v1/webhook-endpoints/" + id
		c = call{function: name, method: "GET", path: p}
		switch name {
		case "edit-webhook-endpoint":
			c.method, c.body = "PUT", func(i int) any { return map[string]any{"description": fmt.Sprintf("edited %d", i)} }
		case "rotate-endpoint-secret":
			c.method, c.path, c.body = "POST", p+"/rotate-secret", func(int) any { return map[string]any{"overlap_hours": 24} }
		case "replay-webhook-endpoint":
			since := business.EventIDAt(time.Now().Add(-time.Hour))
			c.method, c.path, c.body = "POST", p+"/replay", func(int) any { return map[string]any{"since": since} }
		case "list-endpoint-deliveries":
			c.path = p + "/deliveries"
		}
		return c, same(c.path), true, nil
	}
	return c, nil, false, nil
}
