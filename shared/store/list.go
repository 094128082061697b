package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Page is one page of a list: the records and the cursor of the next page
// ("" on the last page). Scanned counts the items DynamoDB read for it.
type Page[T any] struct {
	Items   []T
	Next    string
	Scanned int
}

// Range bounds a list on its index's sort key; empty bounds are open.
type Range struct {
	From string // inclusive lower bound
	To   string // inclusive upper bound
}

// query is one list request on one partition of an index.
type query struct {
	index  Index // zero for the table itself
	pk     string
	rng    Range
	filter string // optional FilterExpression for conditions the key cannot express
	names  map[string]string
	values attrs
	limit  int
	cursor string
	views  bool // the records listed have views (see view.go)
	// forward reads oldest first; lists read newest (or latest) first.
	forward bool
	// within narrows rng by bounds that move with the clock (the events
	// kept, the events settled): they are not part of the query a cursor
	// continues, so a cursor outlives the second it was made in.
	within Range
	// tag names what a filter applied after the read selects (the type of
	// a resource's events), so a cursor continues only that query.
	tag string
}

func (q query) keyNames() (string, string) {
	if q.index.Name == "" {
		return "PK", "SK"
	}
	return q.index.PK, q.index.SK
}

// MaxEvaluated bounds the items one list request reads (DynamoDB's
// ScannedCount), so that a filter that matches little never reads a whole
// partition in one request: at the bound the page ends, short or even empty,
// with a cursor to continue.
const MaxEvaluated = 1000

func (s *Store) maxEvaluated() int {
	if s.evaluated > 0 {
		return s.evaluated
	}
	return MaxEvaluated
}

// SetMaxEvaluated changes the bound on items one list request reads (tests
// use a small one).
func (s *Store) SetMaxEvaluated(n int) { s.evaluated = n }

// run reads one page. It asks for one item more than the page holds, so the
// last page has no cursor, and continues past items a filter drops until the
// page is full or the request's work (MaxEvaluated) is spent.
func (s *Store) run(ctx context.Context, q query) ([]attrs, string, int, error) {
	pkName, skName := q.keyNames()
	fp := q.fingerprint()
	start, err := s.decodeCursor(q.cursor, pkName, q.pk, fp)
	if err != nil {
		return nil, "", 0, err
	}
	rng := q.bounds()
	if rng.empty() {
		return nil, "", 0, nil // nothing between the bounds (yet)
	}
	cond, names, values := q.keyCondition(q.pk, rng)
	for k, v := range q.names {
		names[k] = v
	}
	for k, v := range q.values {
		values[k] = v
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(q.forward),
		ExclusiveStartKey:         start,
	}
	if q.index.Name != "" {
		in.IndexName = aws.String(q.index.Name)
	}
	if q.filter != "" {
		in.FilterExpression = aws.String(q.filter)
	}
	var got []attrs
	scanned := 0
	budget := s.maxEvaluated()
	for {
		in.Limit = aws.Int32(int32(min(q.limit+1-len(got), budget-scanned)))
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, "", 0, fmt.Errorf("query %s: %w", q.index.Name, err)
		}
		scanned += int(out.ScannedCount)
		got = append(got, out.Items...)
		if len(got) > q.limit || out.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
		if scanned >= budget {
			// The request's work is spent: answer what matched so far (maybe
			// nothing) with a cursor that continues after the last item read.
			return got, s.encodeCursor(out.LastEvaluatedKey, fp), scanned, nil
		}
	}
	next := ""
	if len(got) > q.limit {
		got = got[:q.limit]
		last := got[q.limit-1]
		k := attrs{"PK": last["PK"], "SK": last["SK"]}
		if q.index.Name != "" {
			k[pkName] = last[pkName]
			k[skName] = last[skName]
		}
		next = s.encodeCursor(k, fp)
	}
	return got, next, scanned, nil
}

// bounds is the query's range narrowed by its bounds that move with the
// clock (within).
func (q query) bounds() Range {
	rng := q.rng
	if q.within.From > rng.From {
		rng.From = q.within.From
	}
	if q.within.To != "" && (rng.To == "" || q.within.To < rng.To) {
		rng.To = q.within.To
	}
	return rng
}

// empty reports whether nothing lies between the range's bounds.
func (r Range) empty() bool { return r.From != "" && r.To != "" && r.From > r.To }

// keyCondition returns the KeyConditionExpression of partition pk between
// rng's inclusive bounds on q's index (or the table), with its names and
// values.
func (q query) keyCondition(pk string, rng Range) (string, map[string]string, attrs) {
	pkName, skName := q.keyNames()
	cond := "#pk = :pk"
	names := map[string]string{"#pk": pkName}
	values := attrs{":pk": str(pk)}
	switch {
	case rng.From != "" && rng.To != "":
		cond += " AND #sk BETWEEN :from AND :to"
	case rng.From != "":
		cond += " AND #sk >= :from"
	case rng.To != "":
		cond += " AND #sk <= :to"
	}
	if rng.From != "" {
		names["#sk"], values[":from"] = skName, str(rng.From)
	}
	if rng.To != "" {
		names["#sk"], values[":to"] = skName, str(rng.To)
	}
	return cond, names, values
}

// fingerprint names everything that decides which items the query returns
// and in what order, so a cursor continues only the query that made it.
func (q query) fingerprint() string {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %q %q %q\n", q.index.PK, q.pk, q.rng.From, q.rng.To, q.filter)
	if q.forward {
		fmt.Fprintln(h, "forward")
	}
	if q.tag != "" {
		fmt.Fprintf(h, "tag %q\n", q.tag)
	}
	names := make([]string, 0, len(q.values))
	for k := range q.values {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(h, "%q=%q %q\n", k, getS(q.values, k), getN(q.values, k))
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

// SetCursorSecret sets the key that signs list cursors. Every process serving
// one table must use the same secret.
func (s *Store) SetCursorSecret(secret []byte) { s.cursorSecret = secret }

// cursorQuery is the entry of a cursor's JSON that holds the fingerprint of
// its query; it cannot clash with an attribute name, which has no '#'.
const cursorQuery = "#q"

// encodeCursor returns base64url(JSON of the key and the query's
// fingerprint) + "." + base64url(HMAC).
func (s *Store) encodeCursor(k attrs, fp string) string {
	m := make(map[string]string, len(k)+1)
	for name := range k {
		m[name] = getS(k, name)
	}
	m[cursorQuery] = fp
	b, _ := json.Marshal(m)
	mac := hmac.New(sha256.New, s.cursorSecret)
	mac.Write(b)
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16])
}

var errCursor = &business.Error{Code: business.EINVALID, Message: "cursor: is not a cursor this list returned with these filters; start again without it", Fields: map[string]string{"cursor": "is not a cursor this list returned with these filters"}}

// decodeCursor checks a cursor's signature and that it continues the same
// query (partition, range and filters), so no cursor can read outside the
// caller's account or be used with other filters or on another list.
func (s *Store) decodeCursor(c, pkName, pk, fp string) (attrs, error) {
	if c == "" {
		return nil, nil
	}
	body, sig, ok := strings.Cut(c, ".")
	if !ok {
		return nil, errCursor
	}
	b, err1 := base64.RawURLEncoding.DecodeString(body)
	got, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil {
		return nil, errCursor
	}
	mac := hmac.New(sha256.New, s.cursorSecret)
	mac.Write(b)
	if !hmac.Equal(got, mac.Sum(nil)[:16]) {
		return nil, errCursor
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil || m[pkName] != pk || m[cursorQuery] != fp {
		return nil, errCursor
	}
	delete(m, cursorQuery)
	k := make(attrs, len(m))
	for name, v := range m {
		k[name] = &types.AttributeValueMemberS{Value: v}
	}
	return k, nil
}
