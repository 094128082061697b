package business

import "slices"

// The rules of an account's registry of keys, decided over the registry as
// read (ks, oldest first); by is the calling key (a nil *APIKey is an
// operator's call, which the admin CLI makes).

// Sees reports whether key k may see (and revoke) key other: a live key
// every key of its account, a test key test keys only.
func (k APIKey) Sees(other APIKey) bool { return k.Live || !other.Live }

// CheckKeyHeld refuses a calling key by that is no longer in the registry
// ks (revoked or rotated through another process, whose cache still holds
// it): EUNAUTHORIZED, as the key is everywhere once the cache expires. A
// nil by is an operator; the dashboard's owner (OwnerKey) is checked by its
// session instead.
func CheckKeyHeld(ks []APIKey, by *APIKey) error {
	if by != nil && !by.Owner && !slices.ContainsFunc(ks, func(k APIKey) bool { return k.ID == by.ID && k.Hash == by.Hash }) {
		return Errorf(EUNAUTHORIZED, "Unauthorized: Invalid API Key")
	}
	return nil
}

// CheckCreateKey decides whether key by may create a key as spec describes:
// a test key creates test keys only, and a key grants only scopes it has
// itself. Returns EFORBIDDEN otherwise.
func CheckCreateKey(by, spec APIKey) error {
	if spec.Live && !by.Live {
		return Errorf(EFORBIDDEN, "A test key can create only test keys (mode \"test\")")
	}
	for _, sc := range spec.Scopes {
		if !by.Grants([]string{sc}) {
			return Errorf(EFORBIDDEN, "This API key lacks the scope %s, so it cannot grant it: a key creates keys only with scopes it has itself", sc)
		}
	}
	return nil
}

// CheckKeyLimit returns ECONFLICT when the registry ks has MaxAPIKeys keys,
// so no other may be created.
func CheckKeyLimit(ks []APIKey) error {
	if len(ks) >= MaxAPIKeys {
		return Errorf(ECONFLICT, "This account has %d active API keys, the most it may have; revoke one first", len(ks))
	}
	return nil
}

// CheckRevoke decides whether by may revoke key id of the registry ks, and
// returns that key and the registry without it. Returns ENOTFOUND when ks
// has no key id that by sees (a test key sees test keys only), EFORBIDDEN
// when the key has scopes by could not grant (a keys:write key cannot take
// away a "*" key), and ECONFLICT when it is the last live key that may
// manage keys.
func CheckRevoke(by *APIKey, id string, ks []APIKey) (APIKey, []APIKey, error) {
	i := slices.IndexFunc(ks, func(k APIKey) bool { return k.ID == id && (by == nil || by.Sees(k)) })
	if i < 0 {
		return APIKey{}, nil, Errorf(ENOTFOUND, "API key %s not found", id)
	}
	if by != nil && !by.Grants(ks[i].Scopes) {
		return APIKey{}, nil, Errorf(EFORBIDDEN, "This API key cannot revoke API key %s: that key has scopes this one lacks", id)
	}
	gone := ks[i]
	rest := slices.Delete(slices.Clone(ks), i, i+1)
	if gone.Live && gone.ManagesKeys() && !slices.ContainsFunc(rest, func(k APIKey) bool { return k.Live && k.ManagesKeys() }) {
		return APIKey{}, nil, Errorf(ECONFLICT, "API key %s is the last live key with the scope keys:write; create another before revoking it", id)
	}
	return gone, rest, nil
}

// CheckRotate decides whether by may rotate key id of the registry ks (a
// key rotates only itself) and returns its place in ks. Returns ENOTFOUND
// otherwise.
func CheckRotate(by *APIKey, id string, ks []APIKey) (int, error) {
	i := slices.IndexFunc(ks, func(k APIKey) bool { return k.ID == id && (by == nil || by.ID == id) })
	if i < 0 {
		return 0, Errorf(ENOTFOUND, "API key %s not found", id)
	}
	return i, nil
}

// RetireTwin decides a clearing of the test data of live account live,
// whose test twin is at generation gen (0: none yet), and returns the id of
// the twin it retires and of the fresh one that follows. Returns ECONFLICT
// when the account has no test twin (no test key was ever made).
func RetireTwin(live string, gen int64) (retired, fresh string, err error) {
	if gen == 0 {
		return "", "", Errorf(ECONFLICT, "This account has no test data: no test key was ever made")
	}
	return TwinID(live, gen), TwinID(live, gen+1), nil
}
