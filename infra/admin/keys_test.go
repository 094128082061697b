package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"bizdata/shared/business"
	"bizdata/shared/wire"
)

// TestAdminKeys: an operator lists an account's keys, creates scoped live
// and test keys (each secret printed once, and working), rotates one (by id,
// or the account's only key without --key) and revokes one; the refusals
// name what is wrong.
func TestAdminKeys(t *testing.T) {
	st, _ := newTable(t)
	ctx := context.Background()
	var out bytes.Buffer
	cli := func(args ...string) []byte {
		t.Helper()
		out.Reset()
		if err := run(ctx, args, &out); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return bytes.Clone(out.Bytes())
	}
	var made map[string]string
	if err := json.Unmarshal(cli("account", "create", "--name", "Key Shop", "--business-code", "KEYS1", "--currency", "GHS", "--json"), &made); err != nil {
		t.Fatal(err)
	}
	account := made["account_id"]
	works := func(secret string) business.Account {
		t.Helper()
		a, err := st.FindAccountByKeyHash(ctx, business.HashAPIKey(secret))
		if err != nil {
			t.Fatalf("the key %.12s…: %v", secret, err)
		}
		return a
	}
	gone := func(secret string) {
		t.Helper()
		if _, err := st.FindAccountByKeyHash(ctx, business.HashAPIKey(secret)); business.ErrorCode(err) != business.EUNAUTHORIZED {
			t.Fatalf("the key %.12s… still works (%v)", secret, err)
		}
	}
	list := func() []wire.APIKey {
		t.Helper()
		var ks []wire.APIKey
		if err := json.Unmarshal(cli("key", "list", "--account", account, "--json"), &ks); err != nil {
			t.Fatal(err)
		}
		return ks
	}

	// The account's first key: listed, and rotated without --key.
	ks := list()
	if len(ks) != 1 || ks[0].ID != made["key_id"] || ks[0].Name != "Default key" || ks[0].Mode != "live" || !slices.Equal(ks[0].Scopes, []string{"*"}) ||
		ks[0].Prefix == nil || !strings.HasPrefix(made["api_key"], *ks[0].Prefix) {
		t.Fatalf("key list: %+v (made %v)", ks, made)
	}
	works(made["api_key"])
	var rotated map[string]string
	if err := json.Unmarshal(cli("key", "rotate", "--account", account, "--json"), &rotated); err != nil || rotated["key_id"] != ks[0].ID || rotated["account_id"] != account {
		t.Fatalf("key rotate: %v %v", rotated, err)
	}
	gone(made["api_key"])
	if a := works(rotated["api_key"]); a.Key.ID != ks[0].ID {
		t.Fatalf("the rotated key is %s, want %s", a.Key.ID, ks[0].ID)
	}

	// A scoped live key and a test key.
	type createdKey struct {
		AccountID string      `json:"account_id"`
		KeyID     string      `json:"key_id"`
		APIKey    string      `json:"api_key"`
		Key       wire.APIKey `json:"key"`
	}
	var till, tests createdKey
	if err := json.Unmarshal(cli("key", "create", "--account", account, "--name", "Till 1", "--scopes", "sales:write, sales:read", "--json"), &till); err != nil {
		t.Fatal(err)
	}
	if till.KeyID != till.Key.ID || till.Key.Mode != "live" || !slices.Equal(till.Key.Scopes, []string{"sales:read", "sales:write"}) || !strings.HasPrefix(till.APIKey, business.APIKeyPrefix) {
		t.Fatalf("key create: %+v", till)
	}
	if a := works(till.APIKey); a.ID != account || !a.Key.Allows("sales:write") || a.Key.Allows("expenses:read") {
		t.Fatalf("the till key acts on %s with %v", a.ID, a.Key.Scopes)
	}
	if err := json.Unmarshal(cli("key", "create", "--account", account, "--name", "Tests", "--scopes", "*", "--mode", "test", "--json"), &tests); err != nil {
		t.Fatal(err)
	}
	if a := works(tests.APIKey); tests.Key.Mode != "test" || !strings.HasPrefix(tests.APIKey, business.TestAPIKeyPrefix) || a.ID != business.TwinID(account, 1) {
		t.Fatalf("the test key %+v acts on %s", tests.Key, a.ID)
	}
	text := string(cli("key", "create", "--account", account, "--name", "Reports", "--scopes", "reports:read"))
	if !strings.Contains(text, "api_key:    bk_live_") || !strings.Contains(text, "shown only now") || !strings.Contains(text, "scopes:     reports:read") {
		t.Fatalf("key create printed %q", text)
	}
	text = string(cli("key", "list", "--account", account))
	line := func(id string) string {
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, id+" ") {
				return l
			}
		}
		return ""
	}
	if strings.Count(text, "\n") != 4 || !strings.Contains(line(till.KeyID), "Till 1") || !strings.Contains(line(till.KeyID), "sales:read,sales:write") ||
		!strings.Contains(line(tests.KeyID), " test ") || strings.Contains(text, till.APIKey) {
		t.Fatalf("key list printed %q", text)
	}

	// With several keys, rotate needs --key and names them.
	err := run(ctx, []string{"key", "rotate", "--account", account}, &out)
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "4 API keys") || !strings.Contains(err.Error(), till.KeyID+" (Till 1, live)") || !strings.Contains(err.Error(), tests.KeyID+" (Tests, test)") {
		t.Fatalf("key rotate without --key: %v", err)
	}
	if err := json.Unmarshal(cli("key", "rotate", "--account", account, "--key", tests.KeyID, "--json"), &rotated); err != nil || rotated["key_id"] != tests.KeyID {
		t.Fatalf("key rotate --key: %v %v", rotated, err)
	}
	gone(tests.APIKey)
	if a := works(rotated["api_key"]); a.ID != business.TwinID(account, 1) || !strings.HasPrefix(rotated["api_key"], business.TestAPIKeyPrefix) {
		t.Fatalf("the rotated test key acts on %s: %.8s…", a.ID, rotated["api_key"])
	}

	// Revoked: gone at once, and no longer listed.
	var revoked struct {
		Revoked wire.APIKey `json:"revoked"`
	}
	if err := json.Unmarshal(cli("key", "revoke", "--account", account, "--key", till.KeyID, "--json"), &revoked); err != nil || revoked.Revoked.ID != till.KeyID || revoked.Revoked.Name != "Till 1" {
		t.Fatalf("key revoke: %+v %v", revoked, err)
	}
	gone(till.APIKey)
	if ks := list(); len(ks) != 3 || slices.ContainsFunc(ks, func(k wire.APIKey) bool { return k.ID == till.KeyID }) {
		t.Fatalf("after revoke: %+v", ks)
	}

	for _, b := range []struct {
		args []string
		has  string
	}{
		{[]string{"key", "list"}, "--account is required"},
		{[]string{"key", "list", "--account", "acct_missing"}, "not found"},
		{[]string{"key", "create", "--account", account, "--scopes", "sales:read"}, "name"},
		{[]string{"key", "create", "--account", account, "--name", "X"}, "scopes"},
		{[]string{"key", "create", "--account", account, "--name", "X", "--scopes", "sales:read,nope"}, `unknown scope "nope"`},
		{[]string{"key", "create", "--account", account, "--name", "X", "--scopes", "*", "--mode", "demo"}, "mode"},
		{[]string{"key", "create", "--account", "acct_missing", "--name", "X", "--scopes", "*"}, "not found"},
		{[]string{"key", "revoke", "--account", account}, "--key is required"},
		{[]string{"key", "revoke", "--account", account, "--key", "key_0000000000000000"}, "not found"},
		{[]string{"key", "revoke", "--account", account, "--key", ks[0].ID}, "last live key with the scope keys:write"},
		{[]string{"key", "rotate", "--account", account, "--key", till.KeyID}, "not found"},
		{[]string{"key", "rotate", "--account", "acct_missing"}, "not found"},
	} {
		if err := run(ctx, b.args, &out); err == nil || !strings.Contains(err.Error(), b.has) {
			t.Errorf("%q: error %v, want one mentioning %q", b.args, err, b.has)
		}
	}
	if ks := list(); len(ks) != 3 {
		t.Fatalf("the refusals changed the keys: %+v", ks)
	}
}

// TestUsageNamesKeyCommands: the usage text (printed on a usage error) and
// the command's doc comment show every key command with its flags.
func TestUsageNamesKeyCommands(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{
		"admin key list --account ID [--json]",
		"admin key create --account ID --name N --scopes S1,S2 [--mode live|test] [--json]",
		"admin key revoke --account ID --key KEY_ID [--json]",
		"admin key rotate --account ID [--key KEY_ID] [--json]",
	} {
		if !strings.Contains(usage, c) {
			t.Errorf("usage lacks %q", c)
		}
		if !strings.Contains(string(src), "//\t"+c+"\n") {
			t.Errorf("the doc comment lacks %q", c)
		}
	}
	for _, s := range business.Scopes {
		if !strings.Contains(usage, " "+s) {
			t.Errorf("usage does not name the scope %s", s)
		}
	}
}
