package business

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"time"
)

// InvoiceLink is a sale's link to its hosted invoice. The sale keeps the
// token's hash and, sealed by the store, the token itself (so a reminder
// can send the link the merchant already shared); Token is set only on a
// link just made.
type InvoiceLink struct {
	Hash      string
	Sealed    string
	CreatedAt time.Time
	Token     string
}

// An invoice link's token is 32 random bytes (256 bits) in unpadded
// base64url: 43 characters a URL carries as they are. Only its SHA-256 is
// stored, so the table never holds what opens the page.
const (
	invoiceTokenBytes  = 32
	InvoiceTokenLength = 43
)

// NewInvoiceToken draws a link's token and returns it with its hash.
func NewInvoiceToken() (token, hash string) {
	b := make([]byte, invoiceTokenBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, InvoiceTokenHash(token)
}

// InvoiceTokenHash is the stored form of a token: hex SHA-256.
func InvoiceTokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// WellFormedInvoiceToken reports whether token has a token's shape. A token
// of another shape is answered as any unknown one is, but reads nothing.
func WellFormedInvoiceToken(token string) bool {
	if len(token) != InvoiceTokenLength {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	return err == nil && len(b) == invoiceTokenBytes
}
