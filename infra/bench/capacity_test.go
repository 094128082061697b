package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"bizdata/shared/app"
	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// meteredTable returns a client with a meter over a fresh table made from
// the real table definition, and the table's name.
func meteredTable(t *testing.T) (*dynamodb.Client, *string, *meter) {
	t.Helper()
	plain, err := app.NewDynamoDB(context.Background(), testdb.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	m := newMeter(store.TableDefinition("any"), plain)
	st, cfg := testdb.NewStore(t, m.option)
	return st.Client(), aws.String(cfg.TableName), m
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// testItem is an item of about size bytes; indexed, it has the keys of
// every index and a value for every attribute an index includes.
func testItem(m *meter, pk string, size int, indexed bool) item {
	it := item{"PK": s(pk), "SK": s("ITEM"), "type": s("test"), "amount": &types.AttributeValueMemberN{Value: "1234.50"}}
	if indexed {
		for _, g := range m.schema.indexes {
			it[g.keys[0]], it[g.keys[1]] = s(g.name+"#"+pk), s("2026-01-01#"+pk)
			for _, name := range g.include {
				it[name] = &types.AttributeValueMemberM{Value: item{"name": s("projected " + name), "n": &types.AttributeValueMemberN{Value: "7"}}}
			}
		}
	}
	it["body"] = s(strings.Repeat("x", max(1, size-itemSize(it)-len("body"))))
	return it
}

// checkAgainstLocal runs fn with the meter on and requires every call it
// made to cost what DynamoDB Local reports.
func checkAgainstLocal(t *testing.T, m *meter, what string, fn func(ctx context.Context) error) []metered {
	t.Helper()
	m.start()
	err := fn(context.Background())
	calls := m.stop()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(calls) == 0 {
		t.Fatalf("%s: no call recorded", what)
	}
	for _, c := range calls {
		if c.err != nil {
			t.Fatalf("%s: %s: %v", what, c.op, c.err)
		}
		if d := c.mismatch(); d != "" {
			t.Errorf("%s: %s: %s", what, c.op, d)
		}
	}
	return calls
}

// The calculator gives what DynamoDB Local reports for writes and reads of
// items of several sizes, in and out of the real table's indexes.
func TestCapacityAgainstLocal(t *testing.T) {
	db, table, m := meteredTable(t)
	put := func(it item) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: it})
			return err
		}
	}
	update := func(pk, expr string, values item) func(context.Context) error {
		return func(ctx context.Context) error {
			if len(values) == 0 {
				values = nil
			}
			_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: item{"PK": s(pk), "SK": s("ITEM")},
				UpdateExpression: aws.String(expr), ExpressionAttributeValues: values})
			return err
		}
	}
	first, second := m.schema.indexes[0], m.schema.indexes[1]
	cases := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"put small, no index keys", put(testItem(m, "small", 200, false))},
		{"put 1.5 KB, no index keys", put(testItem(m, "mid", 1500, false))},
		{"put 5 KB, every index", put(testItem(m, "five", 5*1024, true))},
		{"put 150 KB, every index", put(testItem(m, "big", 150*1024, true))},
		{"put 5 KB again, unchanged", put(testItem(m, "five", 5*1024, true))},
		{"update 150 KB: a large attribute shrinks", update("big", "SET body = :b", item{":b": s(strings.Repeat("y", 1000))})},
		{"update 5 KB: an included attribute changes", update("five", "SET amount = :a", item{":a": &types.AttributeValueMemberN{Value: "99"}})},
		{"update 5 KB: an index key changes (moves)", update("five", "SET "+first.keys[1]+" = :k", item{":k": s("2027-01-01#five")})},
		{"update 5 KB: leaves an index", update("five", "REMOVE "+second.keys[0], nil)},
		{"update small: enters every index", func(ctx context.Context) error {
			var sets []string
			values := item{}
			for i, g := range m.schema.indexes {
				sets = append(sets, fmt.Sprintf("%s = :p%d, %s = :s%d", g.keys[0], i, g.keys[1], i))
				values[fmt.Sprintf(":p%d", i)], values[fmt.Sprintf(":s%d", i)] = s(g.name+"#small"), s("2026#small")
			}
			return update("small", "SET "+strings.Join(sets, ", "), values)(ctx)
		}},
		// Items of different costs: DynamoDB Local counts items of a
		// transaction that cost the same once (TestCapacityLocalDiffers).
		{"transaction: put 5 KB, update 1.5 KB, check small, delete the shrunk big item", func(ctx context.Context) error {
			_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: table, Item: testItem(m, "tx", 5*1024, true)}},
				{Update: &types.Update{TableName: table, Key: item{"PK": s("mid"), "SK": s("ITEM")}, UpdateExpression: aws.String("SET amount = :a"),
					ExpressionAttributeValues: item{":a": &types.AttributeValueMemberN{Value: "2"}}}},
				{ConditionCheck: &types.ConditionCheck{TableName: table, Key: item{"PK": s("small"), "SK": s("ITEM")}, ConditionExpression: aws.String("attribute_exists(PK)")}},
				{Delete: &types.Delete{TableName: table, Key: item{"PK": s("big"), "SK": s("ITEM")}}},
			}})
			return err
		}},
		{"get 5 KB, 1.5 KB, small, missing: strong and eventual", func(ctx context.Context) error {
			for _, pk := range []string{"five", "mid", "small", "missing"} {
				for _, consistent := range []bool{true, false} {
					if _, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: item{"PK": s(pk), "SK": s("ITEM")}, ConsistentRead: aws.Bool(consistent)}); err != nil {
						return err
					}
				}
			}
			return nil
		}},
		{"batch get 5 KB, 1.5 KB, small", func(ctx context.Context) error {
			_, err := db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{*table: {ConsistentRead: aws.Bool(true),
				Keys: []item{{"PK": s("five"), "SK": s("ITEM")}, {"PK": s("mid"), "SK": s("ITEM")}, {"PK": s("small"), "SK": s("ITEM")}}}}})
			return err
		}},
		{"query the table, strong", func(ctx context.Context) error {
			_, err := db.Query(ctx, &dynamodb.QueryInput{TableName: table, KeyConditionExpression: aws.String("PK = :p"),
				ExpressionAttributeValues: item{":p": s("tx")}, ConsistentRead: aws.Bool(true)})
			return err
		}},
		{"query every index, with a filter and a projection", func(ctx context.Context) error {
			for _, g := range m.schema.indexes {
				for _, pk := range []string{"tx", "small"} {
					_, err := db.Query(ctx, &dynamodb.QueryInput{TableName: table, IndexName: aws.String(g.name),
						KeyConditionExpression: aws.String("#p = :p"), FilterExpression: aws.String("SK = :nothing"), ProjectionExpression: aws.String("PK"),
						ExpressionAttributeNames:  map[string]string{"#p": g.keys[0]},
						ExpressionAttributeValues: item{":p": s(g.name + "#" + pk), ":nothing": s("none")}})
					if err != nil {
						return err
					}
				}
			}
			return nil
		}},
	}
	for _, c := range cases {
		checkAgainstLocal(t, m, c.name, c.fn)
	}
}

// Where DynamoDB Local departs from AWS's published rules, the calculator
// follows AWS (see capacity.go); this pins what Local does.
func TestCapacityLocalDiffers(t *testing.T) {
	db, table, m := meteredTable(t)
	ctx := context.Background()
	m.start()
	// AWS's example (transaction-apis.html): a transaction writing three
	// 500-byte items costs 6 WCU. Local reports 2: it adds the items'
	// figures as a set.
	var puts []types.TransactWriteItem
	for _, pk := range []string{"a", "b", "c"} {
		puts = append(puts, types.TransactWriteItem{Put: &types.Put{TableName: table, Item: testItem(m, pk, 500, false)}})
	}
	_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: puts})
	if err != nil {
		t.Fatal(err)
	}
	// A read that finds nothing costs a unit by AWS's rules; Local charges
	// an empty Query and a BatchGetItem key that finds nothing nothing.
	_, err = db.Query(ctx, &dynamodb.QueryInput{TableName: table, KeyConditionExpression: aws.String("PK = :p"), ExpressionAttributeValues: item{":p": s("none")}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{*table: {ConsistentRead: aws.Bool(true),
		Keys: []item{{"PK": s("a"), "SK": s("ITEM")}, {"PK": s("none"), "SK": s("ITEM")}}}}})
	if err != nil {
		t.Fatal(err)
	}
	got := m.stop()
	want := []struct{ calc, local float64 }{{6, 2}, {0.5, 0}, {2, 1}}
	for i, c := range got {
		calc, local := c.calc.table+c.calc.read, c.local.table+c.local.read
		if c.err != nil || calc != want[i].calc || local != want[i].local || c.note == "" {
			t.Errorf("%s: calculator %v, Local %v (want %v, %v), note %q, err %v", c.op, calc, local, want[i].calc, want[i].local, c.note, c.err)
		}
	}
}

// itemSize counts bytes as DynamoDB Local does: an item padded to exactly
// 1024 bytes by itemSize costs 1 WCU, one byte more 2.
func TestCapacityItemSize(t *testing.T) {
	db, table, m := meteredTable(t)
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	values := []types.AttributeValue{
		n("0"), n("7"), n("12"), n("123"), n("1234"), n("1.5"), n("12.5"), n("0.001"), n("0.01"), n("100"), n("120"),
		n("123456.78"), n("99999999.99"), n("-5"), n("1E+3"), n("1763650000"),
		s("é"), &types.AttributeValueMemberB{Value: []byte{1, 2, 3}}, &types.AttributeValueMemberBOOL{Value: true},
		&types.AttributeValueMemberNULL{Value: true}, &types.AttributeValueMemberL{},
		&types.AttributeValueMemberL{Value: []types.AttributeValue{s("ab"), n("1.25")}},
		&types.AttributeValueMemberM{Value: item{"k": s("ab"), "kk": &types.AttributeValueMemberM{Value: item{"j": n("3")}}}},
		&types.AttributeValueMemberSS{Value: []string{"ab", "c"}}, &types.AttributeValueMemberNS{Value: []string{"1", "123"}},
	}
	for i, v := range values {
		for _, extra := range []int{0, 1} {
			it := item{"PK": s(fmt.Sprint("size", i)), "SK": s("ITEM"), "v": v}
			it["pad"] = s(strings.Repeat("p", 1024+extra-itemSize(it)-len("pad")))
			m.start()
			_, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: table, Item: it})
			calls := m.stop()
			if err != nil {
				t.Fatal(err)
			}
			if got := calls[0].local.table; got != float64(1+extra) {
				t.Errorf("%#v: an item of %d bytes by itemSize costs %v WCU in Local", v, itemSize(it), got)
			}
		}
	}
}
