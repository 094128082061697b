package wire

import "bizdata/shared/business"

// Endpoint is a webhook endpoint on the wire: what its GET answers and the
// data of its webhook_endpoint.disabled event. Its secret is never part of
// it (the create and rotate-secret answers add it beside).
type Endpoint struct {
	ID            string   `json:"id"`
	URL           string   `json:"url"`
	EnabledEvents []string `json:"enabled_events"`
	Description   *string  `json:"description"`
	Status        string   `json:"status"`
	// DisabledReason says why the dispatcher disabled the endpoint; null
	// while enabled, or when its owner disabled it.
	DisabledReason *string `json:"disabled_reason"`
	DisabledAt     *string `json:"disabled_at"`
	CreatedAt      string  `json:"created_at"`
	UpdatedAt      string  `json:"updated_at"`
}

func NewEndpoint(e business.Endpoint) Endpoint {
	var disabledAt *string
	if !e.DisabledAt.IsZero() {
		at := e.DisabledAt.UTC().Format(business.TimeFormat)
		disabledAt = &at
	}
	events := e.EnabledEvents
	if events == nil {
		events = []string{}
	}
	return Endpoint{
		ID: e.ID, URL: e.URL, EnabledEvents: events, Description: Nullable(e.Description), Status: e.Status,
		DisabledReason: Nullable(e.DisabledReason), DisabledAt: disabledAt,
		CreatedAt: e.CreatedAt.UTC().Format(business.TimeFormat), UpdatedAt: e.UpdatedAt.UTC().Format(business.TimeFormat),
	}
}

// EndpointData is the data of an endpoint's GET (and edit) answer, and so of
// its events.
func EndpointData(e business.Endpoint) map[string]any {
	return map[string]any{"webhook_endpoint": NewEndpoint(e)}
}
