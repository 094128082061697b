package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/wire"
)

var webhookCommands = []command{
	{"webhook set", "webhook set --account ID --url U [--secret S]", setWebhook},
	{"webhook deliveries", "webhook deliveries --account ID [--json]", listDeliveries},
	{"webhook redeliver", "webhook redeliver --account ID --transaction TX", redeliver},
}

// setWebhook sets the account's callback URL and secret.
func setWebhook(ctx context.Context, o options, out io.Writer) error {
	if err := requireAccount(o); err != nil {
		return err
	}
	w, err := business.NewWebhook(o.url, o.secret)
	if err != nil {
		return err
	}
	st, err := openStore(ctx)
	if err != nil {
		return err
	}
	if err := st.SetWebhook(ctx, o.account, w); err != nil {
		return err
	}
	fmt.Fprintf(out, "webhook for %s: %s (signed: %v)\n", o.account, w.CallbackURL, w.CallbackSecret != "")
	return nil
}

// listDeliveries prints the account's deliveries, newest first, as the API
// lists them (GET /user/webhook/deliveries): one line each, or that JSON.
func listDeliveries(ctx context.Context, o options, out io.Writer) error {
	st, err := openForAccount(ctx, o)
	if err != nil {
		return err
	}
	all := []wire.Delivery{}
	cursor := ""
	for {
		page, err := st.ListDeliveries(ctx, o.account, "", 200, cursor)
		if err != nil {
			return err
		}
		for _, d := range page.Items {
			all = append(all, wire.NewDelivery(d))
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if o.asJSON {
		return json.NewEncoder(out).Encode(all)
	}
	if len(all) == 0 { // say so, rather than print nothing
		fmt.Fprintf(out, "no deliveries for %s yet: each payment makes one (skipped while the account has no callback URL)\n", o.account)
		return nil
	}
	for _, d := range all {
		fmt.Fprintf(out, "%s  %-9s  %10s  invoice %-12s  attempts %d  %s\n", d.TransactionID, d.State, d.Amount, orDash(d.InvoiceCode), len(d.Attempts), lastAttempt(d))
	}
	return nil
}

// lastAttempt says how the delivery's last attempt went, or "" before its
// first.
func lastAttempt(d wire.Delivery) string {
	n := len(d.Attempts)
	if n == 0 {
		return ""
	}
	a := d.Attempts[n-1]
	status := "no answer"
	if a.StatusCode != nil {
		status = fmt.Sprintf("status %d", *a.StatusCode)
	}
	last := fmt.Sprintf("last: %s %s %dms", a.At, status, a.LatencyMS)
	if a.Error != nil {
		last += " " + *a.Error
	}
	return last
}

// redeliver queues a failed delivery again.
func redeliver(ctx context.Context, o options, out io.Writer) error {
	if o.account == "" || o.tx == "" {
		return fmt.Errorf("%w: --account and --transaction are required", errUsage)
	}
	st, err := openStore(ctx)
	if err != nil {
		return err
	}
	if _, err := st.Redeliver(ctx, o.account, o.tx, time.Now().UTC()); err != nil {
		return err
	}
	fmt.Fprintf(out, "delivery of %s queued again\n", o.tx)
	return nil
}
