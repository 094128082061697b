package main

// The capacity DynamoDB bills for each call, computed from the sizes of the
// items the call read or wrote with AWS's published rules, and a client
// middleware that measures every call so (see cost.go for the report).
//
// The rules, as the AWS documentation states them (developer guide: "DynamoDB
// item sizes and formats", "Capacity unit consumption for reads / writes",
// GSI.html "Write capacity units", transaction-apis.html "Capacity
// management for transactions"):
//   - An item's size is the sum of its attribute names and values: strings
//     their UTF-8 bytes, binary its bytes, numbers about one byte per two
//     significant digits plus one, Boolean and null one byte, a list or map 3
//     bytes plus one per element plus its elements (and a map's keys), a set
//     the sum of its elements.
//   - PutItem, UpdateItem and DeleteItem cost ceil(size / 1 KB) write units,
//     size being the larger of the item before and after the write, at
//     least 1 (a Delete that finds nothing costs 1).
//   - A global secondary index is written when the item enters it (1 write),
//     leaves it (1 write, a delete), moves in it because an index key changed
//     (2 writes: delete and put), or stays with a projected attribute changed
//     (1 write); not at all otherwise. An index entry is the table's keys, the
//     index's keys and the projected attributes (ALL: the whole item;
//     INCLUDE: those listed; KEYS_ONLY: none), and costs ceil(entry size /
//     1 KB) per write (the larger of before and after when it stays).
//   - "DynamoDB performs two underlying reads or writes of every item in the
//     transaction: one to prepare the transaction and one to commit": every
//     write of a TransactWriteItems counts twice ("each transaction writes
//     three 500-byte items ... you would need to provision six WCUs"). The
//     documentation says so of the items of the table; the index writes a
//     transaction causes are counted twice as well, an upper bound (DynamoDB
//     Local counts them so). DynamoDB Local (2026-05-28) reports a
//     transaction's units per table and per index, but adds its items'
//     figures as a set: items that cost the same count once, so three
//     500-byte items cost 2 WCU there, 6 by AWS's example; the calculator
//     follows AWS.
//   - A ConditionCheck in a TransactWriteItems is one of the transaction's
//     items, so it costs two underlying operations too; measured against
//     DynamoDB (martinhicks.dev, "What a conditional DynamoDB transaction
//     actually costs") a ConditionCheck of a small item is billed 2 write
//     units, as a write. The documentation gives no size rule for it; this
//     counts it as two writes of its item, ceil(size / 1 KB) each. DynamoDB
//     Local bills it as two reads, ceil(size / 4 KB) each: the same for an
//     item under 1 KB (the store's checks are of small items), less above.
//   - GetItem costs ceil(size / 4 KB) read units, BatchGetItem that for each
//     item, Query ceil(total size of the items or index entries it read /
//     4 KB); eventually consistent reads (every read of an index) half. A read
//     that finds nothing still costs one unit (half, eventually consistent):
//     "If you perform a read operation on an item that does not exist,
//     DynamoDB still consumes provisioned read throughput". DynamoDB Local
//     charges nothing for an empty Query or for a key of a BatchGetItem that
//     finds nothing; the calculator follows AWS.
//
// Sizes: DynamoDB Local sizes items exactly by these rules, numbers as
// numberSize does (TestCapacityItemSize).

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
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

// units is ceil(size / unit), at least 1.
func units(size, unit int) float64 { return math.Max(1, math.Ceil(float64(size)/float64(unit))) }

func writeUnits(size int) float64 { return units(size, 1024) }

func readUnits(size int, consistent bool) float64 {
	if consistent {
		return units(size, 4096)
	}
	return units(size, 4096) / 2
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

// meter is a DynamoDB client middleware: while on, it asks every call for
// the capacity it consumed (ReturnConsumedCapacity INDEXES), computes the
// call's cost from the sizes of the items it touched (read with plain, an
// unmetered client, before and after a write), and records both.
type meter struct {
	schema schema
	plain  *dynamodb.Client
	on     atomic.Bool
	mu     sync.Mutex
	calls  []metered
}

// metered is one call as the meter saw it.
type metered struct {
	op           string
	written      []key // items the call wrote
	calc, local  cost  // local: what DynamoDB Local reported
	localIndexes bool  // Local reported units per index
	items        []itemWrite
	note         string
	err          error
}

// itemWrite is one item a write call wrote, as it is after the call (as it
// was, for a delete), and what writing it cost (twice, in a transaction).
type itemWrite struct {
	image item
	cost  cost
}

// present returns after, or before when the write removed the item.
func present(after, before item) item {
	if after != nil {
		return after
	}
	return before
}

// key names one item of a table.
type key struct {
	table string
	key   item
}

// newMeter returns a meter for a table defined by def; plain reads the
// images.
func newMeter(def *dynamodb.CreateTableInput, plain *dynamodb.Client) *meter {
	return &meter{schema: schemaOf(def), plain: plain}
}

// option adds the meter to a DynamoDB client.
func (m *meter) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("MeterCapacity", m.handle), middleware.After)
	})
}

// start turns the meter on with an empty record; stop turns it off and
// returns what it recorded.
func (m *meter) start() {
	m.mu.Lock()
	m.calls = nil
	m.mu.Unlock()
	m.on.Store(true)
}

func (m *meter) stop() []metered {
	m.on.Store(false)
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

func (m *meter) handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	if !m.on.Load() {
		return next.HandleInitialize(ctx, in)
	}
	in.Parameters = withCapacity(in.Parameters)
	keys, write := keysOf(in.Parameters, m.schema.keys)
	rec := metered{op: strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%T", in.Parameters), "*dynamodb."), "Input")}
	var before []item
	if write {
		before, rec.err = m.images(ctx, keys)
	}
	out, md, err := next.HandleInitialize(ctx, in)
	if err != nil {
		rec.err = errors.Join(rec.err, err)
	}
	if rec.err == nil {
		if write {
			rec.written = keys
		}
		rec.err = m.measure(ctx, &rec, in.Parameters, out.Result, keys, before, write)
	}
	m.mu.Lock()
	m.calls = append(m.calls, rec)
	m.mu.Unlock()
	return out, md, err
}

// withCapacity returns a copy of the input p that asks for the consumed
// capacity, or p itself when its operation reports none.
func withCapacity(p any) any {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return p
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	f := c.Elem().FieldByName("ReturnConsumedCapacity")
	if !f.IsValid() {
		return p
	}
	f.Set(reflect.ValueOf(types.ReturnConsumedCapacityIndexes))
	return c.Interface()
}

// keysOf returns the items an operation reads or writes, in its order, and
// whether it writes.
func keysOf(p any, tableKeys []string) ([]key, bool) {
	keyIn := func(table *string, it item) key {
		k := item{}
		for _, name := range tableKeys {
			k[name] = it[name]
		}
		return key{aws.ToString(table), k}
	}
	switch in := p.(type) {
	case *dynamodb.PutItemInput:
		return []key{keyIn(in.TableName, in.Item)}, true
	case *dynamodb.UpdateItemInput:
		return []key{keyIn(in.TableName, in.Key)}, true
	case *dynamodb.DeleteItemInput:
		return []key{keyIn(in.TableName, in.Key)}, true
	case *dynamodb.TransactWriteItemsInput:
		var keys []key
		for _, a := range in.TransactItems {
			switch {
			case a.Put != nil:
				keys = append(keys, keyIn(a.Put.TableName, a.Put.Item))
			case a.Update != nil:
				keys = append(keys, keyIn(a.Update.TableName, a.Update.Key))
			case a.Delete != nil:
				keys = append(keys, keyIn(a.Delete.TableName, a.Delete.Key))
			case a.ConditionCheck != nil:
				keys = append(keys, keyIn(a.ConditionCheck.TableName, a.ConditionCheck.Key))
			}
		}
		return keys, true
	case *dynamodb.GetItemInput:
		return []key{keyIn(in.TableName, in.Key)}, false
	case *dynamodb.BatchGetItemInput:
		var keys []key
		for table, ka := range in.RequestItems {
			for _, k := range ka.Keys {
				keys = append(keys, keyIn(&table, k))
			}
		}
		return keys, false
	}
	return nil, false
}

// images reads the items keys name as they are now (nil where missing).
func (m *meter) images(ctx context.Context, keys []key) ([]item, error) {
	out := make([]item, len(keys))
	for i, k := range keys {
		got, err := m.plain.GetItem(ctx, &dynamodb.GetItemInput{TableName: &k.table, Key: k.key, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return nil, fmt.Errorf("read image: %w", err)
		}
		out[i] = got.Item
	}
	return out, nil
}

// measure fills rec's computed cost and what DynamoDB Local reported.
func (m *meter) measure(ctx context.Context, rec *metered, p, result any, keys []key, before []item, write bool) error {
	after, err := m.images(ctx, keys)
	if err != nil {
		return err
	}
	localTx := -1.0 // a transaction's table WCU as Local counts them
	switch in := p.(type) {
	case *dynamodb.PutItemInput, *dynamodb.UpdateItemInput, *dynamodb.DeleteItemInput:
		rec.calc = m.schema.write(before[0], after[0])
		rec.items = []itemWrite{{present(after[0], before[0]), rec.calc}}
	case *dynamodb.TransactWriteItemsInput:
		// What Local reports instead (see the note below): the items'
		// figures added as a set (items whose table and index figures are
		// the same count once), a ConditionCheck as two reads, a Delete
		// that finds nothing as 1.
		asSet := map[string]bool{}
		localTx = 0
		for i, a := range in.TransactItems {
			var local float64
			var w cost
			if a.ConditionCheck != nil {
				rec.calc.table += 2 * writeUnits(itemSize(before[i]))
				local = 2 * readUnits(itemSize(before[i]), true)
			} else {
				w = m.schema.write(before[i], after[i])
				rec.calc.add(w, 2)
				var twice cost
				twice.add(w, 2)
				rec.items = append(rec.items, itemWrite{present(after[i], before[i]), twice})
				local = 2 * w.table
				if before[i] == nil && after[i] == nil {
					local = 1
				}
			}
			if id := fmt.Sprint(local, w.index); !asSet[id] {
				asSet[id], localTx = true, localTx+local
			}
		}
	case *dynamodb.GetItemInput:
		rec.calc.read = readUnits(itemSize(after[0]), aws.ToBool(in.ConsistentRead))
	case *dynamodb.BatchGetItemInput:
		consistent := false
		for _, ka := range in.RequestItems { // the store reads one table
			consistent = aws.ToBool(ka.ConsistentRead)
		}
		for _, it := range after {
			rec.calc.read += readUnits(itemSize(it), consistent)
			if it == nil {
				rec.note = "a BatchGetItem key that finds nothing: a read of an item that does not exist by AWS's rules, nothing by Local"
			}
		}
	case *dynamodb.QueryInput:
		out := result.(*dynamodb.QueryOutput)
		size, err := m.queryRead(ctx, in, out)
		if err != nil {
			return err
		}
		rec.calc.read = readUnits(size, aws.ToBool(in.ConsistentRead) && in.IndexName == nil)
		if out.ScannedCount == 0 {
			rec.note = "an empty Query: a read of an item that does not exist by AWS's rules, nothing by Local"
		}
	default:
		return fmt.Errorf("%s: no capacity rule for this operation", rec.op)
	}
	for _, cc := range consumed(result) {
		if !write {
			rec.local.read += aws.ToFloat64(cc.CapacityUnits)
			continue
		}
		if cc.Table != nil {
			rec.local.table += aws.ToFloat64(cc.Table.CapacityUnits)
		} else {
			rec.local.table += aws.ToFloat64(cc.CapacityUnits)
		}
		for name, u := range cc.GlobalSecondaryIndexes {
			rec.local.add(cost{index: map[string]float64{name: aws.ToFloat64(u.CapacityUnits)}}, 1)
			rec.localIndexes = true
		}
	}
	if rec.local.table != rec.calc.table && rec.local.table == localTx {
		rec.note = "Local adds up a transaction's items as a set, counting items that cost the same (table and indexes) once, and a ConditionCheck as two reads; " +
			"AWS counts every item (its example: three 500-byte items, 6 WCU)"
	}
	return nil
}

// consumed returns the ConsumedCapacity of any operation's output.
func consumed(result any) []types.ConsumedCapacity {
	v := reflect.ValueOf(result)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	f := v.Elem().FieldByName("ConsumedCapacity")
	if !f.IsValid() {
		return nil
	}
	switch cc := f.Interface().(type) {
	case *types.ConsumedCapacity:
		if cc != nil {
			return []types.ConsumedCapacity{*cc}
		}
	case []types.ConsumedCapacity:
		return cc
	}
	return nil
}

// queryRead returns the bytes a Query read: the items (on an index, the
// entries) it evaluated, whatever its filter kept and its projection
// returned. It gets them again by the same key condition, from the same
// start, limited to the count the Query evaluated.
func (m *meter) queryRead(ctx context.Context, in *dynamodb.QueryInput, out *dynamodb.QueryOutput) (int, error) {
	if out.ScannedCount == 0 {
		return 0, nil
	}
	cond := aws.ToString(in.KeyConditionExpression)
	again, err := m.plain.Query(ctx, &dynamodb.QueryInput{
		TableName: in.TableName, IndexName: in.IndexName, KeyConditionExpression: in.KeyConditionExpression,
		ExpressionAttributeNames: usedIn(cond, in.ExpressionAttributeNames), ExpressionAttributeValues: usedIn(cond, in.ExpressionAttributeValues),
		ExclusiveStartKey: in.ExclusiveStartKey, ScanIndexForward: in.ScanIndexForward, ConsistentRead: in.ConsistentRead,
		Limit: aws.Int32(out.ScannedCount),
	})
	if err != nil {
		return 0, fmt.Errorf("query again: %w", err)
	}
	if again.Count != out.ScannedCount {
		return 0, fmt.Errorf("query again: %d items, the query evaluated %d", again.Count, out.ScannedCount)
	}
	size := 0
	for _, it := range again.Items {
		size += itemSize(it)
	}
	return size, nil
}

// usedIn returns the entries of placeholders (#name, :value) that expr uses.
func usedIn[V any](expr string, placeholders map[string]V) map[string]V {
	var out map[string]V
	for p, v := range placeholders {
		if regexp.MustCompile(regexp.QuoteMeta(p) + `\b`).MatchString(expr) {
			if out == nil {
				out = map[string]V{}
			}
			out[p] = v
		}
	}
	return out
}

// mismatch describes where the calculator and Local differ on rec: the
// table's and each index's write units (for a transaction, the indexes only
// when Local reported them) or the read units; "" when they agree.
func (rec metered) mismatch() string {
	var diffs []string
	differ := func(what string, calc, local float64) {
		if calc != local {
			diffs = append(diffs, fmt.Sprintf("%s: calculator %s, Local %s", what, num(calc), num(local)))
		}
	}
	differ("table WCU", rec.calc.table, rec.local.table)
	differ("RCU", rec.calc.read, rec.local.read)
	if rec.op != "TransactWriteItems" || rec.localIndexes {
		names := map[string]bool{}
		for n := range rec.calc.index {
			names[n] = true
		}
		for n := range rec.local.index {
			names[n] = true
		}
		for _, n := range slices.Sorted(maps.Keys(names)) {
			differ(n+" WCU", rec.calc.index[n], rec.local.index[n])
		}
	}
	return strings.Join(diffs, "; ")
}

// num prints a figure without trailing zeros.
func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
