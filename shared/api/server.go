package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// MaxKeyCacheTTL is the longest key cache a process accepts, so that a
// rotated key always stops working within 5 s.
const MaxKeyCacheTTL = 5 * time.Second

// DefaultKeyCacheTTL is how long a warm process trusts a key it has seen,
// unless configured shorter: the longest allowed.
const DefaultKeyCacheTTL = MaxKeyCacheTTL

// Server holds what every handler needs. Build one per process.
type Server struct {
	store *store.Store
	log   *slog.Logger
	keys  *keyCache

	// allowPrivate lets callback URLs use http and private addresses (the
	// devserver's setting); sender makes test notifications.
	allowPrivate bool
	sender       *webhook.Sender

	// publicBase is the base URL of the links it makes (see
	// SetPublicBaseURL).
	publicBase string

	// purgeFor is how long a clear of the test data may delete the records
	// of retired twins (0: the default, see purgeTime).
	purgeFor time.Duration
}

// NewServer returns a Server over st. keyTTL bounds how long a rotated API key
// keeps working on a warm process (0 disables the cache).
func NewServer(st *store.Store, log *slog.Logger, keyTTL time.Duration) *Server {
	return &Server{store: st, log: log, keys: newKeyCache(st, keyTTL), sender: webhook.NewSender(false)}
}

// AllowPrivateWebhooks lets merchants set http callback URLs and private
// addresses, and test notifications reach them: for local development only,
// as WEBHOOK_ALLOW_PRIVATE=1 allows deliveries there.
func (s *Server) AllowPrivateWebhooks(allow bool) *Server {
	s.allowPrivate, s.sender = allow, webhook.NewSender(allow)
	return s
}

// Handler returns an http.Handler serving routes: each on its method and
// path, and what no route matches as FallbackHandler answers it. Requests
// reach the routes as API Gateway hands them to a function (asGateway), so
// the devserver answers as the deployed stack does.
func (s *Server) Handler(routes []Route) http.Handler {
	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.Handle(rt.Method+" "+rt.Path, s.wrap(rt))
	}
	// "/" is less specific than every route, so it only gets what no route
	// matches.
	fallback := s.fallback(routes)
	mux.Handle("/", fallback)
	return s.withRequestID(asGateway(mux, fallback))
}

// asGateway gives h each request as an HTTP API's route hands it over: a
// header sent several times arrives once, its values joined by commas (a
// repeated Authorization is then no valid bearer token, 401, as on AWS);
// HEAD matches no route (the template routes GET only), so it goes to
// fallback, the $default route's answer (405 with Allow on a route's path).
func asGateway(h, fallback http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range r.Header {
			if len(v) > 1 {
				r.Header[k] = []string{strings.Join(v, ",")}
			}
		}
		if r.Method == http.MethodHead {
			fallback.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// FallbackHandler answers every request as a request no route matched:
// "Method not allowed" (405, with Allow) for a path of the route table with
// another method, "Route not found" (404) for any other path. It serves the
// $default route of the HTTP API (function DefaultFunction), so API Gateway
// never answers with its own body.
func (s *Server) FallbackHandler() http.Handler { return s.withRequestID(s.fallback(Routes)) }

// fallback answers what none of routes matched: 405 for one of their paths
// with another method (Allow lists every method of every route whose path
// matches), else 404. Paths are matched here segment by segment, not by a
// ServeMux: without their methods, two routes' paths may overlap with
// neither more specific (/sales/{invoice_code}/refunds and
// /sales/edit/{invoice_code}), which a ServeMux refuses.
func (s *Server) fallback(routes []Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var matched [][]string
		var methods [][]string
		for _, rt := range routes {
			if p := strings.Split(rt.Path, "/"); pathMatches(p, r.URL.EscapedPath()) {
				matched, methods = append(matched, p), append(methods, []string{rt.Method})
			}
		}
		// As a ServeMux would, a path answers for its most specific patterns
		// only: /customers/add for POST, not /customers/{id} for GET and PUT.
		var allow []string
		for i, p := range matched {
			shadowed := false
			for _, q := range matched {
				shadowed = shadowed || moreSpecific(q, p)
			}
			if !shadowed && !slices.Contains(allow, methods[i][0]) {
				allow = append(allow, methods[i][0])
			}
		}
		if len(allow) == 0 {
			writeError(w, r, s.log, business.Errorf(business.ENOTFOUND, "Route not found"))
			return
		}
		sort.Strings(allow)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, r, s.log, business.Errorf(business.EMETHOD, "Method not allowed"))
	})
}

// moreSpecific reports whether pattern a (split into segments) matches a
// strict subset of the paths b matches: a literal segment wherever b has
// one, and at least one where b has a wildcard.
func moreSpecific(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	strict := false
	for i := range a {
		aw, bw := strings.HasPrefix(a[i], "{"), strings.HasPrefix(b[i], "{")
		switch {
		case aw && !bw:
			return false
		case !aw && bw:
			strict = true
		case !aw && a[i] != b[i]:
			return false
		}
	}
	return strict
}

// pathMatches reports whether path matches a route's path pattern, as a
// ServeMux matches it: segment by segment, a {wildcard} matching any one
// non-empty segment.
func pathMatches(ps []string, path string) bool {
	xs := strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i, p := range ps {
		if strings.HasPrefix(p, "{") {
			if xs[i] == "" {
				return false
			}
		} else if p != xs[i] {
			return false
		}
	}
	return true
}

// withRequestID sets X-Request-Id on every response. A path that is not in
// clean form ("//", "/./", "/../", no leading "/") is no route's: it is
// answered 404 here, where ServeMux would redirect without the envelope.
func (s *Server) withRequestID(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", requestID(r.Context()))
		if !cleanPath(r.URL.Path) {
			writeError(w, r, s.log, business.Errorf(business.ENOTFOUND, "Route not found"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// cleanPath reports whether p is absolute and in the form path.Clean gives
// it (a trailing slash aside), as ServeMux serves it without a redirect.
func cleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

// requestID is the Lambda request id when there is one, else a random id.
func requestID(ctx context.Context) string {
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		return lc.AwsRequestID
	}
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// StatusWriter remembers the status a handler wrote, for the access log
// (the API's and the dashboard's).
type StatusWriter struct {
	http.ResponseWriter
	// Status is the first status written; 0 while nothing is.
	Status int
}

func (w *StatusWriter) WriteHeader(code int) {
	if w.Status == 0 {
		w.Status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *StatusWriter) Write(b []byte) (int, error) {
	if w.Status == 0 {
		w.Status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// wrap authenticates the request, runs the route's handler and writes its
// error, if any, through the one error writer. It logs one line per request:
// never the body, the key or the query's values.
func (s *Server) wrap(rt Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &StatusWriter{ResponseWriter: w}
		err := s.serve(sw, r, rt)
		if err != nil {
			writeError(sw, r, s.log, err)
		}
		if sw.Status == 0 { // a handler that writes nothing would become a 504 on API Gateway
			writeError(sw, r, s.log, business.Errorf(business.EINTERNAL, "handler wrote no response"))
		}
		s.log.InfoContext(r.Context(), "request", "request_id", w.Header().Get("X-Request-Id"),
			"function", rt.Function, "method", r.Method, "status", sw.Status,
			"ms", float64(time.Since(start).Microseconds())/1000)
	})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, rt Route) error {
	token, ok := BearerToken(r.Header.Get("Authorization"))
	if !ok {
		if rt.auth == authSales {
			return business.Errorf(business.EUNAUTHORIZED, msgMissingBearer)
		}
		return business.Errorf(business.EUNAUTHORIZED, msgAuthInvalid)
	}
	acct, use, err := s.keys.account(r.Context(), token)
	if err != nil {
		return err
	}
	if err := rt.permits(acct); err != nil {
		return err
	}
	use(r.Context())
	return rt.handle(s, w, r, acct)
}
