package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// send posts a test notification, signed with signingSecret at sentAt, to
// url with the product's own sender, and returns the receiver's status.
func send(t *testing.T, url, id, signingSecret string, sentAt time.Time) int {
	t.Helper()
	a := business.Account{Currency: "GHS", BusinessCode: "DEMO01"}
	d := business.Delivery{WebhookID: id, Payload: webhook.NewTestPayload(a, strings.TrimPrefix(id, "msg_"))}
	attempt, _ := webhook.NewSender(true).Send(context.Background(), d, url, signingSecret, sentAt)
	if attempt.Status == 0 {
		t.Fatalf("no answer: %s", attempt.Error)
	}
	return attempt.Status
}

// readmeBlock returns the README's fenced block of lang that contains marker.
func readmeBlock(t *testing.T, lang, marker string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range strings.Split(string(b), "```"+lang+"\n")[1:] {
		block, _, _ := strings.Cut(part, "\n```")
		if strings.Contains(block, marker) {
			return block + "\n"
		}
	}
	t.Fatalf("README has no %s block with %q", lang, marker)
	return ""
}

// TestReceiver: a genuine delivery is printed and saved; a refused one says
// why; and the README's verification steps (the JavaScript file and the
// openssl lines) run as written on what the receiver saved.
func TestReceiver(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, ".data", "webhooks")
	if err := os.MkdirAll(saved, 0o700); err != nil {
		t.Fatal(err)
	}
	var out testdb.Buffer
	srv := httptest.NewServer(newHandler(secret, saved, &out))
	defer srv.Close()

	if code := send(t, srv.URL+"/hook", "msg_test_ok", secret, time.Now()); code != 200 {
		t.Fatalf("genuine delivery answered %d: %s", code, out.String())
	}
	if !strings.Contains(out.String(), "test notification test_ok") {
		t.Fatalf("output %q", out.String())
	}
	body, err := os.ReadFile(filepath.Join(saved, "msg_test_ok.body"))
	if err != nil || !bytes.HasPrefix(body, []byte(`{"status":200`)) {
		t.Fatalf("saved body %q %v", body, err)
	}

	// A webhook endpoint's delivery: an event, with only the Standard
	// Webhooks headers, signed with a new and the rotated-away secret.
	ev := business.Delivery{WebhookID: "evt_0190a1b2c3d4aaaaaaaaaa01",
		Payload: []byte(`{"id":"evt_0190a1b2c3d4aaaaaaaaaa01","type":"sale.created","created_at":"2026-11-23 10:00:00","resource":{"type":"sale","id":"100001","version":1},"data":{}}`)}
	attempt, ok := webhook.NewSender(true).SendSigned(context.Background(), ev, srv.URL+"/events", []string{"whsec_bmV3IHNlY3JldCBvZiB0aGUgZW5kcG9pbnQ=", secret}, time.Now())
	if !ok || !strings.Contains(out.String(), "event sale.created: sale 100001 at version 1, webhook-id evt_0190a1b2c3d4aaaaaaaaaa01") {
		t.Fatalf("an endpoint's event answered %d (%s): %q", attempt.Status, attempt.Error, out.String())
	}

	for _, c := range []struct {
		name, id, secret string
		sentAt           time.Time
		says             string
	}{
		{"WrongSecret", "msg_test_wrong", "whsec_c29tZW9uZSBlbHNlJ3Mgc2VjcmV0IDEyMw==", time.Now(), "Is WEBHOOK_SECRET exactly the callback secret"},
		{"Unsigned", "msg_test_unsigned", "", time.Now(), "carries no signature headers"},
		{"Stale", "msg_test_stale", secret, time.Now().Add(-6 * time.Minute), "more than 5 minutes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if code := send(t, srv.URL+"/hook", c.id, c.secret, c.sentAt); code != 401 {
				t.Fatalf("answered %d", code)
			}
			if o := out.String(); !strings.Contains(o, `REFUSED webhook-id "`+c.id+`"`) || !strings.Contains(o, c.says) {
				t.Fatalf("output does not say why: %q", o)
			}
			if _, err := os.Stat(filepath.Join(saved, c.id+".headers.json")); err != nil {
				t.Fatalf("refused delivery not saved: %v", err)
			}
		})
	}

	t.Run("ReadmeOpenSSL", func(t *testing.T) {
		if _, err := exec.LookPath("openssl"); err != nil {
			t.Skip("openssl is not installed")
		}
		// The README's lines, at a root whose newest saved delivery is a genuine one.
		for _, stale := range []string{"msg_test_wrong", "msg_test_unsigned", "msg_test_stale", "evt_0190a1b2c3d4aaaaaaaaaa01"} {
			_ = os.Chtimes(filepath.Join(saved, stale+".body"), time.Now().Add(-time.Hour), time.Now().Add(-time.Hour))
		}
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", readmeBlock(t, "sh", "openssl dgst"))
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "WEBHOOK_SECRET="+secret)
		got, err := cmd.CombinedOutput()
		lines := strings.Fields(string(got))
		if err != nil || len(lines) != 7 || lines[1] != lines[3] || len(lines[1]) != 64 || !strings.HasSuffix(string(got), "\nthe signature matches\n") {
			t.Fatalf("README's openssl check printed %q (%v), want the same signature twice, matching", got, err)
		}
	})

	t.Run("ReadmeJavaScript", func(t *testing.T) {
		// verify.mjs must sit where `standardwebhooks` is installed:
		// infra/conformance, which make test installs.
		if _, err := os.Stat("../conformance/node_modules/standardwebhooks"); err != nil {
			t.Fatalf("standardwebhooks is not installed (make test-deps): %v", err)
		}
		script := filepath.Join("..", "conformance", "readme-verify-"+strings.ReplaceAll(t.Name(), "/", "-")+".mjs")
		if err := os.WriteFile(script, []byte(readmeBlock(t, "js", "standardwebhooks")), 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(script)
		run := func(id string) (string, error) {
			cmd := exec.Command("node", script, filepath.Join(saved, id+".body"), filepath.Join(saved, id+".headers.json"))
			cmd.Env = append(os.Environ(), "WEBHOOK_SECRET="+secret)
			b, err := cmd.CombinedOutput()
			return string(b), err
		}
		if got, err := run("msg_test_ok"); err != nil || strings.TrimSpace(got) != "verified test_ok 0.00" {
			t.Fatalf("README's verify.mjs on a genuine delivery: %q %v", got, err)
		}
		if got, err := run("msg_test_wrong"); err == nil {
			t.Fatalf("README's verify.mjs accepted a delivery signed with another secret: %q", got)
		}
	})
}
