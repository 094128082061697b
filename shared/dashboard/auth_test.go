package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"

	"github.com/aws/aws-lambda-go/events"
)

func TestSignInAndOut(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("SIGN1")
	st, page, path := o.get("/dashboard")
	if st != http.StatusOK || path != "/dashboard" {
		t.Fatalf("overview: %d at %s", st, path)
	}
	mustContain(t, page, "Shop SIGN1", o.email)
}

// cookie is the value of the browser's cookie name ("" without one).
func (o *owner) cookie(name string) string {
	for _, c := range o.cookies() {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// lockOut makes business.SignInFailures wrong sign-ins at email from a
// browser that never signed in as it, so that such browsers are locked
// out, and checks that the right password from one is then refused.
func (b *board) lockOut(t *testing.T, email string) {
	t.Helper()
	attacker := b.browser()
	for i := range business.SignInFailures {
		if st, _, _ := attacker.signIn(email, "guess "+strconv.Itoa(i)); st != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i+1, st)
		}
	}
	if st, _, _ := attacker.signIn(email, testPassword); st != http.StatusTooManyRequests {
		t.Fatalf("the right password from a browser that never signed in, after the lockout: %d, want 429", st)
	}
}

// TestDeviceCookieOutlastsTheLockout: a browser that signed in holds a
// device cookie; whoever keeps the email's lockout of untrusted browsers
// renewed, the owner still signs in on it with the right password (and
// gets a new cookie), while the other browsers stay locked out. Failures
// on the device lock that device alone.
func TestDeviceCookieOutlastsTheLockout(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("DEV1")
	first := o.cookie("bizdata_device")
	if first == "" {
		t.Error("signing in set no device cookie")
	}
	if st, _, _ := o.post("/dashboard/sign-out", nil); st != http.StatusOK {
		t.Fatalf("sign out: %d", st)
	}
	for range 3 { // renewed, as an attacker would every window
		b.lockOut(t, o.email)
		b.later(business.SignInWindow)
	}
	b.lockOut(t, o.email)
	if st, _, path := o.signIn(o.email, testPassword); st != http.StatusOK || path != "/dashboard" {
		t.Fatalf("the owner's browser with its device cookie: %d at %s, want the overview", st, path)
	}
	if again := o.cookie("bizdata_device"); again == "" || again == first {
		t.Errorf("a sign-in on the device did not issue a new device cookie")
	}
	if st, _, _ := b.browser().signIn(o.email, testPassword); st != http.StatusTooManyRequests {
		t.Errorf("another browser after the owner's sign-in: %d, want 429 (the untrusted lockout holds)", st)
	}

	// The device's own failures lock it, not the other devices.
	second := b.newOwnerBrowser(o) // a second device, signed in before the guesses below
	for i := range business.SignInFailures {
		if st, _, _ := o.signIn(o.email, "guess on the device "+strconv.Itoa(i)); st != http.StatusUnauthorized {
			t.Fatalf("wrong password %d on the device: %d", i+1, st)
		}
	}
	if st, _, _ := o.signIn(o.email, testPassword); st != http.StatusTooManyRequests {
		t.Fatalf("the device after its own failures: %d, want 429", st)
	}
	if st, _, path := second.signIn(o.email, testPassword); st != http.StatusOK || path != "/dashboard" {
		t.Fatalf("another device of the owner: %d at %s", st, path)
	}
}

// newOwnerBrowser is a new browser signed in as o's owner (before o's
// email is locked out), holding its own device cookie.
func (b *board) newOwnerBrowser(o *owner) *owner {
	b.t.Helper()
	br := b.browser()
	br.email, br.password, br.acct, br.apiKey = o.email, o.password, o.acct, o.apiKey
	b.later(business.SignInWindow) // the untrusted lockout ends
	if st, body, _ := br.signIn(o.email, testPassword); st != http.StatusOK {
		b.t.Fatalf("sign in on a second browser: %d %s", st, body)
	}
	return br
}

// TestUntrustedDeviceCookies: a device cookie counts only when this
// dashboard signed it, for the email tried, and it has not expired: a
// forged one, another owner's, one altered or expired counts as no cookie,
// locked out with the other untrusted browsers.
func TestUntrustedDeviceCookies(t *testing.T) {
	b := newBoard(t)
	o, other := b.newOwner("DEV2"), b.newOwner("DEV3")
	real := o.cookie("bizdata_device")
	if real == "" {
		t.Fatal("signing in set no device cookie")
	}
	nonce, rest, _ := strings.Cut(real, ".")
	exp, sig, _ := strings.Cut(rest, ".")
	later := strconv.FormatInt(b.st.Now().Add(365*24*time.Hour).Unix(), 10)
	flipped := []byte(sig)
	if flipped[0] = 'A'; sig[0] == 'A' {
		flipped[0] = 'B'
	}
	b.lockOut(t, o.email)
	for what, value := range map[string]string{
		"another owner's":            other.cookie("bizdata_device"),
		"with its expiry extended":   nonce + "." + later + "." + sig,
		"with its signature changed": nonce + "." + exp + "." + string(flipped),
		"made up":                    strings.Repeat("A", 43) + "." + later + "." + sig,
		"unsigned":                   nonce + "." + exp,
	} {
		br := b.browser()
		br.setCookies([]*http.Cookie{{Name: "bizdata_device", Value: value, Path: "/"}})
		if st, _, _ := br.signIn(o.email, testPassword); st != http.StatusTooManyRequests {
			t.Errorf("a device cookie %s: %d, want 429", what, st)
		}
	}
	// Past its expiry, the owner's own cookie is no longer trusted.
	b.later(deviceLifetime)
	b.lockOut(t, o.email)
	if st, _, _ := o.signIn(o.email, testPassword); st != http.StatusTooManyRequests {
		t.Errorf("an expired device cookie: %d, want 429", st)
	}
}

// TestSignInClientLockout: untrusted attempts from one client are limited
// at any email: after store.SignInClientFailures failures from it (at
// emails never locked themselves), its next attempt is refused, the right
// password of an owner included, while a browser holding its device cookie
// still signs in from the same client. Owners' own sign-ins are not
// counted against their client.
func TestSignInClientLockout(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("CLIENT1")
	for range store.SignInClientFailures + 2 {
		if st, _, _ := b.browser().signIn(o.email, testPassword); st != http.StatusOK {
			t.Fatalf("an owner's sign-in from a new browser: %d", st)
		}
	}
	attacker := b.browser()
	for i := range store.SignInClientFailures {
		if st, _, _ := attacker.signIn("nobody"+strconv.Itoa(i)+"@example.com", testPassword); st != http.StatusUnauthorized {
			t.Fatalf("failure %d from the client: %d", i+1, st)
		}
	}
	st, page, _ := b.browser().signIn(o.email, testPassword)
	if st != http.StatusTooManyRequests || !strings.Contains(page, "from your network") {
		t.Fatalf("the right password from a new browser on the locked client: %d", st)
	}
	if st, _, path := o.signIn(o.email, testPassword); st != http.StatusOK || path != "/dashboard" {
		t.Fatalf("the owner's device on the locked client: %d at %s", st, path)
	}
	b.later(business.SignInWindow)
	if st, _, _ := b.browser().signIn(o.email, testPassword); st != http.StatusOK {
		t.Fatalf("a new browser a window later: %d", st)
	}
}

// TestLockedEmailSparesTheClientCount: attempts the email's lockout refuses
// are never checked, so they do not count against the client too: an owner
// retrying a locked email from an office leaves the office's other owners
// free to sign in.
func TestLockedEmailSparesTheClientCount(t *testing.T) {
	b := newBoard(t)
	locked, other := b.newOwner("LOCKED1"), b.newOwner("LOCKED2")
	b.lockOut(t, locked.email) // business.SignInFailures of the client's count, and one refused
	retrier := b.browser()
	for i := range store.SignInClientFailures {
		if st, _, _ := retrier.signIn(locked.email, testPassword); st != http.StatusTooManyRequests {
			t.Fatalf("retry %d at the locked email: %d, want 429", i+1, st)
		}
	}
	if st, page, _ := b.browser().signIn(other.email, testPassword); st != http.StatusOK {
		t.Fatalf("another owner from the same client after retries at a locked email: %d %.200s", st, page)
	}
}

// TestSignInClientIsTheSourceIP: on Lambda the client is API Gateway's
// source IP, not a header the client writes: a source IP locked out stays
// locked with any X-Forwarded-For, and another source IP signs in.
func TestSignInClientIsTheSourceIP(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("CLIENT2")
	h := app.LambdaHandler(b.board.Handler(RoutesOf(FunctionAuth)))
	signIn := func(ip, email, forwarded string) int {
		t.Helper()
		hd := map[string]string{"content-type": "application/x-www-form-urlencoded", "cookie": "bizdata_form=tok"}
		if forwarded != "" {
			hd["x-forwarded-for"] = forwarded
		}
		ev := events.APIGatewayV2HTTPRequest{RawPath: "/dashboard/sign-in", Headers: hd,
			Body: url.Values{"email": {email}, "password": {testPassword}, "csrf": {"tok"}}.Encode()}
		ev.RequestContext.HTTP.Method, ev.RequestContext.HTTP.Path, ev.RequestContext.HTTP.SourceIP = http.MethodPost, ev.RawPath, ip
		res, err := h(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode
	}
	for i := range store.SignInClientFailures {
		if st := signIn("198.51.100.7", "nobody"+strconv.Itoa(i)+"@example.com", ""); st != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i+1, st)
		}
	}
	for _, fwd := range []string{"", "198.51.100.8", "203.0.113.9, 198.51.100.8"} {
		if st := signIn("198.51.100.7", o.email, fwd); st != http.StatusTooManyRequests {
			t.Errorf("the locked source IP with X-Forwarded-For %q: %d, want 429", fwd, st)
		}
	}
	if st := signIn("198.51.100.8", o.email, ""); st != http.StatusSeeOther {
		t.Errorf("another source IP: %d, want 303 to the overview", st)
	}
}
