package wire

import "bizdata/shared/business"

// The data of the API's answers that are not a record: what a probe, a
// replay, a delete or a clear reports. Fields stand in the order of their
// keys, as they were first answered.

// Authenticated is the data of GET /authenticate: the caller's account, its
// key, and whether that key is live.
type Authenticated struct {
	Account  AuthenticatedAccount `json:"account"`
	APIKey   APIKey               `json:"api_key"`
	Livemode bool                 `json:"livemode"`
}

// AuthenticatedAccount is the account of an Authenticated, under its live
// id in both modes.
type AuthenticatedAccount struct {
	BusinessCode  string `json:"business_code"`
	Currency      string `json:"currency"`
	ID            string `json:"id"`
	InvoicePrefix string `json:"invoice_prefix"`
	Name          string `json:"name"`
	Timezone      string `json:"timezone"`
}

// NewAuthenticated returns the probe's answer for the account acct as its
// key authenticated it.
func NewAuthenticated(acct business.Account) Authenticated {
	return Authenticated{
		Account: AuthenticatedAccount{BusinessCode: acct.BusinessCode, Currency: acct.Currency, ID: business.LiveID(acct.ID),
			InvoicePrefix: acct.InvoicePrefix, Name: acct.Name, Timezone: acct.Timezone},
		APIKey:   NewAPIKey(acct.Key),
		Livemode: acct.Livemode(),
	}
}

// Replay is the data of an endpoint's replay: how many events it queued,
// whether more remain, and the since that continues it (null when none do).
type Replay struct {
	More      bool    `json:"more"`
	NextSince *string `json:"next_since"`
	Queued    int     `json:"queued"`
}

// Deleted is a record a delete removed, named by its id.
type Deleted struct {
	ID string `json:"id"`
}

// TestDataCleared is the data of a test-data clear: whether deleting the
// old records has finished (a 202 says it goes on at the next call).
type TestDataCleared struct {
	PurgeComplete bool `json:"purge_complete"`
}
