package main

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestAdminMigrate: `migrate` moves a callback secret still kept on an
// account item (as accounts made before secrets had items of their own keep
// it) to its secret item, where deliveries read it (FindAccount, as the
// dispatcher does), and keeps the account signed. Where a secret item
// already exists it wins. A second run finds nothing; no secret is printed.
func TestAdminMigrate(t *testing.T) {
	st, cfg := newTable(t)
	ctx := context.Background()
	const (
		legacySecret = "legacy-secret-of-the-old-days"
		staleSecret  = "stale-legacy-secret-value"
		itemSecret   = "secret-in-its-own-item"
	)
	accountItem := func(id string) map[string]types.AttributeValue {
		t.Helper()
		out, err := st.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(cfg.TableName), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A#" + id}, "SK": &types.AttributeValueMemberS{Value: "ACCOUNT"}}})
		if err != nil || out.Item == nil {
			t.Fatalf("account item %s: %v", id, err)
		}
		return out.Item
	}
	// setLegacy writes callback_secret on the account item, as SetWebhook did
	// before secrets moved.
	setLegacy := func(id, secret string) {
		t.Helper()
		_, err := st.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(cfg.TableName),
			Key:              map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A#" + id}, "SK": &types.AttributeValueMemberS{Value: "ACCOUNT"}},
			UpdateExpression: aws.String("SET callback_url = :u, callback_secret = :s"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":u": &types.AttributeValueMemberS{Value: "https://hooks.example.com/" + id}, ":s": &types.AttributeValueMemberS{Value: secret}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	legacy, _ := testdb.NewAccount(t, st, "Old Shop", "OLD1")
	setLegacy(legacy.ID, legacySecret)
	both, _ := testdb.NewAccount(t, st, "Both Shop", "BOTH1")
	if _, err := st.UpdateWebhook(ctx, both.ID, ptr("https://hooks.example.com/both"), ptr(itemSecret)); err != nil {
		t.Fatal(err)
	}
	setLegacy(both.ID, staleSecret)
	current, _ := testdb.NewAccount(t, st, "New Shop", "NEW1")
	if _, err := st.UpdateWebhook(ctx, current.ID, ptr("https://hooks.example.com/new"), ptr("a-current-secret-1")); err != nil {
		t.Fatal(err)
	}
	unsigned, _ := testdb.NewAccount(t, st, "Plain Shop", "PLAIN1")
	untouched := map[string]map[string]types.AttributeValue{current.ID: accountItem(current.ID), unsigned.ID: accountItem(unsigned.ID)}
	// An event stored before the feed was sharded: its own item, its JSON
	// in the view.
	evID := business.NewEventIDs(time.Now()).Next()
	evBody := `{"id":"` + evID + `","type":"customer.created","created_at":"2026-11-26 10:15:32","livemode":true,` +
		`"resource":{"type":"customer","id":"9","version":1},"data":{"id":9,"name":"Ama"}}`
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	base := "A#" + unsigned.ID + "#EVENT"
	if _, err := st.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(cfg.TableName), Item: map[string]types.AttributeValue{
		"PK": s(base + "#" + evID), "SK": s("EVENT"), "type": s("event"), "account_id": s(unsigned.ID), "event_id": s(evID),
		"event_type": s("customer.created"), store.TTLAttribute: &types.AttributeValueMemberN{Value: fmt.Sprint(time.Now().Add(time.Hour).Unix())},
		"v":      &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"body": s(evBody)}},
		"GSI1PK": s(base), "GSI1SK": s(evID), "GSI3PK": s(base + "#RES#customer#9"), "GSI3SK": s(evID),
	}}); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	for i, want := range []string{"migrated 2 accounts, 0 records, 0 item ledgers opened, 0 records counted in reports, 0 sales counted in receivables, 0 debts laid out again, 0 items counted in the inventory's worth, 1 events moved to the sharded feed, 0 sales planned their notices\n", "migrated 0 accounts, 0 records, 0 item ledgers opened, 0 records counted in reports, 0 sales counted in receivables, 0 debts laid out again, 0 items counted in the inventory's worth, 0 events moved to the sharded feed, 0 sales planned their notices\n"} { // the second run finds nothing to do
		out.Reset()
		if err := run(ctx, []string{"migrate"}, &out); err != nil || out.String() != want {
			t.Fatalf("migrate, run %d: %v %q, want %q", i+1, err, out.String(), want)
		}
	}
	out.Reset()
	if err := run(ctx, []string{"migrate", "--json"}, &out); err != nil || strings.TrimSpace(out.String()) != `{"debts":0,"events":0,"ledgers":0,"migrated":0,"notices":0,"receivables":0,"records":0,"reported":0,"stock":0}` {
		t.Fatalf("migrate --json: %v %q", err, out.String())
	}
	if body, err := st.FindEvent(ctx, unsigned.ID, evID); err != nil || string(body) != evBody {
		t.Fatalf("the moved event reads %s (%v), want %s", body, err, evBody)
	}

	for id, want := range map[string]string{legacy.ID: legacySecret, both.ID: itemSecret} {
		if _, ok := accountItem(id)["callback_secret"]; ok {
			t.Errorf("account %s still has callback_secret on its item", id)
		}
		_, wh, err := st.FindAccount(ctx, id)
		if err != nil || wh.CallbackSecret != want || wh.CallbackURL != "https://hooks.example.com/"+id {
			t.Errorf("account %s: deliveries would sign with %q to %s (%v), want %q", id, wh.CallbackSecret, wh.CallbackURL, err, want)
		}
		if _, s, err := st.FindWebhookSettings(ctx, id); err != nil || !s.Signed {
			t.Errorf("account %s: settings %+v %v, want signed", id, s, err)
		}
	}
	for id, before := range untouched {
		if after := accountItem(id); !reflect.DeepEqual(before, after) {
			t.Errorf("account %s, which had nothing to migrate, changed", id)
		}
	}

	// An account item with a secret the migration must not overwrite: set
	// one the old way again, and the item's (set through the API) wins.
	if _, err := st.UpdateWebhook(ctx, legacy.ID, nil, ptr("a-newer-secret-via-api")); err != nil {
		t.Fatal(err)
	}
	setLegacy(legacy.ID, legacySecret)
	out.Reset()
	if err := run(ctx, []string{"migrate"}, &out); err != nil || out.String() != "migrated 1 accounts, 0 records, 0 item ledgers opened, 0 records counted in reports, 0 sales counted in receivables, 0 debts laid out again, 0 items counted in the inventory's worth, 0 events moved to the sharded feed, 0 sales planned their notices\n" {
		t.Fatalf("migrate: %v %q", err, out.String())
	}
	if _, wh, _ := st.FindAccount(ctx, legacy.ID); wh.CallbackSecret != "a-newer-secret-via-api" {
		t.Fatalf("the secret item lost to the legacy attribute: deliveries sign with %q", wh.CallbackSecret)
	}

	for _, bad := range []struct{ args, has string }{{"migrate now", "unexpected arguments"}, {"migrate --nope", "flag provided but not defined"}} {
		if err := run(ctx, strings.Fields(bad.args), &out); err == nil || !strings.Contains(err.Error(), bad.has) {
			t.Errorf("%q: error %v, want one mentioning %q", bad.args, err, bad.has)
		}
	}
}
