package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestClearStopsAtItsPurgeTime: a clear whose purge has no time left
// answers 202 with purge_complete false (the clear itself has committed),
// instead of deleting until the
// function's deadline; a later clear with time completes, and nothing of
// the retired twin is left in its partition.
func TestClearStopsAtItsPurgeTime(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "SHOPCLEAR")
	_, testKey, err := st.CreateKey(ctx, a.ID, nil, business.APIKey{Name: "ci", Scopes: []string{business.ScopeAll}})
	if err != nil {
		t.Fatal(err)
	}
	hurried := httptest.NewServer(api.NewServer(st, testdb.Quiet(), 0).SetPurgeFor(time.Nanosecond).Handler(api.Routes))
	defer hurried.Close()
	normal := httptest.NewServer(api.NewServer(st, testdb.Quiet(), 0).Handler(api.Routes))
	defer normal.Close()
	post := func(base, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testKey)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s: not JSON: %s", path, raw)
		}
		return res.StatusCode, out
	}
	for i := 0; i < 3; i++ {
		if code, body := post(normal.URL, "/api/v1/customers/add", `{"name":"Ama"}`); code != 200 {
			t.Fatalf("customer: %d %v", code, body)
		}
	}
	retired := business.TwinID(a.ID, 1)
	code, body := post(hurried.URL, "/api/v1/test-data/clear", "")
	if data, _ := body["data"].(map[string]any); code != 202 || data["purge_complete"] != false {
		t.Fatalf("a clear without purge time: %d %v, want 202 and purge_complete false", code, body)
	}
	if left := partitionSize(t, st.Client(), st.Table(), "A#"+retired); left == 0 {
		t.Fatal("the retired twin's partition is empty: the clear deleted past its purge time")
	}
	code, body = post(normal.URL, "/api/v1/test-data/clear", "")
	if data, _ := body["data"].(map[string]any); code != 200 || data["purge_complete"] != true {
		t.Fatalf("a later clear: %d %v, want 200 and purge_complete true", code, body)
	}
	if left := partitionSize(t, st.Client(), st.Table(), "A#"+retired); left != 0 {
		t.Errorf("%d items left in the retired twin's partition after the purge completed", left)
	}
}

// partitionSize counts the items of one table partition.
func partitionSize(t *testing.T, db *dynamodb.Client, table, pk string) int {
	t.Helper()
	out, err := db.Query(context.Background(), &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Items)
}

// TestClearNearEmptyTwinRoundTrips: clearing a test twin that holds one
// customer reads the twin's partitions side by side, not one after
// another: the request's DynamoDB calls, counted by SDK middleware, form at
// most 8 sequential round trips (the clear's read and transaction, the
// purging list, the purge's reads at once, then its deletes), and the twin
// is gone.
func TestClearNearEmptyTwinRoundTrips(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	_, testKey, err := e.store.CreateKey(ctx, e.acct.ID, nil, business.APIKey{Name: "ci", Scopes: []string{business.ScopeAll}})
	if err != nil {
		t.Fatal(err)
	}
	want(t, e.req("POST", "/api/v1/customers/add", testKey, map[string]any{"name": "Ama"}), 200, "")
	// A first request with the test key caches it, as a CI pipeline's has.
	want(t, e.req("GET", "/api/v1/user/authenticate", testKey, nil), 200, "Authenticated")
	retired := business.TwinID(e.acct.ID, 1)
	mark := e.spans.Mark()
	r := e.req("POST", "/api/v1/test-data/clear", testKey, nil)
	calls, depth := e.spans.Since(mark)
	want(t, r, 200, "")
	if r.data()["purge_complete"] != true {
		t.Fatalf("clear: %s, want purge_complete true", r.raw)
	}
	t.Logf("a clear of a twin with one customer: %d DynamoDB calls, %d sequential", calls, depth)
	if depth > 8 {
		t.Errorf("a clear of a twin with one customer made %d sequential DynamoDB round trips (%d calls), want at most 8", depth, calls)
	}
	if left := partitionSize(t, e.store.Client(), e.store.Table(), "A#"+retired); left != 0 {
		t.Errorf("%d items left in the retired twin's partition", left)
	}
}
