// Command receiver is a small example webhook receiver: it verifies each
// payment notification with shared/webhook's Verifier (a mismatched signature
// or a stale timestamp is answered 401) and prints the payment.
//
//	WEBHOOK_SECRET=... go run ./infra/receiver -addr :8080
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	"bizdata/shared/webhook"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	v := webhook.Verifier{Secret: os.Getenv("WEBHOOK_SECRET")}
	http.Handle("POST /", v.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p webhook.Payload
		if err := json.Unmarshal(body, &p); err != nil {
			http.Error(w, "not a payment notification", http.StatusBadRequest)
			return
		}
		// A webhook-id seen before is a retry of a delivery already handled.
		fmt.Printf("%s payment %s: %s %s for invoice %s (%s), webhook-id %s\n",
			time.Now().Format(time.TimeOnly), p.TransactionID, p.Amount, p.Currency, p.InvoiceCode, p.PaymentStatus, r.Header.Get(webhook.HeaderID))
		w.WriteHeader(http.StatusOK)
	})))
	srv := &http.Server{Addr: *addr, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("receiving webhooks on http://%s (signature checks %s)", *addr, map[bool]string{true: "on", false: "off: WEBHOOK_SECRET is unset"}[v.Secret != ""])
	log.Fatal(srv.ListenAndServe())
}
