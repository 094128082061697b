package api

import (
	"context"
	"net/http"

	"bizdata/shared/business"
	"bizdata/shared/store"
)

// The routes of customers, categories, expenses and items do the same things
// in the same order; each handler names its parts (the kind of record, the
// converter, the store call) and one of the functions below runs them,
// straight down.

// kind is how the API addresses and shows one kind of record: K is the type
// of its path key (an id or a code), T the record.
type kind[K, T any] struct {
	// noun starts the messages: "Customer found", "Customer not found";
	// nouns those of lists: "Customers found: 3".
	noun, nouns string
	// plural is the data key of lists, adds and edits; one is that of gets
	// (the same but for expenses, whose get answers "expense"). An add
	// answers under both.
	plural, one string
	// key reads the record's key from the path; a value no record can have
	// is ENOTFOUND.
	key     func(*http.Request) (K, error)
	version func(T) int64
	json    func(T) any
}

// byID reads the {id} path value (see pathID).
func byID(notFound string) func(*http.Request) (int64, error) {
	return func(r *http.Request) (int64, error) { return pathID(r, notFound) }
}

// change is a decoded edit request: apply changes a record as read, then
// validates it.
type change[T any] interface{ apply(*T) error }

// decodeJSON decodes a request body strictly (see decodeObject).
func decodeJSON[R any](body []byte) (R, error) {
	var req R
	return req, decodeObject(body, &req, "")
}

// applyToNew converts an add body: decoded by decode, then applied to a new,
// empty record, which validates it.
func applyToNew[R change[T], T any](decode func([]byte) (R, error)) func([]byte) (T, error) {
	return func(body []byte) (T, error) {
		var x T
		req, err := decode(body)
		if err != nil {
			return x, err
		}
		return x, req.apply(&x)
	}
}

// readJSON reads a request's body and decodes it strictly into R (see
// readBody and decodeObject).
func readJSON[R any](r *http.Request) (R, error) {
	body, err := readBody(r)
	if err != nil {
		var req R
		return req, err
	}
	return decodeJSON[R](body)
}

// addRecord answers an add: the body converted and validated (a refused body
// still answers a replayed Idempotency-Key, see refuseUnlessReplayed), then
// the store's create, which renders the answer it keeps for replays.
func addRecord[K, T, V any](s *Server, w http.ResponseWriter, r *http.Request, acct business.Account, k kind[K, T],
	convert func([]byte) (V, error),
	create func(context.Context, string, V, *store.Idempotency, store.Render[T]) ([]byte, error),
) error {
	body, idem, err := readCreate(r)
	if err != nil {
		return err
	}
	v, err := convert(body)
	if err != nil {
		return s.refuseUnlessReplayed(w, r, acct, idem, err)
	}
	resp, err := create(r.Context(), acct.ID, v, idem, func(x T) ([]byte, error) {
		j := k.json(x)
		return successBody(http.StatusOK, k.noun+" added successfully", map[string]any{k.plural: j, k.one: j})
	})
	return writeCreated(w, resp, err)
}

// getRecord answers a get: the record the path names, with its ETag.
func getRecord[K, T any](w http.ResponseWriter, r *http.Request, acct business.Account, k kind[K, T],
	find func(context.Context, string, K) (T, error),
) error {
	key, err := k.key(r)
	if err != nil {
		return err
	}
	x, err := find(r.Context(), acct.ID, key)
	if err != nil {
		return err
	}
	setETag(w, k.version(x))
	return writeOK(w, k.noun+" found", map[string]any{k.one: k.json(x)})
}

// editRecord answers an edit: the path's record (404 first), the body
// decoded (400), then the store's read-modify-write, which applies the
// request to the record as read once its version passes If-Match (412). The
// answer is the record as stored, with its new ETag.
func editRecord[K, T any, R change[T]](w http.ResponseWriter, r *http.Request, acct business.Account, k kind[K, T],
	decode func([]byte) (R, error),
	update func(context.Context, string, K, func(*T) error) (T, error),
) error {
	key, err := k.key(r)
	if err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	req, err := decode(body)
	if err != nil {
		return err
	}
	ifMatch := ifMatchHeader(r)
	x, err := update(r.Context(), acct.ID, key, func(x *T) error {
		if err := checkIfMatch(ifMatch, k.version(*x)); err != nil {
			return err
		}
		return req.apply(x)
	})
	if err != nil {
		return err
	}
	setETag(w, k.version(x))
	return writeOK(w, k.noun+" updated successfully", map[string]any{k.plural: k.json(x)})
}

// listRecords answers a list once its filters are read from q: 400 naming
// every bad parameter (nothing read), else one page of list.
func listRecords[K, T, F any](w http.ResponseWriter, r *http.Request, acct business.Account, k kind[K, T], q *listQuery, f F,
	list func(context.Context, string, F, int, string) (store.Page[T], error),
) error {
	if err := q.err(); err != nil {
		return err
	}
	page, err := list(r.Context(), acct.ID, f, q.limit, q.cursor)
	if err != nil {
		return err
	}
	return writePage(w, k.nouns, k.plural, page, k.json)
}
