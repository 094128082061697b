package store_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestTakeTestSend: limit sends per account in each fixed minute; the next
// is refused with the time left in the minute; the next minute starts again;
// other accounts count apart; every count expires through the table's TTL.
func TestTakeTestSend(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	minute := time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC)
	take := func(account string, at time.Time) (bool, time.Duration) {
		t.Helper()
		ok, wait, err := st.TakeTestSend(ctx, account, 3, at)
		if err != nil {
			t.Fatal(err)
		}
		return ok, wait
	}
	for i := 0; i < 3; i++ {
		if ok, _ := take("acct_a", minute.Add(time.Duration(10*i)*time.Second)); !ok {
			t.Fatalf("send %d refused", i+1)
		}
	}
	if ok, wait := take("acct_a", minute.Add(40*time.Second+300*time.Millisecond)); ok || wait != 19*time.Second+700*time.Millisecond {
		t.Fatalf("fourth send: allowed %v, wait %v; want refused, wait 19.7s", ok, wait)
	}
	if ok, wait := take("acct_a", minute.Add(59*time.Second+999*time.Millisecond)); ok || wait != time.Second {
		t.Fatalf("at the window's last instant: allowed %v, wait %v; want refused, wait 1s", ok, wait)
	}
	if ok, _ := take("acct_b", minute.Add(50*time.Second)); !ok {
		t.Fatal("another account was limited")
	}
	if ok, _ := take("acct_a", minute.Add(time.Minute)); !ok {
		t.Fatal("the next minute was refused")
	}

	out, err := st.Client().Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(st.Table()), ConsistentRead: aws.Bool(true),
		FilterExpression: aws.String("begins_with(SK, :p)"), ExpressionAttributeValues: map[string]types.AttributeValue{
			":p": &types.AttributeValueMemberS{Value: "TESTSEND#"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ // PK SK -> count
		"A#acct_a TESTSEND#" + unixMinute(minute):                  "3",
		"A#acct_a TESTSEND#" + unixMinute(minute.Add(time.Minute)): "1",
		"A#acct_b TESTSEND#" + unixMinute(minute):                  "1",
	}
	if len(out.Items) != len(want) {
		t.Fatalf("%d rate-limit items, want %d: %v", len(out.Items), len(want), out.Items)
	}
	for _, it := range out.Items {
		id := it["PK"].(*types.AttributeValueMemberS).Value + " " + it["SK"].(*types.AttributeValueMemberS).Value
		n, _ := it["n"].(*types.AttributeValueMemberN)
		if n == nil || want[id] != n.Value {
			t.Errorf("%s: n %v, want %s", id, it["n"], want[id])
		}
		var exp int64
		if v, ok := it[store.TTLAttribute].(*types.AttributeValueMemberN); ok {
			exp, _ = strconv.ParseInt(v.Value, 10, 64)
		}
		window, _ := strconv.ParseInt(strings.TrimPrefix(id[strings.Index(id, " ")+1:], "TESTSEND#"), 10, 64)
		if end := (window + 1) * 60; exp < end || exp > end+3600 {
			t.Errorf("%s: %s %v, want shortly after its window ends (%d)", id, store.TTLAttribute, it[store.TTLAttribute], end)
		}
	}
}

func unixMinute(t time.Time) string { return strconv.FormatInt(t.Unix()/60, 10) }
