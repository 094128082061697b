package business

import (
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Account is one business: the tenant every record belongs to. The API key
// identifies the account; nothing in a request can name another one.
type Account struct {
	ID            string
	Name          string
	BusinessCode  string
	Currency      string
	InvoicePrefix string
	// Timezone is the newest zone of the account's timezone history (the
	// store keeps the history; reports date each instant by it).
	Timezone  string
	CreatedAt time.Time
	// Key is the API key a request authenticated with (zero elsewhere): its
	// scopes decide which routes it may call.
	Key APIKey
}

// ValidInvoicePrefix reports whether p may prefix invoice numbers: 1 to 10
// capital letters or digits.
func ValidInvoicePrefix(p string) bool { return prefixRE.MatchString(p) }

// Webhook holds an account's payment webhook settings.
type Webhook struct {
	CallbackURL    string
	CallbackSecret string
}

var (
	currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)
	prefixRE   = regexp.MustCompile(`^[A-Z0-9]{1,10}$`)
	codeRE     = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// NewAccount validates the fields of a new account. The invoice prefix
// defaults to INV. Returns EINVALID naming each bad field.
func NewAccount(name, businessCode, currency, prefix string) (Account, error) {
	fe := FieldErrors{}
	a := Account{
		Name:          strings.TrimSpace(name),
		BusinessCode:  strings.TrimSpace(businessCode),
		Currency:      strings.ToUpper(strings.TrimSpace(currency)),
		InvoicePrefix: strings.ToUpper(strings.TrimSpace(prefix)),
	}
	if a.InvoicePrefix == "" {
		a.InvoicePrefix = "INV"
	}
	CheckText(fe, "name", a.Name, true, 200)
	if !codeRE.MatchString(a.BusinessCode) {
		fe.Add("business_code", "must be 1 to 64 letters, digits, '-' or '_'")
	}
	if !currencyRE.MatchString(a.Currency) {
		fe.Add("currency", "must be a 3-letter ISO 4217 code such as GHS")
	}
	if !prefixRE.MatchString(a.InvoicePrefix) {
		fe.Add("invoice_prefix", "must be 1 to 10 capital letters or digits")
	}
	return a, fe.Err()
}

// NewWebhook validates webhook settings: an absolute http(s) URL and a secret
// without spaces (optional). Returns EINVALID naming each bad field.
func NewWebhook(callbackURL, secret string) (Webhook, error) {
	fe := FieldErrors{}
	if err := CheckURL(callbackURL); err != "" {
		fe.Add("url", err)
	}
	if strings.ContainsFunc(secret, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
		fe.Add("secret", "must not contain spaces")
	} else if secret != "" && (len(secret) < 8 || len(secret) > 256) {
		fe.Add("secret", "must be 8 to 256 characters")
	}
	return Webhook{CallbackURL: callbackURL, CallbackSecret: secret}, fe.Err()
}

// CheckURL returns why u is not an absolute http(s) URL of at most 2048
// characters, or "" when it is.
func CheckURL(u string) string {
	if len(u) > 2048 {
		return "must be at most 2048 characters"
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "must be an absolute http or https URL"
	}
	return ""
}

// CheckText records a problem with a text field: empty when required, longer
// than max characters, or not valid UTF-8. value must already be trimmed.
func CheckText(fe FieldErrors, field, value string, required bool, max int) {
	switch {
	case !utf8.ValidString(value):
		fe.Add(field, "must be valid UTF-8 text")
	case required && value == "":
		fe.Add(field, "is required and must not be blank")
	case utf8.RuneCountInString(value) > max:
		fe.Add(field, "must be at most "+itoa(max)+" characters")
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	p := len(b)
	for i > 0 {
		p--
		b[p] = byte('0' + i%10)
		i /= 10
	}
	return string(b[p:])
}
