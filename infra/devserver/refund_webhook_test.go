package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/webhook"

	"github.com/google/go-cmp/cmp"
)

// TestRefundWebhookStandard: a refund made over the API reaches the
// merchant's receiver through the whole pipeline (table, stream, delivery,
// dispatcher), signed so that the Standard Webhooks reference library
// (infra/conformance/verify-standard.mjs) verifies it, as payments are
// (shared/webhook/standard_test.go). Its payload is a payment's with message
// "Payment refunded", the refunded amount, the refund's id as transaction_id
// and type "payment.refunded"; the payment's own payload keeps no type. A
// void sends nothing.
func TestRefundWebhookStandard(t *testing.T) {
	script := "../conformance/verify-standard.mjs"
	if _, err := os.Stat("../conformance/node_modules/standardwebhooks"); err != nil {
		t.Fatalf("standardwebhooks is not installed: run make deps (%v)", err)
	}
	e := newWebhookEnv(t)
	rc := newReceiver(t)
	raw := make([]byte, 24)
	_, _ = rand.Read(raw)
	secret := "whsec_" + base64.StdEncoding.EncodeToString(raw)
	a, key := e.account(t, rc.srv.URL+"/hook", secret)

	sale := func(code, paid string) map[string]any {
		t.Helper()
		pt := "Cash"
		if paid == "0" {
			pt = "None"
		}
		status, body := call(t, "POST", e.base+"/api/v1/sales/add", key, fmt.Sprintf(
			`{"invoice_code":%q,"customer_id":1,"sub_total_amount":"50.00","total_amount":"50.00","amount_paid":%q,"invoice_type":"pos","payment_type":%q,"due_date":"2026-12-01"}`,
			code, paid, pt))
		if status != 200 {
			t.Fatalf("sale: %d %v", status, body)
		}
		return body["data"].(map[string]any)
	}
	payTx := sale("510001", "50.00")["sales-payment"].([]any)[0].(map[string]any)["transaction_id"].(string)
	status, body := call(t, "POST", e.base+"/api/v1/sales/510001/refunds", key, `{"amount":"20.00","reason":"damaged"}`)
	if status != 200 {
		t.Fatalf("refund: %d %v", status, body)
	}
	refunds := body["data"].(map[string]any)["sales-refund"].([]any)
	refundID, _ := refunds[len(refunds)-1].(map[string]any)["refund_id"].(string)
	if !strings.HasPrefix(refundID, "ref_") {
		t.Fatalf("refund id %q", refundID)
	}

	waitFor(t, 15*time.Second, "the payment's and the refund's deliveries", func() bool { return len(rc.requests()) >= 2 })
	byID := map[string]received{}
	for _, r := range rc.requests() {
		byID[r.header.Get(webhook.HeaderID)] = r
	}
	got, ok := byID["msg_"+refundID]
	if !ok {
		t.Fatalf("no delivery with webhook-id msg_%s; got %v", refundID, keys(byID))
	}

	// The reference library verifies the refund's delivery.
	in, _ := json.Marshal(map[string]any{"body": string(got.body), "headers": map[string]string{
		"webhook-id": got.header.Get(webhook.HeaderID), "webhook-timestamp": got.header.Get(webhook.HeaderTimestamp),
		"webhook-signature": got.header.Get(webhook.HeaderStandardSignature),
	}})
	cmd := exec.Command("node", script, secret)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != refundID {
		t.Errorf("standardwebhooks rejected the refund's delivery: %v %s", err, out)
	}
	// ... and so does it reject the delivery once its body is altered.
	tampered, _ := json.Marshal(map[string]any{"body": strings.Replace(string(got.body), "20.00", "99.00", 1), "headers": map[string]string{
		"webhook-id": got.header.Get(webhook.HeaderID), "webhook-timestamp": got.header.Get(webhook.HeaderTimestamp),
		"webhook-signature": got.header.Get(webhook.HeaderStandardSignature),
	}})
	cmd = exec.Command("node", script, secret)
	cmd.Stdin = strings.NewReader(string(tampered))
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("standardwebhooks accepted an altered refund body: %s", out)
	}
	if err := (webhook.Verifier{Secret: secret}).Verify(got.header, got.body); err != nil || got.header.Get(webhook.HeaderSignature) == "" {
		t.Errorf("our Verifier: %v (headers %v)", err, got.header)
	}

	// The payload, field by field.
	var p map[string]any
	if err := json.Unmarshal(got.body, &p); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]any{"status": float64(200), "message": "Payment refunded", "amount": "20.00", "transaction_id": refundID,
		"currency": "GHS", "business_code": a.BusinessCode, "invoice_code": "510001", "payment_status": "paid", "type": "payment.refunded", "livemode": true}, p); d != "" {
		t.Errorf("refund payload (-want +got):\n%s", d)
	}
	pay, ok := byID["msg_"+payTx]
	if !ok {
		t.Fatalf("no delivery of the payment %s", payTx)
	}
	var pp map[string]any
	_ = json.Unmarshal(pay.body, &pp)
	if _, typed := pp["type"]; typed || pp["message"] != "Payment received" || pp["amount"] != "50.00" {
		t.Errorf("payment payload changed: %s", pay.body)
	}

	waitFor(t, 10*time.Second, "the refund's delivery recorded as delivered", func() bool {
		return e.delivery(t, a.ID, refundID).State == business.DeliveryDelivered
	})
	status, body = call(t, "GET", e.base+"/api/v1/user/webhook/deliveries", key, "")
	listed := false
	for _, d := range body["data"].(map[string]any)["deliveries"].([]any) {
		listed = listed || d.(map[string]any)["transaction_id"] == refundID
	}
	if status != 200 || !listed {
		t.Errorf("the refund's delivery is not listed: %d %v", status, body)
	}

	// Refunding the rest and voiding sends the second refund only; voiding an
	// unpaid sale sends nothing.
	if status, body := call(t, "POST", e.base+"/api/v1/sales/510001/refunds", key, `{"amount":"30.00"}`); status != 200 {
		t.Fatalf("refund: %d %v", status, body)
	}
	if status, body := call(t, "POST", e.base+"/api/v1/sales/510001/void", key, ""); status != 200 {
		t.Fatalf("void: %d %v", status, body)
	}
	sale("510002", "0")
	if status, body := call(t, "POST", e.base+"/api/v1/sales/510002/void", key, `{"reason":"never paid"}`); status != 200 {
		t.Fatalf("void: %d %v", status, body)
	}
	waitFor(t, 15*time.Second, "the second refund's delivery", func() bool { return len(rc.requests()) >= 3 })
	time.Sleep(2 * time.Second)
	if n := len(rc.requests()); n != 3 {
		t.Fatalf("%d deliveries, want 3 (a payment, two refunds; voids send nothing)", n)
	}
}

func keys(m map[string]received) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
