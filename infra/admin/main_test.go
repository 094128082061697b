package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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

func ptr(s string) *string { return &s }

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
	for i, want := range []string{"migrated 2 accounts, 0 records, 0 item ledgers opened, 0 records counted in reports, 0 sales counted in receivables, 0 debts laid out again, 0 items counted in the inventory's worth, 1 events moved to the sharded feed\n", "migrated 0 accounts, 0 records, 0 item ledgers opened, 0 records counted in reports, 0 sales counted in receivables, 0 debts laid out again, 0 items counted in the inventory's worth, 0 events moved to the sharded feed\n"} { // the second run finds nothing to do
		out.Reset()
		if err := run(ctx, []string{"migrate"}, &out); err != nil || out.String() != want {
			t.Fatalf("migrate, run %d: %v %q, want %q", i+1, err, out.String(), want)
		}
	}
	out.Reset()
	if err := run(ctx, []string{"migrate", "--json"}, &out); err != nil || strings.TrimSpace(out.String()) != `{"debts":0,"events":0,"ledgers":0,"migrated":0,"receivables":0,"records":0,"reported":0,"stock":0}` {
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
	if err := run(ctx, []string{"migrate"}, &out); err != nil || out.String() != "migrated 1 accounts, 0 records, 0 item ledgers opened, 0 records counted in reports, 0 sales counted in receivables, 0 debts laid out again, 0 items counted in the inventory's worth, 0 events moved to the sharded feed\n" {
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

// TestAdminCorrections: `sale show` shows what explains a sale's money (paid,
// refunded, held, void) with its payments and refunds, and `item movements`
// an item's ledger, newest first, checked against its quantity. The records
// are made through the API, as a merchant makes them.
func TestAdminCorrections(t *testing.T) {
	st, cfg := newTable(t)
	ctx := context.Background()
	acct, key := testdb.NewAccount(t, st, "Corrections Shop", "CORR1")
	h := api.NewServer(st, testdb.Quiet(), time.Minute).Handler(api.Routes)
	call := func(method, path string, body any) {
		t.Helper()
		j, _ := json.Marshal(body)
		req := httptest.NewRequest(method, path, bytes.NewReader(j))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body.String())
		}
	}
	call("POST", "/api/v1/customers/add", map[string]any{"name": "Kofi"})
	call("POST", "/api/v1/inventory/categories/add", map[string]any{"category_name": "Cloth"})
	call("POST", "/api/v1/inventory/items/add", map[string]any{"item_code": "KENTE-1", "item_name": "Kente", "category_id": 1, "item_price": "5.00", "quantity": "10"})
	call("POST", "/api/v1/inventory/items/add", map[string]any{"item_code": "KENTE-2", "item_name": "Kente stole", "category_id": 1, "item_price": "5.00", "quantity": "4"})
	call("POST", "/api/v1/sales/add", map[string]any{"invoice_code": "123456", "invoice_number": "123456", "customer_id": 1,
		"sub_total_amount": "20.00", "total_amount": "20.00", "amount_paid": "20.00", "payment_type": "Cash", "payment_date": "2026-10-01",
		"invoice_type": "pos", "due_date": "2026-12-31", "issued_by": "Ama", "items": []any{
			map[string]any{"item_code": "KENTE-1", "item_name": "Kente", "unit_price": "5.00", "quantity": "3"},
			map[string]any{"item_name": "Tailoring", "unit_price": "5.00", "quantity": "1"}}})
	call("POST", "/api/v1/sales/123456/refunds", map[string]any{"amount": "5.00", "reason": "torn", "refund_method": "Mobile Money", "issued_by": "Ama",
		"lines": []any{map[string]any{"sales_item_id": 1, "quantity": "1"}}})
	call("POST", "/api/v1/sales/123456/refunds", map[string]any{"amount": "15.00"})
	call("POST", "/api/v1/sales/123456/void", map[string]any{"reason": "order cancelled"})
	call("POST", "/api/v1/inventory/items/KENTE-1/adjustments", map[string]any{"quantity": "-2", "reason": "damaged", "note": "rain"})

	var out bytes.Buffer
	for _, by := range [][]string{{"--account", acct.ID}, {"--business-code", "CORR1"}} {
		out.Reset()
		if err := run(ctx, append([]string{"sale", "show", "--invoice", "123456", "--json"}, by...), &out); err != nil {
			t.Fatal(err)
		}
		var sale struct {
			AmountPaid     string  `json:"amount_paid"`
			AmountRefunded string  `json:"amount_refunded"`
			Held           string  `json:"held"`
			PaymentStatus  string  `json:"payment_status"`
			VoidReason     *string `json:"void_reason"`
			VoidedAt       *string `json:"voided_at"`
			Lines          []struct {
				ItemCode *string `json:"item_code"`
				Returned string  `json:"quantity_returned"`
			} `json:"lines"`
			Payments []struct {
				TransactionID string `json:"transaction_id"`
				Amount        string `json:"amount"`
				Method        string `json:"payment_method"`
			} `json:"payments"`
			Refunds []struct {
				RefundID string  `json:"refund_id"`
				Amount   string  `json:"amount"`
				Method   string  `json:"refund_method"`
				Reason   *string `json:"reason"`
				Lines    []struct {
					SalesItemID int     `json:"sales_item_id"`
					ItemCode    *string `json:"item_code"`
					Quantity    string  `json:"quantity"`
				} `json:"lines"`
			} `json:"refunds"`
		}
		if err := json.Unmarshal(out.Bytes(), &sale); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		if sale.AmountPaid != "20.00" || sale.AmountRefunded != "20.00" || sale.Held != "0.00" || sale.PaymentStatus != "void" ||
			sale.VoidReason == nil || *sale.VoidReason != "order cancelled" || sale.VoidedAt == nil {
			t.Fatalf("sale show %v: %s", by, out.String())
		}
		// Line 1 sold 3, 1 returned by the refund (the void gives the other
		// 2 back to stock, not to quantity_returned).
		if len(sale.Lines) != 2 || sale.Lines[0].Returned != "1" || *sale.Lines[0].ItemCode != "KENTE-1" || sale.Lines[1].ItemCode != nil || sale.Lines[1].Returned != "0" {
			t.Fatalf("sale show lines: %s", out.String())
		}
		if len(sale.Payments) != 1 || sale.Payments[0].Amount != "20.00" || sale.Payments[0].Method != "Cash" || !strings.HasPrefix(sale.Payments[0].TransactionID, "txn_") {
			t.Fatalf("sale show payments: %s", out.String())
		}
		if r := sale.Refunds; len(r) != 2 || r[0].Amount != "5.00" || r[0].Method != "Mobile Money" || *r[0].Reason != "torn" ||
			len(r[0].Lines) != 1 || r[0].Lines[0].SalesItemID != 1 || *r[0].Lines[0].ItemCode != "KENTE-1" || r[0].Lines[0].Quantity != "1" ||
			r[1].Amount != "15.00" || r[1].Method != "Cash" || r[1].Reason != nil || len(r[1].Lines) != 0 || !strings.HasPrefix(r[1].RefundID, "ref_") {
			t.Fatalf("sale show refunds: %s", out.String())
		}
	}
	out.Reset()
	if err := run(ctx, []string{"sale", "show", "--account", acct.ID, "--invoice", "123456"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"amount_paid:     20.00\n", "amount_refunded: 20.00\n", "held:            0.00", "payment_status:  void\n",
		"void_reason:     order cancelled\n", "payments (1):", "refunds (2):", "line 1 x1 (KENTE-1 back to stock)", "no goods returned", "sold 3  returned 1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("sale show: no %q in\n%s", want, out.String())
		}
	}

	// KENTE-1: created with 10, sold 3, 1 returned, 2 given back by the
	// void, 2 written off: 8, newest first.
	out.Reset()
	if err := run(ctx, []string{"item", "movements", "--account", acct.ID, "--item", "KENTE-1", "--json"}, &out); err != nil {
		t.Fatal(err)
	}
	var ledger struct {
		Quantity  string `json:"quantity"`
		Complete  bool   `json:"complete"`
		LedgerSum string `json:"ledger_sum"`
		Movements []struct {
			ID            int64   `json:"id"`
			Kind          string  `json:"kind"`
			Quantity      string  `json:"quantity"`
			QuantityAfter string  `json:"quantity_after"`
			Reason        *string `json:"reason"`
			Note          *string `json:"note"`
			InvoiceCode   *string `json:"invoice_code"`
			CreatedAt     string  `json:"created_at"`
		} `json:"movements"`
	}
	if err := json.Unmarshal(out.Bytes(), &ledger); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	var got []string
	for _, m := range ledger.Movements {
		invoice := "-"
		if m.InvoiceCode != nil {
			invoice = *m.InvoiceCode
		}
		got = append(got, m.Kind+" "+m.Quantity+" "+m.QuantityAfter+" "+invoice)
	}
	want := []string{"adjustment -2 8 -", "void 2 10 123456", "return 1 8 123456", "sale -3 7 123456", "initial 10 10 -"}
	if !reflect.DeepEqual(got, want) || ledger.Quantity != "8" || !ledger.Complete || ledger.LedgerSum != "8" {
		t.Fatalf("item movements: %v, want %v: %s", got, want, out.String())
	}
	if m := ledger.Movements[0]; m.Reason == nil || *m.Reason != "damaged" || m.Note == nil || *m.Note != "rain" || m.CreatedAt == "" || m.ID <= ledger.Movements[1].ID {
		t.Fatalf("adjustment: %s", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"item", "movements", "--business-code", "CORR1", "--item", "KENTE-1"}, &out); err != nil ||
		!strings.Contains(out.String(), "quantity:  8\n") || strings.Count(out.String(), "invoice 123456") != 3 ||
		!strings.Contains(out.String(), "damaged: rain") || !strings.HasSuffix(out.String(), "ledger: the 5 movements add up to 8, the item's quantity\n") {
		t.Fatalf("item movements: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"item", "movements", "--account", acct.ID, "--item", "KENTE-1", "--limit", "2"}, &out); err != nil ||
		!strings.Contains(out.String(), "movements (2, newest first)") || !strings.Contains(out.String(), "older movements not shown") {
		t.Fatalf("item movements --limit 2: %v\n%s", err, out.String())
	}

	// An item whose movements do not add up to its quantity (as one stocked
	// before the ledger, until `admin migrate`) is pointed out.
	scan, err := st.Client().Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(cfg.TableName), FilterExpression: aws.String("#t = :m AND item_code = :c"),
		ExpressionAttributeNames:  map[string]string{"#t": "type"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":m": &types.AttributeValueMemberS{Value: "movement"}, ":c": &types.AttributeValueMemberS{Value: "KENTE-2"}}})
	if err != nil || len(scan.Items) != 1 {
		t.Fatalf("KENTE-2's movements: %v %v", scan, err)
	}
	if _, err := st.Client().DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(cfg.TableName),
		Key: map[string]types.AttributeValue{"PK": scan.Items[0]["PK"], "SK": scan.Items[0]["SK"]}}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run(ctx, []string{"item", "movements", "--account", acct.ID, "--item", "KENTE-2"}, &out); err != nil ||
		!strings.Contains(out.String(), "ledger: MISMATCH: the 0 movements add up to 0 but the item holds 4") {
		t.Fatalf("item movements of an item without its ledger: %v\n%s", err, out.String())
	}

	for _, b := range []struct{ args, has string }{
		{"sale show --account " + acct.ID, "--invoice is required"},
		{"sale show --invoice 123456", "give --account or --business-code"},
		{"sale show --account " + acct.ID + " --business-code CORR1 --invoice 123456", "give --account or --business-code"},
		{"sale show --account " + acct.ID + " --invoice 654321", "Sale not found"},
		{"sale show --account acct_missing --invoice 123456", "not found"},
		{"sale show --business-code NOPE --invoice 123456", "no account has business_code NOPE"},
		{"item movements --account " + acct.ID, "--item is required"},
		{"item movements --account " + acct.ID + " --item NOPE-1", "Item not found"},
		{"item movements --account " + acct.ID + " --item KENTE-1 --limit 0", "--limit must be at least 1"},
		{"item movements --account " + acct.ID + " --item KENTE-1 --limit x", "invalid value"},
	} {
		if err := run(ctx, strings.Fields(b.args), &out); err == nil || !strings.Contains(err.Error(), b.has) {
			t.Errorf("%q: error %v, want one mentioning %q", b.args, err, b.has)
		}
	}
}
