package business

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"slices"
	"strings"
	"time"
)

// Ids, secrets and subscriptions of webhook endpoints.

// EndpointIDPrefix starts every endpoint id.
const EndpointIDPrefix = "ep_"

// endpointIDChars is the length of an endpoint id's random part: 20 base32
// characters, 100 random bits.
const endpointIDChars = 20

var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewEndpointID returns a random endpoint id such as
// ep_k3v7q2mzx4a5bcdefgh2.
func NewEndpointID() string {
	b := make([]byte, 13) // 104 bits: 21 characters, cut to 20
	_, _ = rand.Read(b)
	return EndpointIDPrefix + lowerBase32.EncodeToString(b)[:endpointIDChars]
}

// ValidEndpointID reports whether id has the shape of an endpoint id, so a
// path value that cannot name one never reaches the table.
func ValidEndpointID(id string) bool {
	rest, ok := strings.CutPrefix(id, EndpointIDPrefix)
	if !ok || len(rest) != endpointIDChars {
		return false
	}
	for _, c := range rest {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// EndpointSecretPrefix starts every endpoint secret, as the Standard
// Webhooks specification's secrets look: its libraries key the signature
// with the base64 payload's bytes.
const EndpointSecretPrefix = "whsec_"

// NewEndpointSecret returns a fresh signing secret: whsec_ and 24 random
// bytes in standard base64. It is shown once and stored only in the
// endpoint's secret item.
func NewEndpointSecret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return EndpointSecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// EventPatterns lists every pattern an endpoint may subscribe to, in the
// order the API documents them: each type, each family ("sale.*"), then "*".
func EventPatterns() []string {
	out := slices.Clone(EventTypes)
	for _, t := range EventTypes {
		if f := EventFamily(t) + ".*"; !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return append(out, "*")
}

// CheckEnabledEvents records under field what is wrong with an endpoint's
// subscriptions (a non-empty list of at most MaxEnabledEvents patterns, see
// ValidEventPattern) and returns them trimmed, each once, in the order
// given.
func CheckEnabledEvents(fe FieldErrors, field string, patterns []string) []string {
	allowed := "; allowed: " + strings.Join(EventPatterns(), ", ")
	switch {
	case len(patterns) == 0:
		fe.Add(field, "must list at least one event type, family (\"sale.*\") or \"*\""+allowed)
		return nil
	case len(patterns) > MaxEnabledEvents:
		fe.Add(field, "must list at most "+itoa(MaxEnabledEvents)+" patterns; a family (\"sale.*\") or \"*\" covers several types")
		return nil
	}
	var out []string
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		if !ValidEventPattern(p) {
			fe.Add(field, "\""+p+"\" is not an event type, a family (\"sale.*\") or \"*\""+allowed)
			return nil
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// TooManyEndpoints is the answer to a create of an endpoint beyond
// MaxEndpoints (ECONFLICT).
func TooManyEndpoints() error {
	return Errorf(ECONFLICT, "An account may have at most %d webhook endpoints; delete one it no longer needs (DELETE /api/v1/webhook-endpoints/{id}) or widen one's enabled_events instead", MaxEndpoints)
}

// EndpointEdit is what an edit of an endpoint makes of it.
type EndpointEdit struct {
	// Endpoint is the endpoint afterwards.
	Endpoint Endpoint
	// Event is the edit's one event type: webhook_endpoint.enabled or
	// .disabled when the status changed, else .updated.
	Event string
	// Changed names the fields the edit changed, as its PUT names them.
	Changed []string
	// Reenabled says the endpoint was enabled again: its queue starts
	// afresh, so the deliveries recorded while it was disabled go out now.
	Reenabled bool
}

// EditEndpoint completes the edit of endpoint old into e, made at now
// (whole seconds): the id and creation stay, the version goes up. An
// endpoint enabled again loses its disabled reason and time; one disabled
// by its owner is stamped disabled_at, with no reason.
func EditEndpoint(old, e Endpoint, now time.Time) EndpointEdit {
	e.ID, e.CreatedAt, e.Version, e.UpdatedAt = old.ID, old.CreatedAt, old.Version+1, now
	wasOn, isOn := old.Status == EndpointEnabled, e.Status == EndpointEnabled
	switch {
	case isOn:
		e.DisabledReason, e.DisabledAt = "", time.Time{}
	case wasOn:
		e.DisabledReason, e.DisabledAt = "", now
	}
	edit := EndpointEdit{Endpoint: e, Event: EventEndpointUpdated, Changed: EndpointChanges(old, e), Reenabled: isOn && !wasOn}
	switch {
	case isOn && !wasOn:
		edit.Event = EventEndpointEnabled
	case wasOn && !isOn:
		edit.Event = EventEndpointDisabled
	}
	return edit
}

// EndpointChanges returns the names of the fields of an endpoint that an
// edit of old into e changed, as its PUT names them.
func EndpointChanges(old, e Endpoint) []string {
	out := []string{}
	if old.URL != e.URL {
		out = append(out, "url")
	}
	if !slices.Equal(old.EnabledEvents, e.EnabledEvents) {
		out = append(out, "enabled_events")
	}
	if old.Description != e.Description {
		out = append(out, "description")
	}
	if old.Status != e.Status {
		out = append(out, "status")
	}
	return out
}

// DisableEndpoint disables endpoint e at `at` (whole seconds) for reason
// (the dispatcher's, when its deliveries kept failing), its version going
// up. It returns false, and e as it is, when e is disabled already.
func DisableEndpoint(e Endpoint, reason string, at time.Time) (Endpoint, bool) {
	if e.Status != EndpointEnabled {
		return e, false
	}
	e.Status, e.DisabledReason, e.DisabledAt, e.UpdatedAt, e.Version = EndpointDisabled, reason, at, at, e.Version+1
	return e, true
}
