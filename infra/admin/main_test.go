package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// newTable gives the CLI a fresh table, through the environment it reads.
func newTable(t *testing.T) (*store.Store, app.Config) {
	t.Helper()
	st, cfg := testdb.NewStore(t)
	t.Setenv("DYNAMODB_ENDPOINT", cfg.Endpoint)
	t.Setenv("TABLE_NAME", cfg.TableName)
	return st, cfg
}

func TestAdmin(t *testing.T) {
	st, _ := newTable(t)
	ctx := context.Background()

	var out bytes.Buffer
	if err := run(ctx, strings.Fields("account create --name Shop --business-code SHOP1 --currency ghs --json"), &out); err != nil {
		t.Fatal(err)
	}
	var created struct {
		AccountID string `json:"account_id"`
		APIKey    string `json:"api_key"`
	}
	if err := json.Unmarshal(out.Bytes(), &created); err != nil || created.APIKey == "" {
		t.Fatalf("%v: %s", err, out.String())
	}
	a, err := st.FindAccountByKeyHash(ctx, business.HashAPIKey(created.APIKey))
	if err != nil || a.ID != created.AccountID || a.Currency != "GHS" || a.InvoicePrefix != "INV" {
		t.Fatalf("account %+v, %v", a, err)
	}

	out.Reset()
	if err := run(ctx, []string{"key", "rotate", "--account", created.AccountID, "--json"}, &out); err != nil {
		t.Fatal(err)
	}
	var rotated map[string]string
	_ = json.Unmarshal(out.Bytes(), &rotated)
	if _, err := st.FindAccountByKeyHash(ctx, business.HashAPIKey(created.APIKey)); business.ErrorCode(err) != business.EUNAUTHORIZED {
		t.Fatalf("old key still valid: %v", err)
	}
	if _, err := st.FindAccountByKeyHash(ctx, business.HashAPIKey(rotated["api_key"])); err != nil {
		t.Fatalf("new key: %v", err)
	}

	out.Reset()
	if err := run(ctx, []string{"webhook", "set", "--account", created.AccountID, "--url", "https://example.com/hook", "--secret", "s3cret-value"}, &out); err != nil {
		t.Fatal(err)
	}
	_, w, err := st.FindAccount(ctx, created.AccountID)
	if err != nil || w.CallbackURL != "https://example.com/hook" || w.CallbackSecret != "s3cret-value" {
		t.Fatalf("webhook %+v %v", w, err)
	}

	// Deliveries: a failed one is listed and can be queued again, once.
	now := time.Now().UTC()
	if _, err := st.CreateDelivery(ctx, business.Delivery{AccountID: created.AccountID, TransactionID: "txn_abc", WebhookID: "msg_txn_abc",
		Payload: []byte(`{"amount":"17.50","invoice_code":"100001"}`), State: business.DeliveryFailed, Attempt: 3, CreatedAt: now,
		Attempts: []business.DeliveryAttempt{{At: now, Status: 500, LatencyMS: 12, Error: "receiver answered 500"}}}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run(ctx, []string{"webhook", "deliveries", "--account", created.AccountID, "--json"}, &out); err != nil {
		t.Fatal(err)
	}
	var listed []map[string]any
	if err := json.Unmarshal(out.Bytes(), &listed); err != nil || len(listed) != 1 || listed[0]["state"] != "failed" || listed[0]["transaction_id"] != "txn_abc" ||
		listed[0]["amount"] != "17.50" || listed[0]["invoice_code"] != "100001" {
		t.Fatalf("deliveries: %v %s", err, out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"webhook", "deliveries", "--account", created.AccountID}, &out); err != nil {
		t.Fatal(err)
	}
	if line := out.String(); !strings.Contains(line, "17.50") || !strings.Contains(line, "invoice 100001") || !strings.Contains(line, "status 500") {
		t.Fatalf("deliveries line: %q", line)
	}
	if err := run(ctx, []string{"webhook", "redeliver", "--account", created.AccountID, "--transaction", "txn_abc"}, &out); err != nil {
		t.Fatal(err)
	}
	if d, _ := st.FindDelivery(ctx, created.AccountID, "txn_abc"); d.State != business.DeliveryPending || d.RoundStart != 3 {
		t.Fatalf("after redeliver: %+v", d)
	}
	if err := run(ctx, []string{"webhook", "redeliver", "--account", created.AccountID, "--transaction", "txn_abc"}, &out); err == nil || !strings.Contains(err.Error(), "still pending") {
		t.Fatalf("second redeliver: %v", err)
	}

	bad := []struct {
		args string
		has  string
	}{
		{"account create --name Shop --business-code SHOP1 --currency GHANA", "currency"},
		{"account create --name Other --business-code SHOP1 --currency GHS", "business_code SHOP1 is already taken"},
		{"account show", "give --account or --business-code"},
		{"account show --account " + created.AccountID + " --business-code SHOP1", "give --account or --business-code"},
		{"account show --business-code NOPE", "no account has business_code NOPE"},
		{"account show --account acct_missing", "not found"},
		{"account create --name Shop --currency GHS", "business_code"},
		{"account create --nope", "flag provided but not defined"},
		{"key rotate", "--account is required"},
		{"key rotate --account acct_missing", "not found"},
		{"webhook set --account " + created.AccountID + " --url ftp://x", "url"},
		{"webhook set --account " + created.AccountID + " --url https://x.example --secret has space", "unexpected arguments"},
		{"frobnicate now", "unknown command"},
		{"webhook redeliver --account " + created.AccountID, "--transaction are required"},
		{"webhook redeliver --account " + created.AccountID + " --transaction txn_none", "Delivery not found"},
	}
	for _, b := range bad {
		err := run(ctx, strings.Fields(b.args), &out)
		if err == nil || !strings.Contains(err.Error(), b.has) {
			t.Errorf("%q: error %v, want one mentioning %q", b.args, err, b.has)
		}
	}
	err = run(ctx, []string{"webhook", "set", "--account", created.AccountID, "--url", "https://x.example", "--secret", "has space"}, &out)
	if err == nil || !strings.Contains(err.Error(), "must not contain spaces") {
		t.Errorf("secret with a space: %v", err)
	}
	if err := run(ctx, nil, &out); !errors.Is(err, errUsage) {
		t.Errorf("no args: %v", err)
	}
}

func ptr(s string) *string { return &s }
