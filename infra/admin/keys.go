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

// The key commands: an operator lists, creates, revokes and rotates an
// account's API keys as the API's key routes do, without a key of the
// account's (the stand-in for the dashboard). Secrets are printed once, when
// made, and never stored.
var keyCommands = []command{
	{"key list", `key list --account ID [--json]
                         (the account's active keys, live and test, oldest first; never their secrets)`, listKeys},
	{"key create", `key create --account ID --name N --scopes S1,S2 [--mode live|test] [--json]
                         (a new key, printed this once; scopes: sales:read sales:write expenses:read
                          expenses:write inventory:read inventory:write customers:read customers:write
                          reports:read events:read webhooks:write keys:write, or * for all; mode live
                          by default, test acts on the account's test data)`, createKey},
	{"key revoke", "key revoke --account ID --key KEY_ID [--json]", revokeKey},
	{"key rotate", `key rotate --account ID [--key KEY_ID] [--json]
                         (a new secret for the key, printed this once; --key may be left out when
                          the account has one key)`, rotateKey},
}

// listKeys prints the account's active keys, oldest first: one line each,
// or their JSON.
func listKeys(ctx context.Context, o options, out io.Writer) error {
	st, err := openForAccount(ctx, o)
	if err != nil {
		return err
	}
	ks, err := st.ListKeys(ctx, o.account)
	if err != nil {
		return err
	}
	all := make([]wire.APIKey, len(ks))
	for i, k := range ks {
		all[i] = wire.NewAPIKey(k)
	}
	if o.asJSON {
		return json.NewEncoder(out).Encode(all)
	}
	for _, k := range all {
		fmt.Fprintf(out, "%s  %-4s  %-12s  created %s  last used %-19s  %-24s  %s\n",
			k.ID, k.Mode, orDash(k.Prefix), k.CreatedAt, orDash(k.LastUsedAt), k.Name, strings.Join(k.Scopes, ","))
	}
	return nil
}

// createKey makes a key named --name with --scopes (comma-separated) of
// --mode ("live", "test"; "" is live) and prints it with its secret, this
// once.
func createKey(ctx context.Context, o options, out io.Writer) error {
	st, err := openForAccount(ctx, o)
	if err != nil {
		return err
	}
	account := o.account
	var list []string
	for _, s := range strings.Split(o.scopes, ",") {
		if s = strings.TrimSpace(s); s != "" {
			list = append(list, s)
		}
	}
	spec, err := business.NewKeySpec(o.name, list, o.mode)
	if err != nil {
		return err
	}
	k, secret, err := st.CreateKey(ctx, account, nil, spec)
	if err != nil {
		return err
	}
	if o.asJSON {
		return json.NewEncoder(out).Encode(wire.AdminCreatedKey{AccountID: account, APIKey: secret, Key: wire.NewAPIKey(k), KeyID: k.ID})
	}
	fmt.Fprintf(out, "name:       %s\nmode:       %s\nscopes:     %s\n", k.Name, k.Mode(), strings.Join(k.Scopes, ","))
	return printKey(out, false, account, k.ID, secret)
}

// revokeKey ends key --key of the account and prints it.
func revokeKey(ctx context.Context, o options, out io.Writer) error {
	if err := requireAccount(o); err != nil {
		return err
	}
	if o.keyID == "" {
		return fmt.Errorf("%w: --key is required (see 'key list')", errUsage)
	}
	st, err := openStore(ctx)
	if err != nil {
		return err
	}
	k, err := st.RevokeKey(ctx, o.account, nil, o.keyID)
	if err != nil {
		return err
	}
	if o.asJSON {
		return json.NewEncoder(out).Encode(wire.RevokedKey{AccountID: o.account, Revoked: wire.NewAPIKey(k)})
	}
	_, err = fmt.Fprintf(out, "API key %s (%s, %s) revoked: it stops working within 5 s\n", k.ID, k.Name, k.Mode())
	return err
}

// rotateKey gives key --key of the account a new secret and prints it.
// Without --key, the account's one key is rotated; an account with several
// keys is a usage error naming them.
func rotateKey(ctx context.Context, o options, out io.Writer) error {
	st, err := openForAccount(ctx, o)
	if err != nil {
		return err
	}
	account, id := o.account, o.keyID
	if id == "" {
		ks, err := st.ListKeys(ctx, account)
		if err != nil {
			return err
		}
		if len(ks) == 0 {
			return fmt.Errorf("account %s has no API key to rotate: make one with 'key create'", account)
		}
		if len(ks) > 1 {
			names := make([]string, len(ks))
			for i, k := range ks {
				names[i] = fmt.Sprintf("%s (%s, %s)", k.ID, k.Name, k.Mode())
			}
			return fmt.Errorf("%w: account %s has %d API keys; name the one to rotate with --key: %s", errUsage, account, len(ks), strings.Join(names, ", "))
		}
		id = ks[0].ID
	}
	secret, err := st.RotateKey(ctx, account, nil, id)
	if err != nil {
		return err
	}
	return printKey(out, o.asJSON, account, id, secret)
}

// printKey prints a key's secret, shown this once, with its account and id.
func printKey(out io.Writer, asJSON bool, account, keyID, key string) error {
	if asJSON {
		return json.NewEncoder(out).Encode(wire.IssuedKey{AccountID: account, APIKey: key, KeyID: keyID})
	}
	_, err := fmt.Fprintf(out, "account_id: %s\nkey_id:     %s\napi_key:    %s\n(the key is shown only now; keep it secret)\n", account, keyID, key)
	return err
}
