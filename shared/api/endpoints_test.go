package api_test

// Contract tests of webhook endpoints: their routes by outcome,
// against DynamoDB Local; the CRUD test over HTTP and through the Lambda
// path. Events to replay are the endpoints' own (webhook_endpoint.*, the
// disabled ones written by the store's DisableEndpoint), so these tests need
// no other record's events.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/wire"
)

const endpointsPath = "/api/v1/webhook-endpoints"

// createdEndpoint is the create's answer: the endpoint and its secret.
type createdEndpoint struct {
	wire.Endpoint
	Secret string `json:"secret"`
}

var (
	endpointIDRE = regexp.MustCompile(`^ep_[a-z2-7]{20}$`)
	dateTimeRE   = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`)
)

// recentSince is a replay body whose since is a minute ago.
func recentSince() map[string]any {
	return map[string]any{"since": time.Now().UTC().Add(-time.Minute).Format(business.TimeFormat)}
}

// endpointPaths runs f on a fresh env over HTTP and through the Lambda path.
func endpointPaths(t *testing.T, f func(t *testing.T, c *client)) { onBothPaths(t, newEnv, f) }

// addEndpoint creates an endpoint and returns its answer.
func addEndpoint(t *testing.T, c *client, url string, events ...string) createdEndpoint {
	t.Helper()
	return dataAs[createdEndpoint](t, c.post(t, endpointsPath, map[string]any{"url": url, "enabled_events": events}),
		"Webhook endpoint created", "webhook_endpoint")
}

func wantSecret(t *testing.T, secret string) {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if !strings.HasPrefix(secret, "whsec_") || err != nil || len(raw) != 24 {
		t.Fatalf("secret %q is not whsec_ and 24 bytes of base64", secret)
	}
}

func TestEndpointsCRUD(t *testing.T) {
	endpointPaths(t, func(t *testing.T, c *client) {
		r := c.post(t, endpointsPath, map[string]any{"url": "https://hooks.example.com/orders",
			"enabled_events": []string{"payment.received", "sale.*", "payment.received"}, "description": "  Order sync  "})
		created := dataAs[createdEndpoint](t, r, "Webhook endpoint created", "webhook_endpoint")
		if !endpointIDRE.MatchString(created.ID) || !dateTimeRE.MatchString(created.CreatedAt) || created.UpdatedAt != created.CreatedAt {
			t.Fatalf("%s", r.raw)
		}
		wantSecret(t, created.Secret)
		if r.header.Get("ETag") != `"v1"` {
			t.Errorf("ETag %q, want \"v1\"", r.header.Get("ETag"))
		}
		desc := "Order sync"
		exp := wire.Endpoint{ID: created.ID, URL: "https://hooks.example.com/orders", EnabledEvents: []string{"payment.received", "sale.*"},
			Description: &desc, Status: "enabled", CreatedAt: created.CreatedAt, UpdatedAt: created.UpdatedAt}
		same(t, r, exp, created.Endpoint)

		// GET and the list never show the secret: wire.Endpoint has no field
		// for it, and dataAs refuses fields its type lacks.
		one := endpointsPath + "/" + created.ID
		r = c.get(t, one)
		same(t, r, exp, dataAs[wire.Endpoint](t, r, "Webhook endpoint found", "webhook_endpoint"))
		if r.header.Get("ETag") != `"v1"` || strings.Contains(string(r.raw), created.Secret) {
			t.Fatalf("ETag %q: %s", r.header.Get("ETag"), r.raw)
		}
		other := addEndpoint(t, c, "https://hooks.example.com/all", "*")
		r = c.get(t, endpointsPath)
		list := dataAs[[]wire.Endpoint](t, r, "Webhook endpoints found: 2", "webhook_endpoints")
		if len(list) != 2 || list[0].ID != created.ID || list[1].ID != other.ID || strings.Contains(string(r.raw), "whsec_") {
			t.Fatalf("oldest first, no secrets: %s", r.raw)
		}

		// An absent field keeps its value, null clears the description.
		r = c.put(t, one, map[string]any{"url": "https://hooks.example.com/v2", "description": nil})
		got := dataAs[wire.Endpoint](t, r, "Webhook endpoint updated", "webhook_endpoint")
		exp.URL, exp.Description, exp.UpdatedAt = "https://hooks.example.com/v2", nil, got.UpdatedAt
		same(t, r, exp, got)
		if r.header.Get("ETag") != `"v2"` {
			t.Errorf("ETag %q, want \"v2\"", r.header.Get("ETag"))
		}
		want(t, c.put(t, one, map[string]any{"description": "late"}, "If-Match", `"v1"`), 412, "")
		r = c.put(t, one, map[string]any{"enabled_events": []string{"*"}}, "If-Match", `"v2"`)
		if got := dataAs[wire.Endpoint](t, r, "Webhook endpoint updated", "webhook_endpoint"); len(got.EnabledEvents) != 1 || got.EnabledEvents[0] != "*" {
			t.Fatalf("%s", r.raw)
		}

		// Disabled by its owner: no reason, stamped; enabled again: cleared.
		r = c.put(t, one, map[string]any{"status": "disabled"})
		if got := dataAs[wire.Endpoint](t, r, "Webhook endpoint updated", "webhook_endpoint"); got.Status != "disabled" || got.DisabledReason != nil ||
			got.DisabledAt == nil || !dateTimeRE.MatchString(*got.DisabledAt) {
			t.Fatalf("%s", r.raw)
		}
		r = c.put(t, one, map[string]any{"status": "enabled"})
		if got := dataAs[wire.Endpoint](t, r, "Webhook endpoint updated", "webhook_endpoint"); got.Status != "enabled" || got.DisabledAt != nil {
			t.Fatalf("%s", r.raw)
		}

		r = c.do(t, "DELETE", one, nil)
		want(t, r, 200, "Webhook endpoint deleted")
		if d := r.data()["webhook_endpoint"].(map[string]any); d["id"] != created.ID {
			t.Fatalf("%s", r.raw)
		}
		for _, r := range []resp{c.get(t, one), c.put(t, one, map[string]any{"description": "x"}), c.do(t, "DELETE", one, nil),
			c.post(t, one+"/rotate-secret", nil), c.post(t, one+"/replay", recentSince()),
			c.get(t, one+"/deliveries")} {
			want(t, r, 404, "Webhook endpoint not found")
		}
		wantList[wire.Endpoint](t, c.get(t, endpointsPath), "Webhook endpoints found: %d", "webhook_endpoints", 1)
	})
}

// TestEndpointsRefused: bad input is 400 naming the field (nothing
// written); URLs are checked as callback URLs are.
func TestEndpointsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ok := map[string]any{"url": "https://hooks.example.com/h", "enabled_events": []string{"*"}}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for k, v := range ok {
			m[k] = v
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	tooMany := make([]string, business.MaxEnabledEvents+1)
	for i := range tooMany {
		tooMany[i] = business.EventTypes[i%len(business.EventTypes)]
	}
	for _, c := range []struct {
		body  any
		field string
	}{
		{with("url", nil), "url"},
		{with("url", "/relative"), "url"},
		{with("url", "http://hooks.example.com/h"), "url"},
		{with("url", "https://10.0.0.7/h"), "url"},
		{with("url", "https://localhost/h"), "url"},
		{with("url", 5), "url"},
		{with("enabled_events", nil), "enabled_events"},
		{with("enabled_events", []string{}), "enabled_events"},
		{with("enabled_events", []string{"sale.foo"}), "enabled_events"},
		{with("enabled_events", []string{"sales.*"}), "enabled_events"},
		{with("enabled_events", []any{"sale.*", 5}), "enabled_events"},
		{with("enabled_events", "sale.*"), "enabled_events"},
		{with("enabled_events", tooMany), "enabled_events"},
		{with("description", strings.Repeat("é", business.MaxEndpointDescription+1)), "description"},
		{with("status", "disabled"), "status"},
		{with("secret", "whsec_mine"), "secret"},
	} {
		wantRefused(t, e.post(endpointsPath, c.body), c.field)
	}
	r := e.post(endpointsPath, with("enabled_events", []string{"sale.foo"}))
	if msg := field(r, "enabled_events"); !strings.Contains(msg, `"sale.foo"`) || !strings.Contains(msg, "allowed: sale.created") || !strings.Contains(msg, "sale.*") {
		t.Errorf("the message names neither the bad pattern nor what is allowed: %s", r.raw)
	}
	wantList[wire.Endpoint](t, e.get(endpointsPath), "Webhook endpoints found: %d", "webhook_endpoints", 0)
	wantRefused(t, e.get(endpointsPath+"?limit=5"), "limit")

	// Where the deployment allows private targets (the devserver), http and
	// local hosts are accepted.
	p := privateWebhooks(t, e)
	created := dataAs[createdEndpoint](t, p.post(endpointsPath, with("url", "http://127.0.0.1:9/h")), "Webhook endpoint created", "webhook_endpoint")
	one := endpointsPath + "/" + created.ID
	for _, c := range []struct {
		method, path string
		body         any
		field        string
	}{
		{"PUT", one, map[string]any{"url": nil}, "url"},
		{"PUT", one, map[string]any{"url": "http://hooks.example.com/h"}, "url"},
		{"PUT", one, map[string]any{"enabled_events": nil}, "enabled_events"},
		{"PUT", one, map[string]any{"status": "paused"}, "status"},
		{"PUT", one, map[string]any{"status": nil}, "status"},
		{"PUT", one, map[string]any{"id": "ep_other"}, "id"},
		{"POST", one + "/rotate-secret", map[string]any{"overlap_hours": 25}, "overlap_hours"},
		{"POST", one + "/rotate-secret", map[string]any{"overlap_hours": -1}, "overlap_hours"},
		{"POST", one + "/rotate-secret", map[string]any{"overlap_hours": 1.5}, "overlap_hours"},
		{"POST", one + "/rotate-secret", map[string]any{"overlap_hours": "2"}, "overlap_hours"},
		{"POST", one + "/rotate-secret", map[string]any{"keep": true}, "keep"},
		{"POST", one + "/replay", map[string]any{}, "since"},
		{"POST", one + "/replay", map[string]any{"since": "yesterday"}, "since"},
		{"POST", one + "/replay", map[string]any{"since": 5}, "since"},
		{"POST", one + "/replay", map[string]any{"since": time.Now().UTC().Add(-31 * 24 * time.Hour).Format(business.TimeFormat)}, "since"},
		{"POST", one + "/replay", map[string]any{"since": business.EventIDAt(time.Now().Add(-31 * 24 * time.Hour))}, "since"},
		{"GET", one + "/deliveries?state=lost", nil, "state"},
	} {
		wantRefused(t, e.req(c.method, c.path, e.key, c.body), c.field)
	}
	r = e.get(one)
	if got := dataAs[wire.Endpoint](t, r, "Webhook endpoint found", "webhook_endpoint"); got.URL != "http://127.0.0.1:9/h" || got.Status != "enabled" || got.UpdatedAt != created.UpdatedAt {
		t.Fatalf("a refused request changed the endpoint: %s", r.raw)
	}
	want(t, e.req("POST", endpointsPath, "", ok), 401, "Authentication invalid")
}

// TestEndpointsNotFound: an id that is not the account's (unknown, of
// another account, or not an id at all) is 404 on every route.
func TestEndpointsNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, otherKey := e.newAccount("Other", "OTHER1")
	theirs := dataAs[createdEndpoint](t, e.req("POST", endpointsPath, otherKey, map[string]any{"url": "https://hooks.example.com/h", "enabled_events": []string{"*"}}),
		"Webhook endpoint created", "webhook_endpoint")
	for _, id := range []string{theirs.ID, business.NewEndpointID(), "ep_1", "1", "ep_" + strings.Repeat("a", 200)} {
		one := endpointsPath + "/" + id
		for _, r := range []resp{e.get(one), e.put(one, map[string]any{"description": "x"}), e.req("DELETE", one, e.key, nil),
			e.post(one+"/rotate-secret", nil), e.post(one+"/replay", recentSince()), e.get(one + "/deliveries")} {
			want(t, r, 404, "Webhook endpoint not found")
		}
	}
	r := e.req("GET", endpointsPath+"/"+theirs.ID, otherKey, nil)
	if got := dataAs[wire.Endpoint](t, r, "Webhook endpoint found", "webhook_endpoint"); got.Description != nil || got.Status != "enabled" {
		t.Fatalf("another account's requests changed the endpoint: %s", r.raw)
	}
}

// TestEndpointsLimit: 16 endpoints per account; the 17th is 409 saying
// what to do, and a delete frees a place.
func TestEndpointsLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := &client{e: e}
	var first createdEndpoint
	for i := range business.MaxEndpoints {
		ep := addEndpoint(t, c, fmt.Sprintf("https://hooks.example.com/%d", i), "*")
		if i == 0 {
			first = ep
		}
	}
	r := e.post(endpointsPath, map[string]any{"url": "https://hooks.example.com/17", "enabled_events": []string{"*"}})
	want(t, r, 409, "")
	if msg := r.body["error"].(string); !strings.Contains(msg, "at most 16 webhook endpoints") || !strings.Contains(msg, "DELETE") {
		t.Fatalf("%s", r.raw)
	}
	wantList[wire.Endpoint](t, e.get(endpointsPath), "Webhook endpoints found: %d", "webhook_endpoints", 16)
	want(t, e.req("DELETE", endpointsPath+"/"+first.ID, e.key, nil), 200, "Webhook endpoint deleted")
	addEndpoint(t, c, "https://hooks.example.com/17", "*")
	want(t, e.post(endpointsPath, map[string]any{"url": "https://hooks.example.com/18", "enabled_events": []string{"*"}}), 409, "")
}

// TestEndpointSecretRotation: the new secret is shown once; during the
// overlap both secrets sign, with overlap 0 only the new one.
func TestEndpointSecretRotation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := &client{e: e}
	ctx := context.Background()
	ep := addEndpoint(t, c, "https://hooks.example.com/h", "*")
	secrets := func(at time.Time) []string {
		t.Helper()
		got, err := e.store.EndpointSecrets(ctx, e.acct.ID, ep.ID, at)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := secrets(time.Now()); len(got) != 1 || got[0] != ep.Secret {
		t.Fatalf("secrets %q, want the created one", got)
	}
	type rotated struct {
		ID                      string  `json:"id"`
		Secret                  string  `json:"secret"`
		PreviousSecretExpiresAt *string `json:"previous_secret_expires_at"`
	}
	rotate := func(body any) rotated {
		t.Helper()
		return dataAs[rotated](t, e.post(endpointsPath+"/"+ep.ID+"/rotate-secret", body), "Webhook endpoint secret rotated", "webhook_endpoint")
	}
	before := time.Now().UTC()
	r1 := rotate(nil) // no body: 24 hours
	wantSecret(t, r1.Secret)
	if r1.ID != ep.ID || r1.Secret == ep.Secret || r1.PreviousSecretExpiresAt == nil {
		t.Fatalf("%+v", r1)
	}
	if until, err := time.Parse(business.TimeFormat, *r1.PreviousSecretExpiresAt); err != nil || until.Before(before.Add(24*time.Hour).Truncate(time.Second)) || until.After(time.Now().Add(24*time.Hour)) {
		t.Fatalf("previous_secret_expires_at %s, want 24 hours from now", *r1.PreviousSecretExpiresAt)
	}
	same(t, resp{method: "POST", path: "rotate-secret"}, []string{r1.Secret, ep.Secret}, secrets(time.Now()))
	same(t, resp{method: "POST", path: "rotate-secret"}, []string{r1.Secret}, secrets(time.Now().Add(25*time.Hour)))

	r2 := rotate(map[string]any{"overlap_hours": 0})
	if r2.PreviousSecretExpiresAt != nil {
		t.Fatalf("%+v", r2)
	}
	same(t, resp{method: "POST", path: "rotate-secret"}, []string{r2.Secret}, secrets(time.Now()))
	r3 := rotate("{}")
	r4 := rotate(map[string]any{"overlap_hours": 2})
	same(t, resp{method: "POST", path: "rotate-secret"}, []string{r4.Secret, r3.Secret}, secrets(time.Now()))
	same(t, resp{method: "POST", path: "rotate-secret"}, []string{r4.Secret}, secrets(time.Now().Add(3*time.Hour)))

	for _, r := range []resp{e.get(endpointsPath), e.get(endpointsPath + "/" + ep.ID)} {
		for _, s := range []string{ep.Secret, r1.Secret, r2.Secret, r3.Secret, r4.Secret} {
			if strings.Contains(string(r.raw), s) {
				t.Fatalf("%s %s shows a secret: %s", r.method, r.path, r.raw)
			}
		}
	}
	if r := e.get(endpointsPath + "/" + ep.ID); r.header.Get("ETag") != `"v1"` {
		t.Errorf("a rotation changed the endpoint: ETag %q", r.header.Get("ETag"))
	}
}

// endpointDelivery is a delivery of the endpoint deliveries list.
type endpointDelivery struct {
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	WebhookID string `json:"webhook_id"`
	State     string `json:"state"`
	Attempts  []struct {
		At         string  `json:"at"`
		StatusCode *int    `json:"status_code"`
		LatencyMS  int64   `json:"latency_ms"`
		Error      *string `json:"error"`
	} `json:"attempts"`
	NextAttemptAt *string `json:"next_attempt_at"`
	CreatedAt     string  `json:"created_at"`
}

type replayed struct {
	Queued    int     `json:"queued"`
	More      bool    `json:"more"`
	NextSince *string `json:"next_since"`
}

// TestEndpointReplay: a replay creates the deliveries of the events the
// endpoint subscribes to (webhook-id the event's id), leaves those still
// waiting, starts a new round of those that ended, and wakes the queue.
func TestEndpointReplay(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := &client{e: e}
	ctx := context.Background()
	all := addEndpoint(t, c, "https://hooks.example.com/all", "*")
	sales := addEndpoint(t, c, "https://hooks.example.com/sales", "sale.*")
	flaky := addEndpoint(t, c, "https://hooks.example.com/flaky", "*")
	// Replays start after the endpoints' own created events.
	start := newestEvent(t, e)
	// Three events: another endpoint disabled by the dispatcher, enabled by
	// its owner, and disabled again.
	var eventIDs []string
	enabled := ""
	for i, reason := range []string{"failing for 5 days", "failing again"} {
		if i > 0 {
			want(t, e.put(endpointsPath+"/"+flaky.ID, map[string]any{"status": "enabled"}), 200, "")
			enabled = newestEvent(t, e)
		}
		disabled, err := e.store.DisableEndpoint(ctx, e.acct.ID, flaky.ID, reason, time.Now().UTC())
		if err != nil || !disabled {
			t.Fatalf("DisableEndpoint: %v %v", disabled, err)
		}
		if again, err := e.store.DisableEndpoint(ctx, e.acct.ID, flaky.ID, reason, time.Now().UTC()); err != nil || again {
			t.Fatalf("DisableEndpoint of a disabled endpoint: %v %v", again, err)
		}
		page, err := e.store.ListEvents(ctx, e.acct.ID, store.EventFilter{Type: business.EventEndpointDisabled, ResourceType: business.ResourceEndpoint, ResourceID: flaky.ID}, 10, "")
		if err != nil || len(page.Items) != i+1 {
			t.Fatalf("%d events of the endpoint (%v), want %d", len(page.Items), err, i+1)
		}
		eventIDs = append(eventIDs, eventID(t, page.Items[0]))
	}
	// The event's data is the endpoint as its GET answers it.
	raw, err := e.store.FindEvent(ctx, e.acct.ID, eventIDs[1])
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		ID       string                 `json:"id"`
		Type     string                 `json:"type"`
		Resource business.EventResource `json:"resource"`
		Data     struct {
			WebhookEndpoint wire.Endpoint `json:"webhook_endpoint"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	r := e.get(endpointsPath + "/" + flaky.ID)
	current := dataAs[wire.Endpoint](t, r, "Webhook endpoint found", "webhook_endpoint")
	if current.Status != "disabled" || current.DisabledReason == nil || *current.DisabledReason != "failing again" || current.DisabledAt == nil {
		t.Fatalf("%s", r.raw)
	}
	same(t, r, current, ev.Data.WebhookEndpoint)
	if ev.Type != business.EventEndpointDisabled || etag(ev.Resource.Version) != r.header.Get("ETag") ||
		ev.Resource.Type != business.ResourceEndpoint || ev.Resource.ID != flaky.ID {
		t.Fatalf("event %s, endpoint ETag %s", raw, r.header.Get("ETag"))
	}

	path := endpointsPath + "/" + all.ID
	r = e.post(path+"/replay", map[string]any{"since": start})
	want(t, r, 200, "Events queued for replay: 3")
	if out := replayAnswer(t, r); out.Queued != 3 || out.More || out.NextSince == nil || *out.NextSince != eventIDs[1] {
		t.Fatalf("%s", r.raw)
	}
	r = e.get(path + "/deliveries")
	ds := dataAs[[]endpointDelivery](t, r, "Deliveries found: 3", "deliveries")
	for i, d := range ds {
		// Newest first.
		id, typ := []string{eventIDs[1], enabled, eventIDs[0]}[i], []string{business.EventEndpointDisabled, business.EventEndpointEnabled, business.EventEndpointDisabled}[i]
		if d.EventID != id || d.WebhookID != id || d.EventType != typ || d.State != "pending" || d.NextAttemptAt == nil || len(d.Attempts) != 0 {
			t.Fatalf("delivery %d: %s", i, r.raw)
		}
	}
	queue := store.EndpointQueue(e.acct.ID, all.ID)
	if q, err := e.store.FindQueue(ctx, queue); err != nil || q.ReadyAt.IsZero() || q.Gen == 0 {
		t.Fatalf("the endpoint's queue was not woken: %+v %v", q, err)
	}
	if acct, id, ok := store.SplitEndpointQueue(queue); !ok || acct != e.acct.ID || id != all.ID {
		t.Fatalf("SplitEndpointQueue(%q) = %q %q %v", queue, acct, id, ok)
	}
	if _, _, ok := store.SplitEndpointQueue(e.acct.ID); ok {
		t.Fatal("an account's own queue split as an endpoint's")
	}

	// Waiting deliveries are left; one that ended starts a new round.
	want(t, e.post(path+"/replay", map[string]any{"since": start}), 200, "Events queued for replay: 0")
	deliverPending(t, e, queue, eventIDs[0])
	r = e.post(path+"/replay", map[string]any{"since": start})
	want(t, r, 200, "Events queued for replay: 1")
	d, err := e.store.FindDelivery(ctx, queue, eventIDs[0])
	if err != nil || d.State != business.DeliveryPending || d.Attempt != 1 || d.RoundStart != 1 || d.WebhookID != eventIDs[0] {
		t.Fatalf("the delivered delivery was not queued again: %+v %v", d, err)
	}

	// An event id is where the last replay stopped: the events after it.
	fresh := addEndpoint(t, c, "https://hooks.example.com/fresh", "webhook_endpoint.disabled")
	newest := newestEvent(t, e) // fresh's created event
	r = e.post(endpointsPath+"/"+fresh.ID+"/replay", map[string]any{"since": eventIDs[0]})
	want(t, r, 200, "Events queued for replay: 1")
	if ds := dataAs[[]endpointDelivery](t, e.get(endpointsPath+"/"+fresh.ID+"/deliveries?state=pending"), "Deliveries found: 1", "deliveries"); ds[0].EventID != eventIDs[1] {
		t.Fatalf("%+v", ds)
	}
	// The events it does not subscribe to are read, not queued.
	r = e.post(endpointsPath+"/"+sales.ID+"/replay", map[string]any{"since": start})
	want(t, r, 200, "Events queued for replay: 0")
	if out := replayAnswer(t, r); out.More || out.NextSince == nil || *out.NextSince != newest {
		t.Fatalf("%s", r.raw)
	}
	want(t, e.get(endpointsPath+"/"+sales.ID+"/deliveries"), 200, "Deliveries found: 0")
	r = e.post(path+"/replay", map[string]any{"since": newest})
	if out := replayAnswer(t, r); out.Queued != 0 || out.More || out.NextSince != nil {
		t.Fatalf("nothing after the last event: %s", r.raw)
	}

	// One request reads at most its bound, and says where to go on.
	other := addEndpoint(t, c, "https://hooks.example.com/other", "webhook_endpoint.disabled")
	ep, err := e.store.FindEndpoint(ctx, e.acct.ID, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	after := start
	for i, want := range []struct {
		queued int
		more   bool
		last   string
	}{{1, true, eventIDs[0]}, {0, true, enabled}, {1, true, eventIDs[1]}} {
		queued, more, last, err := e.store.ReplayEndpoint(ctx, e.acct.ID, ep, after, 1, time.Now().UTC())
		if err != nil || queued != want.queued || more != want.more || last != want.last {
			t.Fatalf("call %d: %d %v %q %v, want %+v", i, queued, more, last, err, want)
		}
		after = last
	}

	// A delete between the replay's read of the endpoint and its queue's
	// wake: the replay answers not found and leaves no queue behind.
	gone := addEndpoint(t, c, "https://hooks.example.com/gone", "webhook_endpoint.disabled")
	if ep, err = e.store.FindEndpoint(ctx, e.acct.ID, gone.ID); err != nil {
		t.Fatal(err)
	}
	want(t, e.req("DELETE", endpointsPath+"/"+gone.ID, e.key, nil), 200, "")
	if _, _, _, err := e.store.ReplayEndpoint(ctx, e.acct.ID, ep, start, 10, time.Now().UTC()); business.ErrorCode(err) != business.ENOTFOUND {
		t.Fatalf("a replay racing the endpoint's delete: %v, want not found", err)
	}
	if q, err := e.store.FindQueue(ctx, store.EndpointQueue(e.acct.ID, gone.ID)); err != nil || !q.ReadyAt.IsZero() || q.Gen != 0 {
		t.Fatalf("the deleted endpoint's queue after the replay: %+v %v", q, err)
	}
}

// newestEvent returns the id of the account's newest event.
func newestEvent(t *testing.T, e *env) string {
	t.Helper()
	page, err := e.store.ListEvents(context.Background(), e.acct.ID, store.EventFilter{}, 1, "")
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("the newest event: %d %v", len(page.Items), err)
	}
	return eventID(t, page.Items[0])
}

// replayAnswer decodes a replay's data.
func replayAnswer(t *testing.T, r resp) replayed {
	t.Helper()
	d := r.data()
	out := replayed{}
	q, ok1 := d["queued"].(float64)
	more, ok2 := d["more"].(bool)
	if !ok1 || !ok2 {
		t.Fatalf("%s %s: %s", r.method, r.path, r.raw)
	}
	out.Queued, out.More = int(q), more
	if s, ok := d["next_since"].(string); ok {
		out.NextSince = &s
	}
	return out
}

// eventID returns an event's id from its JSON.
func eventID(t *testing.T, body []byte) string {
	t.Helper()
	var ev struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &ev); err != nil || !business.ValidEventID(ev.ID) {
		t.Fatalf("no event id in %s", body)
	}
	return ev.ID
}

// etag is the ETag of version.
func etag(version int64) string { return fmt.Sprintf(`"v%d"`, version) }

// deliverPending makes the delivery's pending attempt, successfully, as a
// dispatcher would.
func deliverPending(t *testing.T, e *env, queue, id string) {
	t.Helper()
	ctx := context.Background()
	d, err := e.store.FindDelivery(ctx, queue, id)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	lease, err := e.store.ClaimDelivery(ctx, d, now, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	d.Next(business.DeliveryAttempt{At: now, Status: 200, LatencyMS: 3}, true, business.DefaultRetrySchedule)
	if err := e.store.SaveAttempt(ctx, d, lease); err != nil {
		t.Fatal(err)
	}
}

// TestEndpointEnableRestartsQueue: enabling a disabled endpoint forgets its
// failures (circuit, streak) and wakes its queue, so what was recorded
// meanwhile goes out.
func TestEndpointEnableRestartsQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := &client{e: e}
	ctx := context.Background()
	ep := addEndpoint(t, c, "https://hooks.example.com/h", "*")
	queue := store.EndpointQueue(e.acct.ID, ep.ID)
	now := time.Now().UTC()
	for range 2 {
		if _, _, _, err := e.store.AttemptFailed(ctx, queue, now, 2, time.Hour, false); err != nil {
			t.Fatal(err)
		}
	}
	if q, _ := e.store.FindQueue(ctx, queue); !q.Open() || q.Failures != 2 || q.FailingSince.IsZero() {
		t.Fatalf("the failures did not open the circuit: %+v", q)
	}
	if _, err := e.store.DisableEndpoint(ctx, e.acct.ID, ep.ID, "failing", now); err != nil {
		t.Fatal(err)
	}
	r := e.put(endpointsPath+"/"+ep.ID, map[string]any{"status": "enabled"}, "If-Match", `"v2"`)
	if got := dataAs[wire.Endpoint](t, r, "Webhook endpoint updated", "webhook_endpoint"); got.Status != "enabled" || got.DisabledReason != nil || got.DisabledAt != nil {
		t.Fatalf("%s", r.raw)
	}
	q, err := e.store.FindQueue(ctx, queue)
	if err != nil || q.Open() || q.Failures != 0 || !q.FailingSince.IsZero() || q.ReadyAt.IsZero() || q.ReadyAt.After(time.Now()) || q.Gen < 1 {
		t.Fatalf("the queue did not restart: %+v %v", q, err)
	}
	// Enabling an enabled endpoint leaves its queue alone.
	want(t, e.put(endpointsPath+"/"+ep.ID, map[string]any{"status": "enabled"}), 200, "")
	if again, _ := e.store.FindQueue(ctx, queue); again.Gen != q.Gen {
		t.Fatalf("the queue was woken again: %+v, was %+v", again, q)
	}
}
