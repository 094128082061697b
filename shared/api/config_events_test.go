package api_test

// Configuration changes are events: an endpoint's create, edit (enabled,
// disabled or updated), secret rotation and delete, an API key's create,
// rotation and revocation, and a change of the settings or the webhook
// settings each write exactly one event in the change's transaction, and
// never a secret, a key or any part of one; a refused change writes none.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// changeAs is change made with key instead of the env's own.
func changeAs(t *testing.T, c *client, key, method, path string, body any, wantCode int) ([]feedEvent, resp) {
	t.Helper()
	before := newestEventID(t, c)
	own := c.e.key
	c.e.key = key
	r := c.do(t, method, path, body)
	c.e.key = own
	want(t, r, wantCode, "")
	return eventsAfterID(t, c, before), r
}

// noSecret fails when an event's JSON holds any of secrets, or anything
// shaped like a key or an endpoint secret.
func noSecret(t *testing.T, evs []feedEvent, secrets ...string) {
	t.Helper()
	for _, ev := range evs {
		raw, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range append(secrets, "whsec_", "bk_live_", "bk_test_", `"prefix":"`, `"hash"`, `"key"`, `"secret"`) {
			if s != "" && strings.Contains(string(raw), s) {
				t.Fatalf("%s event holds %q: %s", ev.Type, s, raw)
			}
		}
	}
}

// changedFields returns an event's data.changed.
func changedFields(t *testing.T, ev feedEvent) []string {
	t.Helper()
	var d struct {
		Changed *[]string `json:"changed"`
	}
	if err := json.Unmarshal(ev.Data, &d); err != nil || d.Changed == nil {
		t.Fatalf("%s event has no data.changed: %s", ev.Type, ev.Data)
	}
	return *d.Changed
}

func wantChanged(t *testing.T, ev feedEvent, fields ...string) {
	t.Helper()
	if d := cmp.Diff(fields, changedFields(t, ev), cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("%s event's data.changed (-want +got):\n%s", ev.Type, d)
	}
}

func TestConfigChangesAreEvents(t *testing.T) {
	bothPaths(t, func(t *testing.T, c *client) {
		key := c.e.key
		// An endpoint: created, edited, disabled and enabled by its owner,
		// its secret rotated, then deleted.
		before := newestEventID(t, c)
		created := addEndpoint(t, c, "https://hooks.example.com/config", "sale.*")
		evs := eventsAfterID(t, c, before)
		id := created.ID
		wantTypes(t, evs, "webhook_endpoint.created webhook_endpoint/"+id+"@v1")
		sameAsGet(t, c, evs[0], endpointsPath+"/"+id)
		noSecret(t, evs, created.Secret, key)

		path := endpointsPath + "/" + id
		evs = eventsOfRequest(t, c, "PUT", path, map[string]any{"description": "Config", "enabled_events": []string{"sale.*"}}, 200)
		wantTypes(t, evs, "webhook_endpoint.updated webhook_endpoint/"+id+"@v2")
		wantChanged(t, evs[0], "description")
		noSecret(t, evs, created.Secret, key)

		evs = eventsOfRequest(t, c, "PUT", path, map[string]any{"status": "disabled"}, 200)
		wantTypes(t, evs, "webhook_endpoint.disabled webhook_endpoint/"+id+"@v3")
		wantChanged(t, evs[0], "status")
		var data struct {
			Endpoint struct {
				Status         string  `json:"status"`
				DisabledReason *string `json:"disabled_reason"`
				DisabledAt     *string `json:"disabled_at"`
			} `json:"webhook_endpoint"`
		}
		if err := json.Unmarshal(evs[0].Data, &data); err != nil || data.Endpoint.Status != "disabled" ||
			data.Endpoint.DisabledReason != nil || data.Endpoint.DisabledAt == nil {
			t.Fatalf("a disable by its owner: %s", evs[0].Data)
		}
		evs = eventsOfRequest(t, c, "PUT", path, map[string]any{"status": "enabled", "url": "https://hooks.example.com/config2"}, 200)
		wantTypes(t, evs, "webhook_endpoint.enabled webhook_endpoint/"+id+"@v4")
		wantChanged(t, evs[0], "url", "status")

		// Refused edits write nothing.
		wantTypes(t, eventsOfRequest(t, c, "PUT", path, map[string]any{"status": "paused"}, 400))
		wantTypes(t, eventsOfRequest(t, c, "PUT", path, map[string]any{"enabled_events": []string{"sale.nothing"}}, 400))
		wantTypes(t, eventsOfRequest(t, c, "PUT", endpointsPath+"/ep_aaaaaaaaaaaaaaaaaaaa", map[string]any{"description": "x"}, 404))
		wantTypes(t, eventsOfRequest(t, c, "POST", endpointsPath, map[string]any{"url": "ftp://x", "enabled_events": []string{"*"}}, 400))

		evs, r := changeAs(t, c, key, "POST", path+"/rotate-secret", map[string]any{"overlap_hours": 1}, 200)
		wantTypes(t, evs, "webhook_endpoint.secret_rotated webhook_endpoint/"+id+"@v4")
		rotated, _ := r.data()["webhook_endpoint"].(map[string]any)["secret"].(string)
		if rotated == "" {
			t.Fatalf("rotate-secret answered no secret: %s", r.raw)
		}
		noSecret(t, evs, created.Secret, rotated, key)
		var rot struct {
			Until *string `json:"previous_secret_expires_at"`
		}
		if err := json.Unmarshal(evs[0].Data, &rot); err != nil || rot.Until == nil {
			t.Fatalf("secret_rotated without previous_secret_expires_at: %s", evs[0].Data)
		}
		wantTypes(t, eventsOfRequest(t, c, "POST", path+"/rotate-secret", map[string]any{"overlap_hours": -1}, 400))
		wantTypes(t, eventsOfRequest(t, c, "POST", endpointsPath+"/ep_aaaaaaaaaaaaaaaaaaaa/rotate-secret", nil, 404))

		evs = eventsOfRequest(t, c, "DELETE", path, nil, 200)
		wantTypes(t, evs, "webhook_endpoint.deleted webhook_endpoint/"+id+"@v5")
		noSecret(t, evs, created.Secret, rotated, key)
		wantTypes(t, eventsOfRequest(t, c, "DELETE", path, nil, 404))

		// An API key: created, rotated by itself, revoked.
		evs, r = changeAs(t, c, key, "POST", "/api/v1/api-keys", map[string]any{"name": "Till 2", "scopes": []string{"sales:write", "keys:write"}, "mode": "live"}, 200)
		k := r.data()["api_key"].(map[string]any)
		kid, secret := k["id"].(string), k["key"].(string)
		wantTypes(t, evs, "api_key.created api_key/"+kid+"@v1")
		noSecret(t, evs, secret, key)
		var kd struct {
			Key struct {
				ID     string   `json:"id"`
				Name   string   `json:"name"`
				Scopes []string `json:"scopes"`
				Mode   string   `json:"mode"`
			} `json:"api_key"`
		}
		if err := json.Unmarshal(evs[0].Data, &kd); err != nil || kd.Key.ID != kid || kd.Key.Name != "Till 2" ||
			!cmp.Equal(kd.Key.Scopes, []string{"sales:write", "keys:write"}) || kd.Key.Mode != "live" {
			t.Fatalf("api_key.created data: %s", evs[0].Data)
		}
		wantTypes(t, eventsOfRequest(t, c, "POST", "/api/v1/api-keys", map[string]any{"name": "Bad", "scopes": []string{"nothing:write"}, "mode": "live"}, 400))

		evs, r = changeAs(t, c, secret, "POST", "/api/v1/user/api-key/rotate", nil, 200)
		fresh, _ := r.data()["api_key"].(string)
		if fresh == "" {
			t.Fatalf("rotate answered no key: %s", r.raw)
		}
		wantTypes(t, evs, "api_key.rotated api_key/"+kid+"@v2")
		noSecret(t, evs, secret, fresh, key)

		evs = eventsOfRequest(t, c, "POST", "/api/v1/api-keys/"+kid+"/revoke", nil, 200)
		wantTypes(t, evs, "api_key.revoked api_key/"+kid+"@v3")
		noSecret(t, evs, secret, fresh, key)
		wantTypes(t, eventsOfRequest(t, c, "POST", "/api/v1/api-keys/"+kid+"/revoke", nil, 404))

		// The settings and the webhook settings: the fields changed, by name.
		evs = eventsOfRequest(t, c, "PUT", "/api/v1/user/settings", map[string]any{"business_name": "Kofi Stores Ltd", "timezone": "Africa/Accra"}, 200)
		acct := c.e.acct.ID
		wantTypes(t, evs, "settings.updated settings/"+acct+"@v4")
		wantChanged(t, evs[0], "business_name", "timezone")
		wantTypes(t, eventsOfRequest(t, c, "PUT", "/api/v1/user/settings", map[string]any{"timezone": "Mars/Olympus"}, 400))
		wantTypes(t, eventsOfRequest(t, c, "PUT", "/api/v1/user/settings", map[string]any{"currency": "USD"}, 400))

		const hookSecret = "config-events-secret-1234"
		evs = eventsOfRequest(t, c, "PUT", "/api/v1/user/webhook", map[string]any{"callback_url": "https://hooks.example.com/pay", "callback_secret": hookSecret}, 200)
		wantTypes(t, evs, "settings.updated settings/"+acct+"@v5")
		wantChanged(t, evs[0], "callback_url", "callback_secret")
		noSecret(t, evs, hookSecret, key)
		wantTypes(t, eventsOfRequest(t, c, "PUT", "/api/v1/user/webhook", map[string]any{"callback_secret": "short"}, 400))

		// Config events are subscribable and filterable like any other.
		fam, _ := feedPage(t, c, "?type=webhook_endpoint.*&resource_id="+id)
		if len(fam) != 6 {
			t.Fatalf("the endpoint's events: %v", eventTypes(fam))
		}
		keys, _ := feedPage(t, c, "?type=api_key.*")
		if len(keys) != 3 {
			t.Fatalf("the api_key events: %v", eventTypes(keys))
		}
		noSecret(t, allEvents(t, c), created.Secret, rotated, secret, fresh, hookSecret, key)
	})
}
