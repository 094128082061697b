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
	"bizdata/shared/money"
	"bizdata/shared/store"
	"bizdata/shared/wire"
)

const usage = `usage:
  admin account create --name N --business-code C --currency CUR [--invoice-prefix P] [--owner-email E] [--json]
                         (with --owner-email, also the owner's dashboard sign-in: prints a one-time
                          set-password link, valid 7 days, under DASHBOARD_URL)
  admin account list [--json]
  admin account show (--account ID | --business-code C) [--json]
  admin account index    (once, for accounts created before list and show existed)
  admin key list --account ID [--json]
                         (the account's active keys, live and test, oldest first; never their secrets)
  admin key create --account ID --name N --scopes S1,S2 [--mode live|test] [--json]
                         (a new key, printed this once; scopes: sales:read sales:write expenses:read
                          expenses:write inventory:read inventory:write customers:read customers:write
                          reports:read events:read webhooks:write keys:write, or * for all; mode live
                          by default, test acts on the account's test data)
  admin key revoke --account ID --key KEY_ID [--json]
  admin key rotate --account ID [--key KEY_ID] [--json]
                         (a new secret for the key, printed this once; --key may be left out when
                          the account has one key)
  admin owner add (--account ID | --business-code C) --email E
                         (another dashboard sign-in for the account; prints its set-password link)
  admin owner link --email E
                         (a new set-password link for an owner who forgot the password; the
                          owner's sessions end when it is used)
  admin webhook set --account ID --url U [--secret S]
  admin webhook deliveries --account ID [--json]
  admin webhook redeliver --account ID --transaction TX
  admin sale show (--account ID | --business-code C) --invoice CODE [--json]
                         (the sale: paid, refunded, status, void; its lines, payments, refunds)
  admin item movements (--account ID | --business-code C) --item CODE [--limit N] [--json]
                         (the item's stock ledger, newest first, N entries, default 50)
  admin migrate [--json]  (after an upgrade: moves callback secrets off account items,
                          gives records written before views theirs, counts records written
                          before reports in them, moves events stored before the sharded
                          feed into it; safe to run again)
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
		name     = fs.String("name", "", "business name (account create), key name (key create)")
		code     = fs.String("business-code", "", "business code sent in webhooks")
		currency = fs.String("currency", "", "ISO 4217 currency code")
		prefix   = fs.String("invoice-prefix", "INV", "invoice number prefix")
		account  = fs.String("account", "", "account id")
		url      = fs.String("url", "", "webhook callback URL")
		secret   = fs.String("secret", "", "webhook callback secret (no spaces)")
		tx       = fs.String("transaction", "", "payment transaction id")
		invoice  = fs.String("invoice", "", "sale invoice code")
		itemCode = fs.String("item", "", "inventory item code")
		limit    = fs.Int("limit", 50, "most entries to print")
		keyID    = fs.String("key", "", "API key id (key_…)")
		scopes   = fs.String("scopes", "", "comma-separated key scopes")
		mode     = fs.String("mode", "", "key mode: live (default) or test")
		asJSON   = fs.Bool("json", false, "print JSON")
		email    = fs.String("email", "", "owner email (owner add, owner link)")
		owner    = fs.String("owner-email", "", "the new account owner's email (account create)")
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
		if *owner == "" {
			a, key, err := st.CreateAccount(ctx, a)
			if err != nil {
				return err
			}
			return printKey(out, *asJSON, a.ID, a.Key.ID, key)
		}
		ownerEmail, err := business.NormalizeEmail(*owner)
		if err != nil {
			return fmt.Errorf("--owner-email: %w", err)
		}
		a, key, err := st.CreateAccountWithOwner(ctx, a, business.Owner{Email: ownerEmail})
		if err != nil {
			return err
		}
		link, err := passwordLink(ctx, st, ownerEmail)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(out).Encode(map[string]string{"account_id": a.ID, "key_id": a.Key.ID, "api_key": key,
				"owner_email": ownerEmail, "set_password_url": link})
		}
		if err := printKey(out, false, a.ID, a.Key.ID, key); err != nil {
			return err
		}
		return printPasswordLink(out, ownerEmail, link)
	case "owner add":
		ownerEmail, err := business.NormalizeEmail(*email)
		if err != nil {
			return fmt.Errorf("--email: %w", err)
		}
		st, err := open()
		if err != nil {
			return err
		}
		id, err := accountID(ctx, st, *account, *code)
		if err != nil {
			return err
		}
		if err := st.CreateOwner(ctx, id, business.Owner{Email: ownerEmail}); err != nil {
			return err
		}
		link, err := passwordLink(ctx, st, ownerEmail)
		if err != nil {
			return err
		}
		return printPasswordLink(out, ownerEmail, link)
	case "owner link":
		ownerEmail, err := business.NormalizeEmail(*email)
		if err != nil {
			return fmt.Errorf("--email: %w", err)
		}
		st, err := open()
		if err != nil {
			return err
		}
		link, err := passwordLink(ctx, st, ownerEmail)
		if err != nil {
			return err
		}
		return printPasswordLink(out, ownerEmail, link)
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
	case "key list", "key create", "key revoke", "key rotate":
		if *account == "" {
			return fmt.Errorf("%w: --account is required", errUsage)
		}
		if cmd == "key revoke" && *keyID == "" {
			return fmt.Errorf("%w: --key is required (see 'key list')", errUsage)
		}
		st, err := open()
		if err != nil {
			return err
		}
		switch cmd {
		case "key list":
			return listKeys(ctx, st, *account, *asJSON, out)
		case "key create":
			return createKey(ctx, st, *account, *name, *scopes, *mode, *asJSON, out)
		case "key revoke":
			return revokeKey(ctx, st, *account, *keyID, *asJSON, out)
		}
		return rotateKey(ctx, st, *account, *keyID, *asJSON, out)
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
	case "sale show":
		if *invoice == "" {
			return fmt.Errorf("%w: --invoice is required", errUsage)
		}
		st, err := open()
		if err != nil {
			return err
		}
		id, err := accountID(ctx, st, *account, *code)
		if err != nil {
			return err
		}
		rec, err := st.FindSaleByCode(ctx, id, *invoice)
		if err != nil {
			return err
		}
		return printSale(out, *asJSON, rec)
	case "item movements":
		if *itemCode == "" {
			return fmt.Errorf("%w: --item is required", errUsage)
		}
		if *limit < 1 {
			return fmt.Errorf("%w: --limit must be at least 1", errUsage)
		}
		st, err := open()
		if err != nil {
			return err
		}
		id, err := accountID(ctx, st, *account, *code)
		if err != nil {
			return err
		}
		return printMovements(ctx, st, id, *itemCode, *limit, *asJSON, out)
	case "migrate":
		// Accounts whose callback secret is still on the account item, where
		// every function may read it, get it moved to its own item. The
		// secrets are never printed: only how many accounts moved. Records
		// written before views get theirs, so the list indexes carry them.
		// Items written before the stock ledger get their opening movement.
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
		// Items written before the ledger get their opening movement, so
		// their movements add up to their stock.
		l, err := st.OpenLedgers(ctx)
		if err != nil {
			return err
		}
		// Sales, payments, refunds and expenses written before reports
		// get their figures, once.
		c, err := st.CountLegacyRecords(ctx)
		if err != nil {
			return err
		}
		// Sales written before receivables were kept add what they owe.
		d, err := st.CountLegacyDebts(ctx)
		if err != nil {
			return err
		}
		// Debts kept before their IX9 entries carried their aging are laid
		// out again, so reports age the largest from the index alone.
		dl, err := st.RelayoutDebts(ctx)
		if err != nil {
			return err
		}
		// Items written before the inventory's worth was kept add what
		// they are worth, and those low or out of stock join its alerts.
		w, err := st.CountLegacyItems(ctx)
		if err != nil {
			return err
		}
		// Events stored before the feed was sharded move into it, so the
		// feed and the event's read still find them.
		e, err := st.MoveLegacyEvents(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(out).Encode(map[string]int{"migrated": n, "records": r, "ledgers": l, "reported": c, "receivables": d, "debts": dl, "stock": w, "events": e})
		}
		fmt.Fprintf(out, "migrated %d accounts, %d records, %d item ledgers opened, %d records counted in reports, %d sales counted in receivables, %d debts laid out again, %d items counted in the inventory's worth, %d events moved to the sharded feed\n", n, r, l, c, d, dl, w, e)
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
	if len(all) == 0 { // say so, rather than print nothing
		fmt.Fprintf(out, "no deliveries for %s yet: each payment makes one (skipped while the account has no callback URL)\n", account)
		return nil
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

// passwordLink makes a one-time set-password link for owner email, under
// the dashboard's address (DASHBOARD_URL, by default the devserver's).
func passwordLink(ctx context.Context, st *store.Store, email string) (string, error) {
	token, err := st.CreatePasswordLink(ctx, email)
	if err != nil {
		return "", err
	}
	base := strings.TrimSuffix(os.Getenv("DASHBOARD_URL"), "/")
	if base == "" {
		base = "http://localhost:3000"
	}
	return base + "/dashboard/set-password?token=" + token, nil
}

// printPasswordLink prints owner email's set-password link, shown this once.
func printPasswordLink(out io.Writer, email, link string) error {
	_, err := fmt.Fprintf(out, "owner:      %s\nset-password link (works once, within %d days):\n%s\n",
		email, int(business.PasswordLinkLifetime.Hours()/24), link)
	return err
}

// printKey prints a key's secret, shown this once, with its account and id.
func printKey(out io.Writer, asJSON bool, account, keyID, key string) error {
	if asJSON {
		return json.NewEncoder(out).Encode(map[string]string{"account_id": account, "key_id": keyID, "api_key": key})
	}
	_, err := fmt.Fprintf(out, "account_id: %s\nkey_id:     %s\napi_key:    %s\n(the key is shown only now; keep it secret)\n", account, keyID, key)
	return err
}

// accountID returns the id of the account named by id or business code
// (exactly one of them), checking that it exists.
func accountID(ctx context.Context, st *store.Store, id, code string) (string, error) {
	if (id == "") == (code == "") {
		return "", fmt.Errorf("%w: give --account or --business-code", errUsage)
	}
	if code != "" {
		a, err := st.FindAccountByCode(ctx, code)
		return a.ID, err
	}
	a, _, err := st.FindWebhookSettings(ctx, id)
	return a.ID, err
}

// saleView is a sale as `sale show` prints it: the figures that explain its
// money (paid, refunded, held) and its state, with its lines, payments and
// refunds, oldest first.
type saleView struct {
	InvoiceCode    string         `json:"invoice_code"`
	InvoiceNumber  string         `json:"invoice_number"`
	CustomerID     int64          `json:"customer_id"`
	CustomerName   string         `json:"customer_name"`
	Total          money.Amount   `json:"total_amount"`
	AmountPaid     money.Amount   `json:"amount_paid"`
	AmountRefunded money.Amount   `json:"amount_refunded"`
	Held           money.Amount   `json:"held"`
	PaymentType    string         `json:"payment_type"`
	PaymentStatus  string         `json:"payment_status"`
	VoidReason     *string        `json:"void_reason"`
	VoidedAt       *string        `json:"voided_at"`
	CreatedAt      string         `json:"created_at"`
	UpdatedAt      string         `json:"updated_at"`
	Lines          []saleLineView `json:"lines"`
	Payments       []paymentView  `json:"payments"`
	Refunds        []refundView   `json:"refunds"`
}

type saleLineView struct {
	SalesItemID int            `json:"sales_item_id"`
	ItemCode    *string        `json:"item_code"`
	ItemName    string         `json:"item_name"`
	UnitPrice   money.Amount   `json:"unit_price"`
	Quantity    money.Quantity `json:"quantity"`
	Returned    money.Quantity `json:"quantity_returned"`
}

type paymentView struct {
	TransactionID string       `json:"transaction_id"`
	Amount        money.Amount `json:"amount"`
	Method        string       `json:"payment_method"`
	IssuedBy      *string      `json:"issued_by"`
	PaymentAt     string       `json:"payment_at"`
}

type refundView struct {
	RefundID   string           `json:"refund_id"`
	Amount     money.Amount     `json:"amount"`
	Method     string           `json:"refund_method"`
	Reason     *string          `json:"reason"`
	IssuedBy   *string          `json:"issued_by"`
	Lines      []refundLineView `json:"lines"`
	RefundedAt string           `json:"refunded_at"`
}

type refundLineView struct {
	SalesItemID int            `json:"sales_item_id"`
	ItemCode    *string        `json:"item_code"`
	Quantity    money.Quantity `json:"quantity"`
}

func newSaleView(rec store.SaleRecord) saleView {
	s := rec.Sale
	v := saleView{
		InvoiceCode: s.InvoiceCode, InvoiceNumber: s.InvoiceNumber, CustomerID: s.CustomerID, CustomerName: s.CustomerName,
		Total: s.Total, AmountPaid: s.AmountPaid, AmountRefunded: s.AmountRefunded, Held: s.Held(),
		PaymentType: s.PaymentType, PaymentStatus: s.PaymentStatus, VoidReason: nullable(s.VoidReason),
		CreatedAt: s.CreatedAt.Format(business.TimeFormat), UpdatedAt: s.UpdatedAt.Format(business.TimeFormat),
		Lines: []saleLineView{}, Payments: []paymentView{}, Refunds: []refundView{},
	}
	if !s.VoidedAt.IsZero() {
		v.VoidedAt = nullable(s.VoidedAt.Format(business.TimeFormat))
	}
	for i, l := range s.Lines {
		v.Lines = append(v.Lines, saleLineView{SalesItemID: i + 1, ItemCode: nullable(l.ItemCode), ItemName: l.ItemName,
			UnitPrice: l.UnitPrice, Quantity: l.Quantity, Returned: l.Returned})
	}
	for _, p := range rec.Payments {
		v.Payments = append(v.Payments, paymentView{TransactionID: p.TransactionID, Amount: p.Amount, Method: p.Method,
			IssuedBy: nullable(p.IssuedBy), PaymentAt: p.PaymentAt.Format(business.TimeFormat)})
	}
	for _, r := range rec.Refunds {
		rv := refundView{RefundID: r.RefundID, Amount: r.Amount, Method: r.Method, Reason: nullable(r.Reason),
			IssuedBy: nullable(r.IssuedBy), Lines: []refundLineView{}, RefundedAt: r.RefundedAt.Format(business.TimeFormat)}
		for _, l := range r.Lines {
			rv.Lines = append(rv.Lines, refundLineView{SalesItemID: l.LineID, ItemCode: nullable(l.ItemCode), Quantity: l.Quantity})
		}
		v.Refunds = append(v.Refunds, rv)
	}
	return v
}

// printSale prints a sale as `sale show` shows it: its figures, then one
// line for each of its lines, payments and refunds.
func printSale(out io.Writer, asJSON bool, rec store.SaleRecord) error {
	v := newSaleView(rec)
	if asJSON {
		return json.NewEncoder(out).Encode(v)
	}
	fmt.Fprintf(out, "invoice_code:    %s\ninvoice_number:  %s\ncustomer:        %d %s\ntotal_amount:    %s\namount_paid:     %s\namount_refunded: %s\nheld:            %s (paid less refunded)\npayment_type:    %s\npayment_status:  %s\n",
		v.InvoiceCode, v.InvoiceNumber, v.CustomerID, v.CustomerName, v.Total, v.AmountPaid, v.AmountRefunded, v.Held, v.PaymentType, v.PaymentStatus)
	if v.VoidedAt != nil {
		fmt.Fprintf(out, "voided_at:       %s\nvoid_reason:     %s\n", *v.VoidedAt, orDash(v.VoidReason))
	}
	fmt.Fprintf(out, "created_at:      %s\nupdated_at:      %s\n", v.CreatedAt, v.UpdatedAt)
	fmt.Fprintf(out, "lines (%d):\n", len(v.Lines))
	for _, l := range v.Lines {
		fmt.Fprintf(out, "  %3d  %-16s  sold %s  returned %s  at %s  %s\n", l.SalesItemID, orDash(l.ItemCode), l.Quantity, l.Returned, l.UnitPrice, l.ItemName)
	}
	fmt.Fprintf(out, "payments (%d):\n", len(v.Payments))
	for _, p := range v.Payments {
		fmt.Fprintf(out, "  %s  %10s  %-14s  %s  by %s\n", p.TransactionID, p.Amount, p.Method, p.PaymentAt, orDash(p.IssuedBy))
	}
	fmt.Fprintf(out, "refunds (%d):\n", len(v.Refunds))
	for _, r := range v.Refunds {
		lines := make([]string, len(r.Lines))
		for i, l := range r.Lines {
			lines[i] = fmt.Sprintf("line %d x%s", l.SalesItemID, l.Quantity)
			if l.ItemCode != nil {
				lines[i] += " (" + *l.ItemCode + " back to stock)"
			}
		}
		returned := "no goods returned"
		if len(lines) > 0 {
			returned = strings.Join(lines, ", ")
		}
		fmt.Fprintf(out, "  %s  %10s  %-14s  %s  by %s  reason %s  %s\n", r.RefundID, r.Amount, r.Method, r.RefundedAt, orDash(r.IssuedBy), orDash(r.Reason), returned)
	}
	return nil
}

func orDash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

// ledgerView is an item's quantity with the newest entries of its ledger.
// Complete says the whole ledger was read; then LedgerSum is what its
// movements add up to, which should be the quantity.
type ledgerView struct {
	ItemCode  string          `json:"item_code"`
	ItemName  string          `json:"item_name"`
	Quantity  money.Quantity  `json:"quantity"`
	Movements []wire.Movement `json:"movements"`
	Complete  bool            `json:"complete"`
	LedgerSum *money.Delta    `json:"ledger_sum,omitempty"`
}

// printMovements prints up to limit of the item's movements, newest first,
// and, when that is its whole ledger, whether they add up to its quantity.
func printMovements(ctx context.Context, st *store.Store, account, code string, limit int, asJSON bool, out io.Writer) error {
	item, err := st.FindItemByCode(ctx, account, code)
	if err != nil {
		return err
	}
	v := ledgerView{ItemCode: item.ItemCode, ItemName: item.ItemName, Quantity: item.Quantity, Movements: []wire.Movement{}}
	cursor := ""
	for {
		page, err := st.ListMovements(ctx, account, code, min(limit-len(v.Movements), 200), cursor)
		if err != nil {
			return err
		}
		for _, m := range page.Items {
			v.Movements = append(v.Movements, wire.NewMovement(m))
		}
		cursor = page.Next
		if cursor == "" || len(v.Movements) >= limit {
			break
		}
	}
	if v.Complete = cursor == ""; v.Complete {
		var sum money.Delta
		for _, m := range v.Movements {
			sum = sum.Add(m.Quantity)
		}
		v.LedgerSum = &sum
	}
	if asJSON {
		return json.NewEncoder(out).Encode(v)
	}
	fmt.Fprintf(out, "item_code: %s\nitem_name: %s\nquantity:  %s\nmovements (%d, newest first):\n", v.ItemCode, v.ItemName, v.Quantity, len(v.Movements))
	for _, m := range v.Movements {
		why := orDash(m.Reason)
		if m.Note != nil {
			why += ": " + *m.Note
		}
		fmt.Fprintf(out, "  %6d  %-10s  %10s  -> %-12s  %s  invoice %-6s  %s\n", m.ID, m.Kind, m.Quantity, m.QuantityAfter, m.CreatedAt, orDash(m.InvoiceCode), why)
	}
	switch {
	case !v.Complete:
		fmt.Fprintf(out, "(older movements not shown: raise --limit to see the whole ledger)\n")
	case v.LedgerSum.Sub(v.Quantity.Delta()).IsZero():
		fmt.Fprintf(out, "ledger: the %d movements add up to %s, the item's quantity\n", len(v.Movements), v.LedgerSum)
	default:
		fmt.Fprintf(out, "ledger: MISMATCH: the %d movements add up to %s but the item holds %s (an item stocked before the ledger gets its opening movement from `admin migrate`; stock moved while this ran shows as a difference too: run again)\n",
			len(v.Movements), v.LedgerSum, v.Quantity)
	}
	return nil
}
