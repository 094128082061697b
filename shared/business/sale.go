package business

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"regexp"
	"strings"
	"time"

	"bizdata/shared/money"
)

// Payment statuses, derived from amount_paid and total_amount, never taken
// from the client.
const (
	StatusDraft   = "draft"
	StatusPartial = "partial"
	StatusPaid    = "paid"
	// StatusVoid is a voided sale's: set by the void route, never derived,
	// and final.
	StatusVoid = "void"
)

// InvoiceTypes are the creation vocabulary: main (dashboard), pos
// (point-of-sale product), order (storefront).
var InvoiceTypes = []string{"main", "pos", "order"}

// InvoiceTypeFilter maps the list filter's vocabulary (and the creation
// vocabulary itself) to stored invoice types.
var InvoiceTypeFilter = map[string]string{
	"invoice": "main", "pos": "pos", "storefront": "order",
	"main": "main", "order": "order",
}

// PaymentTypes are the accepted payment_type values.
var PaymentTypes = []string{"None", "Mobile Money", "Cash", "Bank Transfer / Deposit", "Cheque", "Card Payment", "Digital Payment", "Other Payment"}

// MaxSaleLines bounds the lines of one sale.
const MaxSaleLines = 100

// Sale is an invoice or receipt with its lines. Payments are kept apart, one
// record per increase of AmountPaid.
type Sale struct {
	ID                  int64
	InvoiceCode         string // 6 digits, first not 0
	InvoiceNumber       string // <PREFIX>-<6 digits>
	CustomerID          int64
	CustomerName        string
	SubTotal            money.Amount
	Total               money.Amount
	AmountPaid          money.Amount
	Discount            *money.Amount
	InvoiceType         string
	InvoiceColour       string
	InvoiceNote         string
	InvoiceTerms        string
	PaymentInternalNote string
	PaymentDate         string
	PaymentType         string
	PaymentStatus       string
	IssuedBy            string
	DueDate             string
	ReminderDate        string
	ReminderMessage     string
	Lines               []SaleLine
	CreatedAt           time.Time
	UpdatedAt           time.Time
	// Version counts writes; an edit succeeds only if it is unchanged.
	Version int64
	// Payments counts the sale's payment records.
	Payments int
	// AmountRefunded is the sum of the sale's refunds, never above
	// AmountPaid; Refunds counts them.
	AmountRefunded money.Amount
	Refunds        int
	// VoidReason and VoidedAt are set when the sale is voided.
	VoidReason string
	VoidedAt   time.Time
	// Link is the sale's active invoice link, or nil.
	Link *InvoiceLink
	// Scheduled holds the keys of the sale's planned notices (see
	// PlanNotices), so an edit that moves a date removes the old one.
	Scheduled []string
}

// Void reports whether the sale has been voided (and so never changes again).
func (s *Sale) Void() bool { return s.PaymentStatus == StatusVoid }

// Held is what the sale holds of the customer's money: paid less refunded.
func (s *Sale) Held() money.Amount { return s.AmountPaid.Sub(s.AmountRefunded) }

// Returned reports whether goods have been returned against any line.
func (s *Sale) Returned() bool {
	for _, l := range s.Lines {
		if !l.Returned.IsZero() {
			return true
		}
	}
	return false
}

// SaleLine is one line of a sale. ItemCode, when set, names the inventory
// item whose stock the line takes.
type SaleLine struct {
	ItemCode    string
	ItemName    string
	Description string
	UnitPrice   money.Amount
	Quantity    money.Quantity
	Tax         money.Amount
	// Returned is the quantity refunds have taken back, at most Quantity.
	Returned money.Quantity
}

// Payment is one received amount of a sale, written with the sale in the same
// transaction; its insertion triggers the payment webhook.
type Payment struct {
	Seq           int
	TransactionID string
	InvoiceCode   string
	InvoiceNumber string
	CustomerName  string
	Amount        money.Amount
	Method        string
	InternalNote  string
	IssuedBy      string
	// PaymentStatus is the sale's status once this payment is counted.
	PaymentStatus string
	PaymentAt     time.Time
}

// Refund is money given back on a sale, with the goods returned, if any.
// It is written with the sale in one transaction; its insertion triggers a
// webhook like a payment's.
type Refund struct {
	Seq           int
	RefundID      string // ref_ and 24 hex digits
	InvoiceCode   string
	InvoiceNumber string
	CustomerName  string
	Amount        money.Amount
	Reason        string
	Method        string
	IssuedBy      string
	Lines         []RefundLine
	// PaymentStatus is the sale's status when the refund was made.
	PaymentStatus string
	RefundedAt    time.Time
}

// RefundLine is a quantity of one sale line returned with a refund; LineID
// is the line's sales-item id (its position, from 1).
type RefundLine struct {
	LineID   int
	ItemCode string
	Quantity money.Quantity
}

// NewRefundID returns a unique refund id such as ref_5f0c3a9e1b7d4c2a8e6f1a3b.
func NewRefundID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("ref_%x", b)
}

var (
	sixDigits = regexp.MustCompile(`^[1-9][0-9]{5}$`)
	colourRE  = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)
)

// ValidInvoiceCode reports whether code has an invoice code's form; no sale
// can have any other.
func ValidInvoiceCode(code string) bool { return sixDigits.MatchString(code) }

// ValidTransactionID reports whether id can be a payment's transaction id
// (txn_ and hex digits, as NewTransactionID makes them, or an operator's
// import): at most 64 letters, digits, '-' or '_'.
func ValidTransactionID(id string) bool { return codeRE.MatchString(id) }

// NewTransactionID returns a unique payment transaction id such as
// txn_5f0c3a9e1b7d4c2a8e6f1a3b.
func NewTransactionID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("txn_%x", b)
}

// NewItemCode returns a random item code such as ITM-482910.
func NewItemCode() string { return "ITM-" + NewInvoiceCode() }

// NewInvoiceCode returns a random 6-digit code (100000-999999).
func NewInvoiceCode() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%06d", 100000+binary.BigEndian.Uint64(b[:])%900000)
}

// NormalizeInvoiceNumber turns "123456" or "<prefix>-123456" into
// "<prefix>-123456". ok is false for anything else.
func NormalizeInvoiceNumber(prefix, v string) (string, bool) {
	digits := strings.TrimPrefix(v, prefix+"-")
	if !sixDigits.MatchString(digits) {
		return "", false
	}
	return prefix + "-" + digits, true
}

// DeriveStatus returns the payment status of paid against total.
func DeriveStatus(paid, total money.Amount) string {
	switch {
	case paid.IsZero():
		return StatusDraft
	case paid.Cmp(total) < 0:
		return StatusPartial
	default:
		return StatusPaid
	}
}

// Validate checks every field and rule of s and derives its PaymentStatus.
// claimedStatus is the status the client sent ("" when none); a different
// one is refused. Returns EINVALID naming each bad field; a totals mismatch
// names the expected value.
func (s *Sale) Validate(claimedStatus string) error {
	fe := FieldErrors{}
	if !sixDigits.MatchString(s.InvoiceCode) {
		fe.Add("invoice_code", "must be 6 digits, the first not 0")
	}
	if s.CustomerID < 1 {
		fe.Add("customer_id", "is required: the id of one of your customers")
	}
	if !oneOf(s.InvoiceType, InvoiceTypes) {
		fe.Add("invoice_type", "must be one of: "+strings.Join(InvoiceTypes, ", "))
	}
	if !oneOf(s.PaymentType, PaymentTypes) {
		fe.Add("payment_type", "must be one of: "+strings.Join(PaymentTypes, ", "))
	}
	if s.InvoiceColour != "" && !colourRE.MatchString(s.InvoiceColour) {
		fe.Add("invoice_colour", "must be a colour #RRGGBB")
	}
	for _, t := range []struct {
		name, v string
		max     int
	}{
		{"invoice_note", s.InvoiceNote, 2000}, {"invoice_terms", s.InvoiceTerms, 5000},
		{"payment_internal_note", s.PaymentInternalNote, 2000}, {"issued_by", s.IssuedBy, 200},
		{"reminder_message", s.ReminderMessage, 2000},
	} {
		CheckText(fe, t.name, t.v, false, t.max)
	}
	if s.DueDate == "" {
		fe.Add("due_date", "is required (YYYY-MM-DD)")
	} else {
		CheckDate(fe, "due_date", s.DueDate)
	}
	for name, v := range map[string]string{"payment_date": s.PaymentDate, "reminder_date": s.ReminderDate} {
		if v != "" {
			CheckDate(fe, name, v)
		}
	}
	if len(s.Lines) > MaxSaleLines {
		fe.Add("items", fmt.Sprintf("must have at most %d lines", MaxSaleLines))
	}
	for i, l := range s.Lines {
		p := fmt.Sprintf("items[%d].", i)
		CheckText(fe, p+"item_name", l.ItemName, true, 200)
		CheckText(fe, p+"description", l.Description, false, 2000)
		CheckText(fe, p+"item_code", l.ItemCode, false, 64)
		if l.Quantity.IsZero() {
			fe.Add(p+"quantity", "must be above 0")
		}
	}
	if len(fe) > 0 {
		return fe.Err()
	}
	s.checkAmounts(fe)
	if len(fe) > 0 {
		return fe.Err()
	}
	s.PaymentStatus = DeriveStatus(s.AmountPaid, s.Total)
	if claimedStatus != "" && claimedStatus != s.PaymentStatus {
		fe.Add("payment_status", fmt.Sprintf("is derived from the amounts: with amount_paid %s of total_amount %s it is %q, not %q (leave it out)",
			s.AmountPaid, s.Total, s.PaymentStatus, claimedStatus))
	}
	if !s.AmountPaid.IsZero() && s.PaymentType == "None" {
		fe.Add("payment_type", "must say how the payment was made when amount_paid is above 0")
	}
	return fe.Err()
}

// checkAmounts applies the totals rules: with lines, sub-total and total must
// be what the lines say; without, the discount may not exceed the sub-total.
// The amount paid may never exceed the total.
func (s *Sale) checkAmounts(fe FieldErrors) {
	discount := money.Zero
	if s.Discount != nil {
		discount = *s.Discount
	}
	if len(s.Lines) > 0 {
		sub, tax := money.Zero, money.Zero
		for _, l := range s.Lines {
			sub = sub.Add(money.LineTotal(l.UnitPrice, l.Quantity))
			tax = tax.Add(l.Tax)
		}
		if !sub.Valid() {
			fe.Add("items", "the lines add up to more than 99999999.99")
			return
		}
		if sub.Cmp(s.SubTotal) != 0 {
			fe.Add("sub_total_amount", fmt.Sprintf("must equal the sum of the lines' unit_price x quantity (each rounded to cents): expected %s, got %s", sub, s.SubTotal))
		}
		total := sub.Add(tax).Sub(discount)
		if !total.Valid() {
			fe.Add("discount", fmt.Sprintf("must not exceed sub-total plus tax (%s)", sub.Add(tax)))
			return
		}
		if total.Cmp(s.Total) != 0 {
			fe.Add("total_amount", fmt.Sprintf("must equal sub_total_amount + the lines' tax - discount: expected %s, got %s", total, s.Total))
		}
	} else if discount.Cmp(s.SubTotal) > 0 {
		fe.Add("discount", fmt.Sprintf("must not exceed sub_total_amount (%s)", s.SubTotal))
	}
	if s.AmountPaid.Cmp(s.Total) > 0 {
		fe.Add("amount_paid", fmt.Sprintf("must not exceed total_amount (%s): overpayment is refused", s.Total))
	}
}

// CheckEdit applies the rules that tie an edit to the sale it changes:
// amount_paid never decreases, and a paid sale, a document the customer
// holds, keeps its amounts, discount, lines, customer and invoice number. Returns EINVALID naming each refused change.
func CheckEdit(old, new *Sale) error {
	fe := FieldErrors{}
	if new.AmountPaid.Cmp(old.AmountPaid) < 0 {
		fe.Add("amount_paid", fmt.Sprintf("must not decrease: %s has been received already", old.AmountPaid))
	}
	if old.Returned() {
		if !sameLines(old.Lines, new.Lines) {
			fe.Add("items", "cannot change: goods have been returned against this sale's lines")
		} else {
			for i := range new.Lines {
				new.Lines[i].Returned = old.Lines[i].Returned
			}
		}
	}
	if old.PaymentStatus == StatusPaid {
		const final = "cannot change: the sale is paid and finalized (notes, terms, colour, reminders, issued_by, due_date and payment_date stay editable)"
		if old.SubTotal.Cmp(new.SubTotal) != 0 {
			fe.Add("sub_total_amount", final)
		}
		if old.Total.Cmp(new.Total) != 0 {
			fe.Add("total_amount", final)
		}
		if !sameDiscount(old.Discount, new.Discount) {
			fe.Add("discount", final)
		}
		if !sameLines(old.Lines, new.Lines) {
			fe.Add("items", final)
		}
		if old.CustomerID != new.CustomerID {
			fe.Add("customer_id", final)
		}
		if old.InvoiceNumber != new.InvoiceNumber {
			fe.Add("invoice_number", final)
		}
	}
	return fe.Err()
}

func sameDiscount(a, b *money.Amount) bool {
	za, zb := money.Zero, money.Zero
	if a != nil {
		za = *a
	}
	if b != nil {
		zb = *b
	}
	return za.Cmp(zb) == 0
}

func sameLines(a, b []SaleLine) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.ItemCode != y.ItemCode || x.ItemName != y.ItemName || x.Description != y.Description ||
			x.UnitPrice.Cmp(y.UnitPrice) != 0 || x.Quantity.Cmp(y.Quantity) != 0 || x.Tax.Cmp(y.Tax) != 0 {
			return false
		}
	}
	return true
}

func oneOf(v string, list []string) bool {
	for _, x := range list {
		if v == x {
			return true
		}
	}
	return false
}

// NewPayment returns the payment record for an increase of a sale's amount
// paid from before to sale.AmountPaid, made at now, or nil when it did not
// increase. Its Seq is sale.Payments: the caller counts the new payment first.
func NewPayment(sale Sale, before money.Amount, now time.Time) *Payment {
	if sale.AmountPaid.Cmp(before) <= 0 {
		return nil
	}
	return &Payment{
		Seq:           sale.Payments,
		TransactionID: NewTransactionID(),
		InvoiceCode:   sale.InvoiceCode,
		InvoiceNumber: sale.InvoiceNumber,
		CustomerName:  sale.CustomerName,
		Amount:        sale.AmountPaid.Sub(before),
		Method:        sale.PaymentType,
		InternalNote:  sale.PaymentInternalNote,
		IssuedBy:      sale.IssuedBy,
		PaymentStatus: sale.PaymentStatus,
		PaymentAt:     now,
	}
}

// NeedsPaymentDate reports whether DefaultPaymentDate would set
// payment_date (something is paid and the client gave no date), so the
// timezone history it needs is read only then.
func (s *Sale) NeedsPaymentDate() bool {
	return !s.AmountPaid.IsZero() && s.PaymentDate == ""
}

// DefaultPaymentDate sets payment_date, when the client left it out, to the
// business's local date of now (in the zone in effect at now, as the
// reports date it) once something has been paid: a payment at 23:30 UTC in
// Auckland is paid on Auckland's next day.
func (s *Sale) DefaultPaymentDate(now time.Time, hist TimezoneHistory) {
	if s.NeedsPaymentDate() {
		s.PaymentDate = hist.LocalDate(now)
	}
}
