package business

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// APIKeyPrefix starts every API key, so a leaked key is recognisable.
const APIKeyPrefix = "bk_live_"

// NewAPIKey returns a fresh API key (32 random bytes) and the hash under which
// it is stored. The key itself is shown once and never stored.
func NewAPIKey() (key, hash string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	key = APIKeyPrefix + base64.RawURLEncoding.EncodeToString(b)
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
