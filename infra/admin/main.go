// Command admin is the operator's CLI: it creates accounts, rotates API keys
// and sets webhook settings, talking to the same table as the API (same
// environment: DYNAMODB_ENDPOINT, TABLE_NAME; AWS credentials on AWS).
//
//	admin account create --name N --business-code C --currency CUR [--invoice-prefix P] [--json]
//	admin key rotate --account ID [--json]
//	admin webhook set --account ID --url U [--secret S]
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

	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"
)

const usage = `usage:
  admin account create --name N --business-code C --currency CUR [--invoice-prefix P] [--json]
  admin key rotate --account ID [--json]
  admin webhook set --account ID --url U [--secret S]
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
	}
	return fmt.Errorf("%w: unknown command %q", errUsage, strings.TrimSpace(cmd))
}

func printKey(out io.Writer, asJSON bool, account, key string) error {
	if asJSON {
		return json.NewEncoder(out).Encode(map[string]string{"account_id": account, "api_key": key})
	}
	_, err := fmt.Fprintf(out, "account_id: %s\napi_key:    %s\n(the key is shown only now; keep it secret)\n", account, key)
	return err
}
