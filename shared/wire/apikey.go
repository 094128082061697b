package wire

import "bizdata/shared/business"

// APIKey is a key as the API and the admin CLI show it: never its secret,
// which only the create and rotate answers carry, once.
type APIKey struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Scopes     []string `json:"scopes"`
	Mode       string   `json:"mode"`
	Prefix     *string  `json:"prefix"`
	CreatedAt  string   `json:"created_at"`
	LastUsedAt *string  `json:"last_used_at"`
}

// NewAPIKey returns k in its wire form.
func NewAPIKey(k business.APIKey) APIKey {
	j := APIKey{ID: k.ID, Name: k.Name, Scopes: k.Scopes, Mode: k.Mode(), Prefix: Nullable(k.Prefix), CreatedAt: k.CreatedAt.UTC().Format(business.TimeFormat)}
	if !k.LastUsedAt.IsZero() {
		j.LastUsedAt = Nullable(k.LastUsedAt.UTC().Format(business.TimeFormat))
	}
	return j
}

// CreatedAPIKey is a key as its create answers it: the only time its
// secret (Key) is shown.
type CreatedAPIKey struct {
	APIKey
	Key string `json:"key"`
}
