package business

import (
	"strings"
	"time"
)

// Settings are an account's own settings, as the API shows them.
type Settings struct {
	Account   Account
	Timezones TimezoneHistory
}

// SettingsChange is a change of the account's settings; nil keeps a
// field. Only the name and the timezone may change: the invoice prefix is
// part of every invoice number (and of its uniqueness), the currency of
// every amount recorded, and the business code names the business in
// webhooks, so those may only be sent back as they are.
type SettingsChange struct {
	Name          *string
	Timezone      *string
	InvoicePrefix *string
	Currency      *string
	BusinessCode  *string
}

// CheckSettingsChange returns the field errors of c against the account a
// as read: a bad name or timezone, or a read-only field sent with another
// value than a's.
func CheckSettingsChange(c SettingsChange, a Account) FieldErrors {
	fe := FieldErrors{}
	if c.Name != nil {
		CheckText(fe, "business_name", strings.TrimSpace(*c.Name), true, 200)
	}
	if c.Timezone != nil {
		if _, err := LoadTimezone(*c.Timezone); err != nil {
			fe.Add("timezone", "must be an IANA timezone name such as Africa/Nairobi or UTC")
		}
	}
	for _, ro := range []struct {
		field     string
		sent      *string
		have, why string
	}{
		{"invoice_prefix", c.InvoicePrefix, a.InvoicePrefix, "every invoice number carries it (and is unique with it)"},
		{"currency", c.Currency, a.Currency, "the account's amounts are recorded in " + a.Currency},
		{"business_code", c.BusinessCode, a.BusinessCode, "webhooks name the business by it"},
	} {
		if ro.sent != nil && *ro.sent != ro.have {
			fe.Add(ro.field, "cannot be changed: "+ro.why)
		}
	}
	return fe
}

// ChangeSettings applies c, made at now, to the settings cur as read and
// returns them afterwards, with the fields whose value changed, as the API
// names them (a new timezone takes effect TimezoneDelay after now). Returns
// EINVALID naming a bad field, or one that cannot change, and ECONFLICT
// when the timezone history is full.
func ChangeSettings(cur Settings, c SettingsChange, now time.Time) (Settings, []string, error) {
	if err := CheckSettingsChange(c, cur.Account).Err(); err != nil {
		return Settings{}, nil, err
	}
	a, hist := cur.Account, cur.Timezones
	changed := []string{}
	if c.Name != nil {
		if name := strings.TrimSpace(*c.Name); name != a.Name {
			a.Name, changed = name, append(changed, "business_name")
		}
	}
	if c.Timezone != nil {
		before := len(hist)
		var err error
		if hist, _, err = hist.Change(*c.Timezone, now); err != nil {
			return Settings{}, nil, err
		}
		if len(hist) != before {
			changed = append(changed, "timezone")
		}
	}
	a.Timezone = hist.Current().Name
	return Settings{Account: a, Timezones: hist}, changed, nil
}
