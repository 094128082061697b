package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/wire"
)

var accountCommands = []command{
	{"account create", `account create --name N --business-code C --currency CUR [--invoice-prefix P] [--owner-email E] [--json]
                         (with --owner-email, also the owner's dashboard sign-in: prints a one-time
                          set-password link, valid 7 days, under DASHBOARD_URL)`, createAccount},
	{"account list", "account list [--json]", listAccounts},
	{"account show", "account show (--account ID | --business-code C) [--json]", showAccount},
	{"account index", "account index    (once, for accounts created before list and show existed)", indexAccounts},
}

// createAccount makes an account with its first key and prints them; with
// --owner-email, also the owner's dashboard sign-in and its set-password
// link.
func createAccount(ctx context.Context, o options, out io.Writer) error {
	a, err := business.NewAccount(o.name, o.code, o.currency, o.prefix)
	if err != nil {
		return err
	}
	st, err := openStore(ctx)
	if err != nil {
		return err
	}
	if o.owner == "" {
		a, key, err := st.CreateAccount(ctx, a)
		if err != nil {
			return err
		}
		return printKey(out, o.asJSON, a.ID, a.Key.ID, key)
	}
	ownerEmail, err := emailFlag("--owner-email", o.owner)
	if err != nil {
		return err
	}
	a, key, err := st.CreateAccountWithOwner(ctx, a, business.Owner{Email: ownerEmail})
	if err != nil {
		return err
	}
	link, err := passwordLink(ctx, st, ownerEmail)
	if err != nil {
		return err
	}
	if o.asJSON {
		return json.NewEncoder(out).Encode(wire.AccountWithOwner{IssuedKey: wire.IssuedKey{AccountID: a.ID, APIKey: key, KeyID: a.Key.ID},
			OwnerEmail: ownerEmail, SetPasswordURL: link})
	}
	if err := printKey(out, false, a.ID, a.Key.ID, key); err != nil {
		return err
	}
	return printPasswordLink(out, ownerEmail, link)
}

// listAccounts prints every account of the directory, one line each, or
// their JSON.
func listAccounts(ctx context.Context, o options, out io.Writer) error {
	st, err := openStore(ctx)
	if err != nil {
		return err
	}
	accounts, err := st.ListAccounts(ctx)
	if err != nil {
		return err
	}
	if o.asJSON {
		all := make([]wire.AdminAccount, len(accounts))
		for i, a := range accounts {
			all[i] = wire.NewAdminAccount(a)
		}
		return json.NewEncoder(out).Encode(all)
	}
	for _, a := range accounts {
		fmt.Fprintf(out, "%-20s  %-24s  %s  %s  %s\n", a.BusinessCode, a.ID, a.Currency, a.CreatedAt.Format(business.TimeFormat), a.Name)
	}
	return nil
}

// showAccount prints one account with its webhook settings, never the
// callback secret: whether there is one (signed).
func showAccount(ctx context.Context, o options, out io.Writer) error {
	if err := requireOneAccount(o); err != nil {
		return err
	}
	st, err := openStore(ctx)
	if err != nil {
		return err
	}
	id := o.account
	if o.code != "" {
		a, err := st.FindAccountByCode(ctx, o.code)
		if err != nil {
			return err
		}
		id = a.ID
	}
	a, w, err := st.FindWebhookSettings(ctx, id)
	if err != nil {
		return err
	}
	j := wire.NewAdminAccount(a)
	j.CallbackURL, j.Signed = wire.Nullable(w.CallbackURL), &w.Signed
	if o.asJSON {
		return json.NewEncoder(out).Encode(j)
	}
	url := "(none: payments are recorded as skipped)"
	if j.CallbackURL != nil {
		url = *j.CallbackURL
	}
	fmt.Fprintf(out, "account_id:     %s\nname:           %s\nbusiness_code:  %s\ncurrency:       %s\ninvoice_prefix: %s\ncreated_at:     %s\ncallback_url:   %s\nsigned:         %v\n",
		j.AccountID, j.Name, j.BusinessCode, j.Currency, j.InvoicePrefix, j.CreatedAt, url, w.Signed)
	return nil
}

// indexAccounts adds the accounts made before the directory to it.
func indexAccounts(ctx context.Context, _ options, out io.Writer) error {
	st, err := openStore(ctx)
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
}
