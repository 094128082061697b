package wire

import (
	"encoding/json"

	"bizdata/shared/business"
)

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

// EndpointWithSecret is an endpoint as its create answers it: the only
// time, with rotate-secret's, that its secret is shown.
type EndpointWithSecret struct {
	Endpoint
	Secret string `json:"secret"`
}

// RotatedSecret is an endpoint's rotate-secret answer: the new secret, and
// until when the replaced one keeps signing beside it (null: it stopped at
// once).
type RotatedSecret struct {
	ID                      string  `json:"id"`
	PreviousSecretExpiresAt *string `json:"previous_secret_expires_at"`
	Secret                  string  `json:"secret"`
}

// EndpointDelivery is a delivery of an event to an endpoint: the attempts
// as a payment delivery's, named by the event.
type EndpointDelivery struct {
	EventID       string            `json:"event_id"`
	EventType     string            `json:"event_type"`
	WebhookID     string            `json:"webhook_id"`
	State         string            `json:"state"`
	Attempts      []DeliveryAttempt `json:"attempts"`
	NextAttemptAt *string           `json:"next_attempt_at"`
	CreatedAt     string            `json:"created_at"`
}

// NewEndpointDelivery returns d on the wire, with the event type its
// payload (the event) names.
func NewEndpointDelivery(d business.Delivery) EndpointDelivery {
	j := NewDelivery(d)
	var ev struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(d.Payload, &ev)
	return EndpointDelivery{EventID: d.TransactionID, EventType: ev.Type, WebhookID: d.WebhookID, State: j.State,
		Attempts: j.Attempts, NextAttemptAt: j.NextAttemptAt, CreatedAt: j.CreatedAt}
}
