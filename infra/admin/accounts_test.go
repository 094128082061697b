package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestAdminAccounts: the CLI finds what it made (list, show by id or business
// code), and `account index` lists accounts made before the directory.
func TestAdminAccounts(t *testing.T) {
	st, cfg := newTable(t)
	ctx := context.Background()
	var out bytes.Buffer
	ids := map[string]string{}
	for _, code := range []string{"KOFI01", "AMA02"} {
		out.Reset()
		if err := run(ctx, []string{"account", "create", "--name", "Shop " + code, "--business-code", code, "--currency", "GHS", "--json"}, &out); err != nil {
			t.Fatal(err)
		}
		var c map[string]string
		_ = json.Unmarshal(out.Bytes(), &c)
		ids[code] = c["account_id"]
	}
	if _, err := st.UpdateWebhook(ctx, ids["AMA02"], ptr("https://hooks.example.com/ama"), ptr("a-secret-of-16-chars")); err != nil {
		t.Fatal(err)
	}

	list := func() []map[string]any {
		t.Helper()
		out.Reset()
		if err := run(ctx, strings.Fields("account list --json"), &out); err != nil {
			t.Fatal(err)
		}
		var all []map[string]any
		if err := json.Unmarshal(out.Bytes(), &all); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		return all
	}
	if all := list(); len(all) != 2 || all[0]["business_code"] != "AMA02" || all[1]["account_id"] != ids["KOFI01"] || all[1]["name"] != "Shop KOFI01" {
		t.Fatalf("account list: %v", all)
	}
	out.Reset()
	if err := run(ctx, strings.Fields("account list"), &out); err != nil || strings.Count(out.String(), "\n") != 2 || !strings.Contains(out.String(), ids["AMA02"]) {
		t.Fatalf("account list: %v %q", err, out.String())
	}

	for _, by := range [][]string{{"--business-code", "AMA02"}, {"--account", ids["AMA02"]}} {
		out.Reset()
		if err := run(ctx, append([]string{"account", "show", "--json"}, by...), &out); err != nil {
			t.Fatal(err)
		}
		var shown map[string]any
		_ = json.Unmarshal(out.Bytes(), &shown)
		if shown["account_id"] != ids["AMA02"] || shown["business_code"] != "AMA02" || shown["callback_url"] != "https://hooks.example.com/ama" || shown["signed"] != true {
			t.Fatalf("account show %v: %s", by, out.String())
		}
		if strings.Contains(out.String(), "a-secret-of-16-chars") {
			t.Fatal("account show printed the callback secret")
		}
	}

	// An account made before the directory existed has no entry in it.
	if _, err := st.Client().DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(cfg.TableName),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "ACCOUNTS"}, "SK": &types.AttributeValueMemberS{Value: "CODE#KOFI01"}}}); err != nil {
		t.Fatal(err)
	}
	if all := list(); len(all) != 1 {
		t.Fatalf("after removing an entry: %v", all)
	}
	for i, want := range []string{"1 accounts added", "0 accounts added"} { // the second run finds nothing to do
		out.Reset()
		if err := run(ctx, strings.Fields("account index"), &out); err != nil || !strings.HasPrefix(out.String(), want) {
			t.Fatalf("account index, run %d: %v %q", i+1, err, out.String())
		}
	}
	if all := list(); len(all) != 2 {
		t.Fatalf("after account index: %v", all)
	}
}
