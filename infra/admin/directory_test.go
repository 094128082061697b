package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestAdminIndexSkipsTestTwins: an account with a test twin (made, as the
// API makes it, by its first test key) is one account of the directory:
// `account index` finds nothing to add and exits 0, and on an older table,
// whether the account has no entry or its entry names the twin, the entry
// ends up naming the live account, never the twin.
func TestAdminIndexSkipsTestTwins(t *testing.T) {
	st, cfg := newTable(t)
	ctx := context.Background()
	var out bytes.Buffer
	if err := run(ctx, strings.Fields("account create --name Demo --business-code DEMO01 --currency GHS --json"), &out); err != nil {
		t.Fatal(err)
	}
	var created map[string]string
	_ = json.Unmarshal(out.Bytes(), &created)
	live := created["account_id"]
	spec, err := business.NewKeySpec("CI", []string{business.ScopeAll}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.CreateKey(ctx, live, nil, spec); err != nil {
		t.Fatal(err)
	}
	twin := business.TwinID(live, 1)
	if a, _, err := st.FindAccount(ctx, twin); err != nil || a.BusinessCode != "DEMO01" {
		t.Fatalf("the test twin: %+v %v", a, err)
	}

	index := func(want string) {
		t.Helper()
		out.Reset()
		if err := run(ctx, strings.Fields("account index"), &out); err != nil || !strings.HasPrefix(out.String(), want) {
			t.Fatalf("account index: %v %q, want %q", err, out.String(), want)
		}
	}
	listsLiveOnly := func() {
		t.Helper()
		out.Reset()
		if err := run(ctx, strings.Fields("account list --json"), &out); err != nil {
			t.Fatal(err)
		}
		var all []map[string]any
		if err := json.Unmarshal(out.Bytes(), &all); err != nil || len(all) != 1 || all[0]["account_id"] != live || all[0]["business_code"] != "DEMO01" {
			t.Fatalf("account list: %v %s", err, out.String())
		}
		if a, err := st.FindAccountByCode(ctx, "DEMO01"); err != nil || a.ID != live {
			t.Fatalf("DEMO01 names %q (%v), want %s", a.ID, err, live)
		}
	}

	index("0 accounts added")
	listsLiveOnly()

	entry := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "ACCOUNTS"}, "SK": &types.AttributeValueMemberS{Value: "CODE#DEMO01"}}
	// An older table: the account has no entry yet.
	if _, err := st.Client().DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(cfg.TableName), Key: entry}); err != nil {
		t.Fatal(err)
	}
	index("1 accounts added")
	listsLiveOnly()

	// An older table whose index run filed the twin under the code.
	got, err := st.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(cfg.TableName), Key: entry, ConsistentRead: aws.Bool(true)})
	if err != nil || got.Item == nil {
		t.Fatalf("entry: %v", err)
	}
	got.Item["account_id"] = &types.AttributeValueMemberS{Value: twin}
	if _, err := st.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(cfg.TableName), Item: got.Item}); err != nil {
		t.Fatal(err)
	}
	index("1 accounts added")
	listsLiveOnly()
	index("0 accounts added")
}

// TestAdminNoDeliveries: an account without deliveries says so, and --json
// prints an empty list.
func TestAdminNoDeliveries(t *testing.T) {
	newTable(t)
	ctx := context.Background()
	var out bytes.Buffer
	if err := run(ctx, strings.Fields("account create --name Quiet --business-code QUIET1 --currency GHS --json"), &out); err != nil {
		t.Fatal(err)
	}
	var created map[string]string
	_ = json.Unmarshal(out.Bytes(), &created)
	id := created["account_id"]

	out.Reset()
	if err := run(ctx, []string{"webhook", "deliveries", "--account", id}, &out); err != nil || !strings.HasPrefix(out.String(), "no deliveries for "+id) {
		t.Fatalf("webhook deliveries: %v %q", err, out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"webhook", "deliveries", "--account", id, "--json"}, &out); err != nil || out.String() != "[]\n" {
		t.Fatalf("webhook deliveries --json: %v %q", err, out.String())
	}
}
