package business

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Key prefixes: a live key acts on the account's books, a test key on its
// test twin. Both are recognisable when leaked.
const (
	APIKeyPrefix     = "bk_live_"
	TestAPIKeyPrefix = "bk_test_"
)

// NewAPIKey returns a fresh live API key (32 random bytes) and the hash under
// which it is stored. The key itself is shown once and never stored.
func NewAPIKey() (key, hash string) { return NewModeAPIKey(true) }

// NewModeAPIKey returns a fresh key of the given mode and its hash.
func NewModeAPIKey(live bool) (key, hash string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	prefix := APIKeyPrefix
	if !live {
		prefix = TestAPIKeyPrefix
	}
	key = prefix + base64.RawURLEncoding.EncodeToString(b)
	return key, HashAPIKey(key)
}

// HashAPIKey returns the hex SHA-256 of key, the form keys are stored in.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// NewAccountID returns a random account id such as acct_3f9a0c12d4e5b678.
func NewAccountID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "acct_" + hex.EncodeToString(b)
}

// Test twins. A test key acts on its account's test twin: an account of its
// own whose id is the live id, "_test" and its generation (none for the
// first, 2, 3… after each clearing of the test data). Every record lives under
// its account's id, so nothing written in one mode is seen in the other.
const twinMark = "_test"

// TwinID returns the id of generation gen (1 for the first) of live's test
// twin.
func TwinID(live string, gen int64) string {
	if gen <= 1 {
		return live + twinMark
	}
	return live + twinMark + strconv.FormatInt(gen, 10)
}

// IsTestAccount reports whether id is a test twin's.
func IsTestAccount(id string) bool { return strings.Contains(id, twinMark) }

// LiveID returns the live account of id (id itself for a live account).
func LiveID(id string) string {
	live, _, _ := strings.Cut(id, twinMark)
	return live
}

// Livemode reports whether the account is a live one (not a test twin).
func (a Account) Livemode() bool { return !IsTestAccount(a.ID) }

// Scopes. A key may call a route when it has the route's scope, its write
// scope (a write scope implies its read), or "*".
const (
	ScopeAll      = "*"
	ScopeKeyWrite = "keys:write"
)

// Scopes lists every scope a key may be given, "*" last.
var Scopes = []string{
	"sales:read", "sales:write",
	"expenses:read", "expenses:write",
	"inventory:read", "inventory:write",
	"customers:read", "customers:write",
	"reports:read", "events:read",
	"webhooks:write", ScopeKeyWrite,
	ScopeAll,
}

// MaxAPIKeys is how many active keys (both modes together) an account may
// have.
const MaxAPIKeys = 20

// APIKey describes one key of an account, never its secret.
type APIKey struct {
	ID     string
	Name   string
	Scopes []string
	Live   bool
	// Prefix is the key's first characters ("bk_live_AbCd"), for a person to
	// recognise it; empty for a key made before keys had names.
	Prefix     string
	CreatedAt  time.Time
	LastUsedAt time.Time
	// Hash is the stored hash of the key (for the store; never shown).
	Hash string
	// Owner marks the account's owner signed in to the dashboard, which runs
	// the API's handlers as OwnerKey: no key of the registry, every scope
	// of its mode.
	Owner bool
}

// OwnerKey is how the dashboard's owner calls the API's handlers in the
// given mode: "*" scope, and the mode's reach (a test session sees and
// revokes test keys only, as a test key does).
func OwnerKey(live bool) APIKey {
	return APIKey{Name: "Dashboard", Scopes: []string{ScopeAll}, Live: live, Owner: true}
}

// Mode is "live" or "test".
func (k APIKey) Mode() string {
	if k.Live {
		return "live"
	}
	return "test"
}

// Allows reports whether the key has scope: "*", the scope itself, or the
// write scope of a read scope.
func (k APIKey) Allows(scope string) bool {
	if scope == "" {
		return true
	}
	for _, s := range k.Scopes {
		if s == ScopeAll || s == scope {
			return true
		}
		if fam, ok := strings.CutSuffix(scope, ":read"); ok && s == fam+":write" {
			return true
		}
	}
	return false
}

// Grants reports whether a key holding k's scopes may make a key with
// scopes: each of them is one k allows ("*" only from "*").
func (k APIKey) Grants(scopes []string) bool {
	for _, s := range scopes {
		if s == ScopeAll {
			if !slices.Contains(k.Scopes, ScopeAll) {
				return false
			}
			continue
		}
		if !k.Allows(s) {
			return false
		}
	}
	return true
}

// ManagesKeys reports whether the key may create and revoke keys.
func (k APIKey) ManagesKeys() bool { return k.Allows(ScopeKeyWrite) }

// KeyPrefixLength is how many characters of a key its Prefix keeps: the mode
// prefix and 4 random characters (24 bits: recognisable, not guessable).
const KeyPrefixLength = len(APIKeyPrefix) + 4

// KeyPrefix returns the recognisable start of key.
func KeyPrefix(key string) string { return key[:min(len(key), KeyPrefixLength)] }

// NewKeyID returns a random key id such as key_3f9a0c12d4e5b678.
func NewKeyID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "key_" + hex.EncodeToString(b)
}

// LegacyKeyID is the id of an account's key made before keys had ids (its
// one key): derived from the key's hash, so every reader names it alike.
func LegacyKeyID(hash string) string { return "key_" + hash[:16] }

// ValidKeyID reports whether id has the shape of a key id.
func ValidKeyID(id string) bool {
	if len(id) != len("key_")+16 || !strings.HasPrefix(id, "key_") {
		return false
	}
	for _, c := range id[len("key_"):] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// DefaultKeyName names an account's first key, and the one key of an
// account made before keys had names.
const DefaultKeyName = "Default key"

// DefaultKeySpec is the key every new account starts with: live, every
// scope.
func DefaultKeySpec() APIKey {
	return APIKey{Name: DefaultKeyName, Scopes: []string{ScopeAll}, Live: true}
}

// NewKey returns the key spec describes (name, scopes, mode), made at now
// under a fresh id, and its secret, shown this once.
func NewKey(spec APIKey, now time.Time) (APIKey, string) {
	spec.ID, spec.CreatedAt = NewKeyID(), now
	return spec.WithNewSecret()
}

// WithNewSecret returns k with a fresh secret of its mode (its hash and
// prefix), and the secret; its id, name and scopes stay.
func (k APIKey) WithNewSecret() (APIKey, string) {
	secret, hash := NewModeAPIKey(k.Live)
	k.Hash, k.Prefix = hash, KeyPrefix(secret)
	return k, secret
}

// NewKeySpec validates a key to create: a name (1 to 100 characters), at
// least one known scope (repeats dropped, in Scopes' order) and a mode of
// "live" or "test" ("" is live). Returns EINVALID naming each bad field.
func NewKeySpec(name string, scopes []string, mode string) (APIKey, error) {
	fe := FieldErrors{}
	k := APIKey{Name: strings.TrimSpace(name), Live: mode == "live" || mode == ""}
	CheckText(fe, "name", k.Name, true, 100)
	if mode != "" && mode != "live" && mode != "test" {
		fe.Add("mode", `must be "live" or "test"`)
	}
	switch {
	case len(scopes) == 0:
		fe.Add("scopes", "must list at least one scope: "+strings.Join(Scopes, ", "))
	case len(scopes) > len(Scopes):
		fe.Add("scopes", "must list at most "+itoa(len(Scopes))+" scopes")
	default:
		for _, s := range scopes {
			if !slices.Contains(Scopes, s) {
				fe.Add("scopes", "has unknown scope "+strconv.Quote(truncate(s, 40))+"; known: "+strings.Join(Scopes, ", "))
				break
			}
		}
	}
	for _, s := range Scopes {
		if slices.Contains(scopes, s) {
			k.Scopes = append(k.Scopes, s)
		}
	}
	return k, fe.Err()
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
