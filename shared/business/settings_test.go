package business

import (
	"slices"
	"testing"
	"time"
)

func shop() Settings {
	return Settings{Account: Account{ID: "acct_1", Name: "Ama's Shop", BusinessCode: "AMA01", Currency: "GHS",
		InvoicePrefix: "INV", Timezone: DefaultTimezone}}
}

func ptr(s string) *string { return &s }

func TestCheckSettingsChange(t *testing.T) {
	a := shop().Account
	t.Run("OK", func(t *testing.T) {
		c := SettingsChange{Name: ptr("Kofi's"), Timezone: ptr("Africa/Accra"), InvoicePrefix: ptr("INV"), Currency: ptr("GHS"), BusinessCode: ptr("AMA01")}
		if fe := CheckSettingsChange(c, a); len(fe) != 0 {
			t.Fatal(fe)
		}
	})
	t.Run("ErrBadNameAndTimezone", func(t *testing.T) {
		fe := CheckSettingsChange(SettingsChange{Name: ptr("  "), Timezone: ptr("Mars/Olympus")}, a)
		if fe["timezone"] != "must be an IANA timezone name such as Africa/Nairobi or UTC" || fe["business_name"] == "" || len(fe) != 2 {
			t.Fatal(fe)
		}
	})
	t.Run("ErrReadOnly", func(t *testing.T) {
		fe := CheckSettingsChange(SettingsChange{InvoicePrefix: ptr("BILL"), Currency: ptr("KES"), BusinessCode: ptr("KOFI01")}, a)
		if fe["invoice_prefix"] != "cannot be changed: every invoice number carries it (and is unique with it)" ||
			fe["currency"] != "cannot be changed: the account's amounts are recorded in GHS" ||
			fe["business_code"] != "cannot be changed: webhooks name the business by it" || len(fe) != 3 {
			t.Fatal(fe)
		}
	})
}

func TestChangeSettings(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	t.Run("OK", func(t *testing.T) {
		got, changed, err := ChangeSettings(shop(), SettingsChange{Name: ptr("  Kofi's  "), Timezone: ptr("Africa/Accra")}, now)
		if err != nil {
			t.Fatal(err)
		}
		if got.Account.Name != "Kofi's" || got.Account.Timezone != "Africa/Accra" || !slices.Equal(changed, []string{"business_name", "timezone"}) {
			t.Fatalf("settings %+v, changed %v", got.Account, changed)
		}
		if cur := got.Timezones.Current(); cur.Name != "Africa/Accra" || !cur.From.Equal(now.Add(TimezoneDelay)) {
			t.Fatalf("timezone %+v", cur)
		}
	})
	t.Run("SameValuesChangeNothing", func(t *testing.T) {
		got, changed, err := ChangeSettings(shop(), SettingsChange{Name: ptr("Ama's Shop"), Timezone: ptr(DefaultTimezone), Currency: ptr("GHS")}, now)
		if err != nil || len(changed) != 0 || changed == nil || got.Account.Name != "Ama's Shop" || got.Account.Timezone != DefaultTimezone || len(got.Timezones) != 0 {
			t.Fatalf("settings %+v, changed %#v: %v", got.Account, changed, err)
		}
	})
	t.Run("ErrReadOnly", func(t *testing.T) {
		_, _, err := ChangeSettings(shop(), SettingsChange{Name: ptr("Kofi's"), Currency: ptr("KES")}, now)
		wantCode(t, err, EINVALID, "currency: cannot be changed: the account's amounts are recorded in GHS")
	})
	t.Run("ErrHistoryFull", func(t *testing.T) {
		cur := shop()
		for i := range MaxTimezoneChanges + 1 {
			zone := []string{"Africa/Accra", "Africa/Lagos"}[i%2]
			cur.Timezones = append(cur.Timezones, TimezoneSpan{Name: zone, From: now.Add(time.Duration(i-100) * time.Hour)})
		}
		_, _, err := ChangeSettings(cur, SettingsChange{Timezone: ptr("Europe/London")}, now)
		wantCode(t, err, ECONFLICT, "")
	})
}
