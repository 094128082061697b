package app_test

import (
	"testing"
	"time"

	"bizdata/shared/app"
)

// A rotated key must stop working within 5 s everywhere: the key cache's
// default TTL is 5 s and no longer one is accepted.
func TestKeyCacheTTL(t *testing.T) {
	t.Setenv("DYNAMODB_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("API_KEY_CACHE_TTL", "")
	c, err := app.FromEnv()
	if err != nil || c.KeyCacheTTL != 5*time.Second {
		t.Fatalf("default TTL %v (%v), want 5s", c.KeyCacheTTL, err)
	}
	for v, ok := range map[string]bool{"0s": true, "1500ms": true, "5s": true, "6s": false, "30s": false, "1m": false, "-1s": false, "x": false} {
		t.Setenv("API_KEY_CACHE_TTL", v)
		if _, err := app.FromEnv(); (err == nil) != ok {
			t.Errorf("API_KEY_CACHE_TTL=%s: err %v", v, err)
		}
	}
}
