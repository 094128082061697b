package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/store"
)

var ownerCommands = []command{
	{"owner add", `owner add (--account ID | --business-code C) --email E
                         (another dashboard sign-in for the account; prints its set-password link)`, addOwner},
	{"owner link", `owner link --email E
                         (a new set-password link for an owner who forgot the password; the
                          owner's sessions end when it is used)`, linkOwner},
}

// addOwner gives the account another dashboard sign-in and prints its
// set-password link.
func addOwner(ctx context.Context, o options, out io.Writer) error {
	ownerEmail, err := emailFlag("--email", o.email)
	if err != nil {
		return err
	}
	st, id, err := openNamedAccount(ctx, o)
	if err != nil {
		return err
	}
	if err := st.CreateOwner(ctx, id, business.Owner{Email: ownerEmail}); err != nil {
		return err
	}
	return makePasswordLink(ctx, st, ownerEmail, out)
}

// linkOwner prints a new set-password link for an owner.
func linkOwner(ctx context.Context, o options, out io.Writer) error {
	ownerEmail, err := emailFlag("--email", o.email)
	if err != nil {
		return err
	}
	st, err := openStore(ctx)
	if err != nil {
		return err
	}
	return makePasswordLink(ctx, st, ownerEmail, out)
}

// emailFlag is the email given to flag, normalized.
func emailFlag(flag, email string) (string, error) {
	normalized, err := business.NormalizeEmail(email)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	return normalized, nil
}

// makePasswordLink makes a set-password link for owner email and prints it.
func makePasswordLink(ctx context.Context, st *store.Store, email string, out io.Writer) error {
	link, err := passwordLink(ctx, st, email)
	if err != nil {
		return err
	}
	return printPasswordLink(out, email, link)
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
