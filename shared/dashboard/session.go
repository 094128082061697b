package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"bizdata/shared/business"
)

// visit is one signed-in request: the session, the account it acts on (the
// live account or, in test mode, its test twin) and what a page shows
// besides its data.
type visit struct {
	session business.Session
	acct    business.Account
	csrf    string
	// err is the API's refusal of the form just sent, shown above the page
	// drawn again; form holds what was sent, to fill the fields again.
	err  error
	form url.Values
	// shown is a secret shown once (a new API key, an endpoint's signing
	// secret), never stored by the dashboard.
	shown *shownSecret
	// notice is the outcome of the last change (from the redirect after it).
	notice string
}

// shownSecret is a secret a page shows once, with what it is.
type shownSecret struct {
	Label string
	Value string
}

// Cookie names: with the __Host- prefix (Secure, Path=/, no Domain) on
// HTTPS; plain names on the devserver's HTTP.
func (s *Server) cookieName(base string) string {
	if s.cfg.PlainHTTP {
		return "bizdata_" + base
	}
	return "__Host-" + base
}

// setCookie sets a dashboard cookie: HttpOnly, SameSite=Lax, Path=/, Secure
// unless on the devserver. maxAge < 0 deletes it.
func (s *Server) setCookie(w http.ResponseWriter, base, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(base), Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: !s.cfg.PlainHTTP, SameSite: http.SameSiteLaxMode})
}

func (s *Server) cookie(r *http.Request, base string) string {
	c, err := r.Cookie(s.cookieName(base))
	if err != nil {
		return ""
	}
	return c.Value
}

// maxFormBytes bounds a form's body; the largest form (an endpoint's event
// list) is well under it.
const maxFormBytes = 64 << 10

// touchEvery is how stale a session's last use may be before a request
// records it again: one write per session per five minutes at most.
const touchEvery = 5 * time.Minute

// serveSignedIn serves rt for the session of the request's cookie. Without
// a live session, a GET goes to the sign-in page (and back after it); a
// POST without the session's CSRF token is refused (403) before anything
// changes.
func (s *Server) serveSignedIn(w http.ResponseWriter, r *http.Request, rt Route) {
	id := s.cookie(r, "session")
	if id == "" {
		s.toSignIn(w, r)
		return
	}
	ss, err := s.store.FindSession(r.Context(), id)
	if err != nil {
		if business.ErrorCode(err) == business.EUNAUTHORIZED {
			s.setCookie(w, "session", "", -1)
			s.toSignIn(w, r)
			return
		}
		s.renderFailure(w, r, nil, err)
		return
	}
	v := &visit{session: ss, csrf: business.CSRFToken(id), notice: s.takeNotice(w, r)}
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil {
			s.renderError(w, r, nil, http.StatusBadRequest, "This form could not be read; reload the page and try again.")
			return
		}
		if !business.ValidCSRF(id, r.PostForm.Get("csrf")) {
			s.renderError(w, r, nil, http.StatusForbidden, "This form has expired or did not come from this dashboard; reload the page and try again.")
			return
		}
	}
	if s.now().Sub(ss.SeenAt) > touchEvery {
		if err := s.store.TouchSession(r.Context(), ss, s.now()); err != nil {
			if business.ErrorCode(err) == business.EUNAUTHORIZED {
				s.setCookie(w, "session", "", -1)
				s.toSignIn(w, r)
				return
			}
			s.log.WarnContext(r.Context(), "session touch failed", "error", err.Error())
		}
	}
	// A test session's account is found through the live one's, so a page
	// reads it itself only for a live session.
	if !rt.ownAccount || !ss.Live || rt.page == nil {
		if v.acct, err = s.store.OwnerAccount(r.Context(), ss.Account, ss.Live); err != nil {
			s.renderFailure(w, r, nil, err)
			return
		}
	}
	if rt.page != nil {
		if err := rt.page(s, w, r, v); err != nil {
			s.renderFailure(w, r, v, err)
		}
		return
	}
	err = rt.action(s, w, r, v)
	var be *business.Error
	if err != nil && errors.As(err, &be) && statusOf(err) < 500 && be.Code != business.ENOTFOUND {
		// The API refused the change: the form's page again, with why.
		v.err, v.form = err, r.PostForm
		w = &statusOverride{ResponseWriter: w, status: statusOf(err)}
		if be.RetryAfter > 0 {
			w.Header().Set("Retry-After", retryAfter(be.RetryAfter))
		}
		err = rt.back(s, w, r, v)
	}
	if err != nil {
		s.renderFailure(w, r, v, err)
	}
}

// statusOverride answers with status whatever status the page writes: a
// page drawn again after a refusal answers the refusal's status.
type statusOverride struct {
	http.ResponseWriter
	status int
}

func (w *statusOverride) WriteHeader(int) { w.ResponseWriter.WriteHeader(w.status) }

// toSignIn sends a request without a live session to the sign-in page: a
// GET with the page to come back to.
func (s *Server) toSignIn(w http.ResponseWriter, r *http.Request) {
	to := "/dashboard/sign-in"
	if r.Method == http.MethodGet && r.URL.Path != "/dashboard" {
		to += "?next=" + url.QueryEscape(r.URL.RequestURI())
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// localPath returns p when it is a dashboard path of this site (so a
// redirect to it cannot leave the site), else "/dashboard".
func localPath(p string) string {
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(p, "/dashboard") ||
		strings.HasPrefix(p, "//") || strings.Contains(p, "\\") || strings.HasPrefix(p, "/dashboard/sign-") {
		return "/dashboard"
	}
	return p
}

// done ends a change: 303 to the page to show next, with notice shown
// there once.
func (s *Server) done(w http.ResponseWriter, r *http.Request, to, notice string) error {
	if notice != "" {
		s.setCookie(w, "notice", url.QueryEscape(notice), 60)
	}
	http.Redirect(w, r, localPath(to), http.StatusSeeOther)
	return nil
}

// takeNotice returns the notice set by the last change, once.
func (s *Server) takeNotice(w http.ResponseWriter, r *http.Request) string {
	raw := s.cookie(r, "notice")
	if raw == "" {
		return ""
	}
	s.setCookie(w, "notice", "", -1)
	n, err := url.QueryUnescape(raw)
	if err != nil || len(n) > 200 {
		return ""
	}
	return n
}

// switchMode turns the session's live/test switch and goes back to the page
// the switch was on.
func switchMode(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	live := r.PostForm.Get("mode") != "test"
	if err := s.store.SetSessionMode(r.Context(), v.session.Hash, live); err != nil {
		return err
	}
	notice := "Showing live data"
	if !live {
		notice = "" // the test-data banner on every page says so
	}
	return s.done(w, r, r.PostForm.Get("back"), notice)
}

// signOut ends the session on the server, so its cookie no longer works
// anywhere, and forgets the cookie.
func signOut(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	if err := s.store.EndSession(r.Context(), v.session); err != nil {
		return err
	}
	s.setCookie(w, "session", "", -1)
	s.setCookie(w, "notice", url.QueryEscape("You have signed out"), 60)
	http.Redirect(w, r, "/dashboard/sign-in", http.StatusSeeOther)
	return nil
}
