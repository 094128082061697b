package main

// The meter: a DynamoDB client middleware that measures every call's
// capacity by the rules of capacity.go and records what DynamoDB Local
// reported beside it.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

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

// presentImage returns after, or before when the write removed the item.
func presentImage(after, before item) item {
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
		before, rec.err = m.readImages(ctx, keys)
	}
	out, md, err := next.HandleInitialize(ctx, in)
	if err != nil {
		rec.err = errors.Join(rec.err, err)
	}
	if rec.err == nil {
		if write {
			rec.written = keys
		}
		rec.err = m.fillCost(ctx, &rec, in.Parameters, out.Result, keys, before, write)
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

// readImages reads the items keys name as they are now (nil where missing).
func (m *meter) readImages(ctx context.Context, keys []key) ([]item, error) {
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

// fillCost fills rec's computed cost and what DynamoDB Local reported.
func (m *meter) fillCost(ctx context.Context, rec *metered, p, result any, keys []key, before []item, write bool) error {
	after, err := m.readImages(ctx, keys)
	if err != nil {
		return err
	}
	localTx := -1.0 // a transaction's table WCU as Local counts them
	switch in := p.(type) {
	case *dynamodb.PutItemInput, *dynamodb.UpdateItemInput, *dynamodb.DeleteItemInput:
		rec.calc = m.schema.write(before[0], after[0])
		rec.items = []itemWrite{{presentImage(after[0], before[0]), rec.calc}}
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
				rec.items = append(rec.items, itemWrite{presentImage(after[i], before[i]), twice})
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
	for _, cc := range consumedCapacity(result) {
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

// consumedCapacity returns the ConsumedCapacity of any operation's output.
func consumedCapacity(result any) []types.ConsumedCapacity {
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
			diffs = append(diffs, fmt.Sprintf("%s: calculator %s, Local %s", what, plainNumber(calc), plainNumber(local)))
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
