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
