package dashboard

import (
	"crypto/hmac"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
)

// authForm is what the signed-out pages show: a form's token, what was sent
// (never the password), and why it was refused.
type authForm struct {
	CSRF   string
	Next   string
	Token  string // the set-password link's token
	Email  string
	Values url.Values
}

// formToken returns the token the signed-out forms carry: before there is a
// session, a random value in a cookie that the form must repeat (a
// cross-site page can send the cookie but cannot read it).
func (s *Server) formToken(w http.ResponseWriter, r *http.Request) string {
	if t := s.cookie(r, "form"); len(t) == 43 {
		return t
	}
	t, _ := business.NewToken()
	s.setCookie(w, "form", t, 3600)
	return t
}

// readAuthForm parses a signed-out form and checks its token. It answers
// the refusal itself and returns false when the form cannot be used.
func (s *Server) readAuthForm(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		s.renderError(w, r, nil, http.StatusBadRequest, "This form could not be read; reload the page and try again.")
		return false
	}
	t := s.cookie(r, "form")
	if t == "" || t != r.PostForm.Get("csrf") {
		s.renderError(w, r, nil, http.StatusForbidden, "This form has expired or did not come from this dashboard; reload the page and try again.")
		return false
	}
	return true
}

// renderAuth draws a signed-out page (sign-in, sign-up, set-password).
func (s *Server) renderAuth(w http.ResponseWriter, r *http.Request, name, title string, status int, f authForm, err error, notice string) {
	f.CSRF = s.formToken(w, r)
	vw := view{Title: title, Path: r.URL.RequestURI(), Data: f, SignUp: s.cfg.SignUp, Notice: notice}
	if err != nil {
		vw.Error = businessMessage(err)
		if be, ok := err.(*business.Error); ok {
			vw.Fields = be.Fields
		}
	}
	if werr := s.write(w, name, vw, status); werr != nil {
		s.renderFailure(w, r, nil, werr)
	}
}

// startSession signs owner email in on this browser and goes to next.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, email, next string) error {
	s.endCookieSession(r)
	id, _, err := s.store.CreateSession(r.Context(), email)
	if err != nil {
		return err
	}
	s.setCookie(w, "session", id, int(business.SessionLifetime.Seconds()))
	s.issueDevice(w, email)
	http.Redirect(w, r, localPath(next), http.StatusSeeOther)
	return nil
}

// deviceLifetime is how long a device cookie keeps its browser out of the
// lockout of untrusted browsers; every sign-in on it issues a new one.
const deviceLifetime = 90 * 24 * time.Hour

// issueDevice gives this browser, which has just proved owner email's
// password (or set-password link), a device cookie: nonce.expiry.signature,
// signed over email too, so that it stands for that email only (the email
// is not in it). Its sign-ins are then counted under the cookie's own
// lockout, which failures made elsewhere never fill. A browser keeps one,
// for the email it last signed in as.
func (s *Server) issueDevice(w http.ResponseWriter, email string) {
	nonce, _ := business.NewToken()
	exp := strconv.FormatInt(s.now().Add(deviceLifetime).Unix(), 10)
	sig := s.store.DeviceSignature(email, nonce, exp)
	if sig == nil {
		return
	}
	s.setCookie(w, "device", nonce+"."+exp+"."+base64.RawURLEncoding.EncodeToString(sig), int(deviceLifetime.Seconds()))
}

// trustedDevice returns the nonce of the request's device cookie when it
// is valid for email: signed by this deployment for this email and not
// expired. Otherwise (no cookie, another email's, forged, expired) it
// returns "", and the attempt is an untrusted one.
func (s *Server) trustedDevice(r *http.Request, email string) string {
	nonce, rest, _ := strings.Cut(s.cookie(r, "device"), ".")
	exp, sig, _ := strings.Cut(rest, ".")
	at, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || len(nonce) != 43 || s.now().Unix() >= at {
		return ""
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	want := s.store.DeviceSignature(email, nonce, exp)
	if err != nil || want == nil || !hmac.Equal(got, want) {
		return ""
	}
	return nonce
}

// clientOf is the client a request came from, as the sign-in lockout
// counts it: API Gateway's source IP on AWS (the Lambda adapter makes it
// the request's RemoteAddr), the peer's address on the devserver; never a
// header the client writes (X-Forwarded-For). An IPv6 client counts by its
// /64, which one client usually holds whole.
func clientOf(r *http.Request) string {
	host := r.RemoteAddr
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	if ip = ip.Unmap(); ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// endCookieSession ends the session this browser's cookie still holds, if
// any, before it signs in again (perhaps as another owner): the old
// session must not outlive its cookie.
func (s *Server) endCookieSession(r *http.Request) {
	old := s.cookie(r, "session")
	if old == "" {
		return
	}
	if ss, err := s.store.FindSession(r.Context(), old); err == nil {
		if err := s.store.EndSession(r.Context(), ss); err != nil {
			s.log.WarnContext(r.Context(), "ending the replaced session failed", "error", err.Error())
		}
	}
}

func signInPage(s *Server, w http.ResponseWriter, r *http.Request) {
	s.renderAuth(w, r, "sign-in", "Sign in", http.StatusOK, authForm{Next: localPath(r.URL.Query().Get("next"))}, nil, s.takeNotice(w, r))
}

// errSignIn is the one answer to a wrong email or password: which of the
// two was wrong is not told.
var errSignIn = business.Errorf(business.EUNAUTHORIZED, "That email and password do not match an owner's sign-in.")

// signIn checks an email and password, under the lockouts checkPassword
// applies; a refused try answers 429 with Retry-After, the right password
// included.
func signIn(s *Server, w http.ResponseWriter, r *http.Request) {
	if !s.readAuthForm(w, r) {
		return
	}
	f := authForm{Next: localPath(r.PostForm.Get("next")), Email: r.PostForm.Get("email")}
	fail := func(status int, err error) { s.renderAuth(w, r, "sign-in", "Sign in", status, f, err, "") }
	email, err := business.NormalizeEmail(r.PostForm.Get("email"))
	if err != nil {
		fail(http.StatusBadRequest, err)
		return
	}
	ok, err := s.checkPassword(r, email, r.PostForm.Get("password"))
	switch {
	case business.ErrorCode(err) == business.ELIMIT:
		w.Header().Set("Retry-After", retryAfter(err.(*business.Error).RetryAfter))
		fail(http.StatusTooManyRequests, err)
		return
	case err != nil:
		s.renderFailure(w, r, nil, err)
		return
	case !ok:
		fail(http.StatusUnauthorized, errSignIn)
		return
	}
	if err := s.startSession(w, r, email, f.Next); err != nil {
		s.renderFailure(w, r, nil, err)
	}
}

// signInLimit is one lockout a sign-in attempt is counted under, and what
// a refused attempt is told.
type signInLimit struct {
	count   store.SignInCount
	refusal string // with the wait
}

// checkPassword checks owner email's password, counted first (so that
// racing attempts cannot all be checked) under the lockouts that apply to
// the request's browser. A browser holding a valid device cookie for email
// (one that has signed in as it) is counted under the cookie's own lockout
// alone: failures made elsewhere never lock it. Any other attempt is
// counted under the email's lockout of untrusted browsers and under its
// client's (store.SignInClientFailures, at any email). Five failures within
// 15 minutes lock the device or the email until the oldest of them is 15
// minutes old. Returns ELIMIT with RetryAfter when locked out. An unknown
// email costs the same hash as a known one (VerifyPassword of "" does the
// work too).
func (s *Server) checkPassword(r *http.Request, email, password string) (bool, error) {
	ctx, at := r.Context(), s.now()
	device := s.trustedDevice(r, email)
	limits := []signInLimit{{store.DeviceSignIns(email, device),
		"Too many failed sign-ins on this browser. Try again in %s, or set a new password with a link from your operator."}}
	if device == "" {
		limits = []signInLimit{
			{store.ClientSignIns(clientOf(r)), "Too many failed sign-ins from your network. Try again in %s, or sign in on a browser you have signed in on before."},
			{store.EmailSignIns(email), "Too many failed sign-ins for this email. Try again in %s, sign in on a browser you have signed in on before, or set a new password with a link from your operator."},
		}
	}
	for i, l := range limits {
		wait, err := s.store.TakeSignInAttempt(ctx, l.count, at)
		if err != nil {
			return false, err
		}
		if wait > 0 {
			// Refused without a check: the counts before this one take
			// back the attempt they took, so an owner retrying a locked
			// email does not use up the client's count too.
			for _, taken := range limits[:i] {
				if err := s.store.ReturnSignInAttempt(ctx, taken.count, at); err != nil {
					s.log.WarnContext(ctx, "return sign-in attempt failed", "error", err.Error())
				}
			}
			mins := int(wait.Minutes()) + 1
			return false, &business.Error{Code: business.ELIMIT, RetryAfter: wait,
				Message: fmt.Sprintf(l.refusal, fmt.Sprintf("%d minute%s", mins, plural(mins)))}
		}
	}
	owner, err := s.store.FindOwner(ctx, email)
	if err != nil && business.ErrorCode(err) != business.ENOTFOUND {
		return false, err
	}
	if !business.VerifyPassword(owner.PasswordHash, password) {
		return false, nil
	}
	// The owner's own attempt: the device's or the email's failures are
	// cleared; the client's count takes back this attempt only, so that an
	// owner signing in cannot clear what others tried from the same client.
	if err := s.store.ClearSignInFailures(ctx, limits[len(limits)-1].count); err != nil {
		s.log.WarnContext(ctx, "clear sign-in failures failed", "error", err.Error())
	}
	if device == "" {
		if err := s.store.ReturnSignInAttempt(ctx, limits[0].count, at); err != nil {
			s.log.WarnContext(ctx, "return sign-in attempt failed", "error", err.Error())
		}
	}
	return true, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func signUpPage(s *Server, w http.ResponseWriter, r *http.Request) {
	if !s.cfg.SignUp {
		s.renderError(w, r, nil, http.StatusNotFound, "This dashboard does not take sign-ups; ask your operator for an invitation.")
		return
	}
	s.renderAuth(w, r, "sign-up", "Create an account", http.StatusOK, authForm{}, nil, "")
}

// signUp makes a new account and its owner, signs the owner in and shows
// the account's first API key, once.
func signUp(s *Server, w http.ResponseWriter, r *http.Request) {
	if !s.cfg.SignUp {
		s.renderError(w, r, nil, http.StatusNotFound, "This dashboard does not take sign-ups; ask your operator for an invitation.")
		return
	}
	if !s.readAuthForm(w, r) {
		return
	}
	form := r.PostForm
	f := authForm{Values: form}
	fail := func(err error) {
		f.Values = url.Values{}
		for k, v := range form {
			if k != "password" && k != "csrf" {
				f.Values[k] = v
			}
		}
		s.renderAuth(w, r, "sign-up", "Create an account", statusOf(err), f, err, "")
	}
	fe := business.FieldErrors{}
	a, err := business.NewAccount(form.Get("business_name"), form.Get("business_code"), form.Get("currency"), form.Get("invoice_prefix"))
	if be, ok := err.(*business.Error); ok {
		for k, m := range be.Fields {
			if k == "name" {
				k = "business_name"
			}
			fe.Add(k, m)
		}
	}
	tz := strings.TrimSpace(form.Get("timezone"))
	if tz == "" {
		tz = business.DefaultTimezone
	}
	if _, err := business.LoadTimezone(tz); err != nil {
		fe.Add("timezone", "must be an IANA timezone such as Africa/Accra")
	}
	email, err := business.NormalizeEmail(form.Get("email"))
	if err != nil {
		fe.Add("email", err.(*business.Error).Fields["email"])
	}
	if err := business.CheckPassword("password", form.Get("password")); err != nil {
		fe.Add("password", err.(*business.Error).Fields["password"])
	}
	if err := fe.Err(); err != nil {
		fail(err)
		return
	}
	a.Timezone = tz
	a, key, err := s.store.CreateAccountWithOwner(r.Context(), a, business.Owner{Email: email, PasswordHash: business.HashPassword(form.Get("password"))})
	if err != nil {
		fail(err)
		return
	}
	s.endCookieSession(r)
	id, ss, err := s.store.CreateSession(r.Context(), email)
	if err != nil {
		s.renderFailure(w, r, nil, err)
		return
	}
	s.setCookie(w, "session", id, int(business.SessionLifetime.Seconds()))
	s.issueDevice(w, email)
	v := &visit{session: ss, csrf: business.CSRFToken(id), acct: a,
		notice: fmt.Sprintf("Welcome, %s. Your account is ready.", a.Name),
		shown:  &shownSecret{Label: "Your first live API key (" + a.Key.Name + "). Copy it now: it is not shown again.", Value: key}}
	if a, err := s.store.OwnerAccount(r.Context(), a.ID, true); err == nil {
		v.acct = a
	}
	if err := developersPage(s, w, r, v); err != nil {
		s.renderFailure(w, r, v, err)
	}
}

func setPasswordPage(s *Server, w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	email, err := s.store.PasswordLinkEmail(r.Context(), token)
	if err != nil {
		s.renderFailure(w, r, nil, err)
		return
	}
	s.renderAuth(w, r, "set-password", "Set your password", http.StatusOK, authForm{Token: token, Email: email}, nil, "")
}

// setPassword uses a one-time link: it sets the owner's password, ends every
// session the owner had, and signs this browser in.
func setPassword(s *Server, w http.ResponseWriter, r *http.Request) {
	if !s.readAuthForm(w, r) {
		return
	}
	token := r.PostForm.Get("token")
	email, err := s.store.PasswordLinkEmail(r.Context(), token)
	if err != nil {
		s.renderFailure(w, r, nil, err)
		return
	}
	pw := r.PostForm.Get("password")
	if err := checkNewPassword(pw, r.PostForm.Get("confirm")); err != nil {
		s.renderAuth(w, r, "set-password", "Set your password", http.StatusBadRequest, authForm{Token: token, Email: email}, err, "")
		return
	}
	if _, err := s.store.UsePasswordLink(r.Context(), token, business.HashPassword(pw)); err != nil {
		s.renderFailure(w, r, nil, err)
		return
	}
	if err := s.startSession(w, r, email, "/dashboard"); err != nil {
		s.renderFailure(w, r, nil, err)
	}
}

// checkNewPassword checks a new password and its confirmation.
func checkNewPassword(pw, confirm string) error {
	if err := business.CheckPassword("password", pw); err != nil {
		return err
	}
	if pw != confirm {
		return business.Invalid("confirm", "must repeat the new password exactly")
	}
	return nil
}

// changePassword sets a new password for the signed-in owner, who must give
// the current one, and ends every other session of the owner.
func changePassword(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	// The current password is checked as a sign-in is, lockout included,
	// so a stolen session cannot guess it.
	ok, err := s.checkPassword(r, v.session.Email, r.PostForm.Get("current"))
	if err != nil {
		return err
	}
	if !ok {
		return business.Invalid("current", "is not your current password")
	}
	pw := r.PostForm.Get("password")
	if err := checkNewPassword(pw, r.PostForm.Get("confirm")); err != nil {
		return err
	}
	if err := s.store.SetPassword(r.Context(), v.session.Email, business.HashPassword(pw), v.session.Hash); err != nil {
		return err
	}
	return s.done(w, r, "/dashboard/settings", "Password changed; every other session has been signed out")
}
