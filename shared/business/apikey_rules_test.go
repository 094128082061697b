package business

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// registry is a registry of keys as the store reads it: a "*" live key, a
// keys:write live key, a sales:read live key and a "*" test key.
func registry() []APIKey {
	return []APIKey{
		{ID: "key_0000000000000001", Name: "all", Scopes: []string{ScopeAll}, Live: true, Hash: "h1"},
		{ID: "key_0000000000000002", Name: "keys", Scopes: []string{ScopeKeyWrite}, Live: true, Hash: "h2"},
		{ID: "key_0000000000000003", Name: "sales", Scopes: []string{"sales:read"}, Live: true, Hash: "h3"},
		{ID: "key_0000000000000004", Name: "test", Scopes: []string{ScopeAll}, Live: false, Hash: "h4"},
	}
}

// wantCode fails t unless err is an *Error of code whose message is msg
// (any message when msg is "").
func wantCode(t *testing.T, err error, code, msg string) {
	t.Helper()
	if ErrorCode(err) != code {
		t.Fatalf("error %v has code %s, want %s", err, ErrorCode(err), code)
	}
	var e *Error
	if msg != "" && (!errors.As(err, &e) || e.Message != msg) {
		t.Fatalf("error %q, want the message %q", err.Error(), msg)
	}
}

func TestCheckKeyHeld(t *testing.T) {
	ks := registry()
	t.Run("OK", func(t *testing.T) {
		if err := CheckKeyHeld(ks, &ks[1]); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Operator", func(t *testing.T) {
		if err := CheckKeyHeld(nil, nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Owner", func(t *testing.T) {
		owner := OwnerKey(true)
		if err := CheckKeyHeld(ks, &owner); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrRotated", func(t *testing.T) {
		old := ks[1]
		old.Hash = "an older secret's hash"
		wantCode(t, CheckKeyHeld(ks, &old), EUNAUTHORIZED, "Unauthorized: Invalid API Key")
	})
	t.Run("ErrRevoked", func(t *testing.T) {
		wantCode(t, CheckKeyHeld(ks[1:], &ks[0]), EUNAUTHORIZED, "Unauthorized: Invalid API Key")
	})
}

func TestCheckCreateKey(t *testing.T) {
	ks := registry()
	t.Run("OK", func(t *testing.T) {
		if err := CheckCreateKey(ks[1], APIKey{Scopes: []string{ScopeKeyWrite}, Live: true}); err != nil {
			t.Fatal(err)
		}
		if err := CheckCreateKey(ks[0], APIKey{Scopes: []string{ScopeAll}, Live: true}); err != nil {
			t.Fatal(err)
		}
		if err := CheckCreateKey(ks[3], APIKey{Scopes: []string{"sales:write"}}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrLiveFromTestKey", func(t *testing.T) {
		wantCode(t, CheckCreateKey(ks[3], APIKey{Scopes: []string{"sales:read"}, Live: true}), EFORBIDDEN, `A test key can create only test keys (mode "test")`)
	})
	t.Run("ErrScopeItLacks", func(t *testing.T) {
		wantCode(t, CheckCreateKey(ks[2], APIKey{Scopes: []string{"sales:read", "sales:write"}}), EFORBIDDEN,
			"This API key lacks the scope sales:write, so it cannot grant it: a key creates keys only with scopes it has itself")
	})
	t.Run("ErrAllFromKeyWriter", func(t *testing.T) {
		wantCode(t, CheckCreateKey(ks[1], APIKey{Scopes: []string{ScopeAll}}), EFORBIDDEN,
			"This API key lacks the scope *, so it cannot grant it: a key creates keys only with scopes it has itself")
	})
}

func TestCheckKeyLimit(t *testing.T) {
	ks := make([]APIKey, MaxAPIKeys-1)
	if err := CheckKeyLimit(ks); err != nil {
		t.Fatalf("%d keys: %v", len(ks), err)
	}
	wantCode(t, CheckKeyLimit(append(ks, APIKey{})), ECONFLICT, "This account has 20 active API keys, the most it may have; revoke one first")
}

func TestCheckRevoke(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		ks := registry()
		gone, rest, err := CheckRevoke(&ks[0], ks[2].ID, ks)
		if err != nil {
			t.Fatal(err)
		}
		if gone.ID != ks[2].ID || len(rest) != 3 || rest[0].ID != ks[0].ID || rest[1].ID != ks[1].ID || rest[2].ID != ks[3].ID {
			t.Fatalf("revoked %s, kept %v", gone.ID, rest)
		}
		if len(registry()) != len(ks) || ks[2].ID != registry()[2].ID {
			t.Fatal("the registry read was changed")
		}
	})
	t.Run("Itself", func(t *testing.T) {
		ks := registry()
		if gone, _, err := CheckRevoke(&ks[0], ks[0].ID, ks); err != nil || gone.ID != ks[0].ID {
			t.Fatalf("revoked %s: %v", gone.ID, err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		ks := registry()
		_, _, err := CheckRevoke(&ks[0], "key_00000000000000ff", ks)
		wantCode(t, err, ENOTFOUND, "API key key_00000000000000ff not found")
	})
	t.Run("ErrTestKeySeesNoLiveKey", func(t *testing.T) {
		ks := registry()
		_, _, err := CheckRevoke(&ks[3], ks[2].ID, ks)
		wantCode(t, err, ENOTFOUND, "API key "+ks[2].ID+" not found")
	})
	t.Run("ErrScopesItLacks", func(t *testing.T) {
		ks := registry()
		_, _, err := CheckRevoke(&ks[1], ks[0].ID, ks)
		wantCode(t, err, EFORBIDDEN, "This API key cannot revoke API key "+ks[0].ID+": that key has scopes this one lacks")
	})
	t.Run("ErrLastKeyWriter", func(t *testing.T) {
		ks := registry()[1:]
		_, _, err := CheckRevoke(nil, ks[0].ID, ks)
		wantCode(t, err, ECONFLICT, "API key "+ks[0].ID+" is the last live key with the scope keys:write; create another before revoking it")
	})
	t.Run("OperatorRevokesAnyButTheLastWriter", func(t *testing.T) {
		ks := registry()
		if _, _, err := CheckRevoke(nil, ks[0].ID, ks); err != nil {
			t.Fatal(err)
		}
		if _, _, err := CheckRevoke(nil, ks[3].ID, ks); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCheckRotate(t *testing.T) {
	ks := registry()
	t.Run("OK", func(t *testing.T) {
		if i, err := CheckRotate(&ks[2], ks[2].ID, ks); err != nil || i != 2 {
			t.Fatalf("place %d: %v", i, err)
		}
	})
	t.Run("Operator", func(t *testing.T) {
		if i, err := CheckRotate(nil, ks[3].ID, ks); err != nil || i != 3 {
			t.Fatalf("place %d: %v", i, err)
		}
	})
	t.Run("ErrAnotherKey", func(t *testing.T) {
		_, err := CheckRotate(&ks[0], ks[2].ID, ks)
		wantCode(t, err, ENOTFOUND, "API key "+ks[2].ID+" not found")
	})
}

func TestNewKey(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	k, secret := NewKey(APIKey{Name: "ci", Scopes: []string{"sales:read"}}, now)
	if !ValidKeyID(k.ID) || !k.CreatedAt.Equal(now) || k.Name != "ci" || len(k.Scopes) != 1 {
		t.Fatalf("key %+v", k)
	}
	if !strings.HasPrefix(secret, TestAPIKeyPrefix) || k.Hash != HashAPIKey(secret) || k.Prefix != KeyPrefix(secret) {
		t.Fatalf("secret %q does not match the key's hash and prefix (%+v)", secret, k)
	}
	r, again := k.WithNewSecret()
	if r.ID != k.ID || r.Name != k.Name || !r.CreatedAt.Equal(k.CreatedAt) || again == secret || r.Hash != HashAPIKey(again) || r.Prefix != KeyPrefix(again) {
		t.Fatalf("rotated %+v with %q, from %+v", r, again, k)
	}
	d, secret := NewKey(DefaultKeySpec(), now)
	if d.Name != DefaultKeyName || !d.Live || !d.Allows(ScopeKeyWrite) || !strings.HasPrefix(secret, APIKeyPrefix) {
		t.Fatalf("default key %+v, secret %q", d, secret)
	}
}

func TestRetireTwin(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		retired, fresh, err := RetireTwin("acct_1", 1)
		if err != nil || retired != "acct_1_test" || fresh != "acct_1_test2" {
			t.Fatalf("retired %q, fresh %q: %v", retired, fresh, err)
		}
	})
	t.Run("ErrNoTwin", func(t *testing.T) {
		_, _, err := RetireTwin("acct_1", 0)
		wantCode(t, err, ECONFLICT, "This account has no test data: no test key was ever made")
	})
}
