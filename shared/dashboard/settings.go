package dashboard

import (
	"net/http"

	"bizdata/shared/wire"
)

// The Settings page: the business's name, timezone and the facts that
// cannot change (code, currency, invoice prefix), read and changed through
// the API's get-settings and update-settings, and the owner's password
// form (changePassword).

// businessSettings is the account's settings as get-settings answers them.
type businessSettings = wire.Settings

// settingsData is what the Settings page shows: the settings, and the
// values its form holds (a refused form's, else the settings').
type settingsData struct {
	Settings businessSettings
	// Editable is false in test mode: update-settings serves live keys
	// only, as the settings are the business's, shared by both modes.
	Editable     bool
	BusinessName string
	Timezone     string
	Timezones    []string
}

// commonTimezones are the form's suggestions; any IANA name is taken.
var commonTimezones = []string{
	"Africa/Accra", "Africa/Lagos", "Africa/Nairobi", "Africa/Johannesburg", "Africa/Cairo",
	"Africa/Casablanca", "Africa/Abidjan", "Africa/Dakar", "Africa/Kampala", "Africa/Dar_es_Salaam",
	"Africa/Kigali", "Africa/Lusaka", "Africa/Harare", "Europe/London", "UTC",
}

// settingsPage shows the settings, editable in live mode, and the
// password form.
func settingsPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	got, err := s.api.GetSettings(r.Context(), v.acct)
	if err != nil {
		return err
	}
	d := settingsData{Settings: got, Editable: v.acct.Livemode(), Timezones: commonTimezones,
		BusinessName: formValue(v.form, "business_name", got.BusinessName),
		Timezone:     formValue(v.form, "timezone", got.Timezone)}
	return s.render(w, r, v, "settings", "Settings", "settings", d)
}

// updateSettings changes the business's name and timezone; the API refuses
// it in test mode and names any bad field.
func updateSettings(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	body := map[string]any{}
	for _, name := range []string{"business_name", "timezone"} {
		if r.PostForm.Has(name) { // a field the form leaves out stays as it is
			body[name] = r.PostForm.Get(name)
		}
	}
	if err := s.api.UpdateSettings(r.Context(), v.acct, body); err != nil {
		return err
	}
	return s.done(w, r, "/dashboard/settings", "Settings saved")
}
