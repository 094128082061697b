// Command admin is the operator's CLI: it creates accounts, rotates API keys
// and sets webhook settings, talking to the same table as the API (same
// environment: DYNAMODB_ENDPOINT, TABLE_NAME; AWS credentials on AWS).
//
//	admin account create --name N --business-code C --currency CUR [--invoice-prefix P] [--json]
//	admin key rotate --account ID [--json]
//	admin webhook set --account ID --url U [--secret S]
//	admin webhook deliveries --account ID [--json]
//	admin webhook redeliver --account ID --transaction TX
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"
)

const usage = `usage:
  admin account create --name N --business-code C --currency CUR [--invoice-prefix P] [--json]
  admin key rotate --account ID [--json]
  admin webhook set --account ID --url U [--secret S]
  admin webhook deliveries --account ID [--json]
  admin webhook redeliver --account ID --transaction TX
`

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "admin:", err)
		if errors.Is(err, errUsage) {
			fmt.Fprint(os.Stderr, usage)
		}
		os.Exit(2)
	}
}

var errUsage = errors.New("bad usage")

// run executes one command. The store is opened only once the flags parse.
func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) < 2 {
		return fmt.Errorf("%w: want a command such as 'account create'", errUsage)
	}
	cmd := args[0] + " " + args[1]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		name     = fs.String("name", "", "business name")
		code     = fs.String("business-code", "", "business code sent in webhooks")
		currency = fs.String("currency", "", "ISO 4217 currency code")
		prefix   = fs.String("invoice-prefix", "INV", "invoice number prefix")
		account  = fs.String("account", "", "account id")
		url      = fs.String("url", "", "webhook callback URL")
		secret   = fs.String("secret", "", "webhook callback secret (no spaces)")
		tx       = fs.String("transaction", "", "payment transaction id")
		asJSON   = fs.Bool("json", false, "print JSON")
	)
	if err := fs.Parse(args[2:]); err != nil {
		return fmt.Errorf("%w: %s: %v", errUsage, cmd, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	open := func() (*store.Store, error) {
		cfg, err := app.FromEnv()
		if err != nil {
			return nil, err
		}
		return app.NewStore(ctx, cfg)
	}
	switch cmd {
	case "account create":
		a, err := business.NewAccount(*name, *code, *currency, *prefix)
		if err != nil {
			return err
		}
		st, err := open()
		if err != nil {
			return err
		}
		a, key, err := st.CreateAccount(ctx, a)
		if err != nil {
			return err
		}
		return printKey(out, *asJSON, a.ID, key)
	case "key rotate":
		if *account == "" {
			return fmt.Errorf("%w: --account is required", errUsage)
		}
		st, err := open()
		if err != nil {
			return err
		}
		key, err := st.RotateKey(ctx, *account)
		if err != nil {
			return err
		}
		return printKey(out, *asJSON, *account, key)
	case "webhook set":
		if *account == "" {
			return fmt.Errorf("%w: --account is required", errUsage)
		}
		w, err := business.NewWebhook(*url, *secret)
		if err != nil {
			return err
		}
		st, err := open()
		if err != nil {
			return err
		}
		if err := st.SetWebhook(ctx, *account, w); err != nil {
			return err
		}
		fmt.Fprintf(out, "webhook for %s: %s (signed: %v)\n", *account, w.CallbackURL, w.CallbackSecret != "")
		return nil
	case "webhook deliveries":
		if *account == "" {
			return fmt.Errorf("%w: --account is required", errUsage)
		}
		st, err := open()
		if err != nil {
			return err
		}
		return printDeliveries(ctx, st, *account, *asJSON, out)
	case "webhook redeliver":
		if *account == "" || *tx == "" {
			return fmt.Errorf("%w: --account and --transaction are required", errUsage)
		}
		st, err := open()
		if err != nil {
			return err
		}
		if _, err := st.Redeliver(ctx, *account, *tx, time.Now().UTC()); err != nil {
			return err
		}
		fmt.Fprintf(out, "delivery of %s queued again\n", *tx)
		return nil
	}
	return fmt.Errorf("%w: unknown command %q", errUsage, strings.TrimSpace(cmd))
}

// deliveryJSON is one delivery as `webhook deliveries --json` prints it.
type deliveryJSON struct {
	TransactionID string        `json:"transaction_id"`
	WebhookID     string        `json:"webhook_id"`
	State         string        `json:"state"`
	Attempts      []attemptJSON `json:"attempts"`
	NextAttemptAt *string       `json:"next_attempt_at"`
	CreatedAt     string        `json:"created_at"`
}

type attemptJSON struct {
	At        string `json:"at"`
	Status    int    `json:"status"`
	LatencyMS int64  `json:"latency_ms"`
	Error     string `json:"error,omitempty"`
}

func printDeliveries(ctx context.Context, st *store.Store, account string, asJSON bool, out io.Writer) error {
	var all []deliveryJSON
	cursor := ""
	for {
		page, err := st.ListDeliveries(ctx, account, "", 200, cursor)
		if err != nil {
			return err
		}
		for _, d := range page.Items {
			j := deliveryJSON{TransactionID: d.TransactionID, WebhookID: d.WebhookID, State: d.State,
				Attempts: []attemptJSON{}, CreatedAt: d.CreatedAt.Format(business.TimeFormat)}
			if d.State == business.DeliveryPending {
				next := d.NextAt.Format(business.TimeFormat)
				j.NextAttemptAt = &next
			}
			for _, a := range d.Attempts {
				j.Attempts = append(j.Attempts, attemptJSON{At: a.At.Format(business.TimeFormat), Status: a.Status, LatencyMS: a.LatencyMS, Error: a.Error})
			}
			all = append(all, j)
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if asJSON {
		if all == nil {
			all = []deliveryJSON{}
		}
		return json.NewEncoder(out).Encode(all)
	}
	for _, d := range all {
		last := ""
		if n := len(d.Attempts); n > 0 {
			a := d.Attempts[n-1]
			last = fmt.Sprintf("last: %s status %d %dms %s", a.At, a.Status, a.LatencyMS, a.Error)
		}
		fmt.Fprintf(out, "%s  %-9s  attempts %d  %s\n", d.TransactionID, d.State, len(d.Attempts), last)
	}
	return nil
}

func printKey(out io.Writer, asJSON bool, account, key string) error {
	if asJSON {
		return json.NewEncoder(out).Encode(map[string]string{"account_id": account, "api_key": key})
	}
	_, err := fmt.Fprintf(out, "account_id: %s\napi_key:    %s\n(the key is shown only now; keep it secret)\n", account, key)
	return err
}
