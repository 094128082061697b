package api

import (
	"context"
	"strings"
	"sync"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
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

// keyFinder looks an API key's hash up and stamps its use; the store
// implements it.
type keyFinder interface {
	FindAccountByKeyHash(ctx context.Context, hash string) (business.Account, error)
	StampKeyUse(ctx context.Context, hash string, at time.Time) error
}

// permits refuses a key that lacks the route's scope or is of a mode the
// route does not serve (403), before anything is read or changed.
func (rt Route) permits(acct business.Account) error {
	if rt.Scope != scopeNone && !acct.Key.Allows(rt.Scope) {
		return business.Errorf(business.EFORBIDDEN, "This API key lacks the scope %s", rt.Scope)
	}
	switch {
	case rt.Mode == liveOnly && !acct.Livemode():
		return business.Errorf(business.EFORBIDDEN, "This route takes a live key (bk_live_…); test keys act on test data only")
	case rt.Mode == testOnly && acct.Livemode():
		return business.Errorf(business.EFORBIDDEN, "This route takes a test key (bk_test_…); it never acts on live data")
	}
	return nil
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
	// stampDue is set when the key's last use, as read from the table, is
	// older than store.LastUsedEvery: the next request the key is
	// permitted to make stamps it.
	stampDue bool
}

func newKeyCache(find keyFinder, ttl time.Duration) *keyCache {
	return &keyCache{ttl: ttl, find: find, m: map[string]cachedKey{}, now: time.Now}
}

// account returns the account of token, and use, which stamps the key's
// last use when it is due. Returns EUNAUTHORIZED for an unknown or revoked
// key. The caller calls use only once the route permits the key: a request
// refused for its scope or mode writes nothing.
func (c *keyCache) account(ctx context.Context, token string) (business.Account, func(context.Context), error) {
	hash := business.HashAPIKey(token)
	now := c.now()
	c.mu.Lock()
	e, ok := c.m[hash]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.account, func(ctx context.Context) { c.stamp(ctx, hash, e.stampDue, now) }, nil
	}
	a, err := c.find.FindAccountByKeyHash(ctx, hash)
	if err != nil {
		return business.Account{}, nil, err
	}
	// The key's last use is stamped after a read of the table, when its
	// stamp is older than store.LastUsedEvery: about one write a minute for
	// a busy key, none on a cached request once stamped.
	due := now.Sub(a.Key.LastUsedAt) > store.LastUsedEvery
	if c.ttl > 0 {
		c.mu.Lock()
		if len(c.m) > 10000 { // bound memory; entries are cheap to refetch
			clear(c.m)
		}
		c.m[hash] = cachedKey{account: a, expires: now.Add(c.ttl), stampDue: due}
		c.mu.Unlock()
	}
	return a, func(ctx context.Context) { c.stamp(ctx, hash, due, now) }, nil
}

// stamp records the use at now of the key with hash when due, and marks
// its cached entry stamped. The stamp is best effort: a request never
// fails for it.
func (c *keyCache) stamp(ctx context.Context, hash string, due bool, now time.Time) {
	if !due {
		return
	}
	c.mu.Lock()
	if e, ok := c.m[hash]; ok {
		if !e.stampDue && e.expires.After(now) {
			c.mu.Unlock()
			return // a request on this process stamped it meanwhile
		}
		e.stampDue = false
		c.m[hash] = e
	}
	c.mu.Unlock()
	_ = c.find.StampKeyUse(ctx, hash, now)
}

// forgetHash drops the key with hash from the cache, so a key rotated or
// revoked on this process stops working here at once (other warm processes
// drop it within the TTL).
func (c *keyCache) forgetHash(hash string) {
	c.mu.Lock()
	delete(c.m, hash)
	c.mu.Unlock()
}

// forgetAccount drops every key of account (both modes) from the cache, so that a change
// of its settings (name, invoice prefix) is seen at once on this process;
// other warm processes see it within the TTL.
func (c *keyCache) forgetAccount(account string) {
	c.mu.Lock()
	for h, e := range c.m {
		if business.LiveID(e.account.ID) == business.LiveID(account) {
			delete(c.m, h)
		}
	}
	c.mu.Unlock()
}
