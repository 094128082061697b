package store_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func spec(t *testing.T, name, mode string, scopes ...string) business.APIKey {
	t.Helper()
	k, err := business.NewKeySpec(name, scopes, mode)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// makeLegacy puts account a and its one key back in the shape they had
// before keys had names: key_hash on the account, no registry, and a key
// item with only the account's copy.
func makeLegacy(t *testing.T, st *store.Store, a business.Account, key string) {
	t.Helper()
	ctx := context.Background()
	hash := business.HashAPIKey(key)
	if _, err := st.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(st.Table()), Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A#" + a.ID}, "SK": &types.AttributeValueMemberS{Value: "ACCOUNT"}},
		UpdateExpression:          aws.String("SET key_hash = :h REMOVE api_keys"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":h": &types.AttributeValueMemberS{Value: hash}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(st.Table()), Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "KEY#" + hash}, "SK": &types.AttributeValueMemberS{Value: "KEY"}},
		UpdateExpression: aws.String("REMOVE key_id, key_name, scopes, live, key_created_at, key_prefix"),
	}); err != nil {
		t.Fatal(err)
	}
}

// An account from before keys had names keeps its key as a "*" live key,
// listed under an id derived from its hash; the first change of the
// registry writes it in, and it can then be revoked like any other.
func TestLegacyKeyIsAnAllScopesLiveKey(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, key := testdb.NewAccount(t, st, "Old Shop", "OLD1")
	makeLegacy(t, st, a, key)
	hash := business.HashAPIKey(key)
	got, err := st.FindAccountByKeyHash(ctx, hash)
	if err != nil || got.ID != a.ID || !got.Key.Live || !got.Key.Allows("keys:write") || got.Key.ID != business.LegacyKeyID(hash) {
		t.Fatalf("legacy key: %+v %v", got, err)
	}
	ks, err := st.ListKeys(ctx, a.ID)
	if err != nil || len(ks) != 1 || ks[0].ID != business.LegacyKeyID(hash) || ks[0].Prefix != "" || ks[0].Scopes[0] != "*" {
		t.Fatalf("listed: %+v %v", ks, err)
	}
	k2, secret, err := st.CreateKey(ctx, a.ID, nil, spec(t, "Second", "live", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if ks, _ = st.ListKeys(ctx, a.ID); len(ks) != 2 || !slices.ContainsFunc(ks, func(k business.APIKey) bool { return k.ID == business.LegacyKeyID(hash) }) ||
		!slices.ContainsFunc(ks, func(k business.APIKey) bool { return k.ID == k2.ID }) {
		t.Fatalf("after a create: %+v", ks)
	}
	if _, err := st.RevokeKey(ctx, a.ID, nil, business.LegacyKeyID(hash)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.FindAccountByKeyHash(ctx, hash); business.ErrorCode(err) != business.EUNAUTHORIZED {
		t.Fatalf("revoked legacy key: %v", err)
	}
	if got, err := st.FindAccountByKeyHash(ctx, business.HashAPIKey(secret)); err != nil || got.Key.ID != k2.ID {
		t.Fatalf("second key: %+v %v", got, err)
	}
}

// Creates racing at the limit: exactly one of two concurrent creates of the
// 20th key wins; the other is 409 and leaves no key item behind.
func TestConcurrentCreatesKeepTheLimit(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Busy Shop", "BUSY1")
	for i := 1; i < business.MaxAPIKeys-1; i++ {
		if _, _, err := st.CreateKey(ctx, a.ID, nil, spec(t, fmt.Sprintf("Till %d", i), "live", "sales:write")); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = st.CreateKey(ctx, a.ID, nil, spec(t, fmt.Sprintf("Racer %d", i), "test", "sales:read"))
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case business.ErrorCode(err) == business.ECONFLICT:
		default:
			t.Fatalf("racer: %v", err)
		}
	}
	ks, err := st.ListKeys(ctx, a.ID)
	if err != nil || won != 1 || len(ks) != business.MaxAPIKeys {
		t.Fatalf("won %d, %d keys, %v", won, len(ks), err)
	}
	if n := countKeyItems(t, st, a.ID); n != business.MaxAPIKeys {
		t.Fatalf("%d key items for %d keys", n, business.MaxAPIKeys)
	}
}

// Two keys that may manage keys revoke each other at once: one revocation
// wins, the other is 409, and a live keys:write key remains.
func TestConcurrentRevokesKeepAKeyManager(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "SHOP2")
	b, _, err := st.CreateKey(ctx, a.ID, nil, spec(t, "Admin", "live", "keys:write"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.CreateKey(ctx, a.ID, nil, spec(t, "Test admin", "test", "*")); err != nil { // a test key does not count
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, id := range []string{a.Key.ID, b.ID} {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = st.RevokeKey(ctx, a.ID, nil, id) }()
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("both or neither revoked: %v / %v", errs[0], errs[1])
	}
	for _, err := range errs {
		if err != nil && business.ErrorCode(err) != business.ECONFLICT {
			t.Fatalf("loser: %v", err)
		}
	}
	ks, _ := st.ListKeys(ctx, a.ID)
	managers := 0
	for _, k := range ks {
		if k.Live && k.ManagesKeys() {
			managers++
		}
	}
	if managers != 1 {
		t.Fatalf("%d live key managers left: %+v", managers, ks)
	}
}

// A settings change reaches every key's copy of its account (both modes) and
// the test twin, so a key read from the table shows the new name at once.
func TestSettingsReachEveryKey(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, key := testdb.NewAccount(t, st, "Shop", "SHOP3")
	var secrets []string
	for i, mode := range []string{"live", "test", "test"} {
		_, s, err := st.CreateKey(ctx, a.ID, nil, spec(t, fmt.Sprintf("K%d", i), mode, "sales:read"))
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, s)
	}
	name, tz := "Renamed Shop", "Africa/Nairobi"
	if _, err := st.UpdateSettings(ctx, a.ID, store.SettingsChange{Name: &name, Timezone: &tz}); err != nil {
		t.Fatal(err)
	}
	for _, s := range append(secrets, key) {
		got, err := st.FindAccountByKeyHash(ctx, business.HashAPIKey(s))
		if err != nil || got.Name != name || got.Timezone != tz {
			t.Fatalf("key %s: %+v %v", business.KeyPrefix(s), got, err)
		}
	}
	twin, err := st.FindSettings(ctx, business.TwinID(a.ID, 1))
	if err != nil || twin.Account.Name != name || len(twin.Timezones) != 2 {
		t.Fatalf("twin settings: %+v %v", twin, err)
	}
}

func countKeyItems(t *testing.T, st *store.Store, account string) int {
	t.Helper()
	out, err := st.Client().Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(st.Table()),
		FilterExpression:          aws.String("#t = :k AND begins_with(account_id, :a)"),
		ExpressionAttributeNames:  map[string]string{"#t": "type"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":k": &types.AttributeValueMemberS{Value: "api_key"}, ":a": &types.AttributeValueMemberS{Value: account}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Items)
}
