package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/wire"
)

// The key commands: an operator lists, creates, revokes and rotates an
// account's API keys as the API's key routes do, without a key of the
// account's (the stand-in for the dashboard). Secrets are printed once, when
// made, and never stored.

// listKeys prints the account's active keys, oldest first: one line each,
// or their JSON.
func listKeys(ctx context.Context, st *store.Store, account string, asJSON bool, out io.Writer) error {
	ks, err := st.ListKeys(ctx, account)
	if err != nil {
		return err
	}
	all := make([]wire.APIKey, len(ks))
	for i, k := range ks {
		all[i] = wire.NewAPIKey(k)
	}
	if asJSON {
		return json.NewEncoder(out).Encode(all)
	}
	for _, k := range all {
		fmt.Fprintf(out, "%s  %-4s  %-12s  created %s  last used %-19s  %-24s  %s\n",
			k.ID, k.Mode, orDash(k.Prefix), k.CreatedAt, orDash(k.LastUsedAt), k.Name, strings.Join(k.Scopes, ","))
	}
	return nil
}

// createKey makes a key named name with scopes (comma-separated) of mode
// ("live", "test"; "" is live) and prints it with its secret, this once.
func createKey(ctx context.Context, st *store.Store, account, name, scopes, mode string, asJSON bool, out io.Writer) error {
	var list []string
	for _, s := range strings.Split(scopes, ",") {
		if s = strings.TrimSpace(s); s != "" {
			list = append(list, s)
		}
	}
	spec, err := business.NewKeySpec(name, list, mode)
	if err != nil {
		return err
	}
	k, secret, err := st.CreateKey(ctx, account, nil, spec)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(out).Encode(map[string]any{"account_id": account, "key_id": k.ID, "api_key": secret, "key": wire.NewAPIKey(k)})
	}
	fmt.Fprintf(out, "name:       %s\nmode:       %s\nscopes:     %s\n", k.Name, k.Mode(), strings.Join(k.Scopes, ","))
	return printKey(out, false, account, k.ID, secret)
}

// revokeKey ends key id of the account and prints it.
func revokeKey(ctx context.Context, st *store.Store, account, id string, asJSON bool, out io.Writer) error {
	k, err := st.RevokeKey(ctx, account, nil, id)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(out).Encode(map[string]any{"account_id": account, "revoked": wire.NewAPIKey(k)})
	}
	_, err = fmt.Fprintf(out, "API key %s (%s, %s) revoked: it stops working within 5 s\n", k.ID, k.Name, k.Mode())
	return err
}

// rotateKey gives key id of the account a new secret and prints it. Without
// an id, the account's one key is rotated; an account with several keys is
// a usage error naming them.
func rotateKey(ctx context.Context, st *store.Store, account, id string, asJSON bool, out io.Writer) error {
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
	return printKey(out, asJSON, account, id, secret)
}
