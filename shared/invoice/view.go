// Package invoice renders a sale as its customer sees it: the hosted
// invoice page (HTML) and the invoice PDF. Both are pure functions of a
// View, which the caller builds from the sale's version, so the same
// version always renders the same bytes. A View holds only what the
// customer may see: never the sale's internal note or another record's id.
package invoice

import "time"

// View is one invoice as shown to its customer. Amounts are already
// formatted in the account's currency (e.g. "1,250.00"); dates are the
// merchant's local dates ("2026-11-28").
type View struct {
	BusinessName  string
	Currency      string // ISO 4217 code, e.g. "GHS"
	InvoiceNumber string // e.g. "INV-100001"
	IssueDate     string
	DueDate       string
	CustomerName  string
	Lines         []Line
	SubTotal      string // the lines' quantity x unit price, before tax
	Tax           string // the lines' tax, summed
	Discount      string // empty when the sale has none
	Total         string
	AmountPaid    string
	Refunded      string // empty when nothing was refunded
	BalanceDue    string
	// Status is one of the Status* values.
	Status   string
	Note     string // the sale's invoice_note
	Terms    string // invoice_terms
	IssuedBy string
	// Colour is the invoice's accent colour, "#RRGGBB" (validated by the
	// API; a renderer falls back to its default for anything else).
	Colour string
	// Version and UpdatedAt identify the sale's version the view was made
	// from: the PDF's dates are UpdatedAt, so its bytes depend only on it.
	Version   int64
	UpdatedAt time.Time
}

// Line is one line of the invoice.
type Line struct {
	Item        string
	Description string
	Quantity    string
	UnitPrice   string
	Tax         string
	Amount      string // quantity x unit price + tax
}

// The statuses a customer sees.
const (
	StatusPaid          = "paid"
	StatusPartiallyPaid = "partially paid"
	StatusUnpaid        = "unpaid"
	StatusOverdue       = "overdue"
	StatusVoid          = "void"
)
