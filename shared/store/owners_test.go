package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
)

// ownerFixture is a fresh table with one account whose owner signs in with
// email, and a clock the test moves.
type ownerFixture struct {
	st    *store.Store
	acct  business.Account
	email string
	mu    sync.Mutex
	now   time.Time
}

func newOwnerFixture(t *testing.T) *ownerFixture {
	t.Helper()
	st, _ := testdb.NewStore(t)
	f := &ownerFixture{st: st, email: "owner@example.com", now: time.Now().UTC()}
	st.SetClock(func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now })
	a, _ := business.NewAccount("Shop", "OWNFX", "GHS", "INV")
	a, _, err := st.CreateAccountWithOwner(context.Background(), a, business.Owner{Email: f.email, PasswordHash: business.HashPassword("first password!")})
	if err != nil {
		t.Fatal(err)
	}
	f.acct = a
	return f
}

func (f *ownerFixture) advance(d time.Duration) { f.mu.Lock(); f.now = f.now.Add(d); f.mu.Unlock() }

func TestOwnerEmailAndCodeAreUnique(t *testing.T) {
	f := newOwnerFixture(t)
	ctx := context.Background()
	a, _ := business.NewAccount("Other", "OWNFX2", "GHS", "INV")
	_, _, err := f.st.CreateAccountWithOwner(ctx, a, business.Owner{Email: f.email})
	if business.ErrorCode(err) != business.ECONFLICT {
		t.Fatalf("a second owner with the same email: %v", err)
	}
	if _, err := f.st.FindAccountByCode(ctx, "OWNFX2"); business.ErrorCode(err) != business.ENOTFOUND {
		t.Fatalf("the refused sign-up left account OWNFX2 behind: %v", err)
	}
	a, _ = business.NewAccount("Other", "OWNFX", "GHS", "INV")
	if _, _, err := f.st.CreateAccountWithOwner(ctx, a, business.Owner{Email: "new@example.com"}); business.ErrorCode(err) != business.ECONFLICT {
		t.Fatalf("a taken business code: %v", err)
	}
	if _, err := f.st.FindOwner(ctx, "new@example.com"); business.ErrorCode(err) != business.ENOTFOUND {
		t.Fatalf("the refused sign-up left its owner behind: %v", err)
	}
}

func TestSessionExpiry(t *testing.T) {
	ctx := context.Background()
	t.Run("Idle", func(t *testing.T) {
		f := newOwnerFixture(t)
		id, ss, err := f.st.CreateSession(ctx, f.email)
		if err != nil {
			t.Fatal(err)
		}
		f.advance(business.SessionIdle - time.Minute)
		if err := f.st.TouchSession(ctx, ss, f.st.Now()); err != nil {
			t.Fatal(err)
		}
		f.advance(business.SessionIdle - time.Minute) // used a moment ago: still on
		if _, err := f.st.FindSession(ctx, id); err != nil {
			t.Fatalf("a session used 12 h - 1 min ago: %v", err)
		}
		f.advance(2 * time.Minute)
		if _, err := f.st.FindSession(ctx, id); business.ErrorCode(err) != business.EUNAUTHORIZED {
			t.Fatalf("a session idle for 12 h + 1 min: %v", err)
		}
	})
	t.Run("Absolute", func(t *testing.T) {
		f := newOwnerFixture(t)
		id, ss, err := f.st.CreateSession(ctx, f.email)
		if err != nil {
			t.Fatal(err)
		}
		for f.st.Now().Sub(ss.CreatedAt) < business.SessionLifetime-time.Hour {
			f.advance(time.Hour)
			got, err := f.st.FindSession(ctx, id)
			if err != nil {
				t.Fatalf("a session used every hour, %v after sign-in: %v", f.st.Now().Sub(ss.CreatedAt), err)
			}
			if err := f.st.TouchSession(ctx, got, f.st.Now()); err != nil {
				t.Fatal(err)
			}
		}
		f.advance(time.Hour + time.Second)
		if _, err := f.st.FindSession(ctx, id); business.ErrorCode(err) != business.EUNAUTHORIZED {
			t.Fatalf("a session 7 days after sign-in: %v", err)
		}
	})
}

func TestSessionEnds(t *testing.T) {
	ctx := context.Background()
	f := newOwnerFixture(t)
	a, sa, _ := f.st.CreateSession(ctx, f.email)
	b, sb, _ := f.st.CreateSession(ctx, f.email)
	c, _, _ := f.st.CreateSession(ctx, f.email)

	if err := f.st.EndSession(ctx, sa); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.FindSession(ctx, a); business.ErrorCode(err) != business.EUNAUTHORIZED {
		t.Fatalf("a signed-out session: %v", err)
	}
	if err := f.st.TouchSession(ctx, sa, f.st.Now()); business.ErrorCode(err) != business.EUNAUTHORIZED {
		t.Fatalf("touching a signed-out session brought it back: %v", err)
	}
	// A password change keeps the session that made it and ends the others.
	if err := f.st.SetPassword(ctx, f.email, business.HashPassword("second password!"), sb.Hash); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.FindSession(ctx, b); err != nil {
		t.Fatalf("the session that changed the password: %v", err)
	}
	if _, err := f.st.FindSession(ctx, c); business.ErrorCode(err) != business.EUNAUTHORIZED {
		t.Fatalf("another session after a password change: %v", err)
	}
	// A set-password link ends them all.
	token, err := f.st.CreatePasswordLink(ctx, f.email)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.UsePasswordLink(ctx, token, business.HashPassword("third password!!")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.FindSession(ctx, b); business.ErrorCode(err) != business.EUNAUTHORIZED {
		t.Fatalf("a session after a set-password link was used: %v", err)
	}
	// An expired link does nothing.
	token, _ = f.st.CreatePasswordLink(ctx, f.email)
	f.advance(business.PasswordLinkLifetime + time.Second)
	if _, err := f.st.UsePasswordLink(ctx, token, business.HashPassword("fourth password!")); business.ErrorCode(err) != business.ENOTFOUND {
		t.Fatalf("an expired link: %v", err)
	}
	if o, _ := f.st.FindOwner(ctx, f.email); !business.VerifyPassword(o.PasswordHash, "third password!!") {
		t.Fatal("an expired link changed the password")
	}
}

// TestSessionsPerOwnerAreBounded: sign-ins beyond MaxSessions end the
// oldest sessions, so the owner item stays small.
func TestSessionsPerOwnerAreBounded(t *testing.T) {
	ctx := context.Background()
	f := newOwnerFixture(t)
	var ids []string
	for range business.MaxSessions + 2 {
		id, _, err := f.st.CreateSession(ctx, f.email)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		f.advance(time.Second)
	}
	for i, id := range ids {
		_, err := f.st.FindSession(ctx, id)
		if ended := i < 2; ended != (err != nil) {
			t.Errorf("session %d: ended %v, error %v", i, ended, err)
		}
	}
}

// TestSignInAttemptsRacing: attempts racing each other are counted one by
// one, so no more than business.SignInFailures of them get through in a
// window, however many arrive at once.
func TestSignInAttemptsRacing(t *testing.T) {
	ctx := context.Background()
	f := newOwnerFixture(t)
	x := store.EmailSignIns("x@example.com")
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 3 * business.SignInFailures {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wait, err := f.st.TakeSignInAttempt(ctx, x, f.st.Now())
			if err != nil {
				t.Error(err)
			}
			if wait == 0 {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if allowed != business.SignInFailures {
		t.Fatalf("%d of %d racing attempts were let through, want %d", allowed, 3*business.SignInFailures, business.SignInFailures)
	}
	fails, err := f.st.SignInFailures(ctx, x)
	if err != nil || len(fails) != business.SignInFailures {
		t.Fatalf("recorded %d failures (%v)", len(fails), err)
	}
	if other, _ := f.st.TakeSignInAttempt(ctx, store.EmailSignIns("y@example.com"), f.st.Now()); other != 0 {
		t.Fatalf("another email is locked out: %v", other)
	}
	f.advance(business.SignInWindow)
	if wait, _ := f.st.TakeSignInAttempt(ctx, x, f.st.Now()); wait != 0 {
		t.Fatalf("still locked out a window later: %v", wait)
	}
	if err := f.st.ClearSignInFailures(ctx, x); err != nil {
		t.Fatal(err)
	}
	if fails, _ := f.st.SignInFailures(ctx, x); len(fails) != 0 {
		t.Fatalf("after a clear: %v", fails)
	}
}

// TestSignInCountsApart: an email's count of untrusted attempts, a device
// cookie's count at the same email and a client's count lock apart; a
// client locks after store.SignInClientFailures, and a returned attempt
// leaves the client's other failures counted.
func TestSignInCountsApart(t *testing.T) {
	ctx := context.Background()
	f := newOwnerFixture(t)
	email, device := store.EmailSignIns(f.email), store.DeviceSignIns(f.email, "nonce-1")
	for range business.SignInFailures {
		if wait, err := f.st.TakeSignInAttempt(ctx, email, f.st.Now()); wait != 0 || err != nil {
			t.Fatalf("untrusted attempt: wait %v, %v", wait, err)
		}
	}
	if wait, _ := f.st.TakeSignInAttempt(ctx, email, f.st.Now()); wait == 0 {
		t.Fatal("the email's untrusted attempts are not locked after the limit")
	}
	if wait, err := f.st.TakeSignInAttempt(ctx, device, f.st.Now()); wait != 0 || err != nil {
		t.Fatalf("the device is locked by the email's untrusted failures: %v, %v", wait, err)
	}
	if wait, _ := f.st.TakeSignInAttempt(ctx, store.DeviceSignIns(f.email, "nonce-2"), f.st.Now()); wait != 0 {
		t.Fatal("another device is locked")
	}

	client := store.ClientSignIns("192.0.2.7")
	at := f.st.Now()
	for i := range store.SignInClientFailures {
		if wait, err := f.st.TakeSignInAttempt(ctx, client, at); wait != 0 || err != nil {
			t.Fatalf("client attempt %d: wait %v, %v", i+1, wait, err)
		}
	}
	if wait, _ := f.st.TakeSignInAttempt(ctx, client, at); wait == 0 {
		t.Fatal("the client is not locked after its limit")
	}
	if wait, _ := f.st.TakeSignInAttempt(ctx, store.ClientSignIns("192.0.2.8"), at); wait != 0 {
		t.Fatal("another client is locked")
	}
	if err := f.st.ReturnSignInAttempt(ctx, client, at); err != nil {
		t.Fatal(err)
	}
	if fails, _ := f.st.SignInFailures(ctx, client); len(fails) != store.SignInClientFailures-1 {
		t.Fatalf("after one attempt returned the client has %d failures, want %d", len(fails), store.SignInClientFailures-1)
	}
}

// TestOwnerAccountMakesTheTwinOnce: the first switch to test data makes the
// account's test twin, as its first test key would, and later ones find it.
func TestOwnerAccountMakesTheTwinOnce(t *testing.T) {
	ctx := context.Background()
	f := newOwnerFixture(t)
	var wg sync.WaitGroup
	got := make([]business.Account, 4)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := f.st.OwnerAccount(ctx, f.acct.ID, false)
			if err != nil {
				t.Error(err)
			}
			got[i] = a
		}()
	}
	wg.Wait()
	for _, a := range got {
		if a.ID != business.TwinID(f.acct.ID, 1) || a.Name != "Shop" {
			t.Fatalf("test account %+v", a)
		}
	}
	k, _, err := f.st.CreateKey(ctx, f.acct.ID, nil, business.APIKey{Name: "t", Scopes: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := f.st.FindAccountByKeyHash(ctx, k.Hash)
	if err != nil || a.ID != got[0].ID {
		t.Fatalf("a test key acts on %s, the dashboard on %s (%v)", a.ID, got[0].ID, err)
	}
	live, err := f.st.OwnerAccount(ctx, f.acct.ID, true)
	if err != nil || live.ID != f.acct.ID {
		t.Fatalf("live account %+v, %v", live, err)
	}
}

// TestOnlyTheNewestPasswordLinkWorks: a newer link, or a password change,
// revokes the owner's earlier set-password link.
func TestOnlyTheNewestPasswordLinkWorks(t *testing.T) {
	ctx := context.Background()
	f := newOwnerFixture(t)
	first, err := f.st.CreatePasswordLink(ctx, f.email)
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.st.CreatePasswordLink(ctx, f.email)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.PasswordLinkEmail(ctx, first); business.ErrorCode(err) != business.ENOTFOUND {
		t.Fatalf("the older link after a newer one: %v", err)
	}
	if err := f.st.SetPassword(ctx, f.email, business.HashPassword("changed password"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.UsePasswordLink(ctx, second, business.HashPassword("link password!")); business.ErrorCode(err) != business.ENOTFOUND {
		t.Fatalf("a link after a password change: %v", err)
	}
	third, _ := f.st.CreatePasswordLink(ctx, f.email)
	if _, err := f.st.UsePasswordLink(ctx, third, business.HashPassword("link password!")); err != nil {
		t.Fatalf("the newest link: %v", err)
	}
	if o, _ := f.st.FindOwner(ctx, f.email); !business.VerifyPassword(o.PasswordHash, "link password!") {
		t.Fatal("the newest link did not set the password")
	}
}
