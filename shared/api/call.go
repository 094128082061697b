package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"

	"bizdata/shared/business"
)

// Call runs the route served by function for the owner of acct, signed in
// to the dashboard: the API's own handler, with its decoding, rules and
// store calls, so the dashboard has no second copy of any of them. params
// fill the route's path wildcards, query is its query string, body (if not
// nil) is encoded as its JSON body, and idempotencyKey (if not "") makes a
// create replay as it does on the API.
//
// The owner acts as business.OwnerKey of acct's mode. Call returns the
// success envelope's data, or the handler's error (a *business.Error whose
// message and fields a person can act on).
func (s *Server) Call(ctx context.Context, acct business.Account, function string, params map[string]string, query url.Values, body any, idempotencyKey string) (json.RawMessage, error) {
	hdr := http.Header{}
	if idempotencyKey != "" {
		hdr.Set("Idempotency-Key", idempotencyKey)
	}
	data, _, err := s.CallWith(ctx, acct, function, params, query, body, hdr)
	return data, err
}

// origin is where an in-process call's request is said to have arrived.
type origin struct{ scheme, host string }

type originKey struct{}

// WithOrigin returns ctx whose in-process calls (Call, CallWith) reach the
// route as a request to scheme://host would: the links a route makes (an
// invoice link) are on that host, as when a client calls the API there.
func WithOrigin(ctx context.Context, scheme, host string) context.Context {
	return context.WithValue(ctx, originKey{}, origin{scheme: scheme, host: host})
}

// CallWith is Call with the request headers hdr (If-Match, Idempotency-Key),
// returning the answer's headers too (ETag).
func (s *Server) CallWith(ctx context.Context, acct business.Account, function string, params map[string]string, query url.Values, body any, hdr http.Header) (json.RawMessage, http.Header, error) {
	w := &recorder{header: http.Header{}}
	rt, ok := RouteByFunction(function)
	if !ok {
		return nil, w.header, business.Errorf(business.EINTERNAL, "no route %s", function)
	}
	acct.Key = business.OwnerKey(acct.Livemode())
	if err := rt.permits(acct); err != nil {
		return nil, w.header, err
	}
	path := rt.Path
	for k, v := range params {
		path = strings.Replace(path, "{"+k+"}", url.PathEscape(v), 1)
	}
	rd := io.Reader(http.NoBody)
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, w.header, business.Errorf(business.EINTERNAL, "encode body: %v", err)
		}
		rd = bytes.NewReader(b)
	}
	u := path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	r, err := http.NewRequestWithContext(ctx, rt.Method, u, rd)
	if err != nil {
		return nil, w.header, business.Errorf(business.EINVALID, "That address is not one the dashboard can open")
	}
	for k, v := range hdr {
		r.Header[k] = v
	}
	if o, ok := ctx.Value(originKey{}).(origin); ok {
		r.Host = o.host
		r.Header.Set("X-Forwarded-Proto", o.scheme)
	}
	r.Header.Set("Content-Type", "application/json")
	for k, v := range params {
		r.SetPathValue(k, v)
	}
	if err := rt.handle(s, w, r, acct); err != nil {
		return nil, w.header, err
	}
	var env struct {
		Data   json.RawMessage   `json:"data"`
		Error  string            `json:"error"`
		Fields map[string]string `json:"fields"`
	}
	if err := json.Unmarshal(w.body.Bytes(), &env); err != nil {
		return nil, w.header, business.Errorf(business.EINTERNAL, "%s answered no envelope", function)
	}
	if w.status >= 400 { // a replayed refusal of an Idempotency-Key
		code := business.EINVALID
		for c, st := range statusByCode {
			if st == w.status {
				code = c
			}
		}
		return nil, w.header, &business.Error{Code: code, Message: env.Error, Fields: env.Fields}
	}
	return env.Data, w.header, nil
}

// recorder keeps what a handler writes, for Call.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}
