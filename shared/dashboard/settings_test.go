package dashboard

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// settingsFromAPI is what get-settings reports for o's account.
func settingsFromAPI(o *owner) businessSettings {
	o.t.Helper()
	st, data := o.callAPI(http.MethodGet, "/api/v1/user/settings", nil)
	var out struct {
		Settings businessSettings `json:"settings"`
	}
	if st != http.StatusOK || json.Unmarshal(data, &out) != nil {
		o.t.Fatalf("get settings: %d %s", st, data)
	}
	return out.Settings
}

// TestSettingsUpdate changes the name and timezone through the form, and a
// refused timezone shows the API's message, answers 400 and changes nothing.
func TestSettingsUpdate(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("SETT1")
	st, page, _ := o.get("/dashboard/settings")
	if st != http.StatusOK {
		t.Fatalf("settings page: %d", st)
	}
	mustContain(t, page, `value="Shop SETT1"`, "SETT1", "GHS", "INV", `action="/dashboard/settings/password"`,
		`name="current"`, `name="password"`, `name="confirm"`)

	st, page, path := o.post("/dashboard/settings", url.Values{"business_name": {"Ama's Provisions"}, "timezone": {"Africa/Lagos"}})
	if st != http.StatusOK || path != "/dashboard/settings" {
		t.Fatalf("save settings: %d at %s", st, path)
	}
	mustContain(t, page, "Settings saved")
	if got := settingsFromAPI(o); got.BusinessName != "Ama's Provisions" || got.Timezone != "Africa/Lagos" {
		t.Errorf("get-settings after the change: %+v", got)
	}

	tests := []struct {
		name, field string
		form        url.Values
	}{
		{"bad timezone", "timezone", url.Values{"business_name": {"Other name"}, "timezone": {"Mars/Olympus"}}},
		{"empty name", "business_name", url.Values{"business_name": {" "}, "timezone": {"Africa/Accra"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, page, _ := o.post("/dashboard/settings", tc.form)
			if st != http.StatusBadRequest {
				t.Errorf("status %d, want 400", st)
			}
			mustContain(t, page, `id="`+tc.field+`-err"`, `aria-invalid="true"`)
			if tc.field == "timezone" {
				mustContain(t, page, "must be an IANA timezone name", `value="Mars/Olympus"`)
			}
			if got := settingsFromAPI(o); got.BusinessName != "Ama's Provisions" || got.Timezone != "Africa/Lagos" {
				t.Errorf("a refused change changed the settings: %+v", got)
			}
		})
	}
}

// TestSettingsTestMode shows the settings read-only on test data.
func TestSettingsTestMode(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("SETT2")
	if st, _, _ := o.post("/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard/settings"}}); st != http.StatusOK {
		t.Fatalf("switch to test: %d", st)
	}
	st, page, _ := o.get("/dashboard/settings")
	if st != http.StatusOK {
		t.Fatalf("settings page: %d", st)
	}
	mustContain(t, page, "settings are changed in live mode", "Shop SETT2", `action="/dashboard/settings/password"`)
	if strings.Contains(page, `action="/dashboard/settings" `) || strings.Contains(page, `name="business_name"`) {
		t.Error("test mode shows the settings form")
	}
}

// TestSettingsPasswordFormNotRefilled checks a refused password change
// leaves every password field empty.
func TestSettingsPasswordFormNotRefilled(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("SETT3")
	st, page, _ := o.post("/dashboard/settings/password", url.Values{"current": {"wrong password here"}, "password": {"new password 12345"}, "confirm": {"new password 12345"}})
	if st != http.StatusBadRequest {
		t.Errorf("wrong current password: %d, want 400", st)
	}
	mustContain(t, page, `id="current-err"`, `value="Shop SETT3"`)
	for _, secret := range []string{"wrong password here", "new password 12345"} {
		if strings.Contains(page, secret) {
			t.Errorf("the page refills %q", secret)
		}
	}
}
