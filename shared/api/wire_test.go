package api_test

import (
	"encoding/json"

	"github.com/google/go-cmp/cmp"
)

// The records as a client reads them, typed so that tests compare whole
// records with cmp.Diff (dataAs refuses a field a type does not declare).

type customerWire struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Email     string `json:"email"`
	Phone     string `json:"phone"`
	Address   string `json:"address"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

type categoryWire struct {
	ID          int64  `json:"id"`
	Name        string `json:"category_name"`
	Description string `json:"description"`
	CreatedAt   string `json:"created_at"`
	UpdatedAt   string `json:"updated_at"`
}

type expenseWire struct {
	ID            int64   `json:"id"`
	ExpenseType   string  `json:"expense_type"`
	Description   string  `json:"expense_description"`
	Amount        string  `json:"expense_amount"`
	PaymentMethod string  `json:"payment_method"`
	Image         *string `json:"expense_image"`
	CreatedBy     string  `json:"created_by"`
	CreatedAt     string  `json:"created_at"`
	UpdatedAt     string  `json:"updated_at"`
}

type itemWire struct {
	ID              int64       `json:"id"`
	ItemCode        string      `json:"item_code"`
	ItemName        string      `json:"item_name"`
	Images          []imageWire `json:"item_images"`
	CategoryID      int64       `json:"category_id"`
	Unit            string      `json:"unit"`
	Description     string      `json:"description"`
	UnitCost        json.Number `json:"unit_cost"`
	ItemPrice       json.Number `json:"item_price"`
	PreviousPrice   json.Number `json:"previous_price"`
	Quantity        string      `json:"quantity"`
	MinimumQtyAlert string      `json:"minimum_qty_alert"`
	Online          int         `json:"online"`
	Status          string      `json:"status"`
	Barcode         string      `json:"barcode"`
	SKU             string      `json:"sku"`
	WarehouseID     int64       `json:"warehouse_id"`
	Location        string      `json:"item_location"`
	Slug            string      `json:"item_slug"`
	CreatedAt       string      `json:"created_at"`
	UpdatedAt       string      `json:"updated_at"`
}

type imageWire struct {
	ID  int64  `json:"id"`
	URL string `json:"image_url"`
}

// noStamps leaves created_at and updated_at out of a comparison: the server
// sets them (TestCreatedAtFilter and the model test check their values).
var noStamps = cmp.FilterPath(func(p cmp.Path) bool {
	f := p.Last().String()
	return f == ".CreatedAt" || f == ".UpdatedAt"
}, cmp.Ignore())

func ptr[T any](v T) *T { return &v }

type saleWire struct {
	ID                  int64       `json:"id"`
	InvoiceCode         json.Number `json:"invoice_code"`
	InvoiceNumber       string      `json:"invoice_number"`
	CustomerID          string      `json:"customer_id"`
	SubTotal            string      `json:"sub_total_amount"`
	Total               string      `json:"total_amount"`
	AmountPaid          string      `json:"amount_paid"`
	Discount            *string     `json:"discount"`
	InvoiceType         string      `json:"invoice_type"`
	InvoiceColour       *string     `json:"invoice_colour"`
	InvoiceNote         *string     `json:"invoice_note"`
	InvoiceTerms        *string     `json:"invoice_terms"`
	PaymentInternalNote *string     `json:"payment_internal_note"`
	PaymentDate         *string     `json:"payment_date"`
	PaymentType         string      `json:"payment_type"`
	PaymentStatus       string      `json:"payment_status"`
	IssuedBy            string      `json:"issued_by"`
	DueDate             string      `json:"due_date"`
	ReminderDate        *string     `json:"reminder_date"`
	ReminderMessage     *string     `json:"reminder_message"`
	AmountRefunded      string      `json:"amount_refunded"`
	VoidReason          *string     `json:"void_reason"`
	VoidedAt            *string     `json:"voided_at"`
	InvoiceLinkActive   bool        `json:"invoice_link_active"`
	CreatedAt           string      `json:"created_at"`
	UpdatedAt           string      `json:"updated_at"`
}

type saleLineWire struct {
	ID            int     `json:"id"`
	InvoiceCode   string  `json:"invoice_code"`
	InvoiceNumber string  `json:"invoice_number"`
	ItemCode      *string `json:"item_code"`
	ItemName      string  `json:"item_name"`
	Description   string  `json:"description"`
	UnitPrice     string  `json:"unit_price"`
	Quantity      string  `json:"quantity"`
	Tax           string  `json:"tax"`
	Returned      string  `json:"quantity_returned"`
	CreatedAt     string  `json:"created_at"`
	UpdatedAt     string  `json:"updated_at"`
}

type salePaymentWire struct {
	TransactionID       string  `json:"transaction_id"`
	InvoiceCode         string  `json:"invoice_code"`
	CustomerName        string  `json:"customer_name"`
	AmountPaid          string  `json:"amount_paid"`
	PaymentMethod       string  `json:"payment_method"`
	InternalPaymentNote *string `json:"internal_payment_note"`
	IssuedBy            string  `json:"issued_by"`
	PaymentAt           string  `json:"payment_at"`
	CreatedAt           string  `json:"created_at"`
	UpdatedAt           string  `json:"updated_at"`
}
