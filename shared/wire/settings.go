package wire

import (
	"time"

	"bizdata/shared/business"
)

// TimezoneSpan is one timezone of the business's history and the moment it
// took effect (null for the first).
type TimezoneSpan struct {
	Timezone string  `json:"timezone"`
	From     *string `json:"from"`
}

// Settings is the business's settings as GET /user/settings answers them.
type Settings struct {
	BusinessName        string         `json:"business_name"`
	BusinessCode        string         `json:"business_code"`
	Currency            string         `json:"currency"`
	InvoicePrefix       string         `json:"invoice_prefix"`
	Timezone            string         `json:"timezone"`
	TimezoneEffectiveAt *string        `json:"timezone_effective_at"`
	TimezoneHistory     []TimezoneSpan `json:"timezone_history"`
}

// NewSettings returns the settings of a with its timezone history tz.
func NewSettings(a business.Account, tz business.TimezoneHistory) Settings {
	cur := tz.Current()
	j := Settings{BusinessName: a.Name, BusinessCode: a.BusinessCode, Currency: a.Currency,
		InvoicePrefix: a.InvoicePrefix, Timezone: cur.Name, TimezoneEffectiveAt: sinceOf(cur.From), TimezoneHistory: []TimezoneSpan{}}
	if len(tz) == 0 {
		tz = business.TimezoneHistory{cur}
	}
	for _, s := range tz {
		j.TimezoneHistory = append(j.TimezoneHistory, TimezoneSpan{Timezone: s.Name, From: sinceOf(s.From)})
	}
	return j
}

// sinceOf is the moment t in UTC, or null for none.
func sinceOf(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	return Nullable(t.UTC().Format(business.TimeFormat))
}

// WebhookSettings is the payment webhook as GET /user/webhook answers it:
// never its secret, only whether one signs.
type WebhookSettings struct {
	CallbackURL  *string `json:"callback_url"`
	Signed       bool    `json:"signed"`
	BusinessCode string  `json:"business_code"`
	Currency     string  `json:"currency"`
	UpdatedAt    *string `json:"updated_at"`
}

// NewWebhookSettings returns a's payment webhook: its callback URL ("" for
// none), whether a secret signs it, and when it last changed.
func NewWebhookSettings(a business.Account, callbackURL string, signed bool, updatedAt time.Time) WebhookSettings {
	j := WebhookSettings{CallbackURL: Nullable(callbackURL), Signed: signed, BusinessCode: a.BusinessCode, Currency: a.Currency}
	if !updatedAt.IsZero() {
		j.UpdatedAt = Nullable(updatedAt.Format(business.TimeFormat))
	}
	return j
}

// WebhookTest is the outcome of a test notification to the callback URL.
type WebhookTest struct {
	Delivered  bool    `json:"delivered"`
	Error      *string `json:"error"`
	LatencyMS  int64   `json:"latency_ms"`
	StatusCode *int    `json:"status_code"`
	WebhookID  string  `json:"webhook_id"`
}
