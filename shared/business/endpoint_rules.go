package business

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"slices"
	"strings"
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
