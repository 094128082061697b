package business

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Owner is a person who signs in to the dashboard of one account with an
// email and a password. Owners never authenticate on the JSON API, and API
// keys never sign in to the dashboard.
type Owner struct {
	Email   string
	Account string // the live account's id
	// PasswordHash is the argon2id hash in PHC form ("" until an invited
	// owner sets a password).
	PasswordHash string
	CreatedAt    time.Time
}

// Password and session rules.
const (
	MinPasswordLength = 12
	MaxPasswordLength = 256
	// SessionIdle ends a session nobody used for this long.
	SessionIdle = 12 * time.Hour
	// SessionLifetime ends every session this long after sign-in.
	SessionLifetime = 7 * 24 * time.Hour
	// SignInFailures failed sign-ins for one email within SignInWindow
	// refuse further attempts (429) until the oldest of them is that old.
	SignInFailures = 5
	SignInWindow   = 15 * time.Minute
	// MaxSessions is how many sessions one owner keeps; a new sign-in ends
	// the oldest beyond it.
	MaxSessions = 10
	// PasswordLinkLifetime is how long a set-password link works.
	PasswordLinkLifetime = 7 * 24 * time.Hour
)

// NormalizeEmail trims and lowercases an email address and checks it.
// Returns EINVALID naming field "email".
func NormalizeEmail(email string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(email))
	addr, err := mail.ParseAddress(e)
	if err != nil || addr.Address != e || len(e) > 254 || !strings.Contains(e[strings.LastIndex(e, "@")+1:], ".") {
		return "", Invalid("email", "must be an email address such as owner@example.com")
	}
	return e, nil
}

// CheckPassword refuses a password shorter than MinPasswordLength characters
// or longer than MaxPasswordLength. Returns EINVALID naming field.
func CheckPassword(field, password string) error {
	n := utf8.RuneCountInString(password)
	switch {
	case !utf8.ValidString(password):
		return Invalid(field, "must be valid text")
	case n < MinPasswordLength:
		return Invalid(field, fmt.Sprintf("must be at least %d characters", MinPasswordLength))
	case n > MaxPasswordLength:
		return Invalid(field, fmt.Sprintf("must be at most %d characters", MaxPasswordLength))
	}
	return nil
}

// Invalid is EINVALID with one field error.
func Invalid(field, msg string) error {
	fe := FieldErrors{}
	fe.Add(field, msg)
	return fe.Err()
}

// argon2id parameters: OWASP's minimum (19 MiB, 2 passes, 1 lane), which
// takes tens of milliseconds on a Lambda of 512 MB.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024
	argonThreads = 1
	argonKeyLen  = 32
)

// HashPassword returns the argon2id hash of password in PHC string form
// ($argon2id$v=19$m=...,t=...,p=...$salt$hash), with a random salt.
func HashPassword(password string) string {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	return phc(argonMemory, argonTime, argonThreads, salt, argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen))
}

func phc(m, t uint32, p uint8, salt, sum []byte) string {
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, m, t, p, enc.EncodeToString(salt), enc.EncodeToString(sum))
}

// dummyHash is verified against when an email has no owner, so that a
// sign-in takes as long whether or not the email is known. It is
// HashPassword(dummyPassword) made once and kept as a constant: hashing it
// when the package loads would cost every function's cold start an argon2id
// hash (19 MiB, tens of milliseconds) that only a sign-in uses. A test
// checks it still has HashPassword's parameters.
const (
	dummyPassword = "not a password anyone has"
	dummyHash     = "$argon2id$v=19$m=19456,t=2,p=1$meBs7tTmy29CPSju57g5OQ$yRrMr9ctO2flkC6f837qfSzcqb14eAvVvDhYhUtzSOo"
)

// VerifyPassword reports whether password matches hash (a HashPassword
// result, with its own parameters). An empty or malformed hash matches
// nothing, after the same work as a real check.
func VerifyPassword(hash, password string) bool {
	var m, t uint32
	var p uint8
	var v int
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		VerifyPassword(dummyHash, password)
		return false
	}
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || m > 1<<20 || t == 0 || t > 10 || p == 0 {
		return false
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	want, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// NewToken returns a random 256-bit secret (a session id, a set-password
// token) in URL-safe base64, and its hash, which is all the table keeps.
func NewToken() (token, hash string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token)
}

// HashToken is the hex SHA-256 of a session id or set-password token.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Session is one signed-in browser of an owner.
type Session struct {
	Hash      string // HashToken of the cookie's id
	Email     string
	Account   string // the live account's id
	Live      bool   // the dashboard's live/test switch
	CreatedAt time.Time
	SeenAt    time.Time
}

// Expires is when s ends unless used again: SessionIdle after its last use,
// and never later than SessionLifetime after sign-in.
func (s Session) Expires() time.Time {
	idle := s.SeenAt.Add(SessionIdle)
	if abs := s.CreatedAt.Add(SessionLifetime); abs.Before(idle) {
		return abs
	}
	return idle
}

// Active reports whether s may still be used at now.
func (s Session) Active(now time.Time) bool { return now.Before(s.Expires()) }

// CSRFToken is the token every form of session s carries: derived from the
// session's id (which only its browser knows), so it needs no storage and
// changes with every sign-in.
func CSRFToken(sessionID string) string {
	sum := sha256.Sum256([]byte("csrf\x00" + sessionID))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// ValidCSRF reports whether token is the CSRF token of sessionID.
func ValidCSRF(sessionID, token string) bool {
	return subtle.ConstantTimeCompare([]byte(CSRFToken(sessionID)), []byte(token)) == 1
}

// SignInLockout returns how long a count of sign-in attempts whose failures
// happened at fails must wait before trying again (0 when it may try now):
// once limit of them fall within SignInWindow before now, until the oldest
// of those leaves the window.
func SignInLockout(fails []time.Time, now time.Time, limit int) time.Duration {
	recent := RecentSignInFailures(fails, now, limit)
	if len(recent) < limit {
		return 0
	}
	wait := recent[len(recent)-limit].Add(SignInWindow).Sub(now)
	return max(wait, time.Second)
}

// RecentSignInFailures keeps the failures within SignInWindow before now,
// oldest first, at most limit of them (the newest): all a count must keep.
func RecentSignInFailures(fails []time.Time, now time.Time, limit int) []time.Time {
	var recent []time.Time
	for _, f := range fails {
		if now.Sub(f) < SignInWindow {
			recent = append(recent, f)
		}
	}
	if len(recent) > limit {
		recent = recent[len(recent)-limit:]
	}
	return recent
}

// MakeRoomForSession returns which of an owner's sessions (hash to expiry,
// Unix seconds) stay when one more signs in at now, and the hashes of those
// the sign-in ends: the expired ones leave the list (their items expire by
// themselves), and the soonest to expire end while MaxSessions would be
// passed.
func MakeRoomForSession(sessions map[string]int64, now time.Time) (kept map[string]int64, ended []string) {
	kept = maps.Clone(sessions)
	if kept == nil {
		kept = map[string]int64{}
	}
	maps.DeleteFunc(kept, func(_ string, exp int64) bool { return exp <= now.Unix() })
	for len(kept) >= MaxSessions {
		oldest := slices.MinFunc(slices.Collect(maps.Keys(kept)), func(a, b string) int { return int(kept[a] - kept[b]) })
		delete(kept, oldest)
		ended = append(ended, oldest)
	}
	return kept, ended
}
