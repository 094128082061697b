package api

import (
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"bizdata/shared/business"
	"bizdata/shared/store"
)

// Page size bounds of every list.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// listQuery is a list request's query string, checked against the parameters
// its route allows.
type listQuery struct {
	values url.Values
	fe     business.FieldErrors
	limit  int
	cursor string
}

// parseList refuses unknown and repeated parameters and reads limit and
// cursor. Filters are read with the typed getters, then err reports every
// problem at once. A query string that does not parse (bad percent-encoding,
// ';' as a separator) is refused naming the parameter, never read in part:
// a filter is never silently dropped.
func parseList(r *http.Request, filters ...string) *listQuery {
	q := readQuery(r, "leave the parameter out to not filter by it", append([]string{"limit", "cursor"}, filters...)...)
	q.limit = DefaultLimit
	if v := q.values.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxLimit {
			q.fe.Add("limit", "must be an integer from 1 to "+strconv.Itoa(MaxLimit))
		} else {
			q.limit = n
		}
	}
	q.cursor = q.values.Get("cursor")
	return q
}

// readQuery parses r's query string and refuses any parameter but names,
// and any given twice or empty (empty tells what to do instead).
func readQuery(r *http.Request, empty string, names ...string) *listQuery {
	q := &listQuery{values: url.Values{}, fe: business.FieldErrors{}}
	q.parse(r.URL.RawQuery)
	allow := "none"
	if len(names) > 0 {
		allow = strings.Join(names, ", ")
	}
	var unknown []string
	for name, vals := range q.values {
		switch {
		case !slices.Contains(names, name):
			unknown = append(unknown, name)
		case len(vals) > 1:
			q.fe.Add(name, "must be given at most once")
		case strings.TrimSpace(vals[0]) == "":
			q.fe.Add(name, "must not be empty; "+empty)
		}
	}
	sort.Strings(unknown)
	for _, u := range unknown {
		q.fe.Add(u, "is not a known query parameter; allowed: "+allow)
	}
	return q
}

// parse splits a raw query string on '&' as url.ParseQuery does, but
// records each pair that does not parse as a field error instead of
// dropping it.
func (q *listQuery) parse(raw string) {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		rawName, rawValue, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			q.fe.Add(rawName, "the parameter's name is not valid percent-encoding")
			continue
		}
		if strings.Contains(rawName, ";") || strings.Contains(rawValue, ";") {
			q.fe.Add(name, "contains ';', which does not separate parameters: use '&', or send ';' in a value as %3B")
			continue
		}
		value, err := url.QueryUnescape(rawValue)
		if err != nil {
			q.fe.Add(name, "is not valid percent-encoding (send '%' as %25)")
			continue
		}
		if !utf8.ValidString(name) || !utf8.ValidString(value) {
			q.fe.Add(name, "must be UTF-8 text")
			continue
		}
		q.values[name] = append(q.values[name], value)
	}
}

func (q *listQuery) err() error { return q.fe.Err() }

// str returns a filter's value, trimmed.
func (q *listQuery) str(name string) string { return strings.TrimSpace(q.values.Get(name)) }

// text returns a free-text filter's value, at most max characters (longer
// could match no record, and would not fit in a key).
func (q *listQuery) text(name string, max int) string {
	v := q.str(name)
	if utf8.RuneCountInString(v) > max {
		q.fe.Add(name, "must be at most "+strconv.Itoa(max)+" characters")
		return ""
	}
	return v
}

// oneOf returns a filter's value when it is one of allowed.
func (q *listQuery) oneOf(name string, allowed ...string) string {
	v := q.str(name)
	if v == "" {
		return ""
	}
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	q.fe.Add(name, "must be one of: "+strings.Join(allowed, ", "))
	return ""
}

// id returns a positive integer filter, or 0 when absent.
func (q *listQuery) id(name string) int64 {
	v := q.str(name)
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || n > MaxInt {
		q.fe.Add(name, "must be a positive integer of at most "+strconv.Itoa(MaxInt))
		return 0
	}
	return n
}

// date returns a YYYY-MM-DD filter, or "" when absent.
func (q *listQuery) date(name string) string {
	v := q.str(name)
	if v == "" {
		return ""
	}
	if _, err := time.Parse(business.DateFormat, v); err != nil {
		q.fe.Add(name, "must be a date YYYY-MM-DD")
		return ""
	}
	return v
}

// lowerBound returns a datetime lower bound in storage form: a datetime
// "YYYY-MM-DD HH:MM:SS" (hours, minutes and seconds may have one digit) or a
// bare date, meaning the start of that day.
func (q *listQuery) lowerBound(name string) string {
	v := q.str(name)
	if v == "" {
		return ""
	}
	if t, ok := parseDateTime(v); ok {
		return t.Format(business.TimeFormat)
	}
	if _, err := time.Parse(business.DateFormat, v); err == nil {
		return v
	}
	q.fe.Add(name, "must be a datetime YYYY-MM-DD HH:MM:SS or a date YYYY-MM-DD")
	return ""
}

// upperBound returns an inclusive upper bound in storage form: a datetime is
// exact, a bare date means the end of that day. "~" sorts after every
// character the keys use after the bound's text, making it inclusive.
func (q *listQuery) upperBound(name string) string {
	v := q.str(name)
	if v == "" {
		return ""
	}
	if t, ok := parseDateTime(v); ok {
		return t.Format(business.TimeFormat) + "~"
	}
	if _, err := time.Parse(business.DateFormat, v); err == nil {
		return v + "~"
	}
	q.fe.Add(name, "must be a date YYYY-MM-DD or a datetime YYYY-MM-DD HH:MM:SS")
	return ""
}

func parseDateTime(v string) (time.Time, bool) {
	for _, layout := range []string{"2006-01-02 15:4:5", "2006-01-02T15:4:5"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// writePage answers a list: "<noun> found: N" with the page's records,
// converted by toJSON, under key, and next_cursor (null on the last page).
func writePage[T, J any](w http.ResponseWriter, noun, key string, page store.Page[T], toJSON func(T) J) error {
	out := make([]J, len(page.Items))
	for i, v := range page.Items {
		out[i] = toJSON(v)
	}
	var next any
	if page.Next != "" {
		next = page.Next
	}
	return writeOK(w, noun+" found: "+strconv.Itoa(len(out)), map[string]any{key: out, "next_cursor": next})
}
