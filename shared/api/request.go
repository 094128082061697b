package api

// The plumbing every route shares to read a request: a create's body and
// Idempotency-Key (and its answer), path values, If-Match, and the optional
// text fields of an edit.

import (
	"net/http"
	"strconv"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/store"
)

// refuseUnlessReplayed answers a create whose body was refused before it
// reached the store. The Idempotency-Key decides first: a key already used
// answers with its first response, or 409 for another body, however this
// body fails.
func (s *Server) refuseUnlessReplayed(w http.ResponseWriter, r *http.Request, acct business.Account, idem *store.Idempotency, err error) error {
	if idem == nil || business.ErrorCode(err) != business.EINVALID {
		return err
	}
	resp, ok, rerr := s.store.Replay(r.Context(), acct.ID, idem)
	if rerr != nil {
		return rerr
	}
	if !ok {
		return err
	}
	writeBody(w, http.StatusOK, resp)
	return nil
}

// writeCreated writes what a store's create returned: the new record's
// response, or the first response of a replayed Idempotency-Key.
func writeCreated(w http.ResponseWriter, resp []byte, err error) error {
	if err != nil {
		return err
	}
	writeBody(w, http.StatusOK, resp)
	return nil
}

// readCreate reads a POST body and its Idempotency-Key, if any.
func readCreate(r *http.Request) ([]byte, *store.Idempotency, error) {
	body, err := readBody(r)
	if err != nil {
		return nil, nil, err
	}
	vals := r.Header.Values("Idempotency-Key")
	if len(vals) == 0 {
		return body, nil, nil
	}
	// A comma is refused rather than read: API Gateway's Lambda adapter splits
	// a header on commas, so the key could not arrive whole on every path.
	k := vals[0]
	if len(vals) > 1 || k == "" || len(k) > 255 || strings.ContainsFunc(k, func(c rune) bool { return c < 0x21 || c > 0x7e || c == ',' }) {
		return nil, nil, &business.Error{Code: business.EINVALID, Message: "Idempotency-Key must be sent once, as 1 to 255 visible ASCII characters other than a comma",
			Fields: map[string]string{"Idempotency-Key": "must be 1 to 255 visible ASCII characters other than a comma, sent once"}}
	}
	// A key names one request to one route and record: its method and path
	// (for the create routes, whose paths have no wildcard, the same as the
	// route's pattern, as keys were first recorded). So one key may be
	// reused across routes, and a refund's key sent to another sale is that
	// sale's request, never the first sale's answer.
	route := r.Method + r.URL.Path
	return body, &store.Idempotency{Route: route, Key: k, BodyHash: bodyHash(body)}, nil
}

// pathID reads the {id} path value; anything but a positive integer is the
// record's 404, since no such record can exist.
func pathID(r *http.Request, notFound string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, business.Errorf(business.ENOTFOUND, "%s", notFound)
	}
	return id, nil
}

// pathCode reads a code path value (invoice_code, item_code); a value that
// valid rejects is the record's 404, since no such record can exist (and it
// never reaches the store, whose keys have size limits).
func pathCode(r *http.Request, name string, valid func(string) bool, notFound string) (string, error) {
	code := r.PathValue(name)
	if !valid(code) {
		return "", business.Errorf(business.ENOTFOUND, "%s", notFound)
	}
	return code, nil
}

// setETag sends a record's version as its entity tag.
func setETag(w http.ResponseWriter, version int64) {
	w.Header().Set("ETag", etag(version))
}

func etag(version int64) string { return `"v` + strconv.FormatInt(version, 10) + `"` }

// ifMatchHeader returns the If-Match list as sent: every value of the header
// joined by commas, so a list split into several values (as API Gateway's
// Lambda adapter splits it) reads the same as one header.
func ifMatchHeader(r *http.Request) string {
	return strings.Join(r.Header.Values("If-Match"), ", ")
}

// checkIfMatch returns EPRECONDITION when an If-Match header names another
// version than the current one.
func checkIfMatch(ifMatch string, version int64) error {
	if ifMatch == "" || ifMatch == "*" {
		return nil
	}
	for _, t := range strings.Split(ifMatch, ",") {
		if strings.TrimPrefix(strings.TrimSpace(t), "W/") == etag(version) {
			return nil
		}
	}
	return business.Errorf(business.EPRECONDITION, "the record has changed since you read it (If-Match %s, current ETag %s); fetch it again and retry", ifMatch, etag(version))
}

// setText sets *dst from an optional text field: absent keeps, null clears.
func setText(dst *string, o Opt[string]) {
	if o.Set {
		*dst = strings.TrimSpace(o.V)
	}
}
