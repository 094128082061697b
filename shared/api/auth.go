package api

import (
	"context"
	"strings"
	"sync"
	"time"

	"bizdata/shared/business"
)

// Exact 401 texts of the API description.
const (
	msgMissingBearer = "Unauthorized: Missing Bearer Token"
	msgAuthInvalid   = "Authentication invalid"
	msgInvalidKey    = "Unauthorized: Invalid API Key"
)

// authStyle selects the 401 text for a missing or malformed token: the sales
// and authenticate routes say "Missing Bearer Token", the others
// "Authentication invalid", as the description's per-family texts do.
type authStyle int

const (
	authSales authStyle = iota
	authOther
)

// BearerToken extracts the token of an "Authorization: Bearer <token>" header
// value, as every route reads it.
func BearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}

// keyFinder looks an API key's hash up; the store implements it.
type keyFinder interface {
	FindAccountByKeyHash(ctx context.Context, hash string) (business.Account, error)
}

// keyCache remembers which account a valid key hash belongs to for a short
// TTL, so a warm function authenticates without a DynamoDB call. A rotated key
// stops working once its entry expires; unknown keys are never cached.
type keyCache struct {
	ttl  time.Duration
	find keyFinder
	mu   sync.Mutex
	m    map[string]cachedKey
	now  func() time.Time
}

type cachedKey struct {
	account business.Account
	expires time.Time
}

func newKeyCache(find keyFinder, ttl time.Duration) *keyCache {
	return &keyCache{ttl: ttl, find: find, m: map[string]cachedKey{}, now: time.Now}
}

// account returns the account of token. Returns EUNAUTHORIZED for an unknown
// or revoked key.
func (c *keyCache) account(ctx context.Context, token string) (business.Account, error) {
	hash := business.HashAPIKey(token)
	now := c.now()
	c.mu.Lock()
	e, ok := c.m[hash]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.account, nil
	}
	a, err := c.find.FindAccountByKeyHash(ctx, hash)
	if err != nil {
		return business.Account{}, err
	}
	if c.ttl > 0 {
		c.mu.Lock()
		if len(c.m) > 10000 { // bound memory; entries are cheap to refetch
			clear(c.m)
		}
		c.m[hash] = cachedKey{account: a, expires: now.Add(c.ttl)}
		c.mu.Unlock()
	}
	return a, nil
}

// forget drops token from the cache, so a key rotated on this process stops
// working here at once (other warm processes drop it within the TTL).
func (c *keyCache) forget(token string) {
	c.mu.Lock()
	delete(c.m, business.HashAPIKey(token))
	c.mu.Unlock()
}

// forgetAccount drops every key of account from the cache, so that a change
// of its settings (name, invoice prefix) is seen at once on this process;
// other warm processes see it within the TTL.
func (c *keyCache) forgetAccount(account string) {
	c.mu.Lock()
	for h, e := range c.m {
		if e.account.ID == account {
			delete(c.m, h)
		}
	}
	c.mu.Unlock()
}
