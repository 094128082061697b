package main

// The capacity DynamoDB bills for each call, computed from the sizes of the
// items the call read or wrote with AWS's published rules (developer guide:
// "DynamoDB item sizes and formats", "Capacity unit consumption", GSI.html
// "Write capacity units", transaction-apis.html), which meter.go applies
// to every call and cost.go reports:
//   - An item's size is its attribute names and values (numberSize for
//     numbers, as DynamoDB Local counts them: TestCapacityItemSize).
//   - A write costs ceil(size / 1 KB) WCU, size the larger of the item
//     before and after, at least 1 (a Delete that finds nothing costs 1).
//   - An index is written when the item enters or leaves it (1 write), moves
//     in it (2: delete, put) or stays with a projected attribute changed (1);
//     an entry is the table's and index's keys and the projection.
//   - Every write of a TransactWriteItems counts twice (prepare, commit),
//     its index writes too (an upper bound), and a ConditionCheck is two
//     writes of its item (measured on DynamoDB: a small one bills 2 WCU).
//     DynamoDB Local adds a transaction's items as a set (items that cost
//     the same count once) and bills a ConditionCheck as two reads; the
//     calculator follows AWS.
//   - A read costs ceil(size / 4 KB) RCU per item (GetItem, BatchGetItem)
//     or for all a Query read together, half when eventually consistent
//     (every read of an index), at least one unit even when it finds nothing
//     (DynamoDB Local charges nothing then).

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type item = map[string]types.AttributeValue

// itemSize is an item's size in bytes as DynamoDB bills it; 0 for none.
func itemSize(it item) int {
	n := 0
	for name, v := range it {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	n := 0
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberSS:
		for _, e := range v.Value {
			n += len(e)
		}
	case *types.AttributeValueMemberNS:
		for _, e := range v.Value {
			n += numberSize(e)
		}
	case *types.AttributeValueMemberBS:
		for _, e := range v.Value {
			n += len(e)
		}
	case *types.AttributeValueMemberL:
		n = 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
	case *types.AttributeValueMemberM:
		n = 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
	default: // BOOL, NULL
		n = 1
	}
	return n
}

// numberSize is the bytes of a number: one per pair of digits, the pairs
// counted from the decimal point (pairs of zeros at either end dropped), one
// more, and one more again for a negative number. AWS gives this as "1 byte
// per two significant digits + 1 byte", approximately; this is how DynamoDB
// Local counts exactly.
func numberSize(s string) int {
	neg := strings.HasPrefix(s, "-")
	mant, exp := strings.TrimLeft(s, "+-"), 0
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		exp, _ = strconv.Atoi(mant[i+1:])
		mant = mant[:i]
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits, point := whole+frac, len(whole)+exp // point: digits before the decimal point
	for strings.HasPrefix(digits, "0") {
		digits, point = digits[1:], point-1
	}
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		return 1
	}
	lead := (point%2 + 2) % 2 // a zero in front when the point splits a pair
	n := (lead+len(digits)+1)/2 + 1
	if neg {
		n++
	}
	return n
}

// capacityUnits is ceil(size / unit), at least 1.
func capacityUnits(size, unit int) float64 {
	return math.Max(1, math.Ceil(float64(size)/float64(unit)))
}

func writeUnits(size int) float64 { return capacityUnits(size, 1024) }

func readUnits(size int, consistent bool) float64 {
	if consistent {
		return capacityUnits(size, 4096)
	}
	return capacityUnits(size, 4096) / 2
}

// cost is the capacity of one call or request: write units of the table and
// of each index apart, and read units.
type cost struct {
	table float64
	index map[string]float64
	read  float64
}

func (c cost) indexTotal() float64 {
	t := 0.0
	for _, u := range c.index {
		t += u
	}
	return t
}

// add adds times o to c.
func (c *cost) add(o cost, times float64) {
	c.table += times * o.table
	c.read += times * o.read
	for name, u := range o.index {
		if c.index == nil {
			c.index = map[string]float64{}
		}
		c.index[name] += times * u
	}
}

// schema is what the calculator reads of the table's definition.
type schema struct {
	keys    []string // the table's key attributes
	indexes []gsi
}

type gsi struct {
	name    string
	keys    []string
	all     bool     // projection ALL
	include []string // INCLUDE's attributes (none for KEYS_ONLY)
}

func schemaOf(def *dynamodb.CreateTableInput) schema {
	names := func(ks []types.KeySchemaElement) (out []string) {
		for _, k := range ks {
			out = append(out, aws.ToString(k.AttributeName))
		}
		return out
	}
	s := schema{keys: names(def.KeySchema)}
	for _, g := range def.GlobalSecondaryIndexes {
		s.indexes = append(s.indexes, gsi{name: aws.ToString(g.IndexName), keys: names(g.KeySchema),
			all: g.Projection.ProjectionType == types.ProjectionTypeAll, include: g.Projection.NonKeyAttributes})
	}
	return s
}

// entry returns it as index g holds it; nil when it is not in g (it lacks
// one of g's keys, or is nil).
func (s schema) entry(g gsi, it item) item {
	for _, k := range g.keys {
		if it[k] == nil {
			return nil
		}
	}
	if g.all {
		return it
	}
	e := item{}
	for _, name := range slices.Concat(s.keys, g.keys, g.include) {
		if v, ok := it[name]; ok {
			e[name] = v
		}
	}
	return e
}

// write is the cost of one write that turned before into after (nil: no
// item), outside a transaction.
func (s schema) write(before, after item) cost {
	c := cost{table: writeUnits(max(itemSize(before), itemSize(after))), index: map[string]float64{}}
	for _, g := range s.indexes {
		old, cur := s.entry(g, before), s.entry(g, after)
		u := 0.0
		switch {
		case old == nil && cur == nil:
		case old == nil: // enters
			u = writeUnits(itemSize(cur))
		case cur == nil: // leaves
			u = writeUnits(itemSize(old))
		case !reflect.DeepEqual(s.keyOf(g, old), s.keyOf(g, cur)): // moves: delete, put
			u = writeUnits(itemSize(old)) + writeUnits(itemSize(cur))
		case !reflect.DeepEqual(old, cur): // a projected attribute changed
			u = writeUnits(max(itemSize(old), itemSize(cur)))
		}
		if u > 0 {
			c.index[g.name] = u
		}
	}
	return c
}

// id names an item by its table keys.
func (s schema) id(it item) string {
	var b strings.Builder
	for _, name := range s.keys {
		switch v := it[name].(type) {
		case *types.AttributeValueMemberS:
			fmt.Fprintf(&b, "S%q", v.Value)
		case *types.AttributeValueMemberN:
			fmt.Fprintf(&b, "N%q", v.Value)
		case *types.AttributeValueMemberB:
			fmt.Fprintf(&b, "B%q", v.Value)
		}
	}
	return b.String()
}

func (s schema) keyOf(g gsi, it item) item {
	k := item{}
	for _, name := range g.keys {
		k[name] = it[name]
	}
	return k
}
