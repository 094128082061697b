// Package wire holds the JSON shapes of the records as the API answers them.
// A GET's data and the data of an event about that record are the same
// value, so both the API's handlers and the store's events (written in the
// change's own transaction) render records here.
package wire

import (
	"encoding/json"
	"strconv"

	"bizdata/shared/business"
	"bizdata/shared/money"
)

// Customer is a customer on the wire.
type Customer struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Email     string `json:"email"`
	Phone     string `json:"phone"`
	Address   string `json:"address"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func NewCustomer(c business.Customer) Customer {
	return Customer{
		ID: c.ID, Name: c.Name, Email: c.Email, Phone: c.Phone, Address: c.Address,
		CreatedAt: c.CreatedAt.Format(business.TimeFormat), UpdatedAt: c.UpdatedAt.Format(business.TimeFormat),
	}
}

type Expense struct {
	ID            int64        `json:"id"`
	ExpenseType   string       `json:"expense_type"`
	Description   string       `json:"expense_description,omitempty"`
	Amount        money.Amount `json:"expense_amount"`
	PaymentMethod string       `json:"payment_method"`
	Image         *string      `json:"expense_image"`
	CreatedBy     string       `json:"created_by"`
	CreatedAt     string       `json:"created_at"`
	UpdatedAt     string       `json:"updated_at"`
}

func NewExpense(e business.Expense) Expense {
	return Expense{
		ID: e.ID, ExpenseType: e.ExpenseType, Description: e.Description, Amount: e.Amount,
		PaymentMethod: e.PaymentMethod, Image: Nullable(e.Image), CreatedBy: e.CreatedBy,
		CreatedAt: e.CreatedAt.Format(business.TimeFormat), UpdatedAt: e.UpdatedAt.Format(business.TimeFormat),
	}
}

type Category struct {
	ID          int64  `json:"id"`
	Name        string `json:"category_name"`
	Description string `json:"description"`
	CreatedAt   string `json:"created_at"`
	UpdatedAt   string `json:"updated_at"`
}

func NewCategory(c business.Category) Category {
	return Category{ID: c.ID, Name: c.Name, Description: c.Description,
		CreatedAt: c.CreatedAt.Format(business.TimeFormat), UpdatedAt: c.UpdatedAt.Format(business.TimeFormat)}
}

// Item is an item on the wire: prices are JSON numbers and quantities
// strings, as the description types them.
type Item struct {
	ID              int64          `json:"id"`
	ItemCode        string         `json:"item_code"`
	ItemName        string         `json:"item_name"`
	Images          []Image        `json:"item_images"`
	CategoryID      int64          `json:"category_id"`
	Unit            string         `json:"unit"`
	Description     string         `json:"description"`
	UnitCost        json.Number    `json:"unit_cost"`
	ItemPrice       json.Number    `json:"item_price"`
	PreviousPrice   json.Number    `json:"previous_price"`
	Quantity        money.Quantity `json:"quantity"`
	MinimumQtyAlert money.Quantity `json:"minimum_qty_alert"`
	Online          int            `json:"online"`
	Status          string         `json:"status"`
	Barcode         string         `json:"barcode"`
	SKU             string         `json:"sku"`
	WarehouseID     int64          `json:"warehouse_id"`
	Location        string         `json:"item_location"`
	Slug            string         `json:"item_slug"`
	CreatedAt       string         `json:"created_at"`
	UpdatedAt       string         `json:"updated_at"`
}

type Image struct {
	ID  int64  `json:"id"`
	URL string `json:"image_url"`
}

func NewItem(x business.Item) Item {
	imgs := make([]Image, len(x.Images))
	for i, img := range x.Images {
		imgs[i] = Image{ID: img.ID, URL: img.URL}
	}
	online := 0
	if x.Online {
		online = 1
	}
	return Item{
		ID: x.ID, ItemCode: x.ItemCode, ItemName: x.ItemName, Images: imgs, CategoryID: x.CategoryID,
		Unit: x.Unit, Description: x.Description, UnitCost: json.Number(x.UnitCost.String()),
		ItemPrice: json.Number(x.ItemPrice.String()), PreviousPrice: json.Number(x.PreviousPrice.String()),
		Quantity: x.Quantity, MinimumQtyAlert: x.MinimumQtyAlert, Online: online, Status: x.Status(),
		Barcode: x.Barcode, SKU: x.SKU, WarehouseID: x.WarehouseID, Location: x.Location, Slug: x.Slug,
		CreatedAt: x.CreatedAt.Format(business.TimeFormat), UpdatedAt: x.UpdatedAt.Format(business.TimeFormat),
	}
}

// Sale is a sale on the wire, typed as the description types it:
// invoice_code a number, customer_id a string, money as "10.00" strings.
type Sale struct {
	ID                  int64         `json:"id"`
	InvoiceCode         json.Number   `json:"invoice_code"`
	InvoiceNumber       string        `json:"invoice_number"`
	CustomerID          string        `json:"customer_id"`
	SubTotal            money.Amount  `json:"sub_total_amount"`
	Total               money.Amount  `json:"total_amount"`
	AmountPaid          money.Amount  `json:"amount_paid"`
	Discount            *money.Amount `json:"discount"`
	InvoiceType         string        `json:"invoice_type"`
	InvoiceColour       *string       `json:"invoice_colour"`
	InvoiceNote         *string       `json:"invoice_note"`
	InvoiceTerms        *string       `json:"invoice_terms"`
	PaymentInternalNote *string       `json:"payment_internal_note"`
	PaymentDate         *string       `json:"payment_date"`
	PaymentType         string        `json:"payment_type"`
	PaymentStatus       string        `json:"payment_status"`
	IssuedBy            string        `json:"issued_by"`
	DueDate             string        `json:"due_date"`
	ReminderDate        *string       `json:"reminder_date"`
	ReminderMessage     *string       `json:"reminder_message"`
	AmountRefunded      money.Amount  `json:"amount_refunded"`
	VoidReason          *string       `json:"void_reason"`
	VoidedAt            *string       `json:"voided_at"`
	InvoiceLinkActive   bool          `json:"invoice_link_active"`
	CreatedAt           string        `json:"created_at"`
	UpdatedAt           string        `json:"updated_at"`
}

// InvoiceLink is a sale's invoice link as made: its URL, shown once.
type InvoiceLink struct {
	URL       string `json:"url"`
	CreatedAt string `json:"created_at"`
}

type SaleLine struct {
	ID            int            `json:"id"`
	InvoiceCode   string         `json:"invoice_code"`
	InvoiceNumber string         `json:"invoice_number"`
	ItemCode      *string        `json:"item_code"`
	ItemName      string         `json:"item_name"`
	Description   string         `json:"description"`
	UnitPrice     money.Amount   `json:"unit_price"`
	Quantity      money.Quantity `json:"quantity"`
	Tax           money.Amount   `json:"tax"`
	Returned      money.Quantity `json:"quantity_returned"`
	CreatedAt     string         `json:"created_at"`
	UpdatedAt     string         `json:"updated_at"`
}

type SalePayment struct {
	TransactionID       string       `json:"transaction_id"`
	InvoiceCode         string       `json:"invoice_code"`
	CustomerName        string       `json:"customer_name"`
	AmountPaid          money.Amount `json:"amount_paid"`
	PaymentMethod       string       `json:"payment_method"`
	InternalPaymentNote *string      `json:"internal_payment_note"`
	IssuedBy            string       `json:"issued_by"`
	PaymentAt           string       `json:"payment_at"`
	CreatedAt           string       `json:"created_at"`
	UpdatedAt           string       `json:"updated_at"`
}

// Nullable sends an empty text field as null.
func Nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// voidedAt is when s was voided, null while it stands.
func voidedAt(s business.Sale) *string {
	if s.VoidedAt.IsZero() {
		return nil
	}
	return Nullable(s.VoidedAt.Format(business.TimeFormat))
}

func NewSale(s business.Sale) Sale {
	return Sale{
		AmountRefunded: s.AmountRefunded, VoidReason: Nullable(s.VoidReason), VoidedAt: voidedAt(s),
		InvoiceLinkActive: s.Link != nil,
		ID:                s.ID, InvoiceCode: json.Number(s.InvoiceCode), InvoiceNumber: s.InvoiceNumber,
		CustomerID: strconv.FormatInt(s.CustomerID, 10), SubTotal: s.SubTotal, Total: s.Total,
		AmountPaid: s.AmountPaid, Discount: s.Discount, InvoiceType: s.InvoiceType,
		InvoiceColour: Nullable(s.InvoiceColour), InvoiceNote: Nullable(s.InvoiceNote),
		InvoiceTerms: Nullable(s.InvoiceTerms), PaymentInternalNote: Nullable(s.PaymentInternalNote),
		PaymentDate: Nullable(s.PaymentDate), PaymentType: s.PaymentType, PaymentStatus: s.PaymentStatus,
		IssuedBy: s.IssuedBy, DueDate: s.DueDate, ReminderDate: Nullable(s.ReminderDate),
		ReminderMessage: Nullable(s.ReminderMessage),
		CreatedAt:       s.CreatedAt.Format(business.TimeFormat), UpdatedAt: s.UpdatedAt.Format(business.TimeFormat),
	}
}

// SaleRecord is the data of every single-sale response (and of a sale's
// events): the sale, its lines and its payments under the description's
// three keys, and its refunds.
type SaleRecord struct {
	Sale     Sale          `json:"sales"`
	Lines    []SaleLine    `json:"sales-item"`
	Payments []SalePayment `json:"sales-payment"`
	Refunds  []Refund      `json:"sales-refund"`
}

// SaleData returns the sale record of s with its payments and refunds.
func SaleData(s business.Sale, payments []business.Payment, refunds []business.Refund) SaleRecord {
	lines := make([]SaleLine, len(s.Lines))
	for i, l := range s.Lines {
		lines[i] = SaleLine{
			ID: i + 1, InvoiceCode: s.InvoiceCode, InvoiceNumber: s.InvoiceNumber, ItemCode: Nullable(l.ItemCode),
			ItemName: l.ItemName, Description: l.Description, UnitPrice: l.UnitPrice, Quantity: l.Quantity, Tax: l.Tax,
			Returned: l.Returned, CreatedAt: s.CreatedAt.Format(business.TimeFormat), UpdatedAt: s.UpdatedAt.Format(business.TimeFormat),
		}
	}
	pays := make([]SalePayment, len(payments))
	for i, p := range payments {
		at := p.PaymentAt.Format(business.TimeFormat)
		pays[i] = SalePayment{
			TransactionID: p.TransactionID, InvoiceCode: p.InvoiceCode, CustomerName: p.CustomerName,
			AmountPaid: p.Amount, PaymentMethod: p.Method, InternalPaymentNote: Nullable(p.InternalNote),
			IssuedBy: p.IssuedBy, PaymentAt: at, CreatedAt: at, UpdatedAt: at,
		}
	}
	rs := make([]Refund, len(refunds))
	for i, r := range refunds {
		rs[i] = NewRefund(r)
	}
	return SaleRecord{Sale: NewSale(s), Lines: lines, Payments: pays, Refunds: rs}
}

type RefundLine struct {
	SalesItemID int            `json:"sales_item_id"`
	ItemCode    *string        `json:"item_code"`
	Quantity    money.Quantity `json:"quantity"`
}

type Refund struct {
	RefundID     string       `json:"refund_id"`
	InvoiceCode  string       `json:"invoice_code"`
	Amount       money.Amount `json:"amount"`
	Reason       *string      `json:"reason"`
	RefundMethod string       `json:"refund_method"`
	IssuedBy     *string      `json:"issued_by"`
	Lines        []RefundLine `json:"lines"`
	RefundedAt   string       `json:"refunded_at"`
	CreatedAt    string       `json:"created_at"`
}

// refundLines returns the lines of r, the goods it took back ([] when none).
func refundLines(r business.Refund) []RefundLine {
	lines := make([]RefundLine, len(r.Lines))
	for i, l := range r.Lines {
		lines[i] = RefundLine{SalesItemID: l.LineID, ItemCode: Nullable(l.ItemCode), Quantity: l.Quantity}
	}
	return lines
}

func NewRefund(r business.Refund) Refund {
	at := r.RefundedAt.Format(business.TimeFormat)
	return Refund{
		RefundID: r.RefundID, InvoiceCode: r.InvoiceCode, Amount: r.Amount, Reason: Nullable(r.Reason),
		RefundMethod: r.Method, IssuedBy: Nullable(r.IssuedBy), Lines: refundLines(r), RefundedAt: at, CreatedAt: at,
	}
}

// Movement is a stock movement as the API shows it (the admin CLI prints
// the same).
type Movement struct {
	ID            int64          `json:"id"`
	Kind          string         `json:"kind"`
	Quantity      money.Delta    `json:"quantity"`
	QuantityAfter money.Quantity `json:"quantity_after"`
	Reason        *string        `json:"reason"`
	Note          *string        `json:"note"`
	InvoiceCode   *string        `json:"invoice_code"`
	CreatedAt     string         `json:"created_at"`
}

// NewMovement returns m as the API shows it.
func NewMovement(m business.Movement) Movement {
	return Movement{
		ID: m.ID, Kind: m.Kind, Quantity: m.Change, QuantityAfter: m.After, Reason: Nullable(m.Reason),
		Note: Nullable(m.Note), InvoiceCode: Nullable(m.InvoiceCode), CreatedAt: m.CreatedAt.Format(business.TimeFormat),
	}
}

// The data of each kind's GET (and of its events), under the keys the API
// description gives them.

// CustomerData is the data of GET /customers/{id}.
func CustomerData(c business.Customer) map[string]any {
	return map[string]any{"customers": NewCustomer(c)}
}

// ExpenseData is the data of GET /expenses/{id}.
func ExpenseData(e business.Expense) map[string]any { return map[string]any{"expense": NewExpense(e)} }

// CategoryData is the data of a category's add and edit (categories have no
// GET of their own).
func CategoryData(c business.Category) map[string]any {
	return map[string]any{"categories": NewCategory(c)}
}

// ItemData is the data of GET /inventory/items/{item_code}.
func ItemData(x business.Item) map[string]any { return map[string]any{"items": NewItem(x)} }
