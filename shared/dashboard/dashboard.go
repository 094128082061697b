// Package dashboard is the owner's web interface: server-rendered pages under
// /dashboard/ where a person signs in with an email and a password, sees the
// business at a glance, records payments, refunds and stock counts, and
// manages API keys and webhooks.
//
// It has no rules of its own: every read and change runs the API's handler
// for it (apiClient) as the account's owner, so a page shows what the API
// would answer and refuses what the API would refuse, with the same
// message. What is its own is the people: owners, password hashes
// (argon2id), sessions (random ids, stored hashed, idle and absolute
// expiry), CSRF tokens and the sign-in lockout.
//
// Every response carries a strict Content-Security-Policy (no inline
// script, no framing); pages work without JavaScript (the one script,
// assets/app.js, adds Copy buttons); CSS, images and script are embedded in
// the binary.
package dashboard

import (
	"log/slog"
	"net/http"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/store"
)

// Config is how a deployment runs the dashboard.
type Config struct {
	// PlainHTTP allows the session cookie over plain HTTP (no Secure flag,
	// no __Host- prefix): the local devserver's setting, never a
	// deployment's.
	PlainHTTP bool
	// SignUp lets anyone create an account from the sign-in page; without
	// it, owners are invited by an operator (admin account create
	// --owner-email).
	SignUp bool
}

// Server serves the dashboard. Build one per process.
type Server struct {
	api   apiClient
	store *store.Store
	log   *slog.Logger
	cfg   Config
	pages *pages
	// now is the store's clock, so that tests moving it move sessions'
	// expiry and the sign-in lockout with it.
	now func() time.Time
}

// New returns a dashboard over st, running the API's handlers through apiServer.
func New(st *store.Store, apiServer *api.Server, log *slog.Logger, cfg Config) *Server {
	return &Server{api: apiClient{apiServer}, store: st, log: log, cfg: cfg, pages: mustParsePages(), now: st.Now}
}

// Handler serves routes (Routes, or one function's share of them), each
// with the security headers, the cross-origin check and, for signed-in
// routes, the session.
func (s *Server) Handler(routes []Route) http.Handler {
	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.Handle(rt.Method+" "+rt.Path, s.wrap(rt))
	}
	notFound := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.renderError(w, r, nil, http.StatusNotFound, "There is no such page.")
	})
	mux.Handle("/dashboard/", notFound)
	// /dashboard itself, by any method its route does not take: the same
	// 404 page as any other path (without it, the mux would redirect to
	// /dashboard/ for the subtree's pattern).
	mux.Handle("/dashboard", notFound)
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.renderError(w, r, nil, http.StatusForbidden, "This form was sent from another site, so it was refused.")
	}))
	return withHeaders(cop.Handler(mux))
}

// contentSecurityPolicy allows only the dashboard's own CSS, images and
// script, no inline script or style, no plugins, forms only to itself, and
// no framing by any page (clickjacking).
const contentSecurityPolicy = "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'"

// withHeaders sets the headers every dashboard response carries.
func withHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", contentSecurityPolicy)
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer") // a set-password link's token stays in its page
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.ServeHTTP(w, r)
	})
}

// wrap serves one route: assets and the sign-in pages as they are, every
// other route only with a live session (and, for a POST, its CSRF token).
func (s *Server) wrap(rt Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &api.StatusWriter{ResponseWriter: w}
		if rt.public != nil {
			rt.public(s, sw, r)
		} else {
			s.serveSignedIn(sw, r, rt)
		}
		// One line per request: never a form value, cookie or query.
		s.log.InfoContext(r.Context(), "dashboard", "function", rt.Function, "method", r.Method,
			"route", rt.Path, "status", sw.Status, "ms", float64(time.Since(start).Microseconds())/1000)
	})
}
