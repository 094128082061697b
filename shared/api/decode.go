package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/money"
)

// MaxBodyBytes is the largest request body accepted (413 above it).
const MaxBodyBytes = 1 << 20

func asError(err error, e **business.Error) bool { return errors.As(err, e) }

// Opt is a request field that may be absent, null or a value. Edits use it to
// tell "leave as is" (absent) from "clear" (null).
type Opt[T any] struct {
	Set  bool
	Null bool
	V    T
}

// UnmarshalJSON records that the field was present, and whether it was null.
func (o *Opt[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.V)
}

// Value returns the value, or def when the field is absent or null.
func (o Opt[T]) Value(def T) T {
	if !o.Set || o.Null {
		return def
	}
	return o.V
}

// readBody checks the content type and size of r's body and returns it.
func readBody(r *http.Request) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return nil, business.Errorf(business.EMEDIATYPE, "Content-Type must be application/json")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, business.Errorf(business.EINVALID, "could not read the request body")
	}
	if len(body) > MaxBodyBytes {
		return nil, business.Errorf(business.ETOOLARGE, "request body must be at most 1 MiB")
	}
	return body, nil
}

// bodyHash is the hash an Idempotency-Key is bound to.
func bodyHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// decodeObject decodes a JSON object into dst, a pointer to a struct whose
// fields carry json tags. It refuses anything but one object, names unknown
// fields, and reports each field whose value has the wrong type or format.
// prefix is prepended to field names in messages (for nested objects).
func decodeObject(body []byte, dst any, prefix string) error {
	raw, err := splitObject(body)
	if err != nil {
		if prefix != "" {
			return business.FieldErrors{strings.TrimSuffix(prefix, "."): "must be a JSON object"}.Err()
		}
		return err
	}
	v := reflect.ValueOf(dst).Elem()
	t := v.Type()
	fields := map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields[name] = i
		}
	}
	var unknown []string
	fe := business.FieldErrors{}
	for name, val := range raw {
		i, ok := fields[name]
		if !ok {
			unknown = append(unknown, prefix+name)
			continue
		}
		if err := json.Unmarshal(val, v.Field(i).Addr().Interface()); err != nil {
			fe.Add(prefix+name, fieldMessage(err))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		for _, u := range unknown {
			fe.Add(u, "is not a known field")
		}
		return &business.Error{Code: business.EINVALID, Message: "unknown field(s): " + strings.Join(unknown, ", "), Fields: fe}
	}
	return fe.Err()
}

// splitObject parses body as exactly one JSON object and returns its members.
func splitObject(body []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil || raw == nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, business.Errorf(business.EINVALID, "request body is not valid JSON")
		}
		return nil, business.Errorf(business.EINVALID, "request body must be a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, business.Errorf(business.EINVALID, "request body must hold one JSON object and nothing after it")
	}
	return raw, nil
}

// fieldMessage turns a decoding error into a message a person can act on.
func fieldMessage(err error) string {
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te):
		switch te.Type.Kind() {
		case reflect.String:
			return "must be a string"
		case reflect.Int, reflect.Int64, reflect.Int32:
			return "must be an integer"
		case reflect.Bool:
			return "must be true or false"
		case reflect.Slice:
			return "must be an array"
		case reflect.Struct, reflect.Map:
			return "must be an object"
		}
		return "has the wrong type"
	case errors.Is(err, money.ErrFormat):
		return strings.TrimPrefix(err.Error(), money.ErrFormat.Error()+": ")
	}
	var be *business.Error
	if errors.As(err, &be) {
		return be.Message
	}
	return "is not valid"
}

// MaxInt is the largest integer a request field accepts: the largest that
// every JSON client reads back exactly (2^53 - 1).
const MaxInt = 1<<53 - 1

// Int is an integer request field that also accepts a string of digits, since
// the description types ids as integers in requests and strings in responses.
type Int int64

// UnmarshalJSON accepts 12 or "12".
func (i *Int) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 1 || v > MaxInt {
		return business.Errorf(business.EINVALID, "must be a positive integer of at most %d", MaxInt)
	}
	*i = Int(v)
	return nil
}

// Code is a code field (invoice_code, invoice_number) that the description
// types as a string in requests but that clients often send as a number; it
// accepts both and keeps the digits as text.
type Code string

// UnmarshalJSON accepts "123456" or 123456.
func (c *Code) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = Code(strings.TrimSpace(s))
		return nil
	}
	if _, err := strconv.ParseUint(string(b), 10, 64); err != nil {
		return business.Errorf(business.EINVALID, "must be a string of digits such as \"123456\"")
	}
	*c = Code(b)
	return nil
}
