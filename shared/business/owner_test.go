package business

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestPasswordHash(t *testing.T) {
	h := HashPassword("correct horse battery")
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q is not argon2id in PHC form", h)
	}
	if h == HashPassword("correct horse battery") {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	parts := strings.Split(h, "$")
	tampered := strings.Join(append(parts[:5:5], "A"+parts[5][1:]), "$")
	for name, tc := range map[string]struct {
		hash, password string
		want           bool
	}{
		"OK":            {h, "correct horse battery", true},
		"WrongPassword": {h, "correct horse battery!", false},
		"NoHash":        {"", "correct horse battery", false},
		"Tampered":      {tampered, "correct horse battery", false},
		"Malformed":     {"$argon2id$v=19$m=x$a$b", "correct horse battery", false},
		"HugeMemory":    {"$argon2id$v=19$m=4194304,t=1,p=1$c2FsdA$aGFzaA", "x", false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := VerifyPassword(tc.hash, tc.password); got != tc.want {
				t.Fatalf("VerifyPassword = %v", got)
			}
		})
	}
}

func TestCheckPassword(t *testing.T) {
	for pw, ok := range map[string]bool{
		"short":                     false,
		"elevenchars":               false,
		"twelve chars":              true,
		"ŋŋŋŋŋŋŋŋŋŋŋŋ":              true, // 12 characters, 24 bytes
		strings.Repeat("a", 256):    true,
		strings.Repeat("a", 257):    false,
		"bad utf8 \xff\xfe padding": false,
	} {
		if err := CheckPassword("password", pw); (err == nil) != ok {
			t.Errorf("%q: %v", pw, err)
		}
	}
}

func TestNormalizeEmail(t *testing.T) {
	for in, want := range map[string]string{
		" Ama@Example.COM ":      "ama@example.com",
		"kofi+shop@mail.example": "kofi+shop@mail.example",
		"no-at-sign":             "",
		"Ama <ama@example.com>":  "",
		"ama@localhost":          "",
		"":                       "",
	} {
		got, err := NormalizeEmail(in)
		if got != want || (err != nil) != (want == "") {
			t.Errorf("%q: %q, %v", in, got, err)
		}
	}
}

func TestSessionExpires(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	s := Session{CreatedAt: t0, SeenAt: t0}
	if !s.Expires().Equal(t0.Add(SessionIdle)) {
		t.Fatalf("a fresh session expires at %v", s.Expires())
	}
	s.SeenAt = t0.Add(SessionLifetime - time.Hour)
	if !s.Expires().Equal(t0.Add(SessionLifetime)) {
		t.Fatalf("a session used near its end expires at %v, not 7 days after sign-in", s.Expires())
	}
	if s.Active(t0.Add(SessionLifetime)) || !s.Active(t0.Add(SessionLifetime-time.Second)) {
		t.Fatal("Active disagrees with Expires")
	}
}

func TestSignInLockout(t *testing.T) {
	now := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	var fails []time.Time
	for i := range SignInFailures {
		if SignInLockout(fails, now, SignInFailures) != 0 {
			t.Fatalf("locked after %d failures", i)
		}
		at := now.Add(-time.Duration(SignInFailures-i) * time.Minute)
		fails = RecentSignInFailures(append(fails, at), at, SignInFailures)
	}
	// Five failures 5, 4, 3, 2 and 1 minutes ago: locked until the oldest is
	// 15 minutes old, 10 minutes from now.
	if got := SignInLockout(fails, now, SignInFailures); got != 10*time.Minute {
		t.Fatalf("lockout %v, want 10m", got)
	}
	if got := SignInLockout(fails, now.Add(10*time.Minute), SignInFailures); got != 0 {
		t.Fatalf("still locked when the oldest failure is 15 minutes old: %v", got)
	}
	for range 20 {
		fails = RecentSignInFailures(append(fails, now), now, SignInFailures)
	}
	if len(fails) != SignInFailures {
		t.Fatalf("kept %d failures", len(fails))
	}
	// A client's count has a limit of its own.
	if SignInLockout(fails, now, SignInFailures+1) != 0 || len(RecentSignInFailures(fails, now, 2)) != 2 {
		t.Fatal("the limit is not the count's own")
	}
	csrf := CSRFToken("session-a")
	if !ValidCSRF("session-a", csrf) || ValidCSRF("session-b", csrf) || ValidCSRF("session-a", "") {
		t.Fatal("a CSRF token is not tied to its session")
	}
}

func TestMakeRoomForSession(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	t.Run("ExpiredLeave", func(t *testing.T) {
		kept, ended := MakeRoomForSession(map[string]int64{"gone": now.Unix(), "live": now.Unix() + 60}, now)
		if len(kept) != 1 || kept["live"] != now.Unix()+60 || len(ended) != 0 {
			t.Fatalf("kept %v, ended %v", kept, ended)
		}
	})
	t.Run("SoonestToExpireEnds", func(t *testing.T) {
		sessions := map[string]int64{}
		for i := range MaxSessions {
			sessions[fmt.Sprint("s", i)] = now.Unix() + int64(100-i)
		}
		kept, ended := MakeRoomForSession(sessions, now)
		if len(kept) != MaxSessions-1 || len(ended) != 1 || ended[0] != fmt.Sprint("s", MaxSessions-1) {
			t.Fatalf("kept %v, ended %v", kept, ended)
		}
		if len(sessions) != MaxSessions {
			t.Fatal("the sessions read were changed")
		}
	})
	t.Run("NoSessions", func(t *testing.T) {
		if kept, ended := MakeRoomForSession(nil, now); kept == nil || len(ended) != 0 {
			t.Fatalf("kept %v, ended %v", kept, ended)
		}
	})
}
