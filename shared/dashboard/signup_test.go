package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"bizdata/shared/business"
)

// TestSignUp: the sign-up form makes the account (prefix and timezone as
// chosen) and its owner, signs the owner in and shows the first live key
// once, which works on the API; a refused form says why, answers the
// refusal's status and makes nothing.
func TestSignUp(t *testing.T) {
	b := newBoard(t)
	form := url.Values{"business_name": {"Esi Foods"}, "business_code": {"ESI01"}, "currency": {"ghs"}, "invoice_prefix": {"ESI"},
		"timezone": {"Africa/Lagos"}, "email": {"Esi@Example.com"}, "password": {"a long password"}}
	signUp := func(f url.Values) (int, string) {
		br := b.browser()
		_, page, _ := br.get("/dashboard/sign-up")
		st, page, _ := br.postWith("/dashboard/sign-up", f, formCSRF(page))
		return st, page
	}
	for name, tc := range map[string]struct {
		change url.Values
		status int
		says   string
	}{
		"ShortPassword": {url.Values{"password": {"elevenchars"}}, http.StatusBadRequest, "at least 12 characters"},
		"BadPrefix":     {url.Values{"invoice_prefix": {"inv-"}}, http.StatusBadRequest, "invoice_prefix"},
		"BadTimezone":   {url.Values{"timezone": {"Mars/Olympus"}}, http.StatusBadRequest, "IANA timezone"},
		"BadEmail":      {url.Values{"email": {"esi"}}, http.StatusBadRequest, "email address"},
	} {
		t.Run(name, func(t *testing.T) {
			f := url.Values{}
			for k, v := range form {
				f[k] = v
			}
			for k, v := range tc.change {
				f[k] = v
			}
			st, page := signUp(f)
			if st != tc.status || !strings.Contains(page, tc.says) || !strings.Contains(page, `aria-invalid="true"`) || strings.Contains(page, "a long password") {
				t.Fatalf("%d, page without %q or an invalid field, or with the password", st, tc.says)
			}
			if _, err := b.st.FindAccountByCode(context.Background(), "ESI01"); business.ErrorCode(err) != business.ENOTFOUND {
				t.Fatalf("a refused sign-up made the account: %v", err)
			}
		})
	}

	st, page := signUp(form)
	key := secretShownRE.FindStringSubmatch(page)
	if st != http.StatusOK || key == nil {
		t.Fatalf("sign-up: %d", st)
	}
	o := &owner{b: b, t: t, apiKey: key[1]}
	settings := o.mustAPI("GET", "/api/v1/user/settings", nil)
	if jsonField(t, settings, "settings", "invoice_prefix") != "ESI" || jsonField(t, settings, "settings", "currency") != "GHS" || jsonField(t, settings, "settings", "business_name") != "Esi Foods" {
		t.Fatalf("settings %s", settings)
	}
	if jsonField(t, settings, "settings", "timezone") != "Africa/Lagos" || !strings.Contains(settings, `"timezone_history":[{"timezone":"Africa/Lagos","from":null}]`) {
		t.Fatalf("the chosen timezone is not the account's: %s", settings)
	}
	if st, _ := signUp(form); st != http.StatusConflict {
		t.Fatalf("a second sign-up with the same code and email: %d", st)
	}
	if owner, err := b.st.FindOwner(context.Background(), "esi@example.com"); err != nil || !business.VerifyPassword(owner.PasswordHash, "a long password") {
		t.Fatalf("owner %v", err)
	}
}
