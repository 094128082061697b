package business

import (
	"slices"
	"time"
)

// Webhook endpoint statuses.
const (
	EndpointEnabled  = "enabled"
	EndpointDisabled = "disabled"
)

// Limits of webhook endpoints.
const (
	MaxEndpoints = 16
	// MaxEnabledEvents bounds the patterns one endpoint subscribes to.
	MaxEnabledEvents = 32
	// MaxEndpointDescription bounds an endpoint's description.
	MaxEndpointDescription = 500
	// MaxSecretOverlap is the longest a rotated-away secret keeps signing.
	MaxSecretOverlap = 24 * time.Hour
	// EndpointDisableAfter is how long every attempt to an endpoint may fail
	// before it is disabled (unless configured otherwise).
	EndpointDisableAfter = 5 * 24 * time.Hour
)

// Endpoint is a merchant's webhook endpoint: where the events it subscribes
// to are delivered, each delivery signed with its secret (and, during a
// rotation's overlap, with the one it replaced too).
type Endpoint struct {
	ID            string
	URL           string
	EnabledEvents []string // event types and patterns ("sale.*", "*")
	Description   string
	Status        string
	// DisabledReason says why the endpoint was disabled ("" when enabled,
	// or when its owner disabled it).
	DisabledReason string
	DisabledAt     time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Version        int64
}

// Wants reports whether the endpoint subscribes to events of type t.
func (e Endpoint) Wants(t string) bool {
	return slices.ContainsFunc(e.EnabledEvents, func(p string) bool { return EventMatches(p, t) })
}
