package wire

import (
	"bizdata/shared/business"
	"bizdata/shared/money"
)

// The shapes below are what the admin CLI prints with --json. They are its
// own (an operator's view: ids the API never shows, figures that explain a
// sale's money), built from the API's shapes where it shows the same thing.

// AdminAccount is an account as `account list` and `account show` print it;
// show adds its webhook settings, never the callback secret: whether there
// is one (Signed).
type AdminAccount struct {
	AccountID     string  `json:"account_id"`
	Name          string  `json:"name"`
	BusinessCode  string  `json:"business_code"`
	Currency      string  `json:"currency"`
	InvoicePrefix string  `json:"invoice_prefix"`
	CreatedAt     string  `json:"created_at"`
	CallbackURL   *string `json:"callback_url,omitempty"`
	Signed        *bool   `json:"signed,omitempty"`
}

// NewAdminAccount returns a as `account list` prints it.
func NewAdminAccount(a business.Account) AdminAccount {
	return AdminAccount{AccountID: a.ID, Name: a.Name, BusinessCode: a.BusinessCode, Currency: a.Currency,
		InvoicePrefix: a.InvoicePrefix, CreatedAt: a.CreatedAt.Format(business.TimeFormat)}
}

// IssuedKey is a key's secret (APIKey), shown this once, with its account
// and id: what `key rotate` and `account create` print.
type IssuedKey struct {
	AccountID string `json:"account_id"`
	APIKey    string `json:"api_key"`
	KeyID     string `json:"key_id"`
}

// AccountWithOwner is what `account create --owner-email` prints: the
// account's first key and its owner's link to set a dashboard password.
type AccountWithOwner struct {
	IssuedKey
	OwnerEmail     string `json:"owner_email"`
	SetPasswordURL string `json:"set_password_url"`
}

// AdminCreatedKey is what `key create` prints: the secret, shown this once,
// and the key as the API lists it.
type AdminCreatedKey struct {
	AccountID string `json:"account_id"`
	APIKey    string `json:"api_key"`
	Key       APIKey `json:"key"`
	KeyID     string `json:"key_id"`
}

// RevokedKey is what `key revoke` prints.
type RevokedKey struct {
	AccountID string `json:"account_id"`
	Revoked   APIKey `json:"revoked"`
}

// ItemLedger is an item's quantity with the newest entries of its ledger,
// as `item movements` prints it. Complete says the whole ledger was read;
// then LedgerSum is what its movements add up to, which should be the
// quantity.
type ItemLedger struct {
	ItemCode  string         `json:"item_code"`
	ItemName  string         `json:"item_name"`
	Quantity  money.Quantity `json:"quantity"`
	Movements []Movement     `json:"movements"`
	Complete  bool           `json:"complete"`
	LedgerSum *money.Delta   `json:"ledger_sum,omitempty"`
}

// SaleView is a sale as `sale show` prints it: the figures that explain its
// money (paid, refunded, held) and its state, with its lines, payments and
// refunds, oldest first.
type SaleView struct {
	InvoiceCode    string            `json:"invoice_code"`
	InvoiceNumber  string            `json:"invoice_number"`
	CustomerID     int64             `json:"customer_id"`
	CustomerName   string            `json:"customer_name"`
	Total          money.Amount      `json:"total_amount"`
	AmountPaid     money.Amount      `json:"amount_paid"`
	AmountRefunded money.Amount      `json:"amount_refunded"`
	Held           money.Amount      `json:"held"`
	PaymentType    string            `json:"payment_type"`
	PaymentStatus  string            `json:"payment_status"`
	VoidReason     *string           `json:"void_reason"`
	VoidedAt       *string           `json:"voided_at"`
	CreatedAt      string            `json:"created_at"`
	UpdatedAt      string            `json:"updated_at"`
	Lines          []SaleViewLine    `json:"lines"`
	Payments       []SaleViewPayment `json:"payments"`
	Refunds        []SaleViewRefund  `json:"refunds"`
}

// SaleViewLine is a line of a SaleView: what was sold and what came back.
type SaleViewLine struct {
	SalesItemID int            `json:"sales_item_id"`
	ItemCode    *string        `json:"item_code"`
	ItemName    string         `json:"item_name"`
	UnitPrice   money.Amount   `json:"unit_price"`
	Quantity    money.Quantity `json:"quantity"`
	Returned    money.Quantity `json:"quantity_returned"`
}

// SaleViewPayment is a payment of a SaleView.
type SaleViewPayment struct {
	TransactionID string       `json:"transaction_id"`
	Amount        money.Amount `json:"amount"`
	Method        string       `json:"payment_method"`
	IssuedBy      *string      `json:"issued_by"`
	PaymentAt     string       `json:"payment_at"`
}

// SaleViewRefund is a refund of a SaleView; its lines are those of the API's
// refund.
type SaleViewRefund struct {
	RefundID   string       `json:"refund_id"`
	Amount     money.Amount `json:"amount"`
	Method     string       `json:"refund_method"`
	Reason     *string      `json:"reason"`
	IssuedBy   *string      `json:"issued_by"`
	Lines      []RefundLine `json:"lines"`
	RefundedAt string       `json:"refunded_at"`
}

// NewSaleView returns s with its payments and refunds as `sale show` prints
// them.
func NewSaleView(s business.Sale, payments []business.Payment, refunds []business.Refund) SaleView {
	v := SaleView{
		InvoiceCode: s.InvoiceCode, InvoiceNumber: s.InvoiceNumber, CustomerID: s.CustomerID, CustomerName: s.CustomerName,
		Total: s.Total, AmountPaid: s.AmountPaid, AmountRefunded: s.AmountRefunded, Held: s.Held(),
		PaymentType: s.PaymentType, PaymentStatus: s.PaymentStatus, VoidReason: Nullable(s.VoidReason), VoidedAt: voidedAt(s),
		CreatedAt: s.CreatedAt.Format(business.TimeFormat), UpdatedAt: s.UpdatedAt.Format(business.TimeFormat),
		Lines: make([]SaleViewLine, len(s.Lines)), Payments: make([]SaleViewPayment, len(payments)), Refunds: make([]SaleViewRefund, len(refunds)),
	}
	for i, l := range s.Lines {
		v.Lines[i] = SaleViewLine{SalesItemID: i + 1, ItemCode: Nullable(l.ItemCode), ItemName: l.ItemName,
			UnitPrice: l.UnitPrice, Quantity: l.Quantity, Returned: l.Returned}
	}
	for i, p := range payments {
		v.Payments[i] = SaleViewPayment{TransactionID: p.TransactionID, Amount: p.Amount, Method: p.Method,
			IssuedBy: Nullable(p.IssuedBy), PaymentAt: p.PaymentAt.Format(business.TimeFormat)}
	}
	for i, r := range refunds {
		v.Refunds[i] = SaleViewRefund{RefundID: r.RefundID, Amount: r.Amount, Method: r.Method, Reason: Nullable(r.Reason),
			IssuedBy: Nullable(r.IssuedBy), Lines: refundLines(r), RefundedAt: r.RefundedAt.Format(business.TimeFormat)}
	}
	return v
}
