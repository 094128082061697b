// Package webhook sends the signed payment notification to a merchant's
// callback URL and gives receivers the verifier for it.
//
// Every delivery carries the description's `signature` header (lowercase hex
// HMAC-SHA256 of the raw body, keyed by the callback secret, present only
// when a secret is set) and the Standard Webhooks headers: `webhook-id`
// (stable across retries), `webhook-timestamp` (Unix seconds of the attempt)
// and, with a secret, `webhook-signature` ("v1," + base64 HMAC-SHA256 of
// "<id>.<timestamp>.<body>"), so a receiver can reject replays. The
// `webhook-signature` key is what the Standard Webhooks spec and its
// libraries read from the secret (StandardKey): the decoded payload of a
// `whsec_<base64>` secret, else the secret's bytes. The `signature` header is
// always keyed by the secret exactly as entered.
//
// A delivery to a webhook endpoint (an event) carries the Standard Webhooks
// headers only, `webhook-id` being the event's id; during a secret's
// rotation `webhook-signature` holds one signature per secret,
// space-separated, the new secret's first.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
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

// StandardKey is the HMAC key of `webhook-signature` for secret, as the
// Standard Webhooks spec and its libraries read it: for a secret of the form
// "whsec_<base64>", the decoded base64 payload; for any other secret (or a
// payload that is not base64), the secret's bytes.
func StandardKey(secret string) []byte {
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		if key, err := base64.StdEncoding.DecodeString(rest); err == nil && len(key) > 0 {
			return key
		}
	}
	return []byte(secret)
}

// SignStandard returns the `webhook-signature` header value for one attempt:
// "v1," + base64 HMAC-SHA256 of "<id>.<timestamp>.<body>", keyed by
// StandardKey(secret).
func SignStandard(id string, timestamp int64, body []byte, secret string) string {
	mac := hmac.New(sha256.New, StandardKey(secret))
	mac.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
