// Command admin is the operator's CLI: it creates, lists and shows accounts,
// lists, creates, revokes and rotates their API keys, sets webhook settings, shows a sale with its payments and
// refunds and an item's stock ledger, and migrates stored data, talking to
// the same table as the API (same environment: DYNAMODB_ENDPOINT,
// TABLE_NAME; AWS credentials on AWS).
//
//	admin account create --name N --business-code C --currency CUR [--invoice-prefix P] [--owner-email E] [--json]
//	admin account list [--json]
//	admin account show (--account ID | --business-code C) [--json]
//	admin account index
//	admin key list --account ID [--json]
//	admin key create --account ID --name N --scopes S1,S2 [--mode live|test] [--json]
//	admin key revoke --account ID --key KEY_ID [--json]
//	admin key rotate --account ID [--key KEY_ID] [--json]
//	admin webhook set --account ID --url U [--secret S]
//	admin webhook deliveries --account ID [--json]
//	admin webhook redeliver --account ID --transaction TX
//	admin sale show (--account ID | --business-code C) --invoice CODE [--json]
//	admin item movements (--account ID | --business-code C) --item CODE [--limit N] [--json]
//	admin owner add (--account ID | --business-code C) --email E
//	admin owner link --email E
//	admin migrate [--json]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"bizdata/shared/app"
	"bizdata/shared/store"
)

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

// command is one command of the CLI: the words that name it, its entry in
// the usage text, and what it does with the flags given.
type command struct {
	name   string // "account create"; one word for a command of one word
	usage  string // after "admin ", with any note lines below it
	handle func(ctx context.Context, o options, out io.Writer) error
}

// commands are every command, in the order the usage text lists them.
var commands = slices.Concat(accountCommands, keyCommands, ownerCommands, webhookCommands, saleCommands, itemCommands, migrateCommands)

// usage is printed on a usage error: every command with its flags.
var usage = usageText(commands)

func usageText(cs []command) string {
	var b strings.Builder
	b.WriteString("usage:\n")
	for _, c := range cs {
		b.WriteString("  admin " + c.usage + "\n")
	}
	return b.String()
}

// options are the flags. Every command accepts all of them and reads those
// it needs.
type options struct {
	name, code, currency, prefix   string
	account, keyID, scopes, mode   string
	url, secret, tx, invoice, item string
	email, owner                   string
	limit                          int
	asJSON                         bool
}

func (o *options) register(fs *flag.FlagSet) {
	fs.StringVar(&o.name, "name", "", "business name (account create), key name (key create)")
	fs.StringVar(&o.code, "business-code", "", "business code sent in webhooks")
	fs.StringVar(&o.currency, "currency", "", "ISO 4217 currency code")
	fs.StringVar(&o.prefix, "invoice-prefix", "INV", "invoice number prefix")
	fs.StringVar(&o.account, "account", "", "account id")
	fs.StringVar(&o.url, "url", "", "webhook callback URL")
	fs.StringVar(&o.secret, "secret", "", "webhook callback secret (no spaces)")
	fs.StringVar(&o.tx, "transaction", "", "payment transaction id")
	fs.StringVar(&o.invoice, "invoice", "", "sale invoice code")
	fs.StringVar(&o.item, "item", "", "inventory item code")
	fs.IntVar(&o.limit, "limit", 50, "most entries to print")
	fs.StringVar(&o.keyID, "key", "", "API key id (key_…)")
	fs.StringVar(&o.scopes, "scopes", "", "comma-separated key scopes")
	fs.StringVar(&o.mode, "mode", "", "key mode: live (default) or test")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
	fs.StringVar(&o.email, "email", "", "owner email (owner add, owner link)")
	fs.StringVar(&o.owner, "owner-email", "", "the new account owner's email (account create)")
}

// run executes one command. The store is opened only once the flags parse.
func run(ctx context.Context, args []string, out io.Writer) error {
	words := 2
	if len(args) > 0 && slices.ContainsFunc(commands, func(c command) bool { return c.name == args[0] }) {
		words = 1
	}
	if len(args) < words {
		return fmt.Errorf("%w: want a command such as 'account create'", errUsage)
	}
	name := strings.Join(args[:words], " ")
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o options
	o.register(fs)
	if err := fs.Parse(args[words:]); err != nil {
		return fmt.Errorf("%w: %s: %v", errUsage, name, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	i := slices.IndexFunc(commands, func(c command) bool { return c.name == name })
	if i < 0 {
		return fmt.Errorf("%w: unknown command %q", errUsage, strings.TrimSpace(name))
	}
	return commands[i].handle(ctx, o, out)
}

// openStore opens the table the environment names, as the API's functions
// do.
func openStore(ctx context.Context) (*store.Store, error) {
	cfg, err := app.FromEnv()
	if err != nil {
		return nil, err
	}
	return app.NewStore(ctx, cfg)
}

// requireAccount refuses a command given no --account.
func requireAccount(o options) error {
	if o.account == "" {
		return fmt.Errorf("%w: --account is required", errUsage)
	}
	return nil
}

// openForAccount opens the store for a command that needs --account.
func openForAccount(ctx context.Context, o options) (*store.Store, error) {
	if err := requireAccount(o); err != nil {
		return nil, err
	}
	return openStore(ctx)
}

// requireOneAccount refuses a command given both or neither of --account
// and --business-code.
func requireOneAccount(o options) error {
	if (o.account == "") == (o.code == "") {
		return fmt.Errorf("%w: give --account or --business-code", errUsage)
	}
	return nil
}

// openNamedAccount opens the store and returns the id of the account that
// --account or --business-code names, checking that it exists.
func openNamedAccount(ctx context.Context, o options) (*store.Store, string, error) {
	st, err := openStore(ctx)
	if err != nil {
		return nil, "", err
	}
	if err := requireOneAccount(o); err != nil {
		return nil, "", err
	}
	if o.code != "" {
		a, err := st.FindAccountByCode(ctx, o.code)
		return st, a.ID, err
	}
	a, _, err := st.FindWebhookSettings(ctx, o.account)
	return st, a.ID, err
}

// orDash is s, or "-" for none, as the CLI's lines print a missing value.
func orDash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}
