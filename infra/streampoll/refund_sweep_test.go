package streampoll

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"

	"github.com/google/go-cmp/cmp"
)

// TestSweepRecordsRefundDelivery: no stream consumer reads the table (as
// when the stream's batch was skipped after its last retry), so neither a
// payment nor the refund made of it has a delivery. The dispatcher's sweep
// finds both in the due index and records their deliveries, the refund's
// with its own webhook-id and payload; they arrive once, and a second sweep
// records nothing.
func TestSweepRecordsRefundDelivery(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, key := testdb.NewAccount(t, st, "Shop", "SHOP1")
	var mu sync.Mutex
	got := map[string][]byte{} // webhook-id -> body
	arrivals := map[string]int{}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[r.Header.Get(webhook.HeaderID)] = b
		arrivals[r.Header.Get(webhook.HeaderID)]++
		mu.Unlock()
	}))
	defer rc.Close()
	post := shopAPI(t, st, a.ID, key, rc.URL)
	post("/api/v1/customers/add", `{"name":"Ama"}`)
	post("/api/v1/sales/add", `{"invoice_code":"520001","customer_id":1,"sub_total_amount":"10.00","total_amount":"10.00","amount_paid":"10.00","invoice_type":"pos","payment_type":"Cash","due_date":"2026-12-01"}`)
	var out struct {
		Data struct {
			Payments []struct {
				TransactionID string `json:"transaction_id"`
			} `json:"sales-payment"`
			Refunds []struct {
				RefundID string `json:"refund_id"`
			} `json:"sales-refund"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(post("/api/v1/sales/520001/refunds", `{"amount":"4.00","refund_method":"Mobile Money"}`)), &out); err != nil ||
		len(out.Data.Refunds) != 1 || len(out.Data.Payments) != 1 {
		t.Fatalf("refund answer: %+v %v", out, err)
	}
	refundID, payTx := out.Data.Refunds[0].RefundID, out.Data.Payments[0].TransactionID

	page, err := st.ListDeliveries(ctx, a.ID, "", 100, "")
	if err != nil || len(page.Items) != 0 {
		t.Fatalf("%d deliveries with no stream consumer (%v)", len(page.Items), err)
	}
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Second}, testdb.Quiet())
	svc.SweepDelay = -time.Second // the records are old enough
	if n, err := svc.Sweep(ctx); err != nil || n != 2 {
		t.Fatalf("the sweep recorded %d deliveries (%v), want 2: the payment's and the refund's", n, err)
	}
	if err := svc.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := st.FindDelivery(ctx, a.ID, refundID)
	if err != nil || d.State != business.DeliveryDelivered || d.WebhookID != "msg_"+refundID {
		t.Fatalf("the refund's delivery: %+v (%v)", d, err)
	}
	if d, err := st.FindDelivery(ctx, a.ID, payTx); err != nil || d.State != business.DeliveryDelivered {
		t.Fatalf("the payment's delivery: %+v (%v)", d, err)
	}
	mu.Lock()
	var p map[string]any
	_ = json.Unmarshal(got["msg_"+refundID], &p)
	mu.Unlock()
	if diff := cmp.Diff(map[string]any{"status": float64(200), "message": "Payment refunded", "amount": "4.00", "transaction_id": refundID,
		"currency": "GHS", "business_code": a.BusinessCode, "invoice_code": "520001", "payment_status": "paid", "type": "payment.refunded", "livemode": true}, p); diff != "" {
		t.Errorf("the swept refund's payload (-want +got):\n%s", diff)
	}

	if n, err := svc.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("a second sweep recorded %d (%v), want 0", n, err)
	}
	if err := svc.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range []string{"msg_" + refundID, "msg_" + payTx} {
		if arrivals[id] != 1 {
			t.Errorf("%s arrived %d times, want 1", id, arrivals[id])
		}
	}
}
