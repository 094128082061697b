// Command receiver is a small example webhook receiver: it verifies each
// payment notification with shared/webhook's Verifier, prints the payment,
// and answers 401 to a delivery that fails the check, printing why and what
// to look at. With -save DIR it keeps each delivery's raw body and headers
// (DIR/<webhook-id>.body and DIR/<webhook-id>.headers.json), refused ones
// included, so they can be verified again by hand (openssl, a Standard
// Webhooks library) as the README shows.
//
//	WEBHOOK_SECRET=... go run ./infra/receiver [-addr 127.0.0.1:8080] [-save DIR]
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"bizdata/shared/webhook"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	save := flag.String("save", "", "directory to keep each delivery's raw body and headers in")
	flag.Parse()
	secret := os.Getenv("WEBHOOK_SECRET")
	if *save != "" {
		if err := os.MkdirAll(*save, 0o700); err != nil {
			log.Fatal(err)
		}
	}
	srv := &http.Server{Addr: *addr, ReadHeaderTimeout: 10 * time.Second, Handler: newHandler(secret, *save, os.Stdout)}
	checks := "on"
	if secret == "" {
		checks = "off: WEBHOOK_SECRET is unset, every delivery is accepted"
	}
	log.Printf("receiving webhooks on http://%s (signature checks %s)", *addr, checks)
	log.Fatal(srv.ListenAndServe())
}

// savedHeaders are the headers a delivery is verified with, as -save keeps
// them: a JSON object a Standard Webhooks library takes as is.
var savedHeaders = []string{webhook.HeaderID, webhook.HeaderTimestamp, webhook.HeaderStandardSignature, webhook.HeaderSignature}

// maxBody is the largest body read; a longer one is refused whole rather than
// checked cut short (it would fail as a wrong signature).
const maxBody = 1 << 20

// unsafeName is what may not appear in a file name made from a webhook-id.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// newHandler verifies each POSTed delivery with secret, keeps it under
// saveDir when that is set, and prints one line per delivery to out.
func newHandler(secret, saveDir string, out io.Writer) http.Handler {
	v := webhook.Verifier{Secret: secret}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST a webhook delivery here", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if len(body) > maxBody { // a notification is a few hundred bytes
			fmt.Fprintf(out, "REFUSED a body over %d bytes (413)\n", maxBody)
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		id := r.Header.Get(webhook.HeaderID)
		now := time.Now().Format(time.TimeOnly)
		if saveDir != "" {
			where, err := keep(saveDir, id, r.Header, body)
			if err != nil {
				fmt.Fprintf(out, "%s could not save %s: %v\n", now, id, err)
			} else {
				fmt.Fprintf(out, "%s saved %s\n", now, where)
			}
		}
		if err := v.Verify(r.Header, body); err != nil {
			fmt.Fprintf(out, "%s REFUSED webhook-id %q (401): %v\n    %s\n", now, id, err, hint(err))
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var ev struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Resource struct {
				Type    string `json:"type"`
				ID      string `json:"id"`
				Version int64  `json:"version"`
			} `json:"resource"`
		}
		if json.Unmarshal(body, &ev) == nil && strings.HasPrefix(ev.ID, "evt_") { // a webhook endpoint's event
			fmt.Fprintf(out, "%s event %s: %s %s at version %d, webhook-id %s\n", now, ev.Type, ev.Resource.Type, ev.Resource.ID, ev.Resource.Version, id)
			w.WriteHeader(http.StatusOK)
			return
		}
		var p webhook.Payload
		if err := json.Unmarshal(body, &p); err != nil {
			fmt.Fprintf(out, "%s REFUSED webhook-id %q (400): the body is not a payment notification\n", now, id)
			http.Error(w, "not a payment notification", http.StatusBadRequest)
			return
		}
		// A webhook-id seen before is a retry of a delivery already handled.
		what := fmt.Sprintf("%s %s: %s %s", strings.ToLower(p.Message), p.TransactionID, p.Amount, p.Currency)
		if p.InvoiceCode != "" { // a test notification names no invoice
			what += fmt.Sprintf(" for invoice %s (%s)", p.InvoiceCode, p.PaymentStatus)
		}
		fmt.Fprintf(out, "%s %s, webhook-id %s\n", now, what, id)
		w.WriteHeader(http.StatusOK)
	})
}

// hint says what to check after a refusal.
func hint(err error) string {
	switch {
	case errors.Is(err, webhook.ErrBadSignature):
		return "Is WEBHOOK_SECRET exactly the callback secret set for the account (PUT /api/v1/user/webhook, or admin webhook set)? A whsec_ secret must be given whole, prefix included."
	case errors.Is(err, webhook.ErrStale):
		return "webhook-timestamp is more than 5 minutes from this machine's clock: a replay, a saved delivery sent again, or a clock that is off."
	case errors.Is(err, webhook.ErrUnsigned):
		return "The delivery carries no signature headers, but WEBHOOK_SECRET is set: set the same secret on the account, or unset WEBHOOK_SECRET."
	}
	return ""
}

// keep writes the raw body and the verification headers of one delivery
// under dir, named after its webhook-id, and returns the body's path.
func keep(dir, id string, h http.Header, body []byte) (string, error) {
	name := unsafeName.ReplaceAllString(id, "_")
	if name == "" {
		name = "no-webhook-id-" + time.Now().Format("20060102T150405.000000000")
	}
	headers := map[string]string{}
	for _, k := range savedHeaders {
		if v := h.Get(k); v != "" {
			headers[k] = v
		}
	}
	hb, _ := json.MarshalIndent(headers, "", "  ")
	bodyPath := filepath.Join(dir, name+".body")
	if err := os.WriteFile(bodyPath, body, 0o600); err != nil {
		return "", err
	}
	return bodyPath, os.WriteFile(filepath.Join(dir, name+".headers.json"), append(hb, '\n'), 0o600)
}
