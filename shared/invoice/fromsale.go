package invoice

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/money"
)

// ViewOf is what the customer sees of sale s of account a, whose timezone
// history is hist, on the merchant's date at now (which decides only
// whether an unpaid sale shows as overdue).
func ViewOf(s business.Sale, a business.Account, hist business.TimezoneHistory, now time.Time) View {
	v := View{
		BusinessName:  a.Name,
		Currency:      a.Currency,
		InvoiceNumber: s.InvoiceNumber,
		IssueDate:     hist.LocalDate(s.CreatedAt),
		DueDate:       s.DueDate,
		CustomerName:  s.CustomerName,
		SubTotal:      s.SubTotal.String(),
		Total:         s.Total.String(),
		AmountPaid:    s.AmountPaid.String(),
		BalanceDue:    BalanceDue(s).String(),
		Status:        business.InvoiceStatus(s, hist.Today(now)),
		Note:          s.InvoiceNote,
		Terms:         s.InvoiceTerms,
		IssuedBy:      s.IssuedBy,
		Colour:        s.InvoiceColour,
		Version:       s.Version,
		UpdatedAt:     s.UpdatedAt,
	}
	if s.Discount != nil && !s.Discount.IsZero() {
		v.Discount = s.Discount.String()
	}
	if !s.AmountRefunded.IsZero() {
		v.Refunded = s.AmountRefunded.String()
	}
	tax := money.Zero
	for _, l := range s.Lines {
		tax = tax.Add(l.Tax)
		v.Lines = append(v.Lines, Line{
			Item: l.ItemName, Description: l.Description, Quantity: l.Quantity.String(),
			UnitPrice: l.UnitPrice.String(), Tax: l.Tax.String(),
			Amount: money.LineTotal(l.UnitPrice, l.Quantity).Add(l.Tax).String(),
		})
	}
	v.Tax = tax.String()
	return v
}

// BalanceDue is what the customer still owes on s: its total less what was
// paid, while it is open; nothing once paid or void.
func BalanceDue(s business.Sale) money.Amount {
	if !s.Owes() {
		return money.Zero
	}
	return s.Total.Sub(s.AmountPaid)
}

// ETag is the validator of an invoice's page and PDF: the sale's version,
// and a digest of everything the customer sees, which also changes without
// a new version of the sale (an unpaid sale turns overdue when its due date
// passes; the business is renamed).
func ETag(v View) string {
	b, _ := json.Marshal(v) // a View always marshals
	sum := sha256.Sum256(b)
	return `"v` + strconv.FormatInt(v.Version, 10) + "-" + hex.EncodeToString(sum[:6]) + `"`
}
