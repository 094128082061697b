package webhook

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"bizdata/shared/business"
)

// TestStandardWebhooksLibraryVerifies sends a real delivery to a real
// receiver and checks its headers with the Standard Webhooks reference
// library (npm package standardwebhooks, installed by make deps): a
// whsec_<base64> secret as the library reads it by default, and a plain
// secret with the library's raw format. Our own Verifier accepts both too.
func TestStandardWebhooksLibraryVerifies(t *testing.T) {
	script := "../../infra/conformance/verify-standard.mjs"
	if _, err := os.Stat("../../infra/conformance/node_modules/standardwebhooks"); err != nil {
		t.Fatalf("standardwebhooks is not installed: run make deps (%v)", err)
	}
	raw := make([]byte, 24)
	_, _ = rand.Read(raw)
	for _, c := range []struct {
		secret, format string
	}{
		{"whsec_" + base64.StdEncoding.EncodeToString(raw), ""},
		{"plain-secret-with-no-spaces", "raw"},
	} {
		var got http.Header
		var body []byte
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = r.Header.Clone()
			body, _ = io.ReadAll(r.Body)
		}))
		d := business.Delivery{WebhookID: "msg_txn_42", TransactionID: "txn_42", Payload: []byte(`{"status":200,"message":"Payment received","amount":"10.00","transaction_id":"txn_42"}`)}
		if _, ok := NewSender(true).Send(context.Background(), d, srv.URL, c.secret, time.Now()); !ok {
			t.Fatal("delivery failed")
		}
		srv.Close()
		in, _ := json.Marshal(map[string]any{"body": string(body), "headers": map[string]string{
			"webhook-id": got.Get(HeaderID), "webhook-timestamp": got.Get(HeaderTimestamp), "webhook-signature": got.Get(HeaderStandardSignature),
		}})
		args := []string{script, c.secret}
		if c.format != "" {
			args = append(args, c.format)
		}
		cmd := exec.Command("node", args...)
		cmd.Stdin = strings.NewReader(string(in))
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "txn_42" {
			t.Errorf("secret %.10s...: standardwebhooks rejected our delivery: %v %s", c.secret, err, out)
		}
		// The description's signature header stays keyed by the secret as entered.
		if got.Get(HeaderSignature) != Sign(body, c.secret) {
			t.Errorf("signature header %s", got.Get(HeaderSignature))
		}
		if err := (Verifier{Secret: c.secret}).Verify(got, body); err != nil {
			t.Errorf("our Verifier: %v", err)
		}
	}
}
