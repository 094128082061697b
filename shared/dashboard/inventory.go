package dashboard

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"bizdata/shared/business"
)

// inventoryItem is an item as the inventory pages show it.
type inventoryItem struct {
	ItemCode        string      `json:"item_code"`
	ItemName        string      `json:"item_name"`
	CategoryID      int64       `json:"category_id"`
	Unit            string      `json:"unit"`
	Description     string      `json:"description"`
	UnitCost        json.Number `json:"unit_cost"`
	ItemPrice       json.Number `json:"item_price"`
	Quantity        string      `json:"quantity"`
	MinimumQtyAlert string      `json:"minimum_qty_alert"`
	Status          string      `json:"status"`
	SKU             string      `json:"sku"`
	Barcode         string      `json:"barcode"`
	Location        string      `json:"item_location"`
	UpdatedAt       string      `json:"updated_at"`
	// Category is the category's name, looked up from list-categories
	// (items carry only its id).
	Category string `json:"-"`
}

// inventoryStatusText is how a person reads the API's stock statuses (out
// of stock at 0, low at or below the item's minimum_qty_alert).
var inventoryStatusText = map[string]string{
	business.StockIn:  "In stock",
	business.StockLow: "Low stock",
	business.StockOut: "Out of stock",
}

// StatusText is the item's stock status in words: status is shown as text,
// never by colour alone.
func (x inventoryItem) StatusText() string {
	if t, ok := inventoryStatusText[x.Status]; ok {
		return t
	}
	return x.Status
}

// StatusClass is the stylesheet's class of the status ("in-stock" is
// status in_stock).
func (x inventoryItem) StatusClass() string { return strings.ReplaceAll(x.Status, "-", "_") }

// inventoryMovement is one line of an item's stock ledger.
type inventoryMovement struct {
	Kind          string  `json:"kind"`
	Quantity      string  `json:"quantity"`
	QuantityAfter string  `json:"quantity_after"`
	Reason        *string `json:"reason"`
	Note          *string `json:"note"`
	InvoiceCode   *string `json:"invoice_code"`
	CreatedAt     string  `json:"created_at"`
}

// inventoryKindText is how a person reads a movement's kind.
var inventoryKindText = map[string]string{
	business.MoveInitial:    "Opening stock",
	business.MoveSale:       "Sale",
	business.MoveSaleEdit:   "Sale edited",
	business.MoveReturn:     "Returned in a refund",
	business.MoveVoid:       "Sale voided",
	business.MoveAdjustment: "Adjustment",
}

// KindText is the movement's kind in words.
func (m inventoryMovement) KindText() string {
	if t, ok := inventoryKindText[m.Kind]; ok {
		return t
	}
	return m.Kind
}

// inventoryCounts is report-inventory's count of items per stock status.
type inventoryCounts struct {
	In  int `json:"in-stock"`
	Low int `json:"low-stock"`
	Out int `json:"out-of-stock"`
}

// inventoryCategory is one choice of the category filter.
type inventoryCategory struct {
	ID   int64  `json:"id"`
	Name string `json:"category_name"`
}

// inventoryData is the inventory page: the stock counts, the categories
// (for the filter and to name each item's) and one page of items.
type inventoryData struct {
	recordsPaging
	Counts     inventoryCounts
	Categories []inventoryCategory
	Items      []inventoryItem
}

// inventoryCategories returns the account's categories (the first page of
// list-categories at its largest size), to name items' categories; an item
// whose category is beyond it shows the category's id.
func (s *Server) inventoryCategories(r *http.Request, v *visit) ([]inventoryCategory, error) {
	data, err := s.api.Call(r.Context(), v.acct, "list-categories", nil, url.Values{"limit": {"200"}}, nil, "")
	if err != nil {
		return nil, err
	}
	var list struct {
		Categories []inventoryCategory `json:"categories"`
	}
	if err := decodeRecords(data, &list); err != nil {
		return nil, err
	}
	return list.Categories, nil
}

// inventoryCategoryName is the name of category id among cats, or its id.
func inventoryCategoryName(cats []inventoryCategory, id int64) string {
	for _, c := range cats {
		if c.ID == id {
			return c.Name
		}
	}
	return "Category " + strconv.FormatInt(id, 10)
}

// inventoryPage lists the items with their stock status, filtered by
// category and dates as list-items allows, under the counts of items in
// stock, low and out that report-inventory keeps (as the last applied
// change left them: one read, where the report applies what waits first).
func inventoryPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	d := inventoryData{recordsPaging: recordsPaging{Query: recordsQuery(r, "category_id", "created_at", "updated_at")}}
	var err error
	if d.Counts.In, d.Counts.Low, d.Counts.Out, err = s.store.StockCounts(r.Context(), v.acct.ID); err != nil {
		return err
	}
	if d.Categories, err = s.inventoryCategories(r, v); err != nil {
		return err
	}
	var list struct {
		Items []inventoryItem `json:"items"`
	}
	if err := s.callRecordsList(&w, r, v, "list-items", nil, &d.recordsPaging, &list); err != nil {
		return err
	}
	for i := range list.Items {
		list.Items[i].Category = inventoryCategoryName(d.Categories, list.Items[i].CategoryID)
	}
	d.Items = list.Items
	return s.render(w, r, v, "inventory", "Inventory", "inventory", d)
}

// itemData is an item's page: the item, one page of its stock movements and
// the adjustment form's reasons and idempotency key.
type itemData struct {
	recordsPaging
	Item      inventoryItem
	Movements []inventoryMovement
	Reasons   []string
	Idem      string
}

// itemPage shows one item, its stock movements (newest first, paged) and
// the form to adjust its stock.
func itemPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	code := r.PathValue("item_code")
	params := map[string]string{"item_code": code}
	data, err := s.api.Call(r.Context(), v.acct, "get-item", params, nil, nil, "")
	if err != nil {
		return err
	}
	var got struct {
		Item inventoryItem `json:"items"`
	}
	if err := decodeRecords(data, &got); err != nil {
		return err
	}
	cats, err := s.inventoryCategories(r, v)
	if err != nil {
		return err
	}
	got.Item.Category = inventoryCategoryName(cats, got.Item.CategoryID)
	d := itemData{recordsPaging: recordsPaging{Query: recordsQuery(r)}, Item: got.Item,
		Reasons: business.AdjustmentReasons, Idem: recordsIdemKey()}
	var list struct {
		Movements []inventoryMovement `json:"movements"`
	}
	if err := s.callRecordsList(&w, r, v, "list-movements", params, &d.recordsPaging, &list); err != nil {
		return err
	}
	d.Movements = list.Movements
	return s.render(w, r, v, "item", got.Item.ItemName, "inventory", d)
}

// adjustStock changes the item's stock by the posted signed quantity, for
// the posted reason, through adjust-stock (which refuses stock below zero),
// once per form drawn (its idem key).
func adjustStock(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	code := r.PathValue("item_code")
	body := recordsFormBody(r.PostForm, "quantity", "reason", "note")
	data, err := s.api.Call(r.Context(), v.acct, "adjust-stock", map[string]string{"item_code": code}, nil, body, r.PostForm.Get("idem"))
	if err != nil {
		return err
	}
	var moved struct {
		Item inventoryItem `json:"items"`
	}
	if err := decodeRecords(data, &moved); err != nil {
		return err
	}
	notice := "Stock adjusted: " + moved.Item.Quantity + " " + moved.Item.Unit + " in stock now"
	return s.done(w, r, "/dashboard/inventory/"+url.PathEscape(code), strings.Join(strings.Fields(notice), " "))
}
