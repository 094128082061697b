package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"bizdata/shared/business"
)

// TestAdminInvitesOwner: account create --owner-email makes the account, its
// owner without a password, and a set-password link under DASHBOARD_URL that
// works once; owner link makes a new one for the same owner.
func TestAdminInvitesOwner(t *testing.T) {
	st, _ := newTable(t)
	ctx := context.Background()
	t.Setenv("DASHBOARD_URL", "https://dash.example.com/")

	var out bytes.Buffer
	if err := run(ctx, strings.Fields("account create --name Shop --business-code OWN1 --currency ghs --owner-email Ama@Example.com --json"), &out); err != nil {
		t.Fatal(err)
	}
	var created struct {
		AccountID string `json:"account_id"`
		Owner     string `json:"owner_email"`
		Link      string `json:"set_password_url"`
	}
	if err := json.Unmarshal(out.Bytes(), &created); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	o, err := st.FindOwner(ctx, "ama@example.com")
	if err != nil || o.Account != created.AccountID || o.PasswordHash != "" || created.Owner != "ama@example.com" {
		t.Fatalf("owner %+v, %v; printed %+v", o, err, created)
	}
	u, err := url.Parse(created.Link)
	if err != nil || u.Host != "dash.example.com" || u.Path != "/dashboard/set-password" {
		t.Fatalf("link %q", created.Link)
	}
	token := u.Query().Get("token")
	if _, err := st.UsePasswordLink(ctx, token, business.HashPassword("a long enough password")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UsePasswordLink(ctx, token, business.HashPassword("another long password")); business.ErrorCode(err) != business.ENOTFOUND {
		t.Fatalf("second use of a link: %v", err)
	}
	if o, _ := st.FindOwner(ctx, "ama@example.com"); !business.VerifyPassword(o.PasswordHash, "a long enough password") {
		t.Fatal("the link did not set the password")
	}

	out.Reset()
	if err := run(ctx, strings.Fields("owner link --email ama@example.com"), &out); err != nil || !strings.Contains(out.String(), "https://dash.example.com/dashboard/set-password?token=") {
		t.Fatalf("owner link: %v: %s", err, out.String())
	}
	for _, bad := range []string{
		"account create --name Shop --business-code OWN2 --currency ghs --owner-email not-an-email",
		"owner link --email nobody@example.com",
		"owner add --business-code OWN1 --email ama@example.com",
	} {
		if err := run(ctx, strings.Fields(bad), &out); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if _, err := st.FindAccountByCode(ctx, "OWN2"); business.ErrorCode(err) != business.ENOTFOUND {
		t.Errorf("a refused owner email still made account OWN2: %v", err)
	}
}
