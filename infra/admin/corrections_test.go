package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

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
