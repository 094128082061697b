// Package webhook sends the signed payment notification to a merchant's
// callback URL and gives receivers the verifier for it.
//
// Every delivery carries the description's `signature` header (lowercase hex
// HMAC-SHA256 of the raw body, keyed by the callback secret, present only
// when a secret is set) and the Standard Webhooks headers: `webhook-id`
// (stable across retries), `webhook-timestamp` (Unix seconds of the attempt)
// and, with a secret, `webhook-signature` ("v1," + base64 HMAC-SHA256 of
// "<id>.<timestamp>.<body>", keyed by the same secret's bytes), so a receiver
// can reject replays.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
)

// Header names.
const (
	HeaderSignature         = "signature"
	HeaderID                = "webhook-id"
	HeaderTimestamp         = "webhook-timestamp"
	HeaderStandardSignature = "webhook-signature"
)

// Sign returns the `signature` header value: lowercase hex HMAC-SHA256 of
// body keyed by secret.
func Sign(body []byte, secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// SignStandard returns the `webhook-signature` header value for one attempt:
// "v1," + base64 HMAC-SHA256 of "<id>.<timestamp>.<body>".
func SignStandard(id string, timestamp int64, body []byte, secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
