package store

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
)

// A link's token is kept sealed beside its hash, so that a reminder can send
// the link the merchant already shared rather than replace it. The key
// derives from the deployment's cursor secret (CURSOR_SECRET): the table
// alone opens no invoice.

func (s *Store) linkSealKey() []byte {
	if len(s.cursorSecret) == 0 {
		return nil
	}
	mac := hmac.New(sha256.New, s.cursorSecret)
	mac.Write([]byte("invoice link token"))
	return mac.Sum(nil)
}

// sealToken returns token sealed with AES-GCM, or "" when the store has no
// secret to seal with.
func (s *Store) sealToken(token string) string {
	k := s.linkSealKey()
	if k == nil {
		return ""
	}
	block, _ := aes.NewCipher(k) // a 32-byte key is always valid
	gcm, _ := cipher.NewGCM(block)
	nonce := make([]byte, gcm.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(gcm.Seal(nonce, nonce, []byte(token), nil))
}

// openToken returns the token sealed, or "" when it cannot be opened (no
// secret, or another deployment's secret).
func (s *Store) openToken(sealed string) string {
	k := s.linkSealKey()
	b, err := base64.RawURLEncoding.DecodeString(sealed)
	if k == nil || err != nil {
		return ""
	}
	block, _ := aes.NewCipher(k)
	gcm, _ := cipher.NewGCM(block)
	if len(b) < gcm.NonceSize() {
		return ""
	}
	plain, err := gcm.Open(nil, b[:gcm.NonceSize()], b[gcm.NonceSize():], nil)
	if err != nil {
		return ""
	}
	return string(plain)
}
