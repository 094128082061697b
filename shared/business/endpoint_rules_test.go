package business

import (
	"slices"
	"testing"
	"time"
)

func hook(status string) Endpoint {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := Endpoint{ID: "ep_aaaaaaaaaaaaaaaaaaaa", URL: "https://example.com/hook", EnabledEvents: []string{"sale.*"},
		Status: status, CreatedAt: created, UpdatedAt: created, Version: 3}
	if status == EndpointDisabled {
		e.DisabledReason, e.DisabledAt = "deliveries failed for 5 days", created.Add(time.Hour)
	}
	return e
}

func TestEditEndpoint(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	t.Run("Updated", func(t *testing.T) {
		old := hook(EndpointEnabled)
		e := old
		e.ID, e.Version, e.URL, e.Description = "ep_bbbbbbbbbbbbbbbbbbbb", 99, "https://example.com/other", "shop"
		got := EditEndpoint(old, e, now)
		if got.Event != EventEndpointUpdated || got.Reenabled || !slices.Equal(got.Changed, []string{"url", "description"}) {
			t.Fatalf("edit %+v", got)
		}
		if got.Endpoint.ID != old.ID || got.Endpoint.Version != 4 || !got.Endpoint.CreatedAt.Equal(old.CreatedAt) || !got.Endpoint.UpdatedAt.Equal(now) {
			t.Fatalf("endpoint %+v", got.Endpoint)
		}
	})
	t.Run("EnabledAgain", func(t *testing.T) {
		old := hook(EndpointDisabled)
		e := old
		e.Status = EndpointEnabled
		got := EditEndpoint(old, e, now)
		if got.Event != EventEndpointEnabled || !got.Reenabled || !slices.Equal(got.Changed, []string{"status"}) ||
			got.Endpoint.DisabledReason != "" || !got.Endpoint.DisabledAt.IsZero() {
			t.Fatalf("edit %+v", got)
		}
	})
	t.Run("DisabledByItsOwner", func(t *testing.T) {
		old := hook(EndpointEnabled)
		e := old
		e.Status, e.DisabledReason = EndpointDisabled, "sent by the client"
		got := EditEndpoint(old, e, now)
		if got.Event != EventEndpointDisabled || got.Reenabled || got.Endpoint.DisabledReason != "" || !got.Endpoint.DisabledAt.Equal(now) {
			t.Fatalf("edit %+v", got)
		}
	})
	t.Run("StillDisabled", func(t *testing.T) {
		old := hook(EndpointDisabled)
		e := old
		e.Description = "paused"
		got := EditEndpoint(old, e, now)
		if got.Event != EventEndpointUpdated || got.Reenabled || got.Endpoint.DisabledReason != old.DisabledReason ||
			!got.Endpoint.DisabledAt.Equal(old.DisabledAt) || !slices.Equal(got.Changed, []string{"description"}) {
			t.Fatalf("edit %+v", got)
		}
	})
}

func TestEndpointChanges(t *testing.T) {
	old := hook(EndpointEnabled)
	if got := EndpointChanges(old, old); got == nil || len(got) != 0 {
		t.Fatalf("no edit changed %#v", got)
	}
	e := old
	e.URL, e.EnabledEvents, e.Description, e.Status = "https://example.com/b", []string{"*"}, "d", EndpointDisabled
	if got := EndpointChanges(old, e); !slices.Equal(got, []string{"url", "enabled_events", "description", "status"}) {
		t.Fatalf("changed %v", got)
	}
}

func TestDisableEndpoint(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	t.Run("OK", func(t *testing.T) {
		e, ok := DisableEndpoint(hook(EndpointEnabled), "failing", at)
		if !ok || e.Status != EndpointDisabled || e.DisabledReason != "failing" || !e.DisabledAt.Equal(at) || !e.UpdatedAt.Equal(at) || e.Version != 4 {
			t.Fatalf("endpoint %+v (%v)", e, ok)
		}
	})
	t.Run("AlreadyDisabled", func(t *testing.T) {
		old := hook(EndpointDisabled)
		e, ok := DisableEndpoint(old, "failing", at)
		if ok || e.Version != old.Version || e.DisabledReason != old.DisabledReason {
			t.Fatalf("endpoint %+v (%v)", e, ok)
		}
	})
}

func TestTooManyEndpoints(t *testing.T) {
	wantCode(t, TooManyEndpoints(), ECONFLICT, "An account may have at most 16 webhook endpoints; delete one it no longer needs (DELETE /api/v1/webhook-endpoints/{id}) or widen one's enabled_events instead")
}
