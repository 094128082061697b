package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"bizdata/shared/business"
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
	http.Redirect(w, r, localPath(next), http.StatusSeeOther)
	return nil
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

// signIn checks an email and password. Five failures for one email within
// 15 minutes refuse further tries (429, Retry-After) until the oldest of
// them is 15 minutes old, the right password included.
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
	ok, err := s.checkPassword(r.Context(), email, r.PostForm.Get("password"))
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

// checkPassword checks owner email's password, counted against the
// lockout first (so that racing attempts cannot all be checked). Returns
// ELIMIT with RetryAfter when the email is locked out. An unknown email
// costs the same hash as a known one (VerifyPassword of "" does the work
// too).
func (s *Server) checkPassword(ctx context.Context, email, password string) (bool, error) {
	wait, err := s.store.TakeSignInAttempt(ctx, email, s.now())
	if err != nil {
		return false, err
	}
	if wait > 0 {
		mins := int(wait.Minutes()) + 1
		return false, &business.Error{Code: business.ELIMIT, RetryAfter: wait, Message: fmt.Sprintf(
			"Too many failed sign-ins for this email. Try again in %d minute%s, or set a new password with a link from your operator.", mins, plural(mins))}
	}
	owner, err := s.store.FindOwner(ctx, email)
	if err != nil && business.ErrorCode(err) != business.ENOTFOUND {
		return false, err
	}
	if !business.VerifyPassword(owner.PasswordHash, password) {
		return false, nil
	}
	if err := s.store.ClearSignInFailures(ctx, email); err != nil {
		s.log.WarnContext(ctx, "clear sign-in failures failed", "error", err.Error())
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
	ok, err := s.checkPassword(r.Context(), v.session.Email, r.PostForm.Get("current"))
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
