// Command admin is the operator's CLI: it creates, lists and shows accounts,
// rotates API keys, sets webhook settings and migrates stored data, talking
// to the same table as the API (same environment: DYNAMODB_ENDPOINT,
// TABLE_NAME; AWS credentials on AWS).
//
//	admin account create --name N --business-code C --currency CUR [--invoice-prefix P] [--json]
//	admin account list [--json]
//	admin account show (--account ID | --business-code C) [--json]
//	admin account index
//	admin key rotate --account ID [--json]
//	admin webhook set --account ID --url U [--secret S]
//	admin webhook deliveries --account ID [--json]
//	admin webhook redeliver --account ID --transaction TX
//	admin migrate [--json]
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

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"
)

const usage = `usage:
  admin account create --name N --business-code C --currency CUR [--invoice-prefix P] [--json]
  admin account list [--json]
  admin account show (--account ID | --business-code C) [--json]
  admin account index    (once, for accounts created before list and show existed)
  admin key rotate --account ID [--json]
  admin webhook set --account ID --url U [--secret S]
  admin webhook deliveries --account ID [--json]
  admin webhook redeliver --account ID --transaction TX
  admin migrate [--json]  (after an upgrade: moves callback secrets off account items,
                          gives records written before views theirs; safe to run again)
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

// oneWord names the commands of one word; every other is a noun and a verb.
var oneWord = map[string]bool{"migrate": true}

// run executes one command. The store is opened only once the flags parse.
func run(ctx context.Context, args []string, out io.Writer) error {
	words := 2
	if len(args) > 0 && oneWord[args[0]] {
		words = 1
	}
	if len(args) < words {
		return fmt.Errorf("%w: want a command such as 'account create'", errUsage)
	}
	cmd := strings.Join(args[:words], " ")
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
	if err := fs.Parse(args[words:]); err != nil {
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
	case "account list":
		st, err := open()
		if err != nil {
			return err
		}
		accounts, err := st.ListAccounts(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			all := make([]accountJSON, len(accounts))
			for i, a := range accounts {
				all[i] = newAccountJSON(a)
			}
			return json.NewEncoder(out).Encode(all)
		}
		for _, a := range accounts {
			fmt.Fprintf(out, "%-20s  %-24s  %s  %s  %s\n", a.BusinessCode, a.ID, a.Currency, a.CreatedAt.Format(business.TimeFormat), a.Name)
		}
		return nil
	case "account show":
		if (*account == "") == (*code == "") {
			return fmt.Errorf("%w: give --account or --business-code", errUsage)
		}
		st, err := open()
		if err != nil {
			return err
		}
		id := *account
		if *code != "" {
			a, err := st.FindAccountByCode(ctx, *code)
			if err != nil {
				return err
			}
			id = a.ID
		}
		a, w, err := st.FindWebhookSettings(ctx, id)
		if err != nil {
			return err
		}
		j := newAccountJSON(a)
		j.CallbackURL, j.Signed = nullable(w.CallbackURL), &w.Signed
		if *asJSON {
			return json.NewEncoder(out).Encode(j)
		}
		url := "(none: payments are recorded as skipped)"
		if j.CallbackURL != nil {
			url = *j.CallbackURL
		}
		fmt.Fprintf(out, "account_id:     %s\nname:           %s\nbusiness_code:  %s\ncurrency:       %s\ninvoice_prefix: %s\ncreated_at:     %s\ncallback_url:   %s\nsigned:         %v\n",
			j.AccountID, j.Name, j.BusinessCode, j.Currency, j.InvoicePrefix, j.CreatedAt, url, w.Signed)
		return nil
	case "account index":
		st, err := open()
		if err != nil {
			return err
		}
		added, shared, err := st.IndexAccountCodes(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%d accounts added to the directory\n", added)
		if len(shared) > 0 {
			return fmt.Errorf("these accounts share a business code with another and were left out; give each a code of its own: %s", strings.Join(shared, ", "))
		}
		return nil
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
	case "migrate":
		// Accounts whose callback secret is still on the account item, where
		// every function may read it, get it moved to its own item. The
		// secrets are never printed: only how many accounts moved. Records
		// written before views get theirs, so the list indexes carry them.
		st, err := open()
		if err != nil {
			return err
		}
		n, err := st.MigrateLegacySecrets(ctx)
		if err != nil {
			return err
		}
		r, err := st.PackLegacyRecords(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(out).Encode(map[string]int{"migrated": n, "records": r})
		}
		fmt.Fprintf(out, "migrated %d accounts, %d records\n", n, r)
		return nil
	}
	return fmt.Errorf("%w: unknown command %q", errUsage, strings.TrimSpace(cmd))
}

// accountJSON is an account as `account list` and `account show` print it.
type accountJSON struct {
	AccountID     string  `json:"account_id"`
	Name          string  `json:"name"`
	BusinessCode  string  `json:"business_code"`
	Currency      string  `json:"currency"`
	InvoicePrefix string  `json:"invoice_prefix"`
	CreatedAt     string  `json:"created_at"`
	CallbackURL   *string `json:"callback_url,omitempty"`
	Signed        *bool   `json:"signed,omitempty"`
}

func newAccountJSON(a business.Account) accountJSON {
	return accountJSON{AccountID: a.ID, Name: a.Name, BusinessCode: a.BusinessCode, Currency: a.Currency,
		InvoicePrefix: a.InvoicePrefix, CreatedAt: a.CreatedAt.Format(business.TimeFormat)}
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// printDeliveries prints the account's deliveries, newest first, as the API
// lists them (GET /user/webhook/deliveries): one line each, or that JSON.
func printDeliveries(ctx context.Context, st *store.Store, account string, asJSON bool, out io.Writer) error {
	all := []api.DeliveryJSON{}
	cursor := ""
	for {
		page, err := st.ListDeliveries(ctx, account, "", 200, cursor)
		if err != nil {
			return err
		}
		for _, d := range page.Items {
			all = append(all, api.NewDeliveryJSON(d))
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if asJSON {
		return json.NewEncoder(out).Encode(all)
	}
	for _, d := range all {
		invoice := "-"
		if d.InvoiceCode != nil {
			invoice = *d.InvoiceCode
		}
		last := ""
		if n := len(d.Attempts); n > 0 {
			a := d.Attempts[n-1]
			status := "no answer"
			if a.StatusCode != nil {
				status = fmt.Sprintf("status %d", *a.StatusCode)
			}
			last = fmt.Sprintf("last: %s %s %dms", a.At, status, a.LatencyMS)
			if a.Error != nil {
				last += " " + *a.Error
			}
		}
		fmt.Fprintf(out, "%s  %-9s  %10s  invoice %-12s  attempts %d  %s\n", d.TransactionID, d.State, d.Amount, invoice, len(d.Attempts), last)
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
