package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/wire"
)

// inventoryItem is an item as the inventory pages show it: the API's, with
// its category's name, looked up from list-categories (items carry only
// its id).
type inventoryItem struct {
	wire.Item
	Category string
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

// inventoryKindText is how a person reads a movement's kind.
var inventoryKindText = map[string]string{
	business.MoveInitial:    "Opening stock",
	business.MoveSale:       "Sale",
	business.MoveSaleEdit:   "Sale edited",
	business.MoveReturn:     "Returned in a refund",
	business.MoveVoid:       "Sale voided",
	business.MoveAdjustment: "Adjustment",
}

func init() { funcs["stockKind"] = inventoryKindName }

// inventoryKindName is a movement's kind in words.
func inventoryKindName(kind string) string {
	if t, ok := inventoryKindText[kind]; ok {
		return t
	}
	return kind
}

// inventoryCounts is the count of items per stock status that
// report-inventory keeps.
type inventoryCounts struct{ In, Low, Out int }

// inventoryData is the inventory page: the stock counts, the categories
// (for the filter and to name each item's) and one page of items.
type inventoryData struct {
	recordsPaging
	Counts     inventoryCounts
	Categories []wire.Category
	Items      []inventoryItem
}

// inventoryCategories returns the account's categories (the first page of
// list-categories at its largest size), to name items' categories; an item
// whose category is beyond it shows the category's id.
func (s *Server) inventoryCategories(r *http.Request, v *visit) ([]wire.Category, error) {
	page, err := s.api.ListCategories(r.Context(), v.acct, url.Values{"limit": {"200"}})
	return page.Items, err
}

// inventoryCategoryName is the name of category id among cats, or its id.
func inventoryCategoryName(cats []wire.Category, id int64) string {
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
	items, err := recordsList(&w, r, v, &d.recordsPaging, s.api.ListItems)
	if err != nil {
		return err
	}
	for _, x := range items {
		d.Items = append(d.Items, inventoryItem{Item: x, Category: inventoryCategoryName(d.Categories, x.CategoryID)})
	}
	return s.render(w, r, v, "inventory", "Inventory", "inventory", d)
}

// itemData is an item's page: the item, one page of its stock movements and
// the adjustment form's reasons and idempotency key.
type itemData struct {
	recordsPaging
	Item      inventoryItem
	Movements []wire.Movement
	Reasons   []string
	Idem      string
}

// itemPage shows one item, its stock movements (newest first, paged) and
// the form to adjust its stock.
func itemPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	code := r.PathValue("item_code")
	x, err := s.api.GetItem(r.Context(), v.acct, code)
	if err != nil {
		return err
	}
	cats, err := s.inventoryCategories(r, v)
	if err != nil {
		return err
	}
	d := itemData{recordsPaging: recordsPaging{Query: recordsQuery(r)}, Item: inventoryItem{Item: x, Category: inventoryCategoryName(cats, x.CategoryID)},
		Reasons: business.AdjustmentReasons, Idem: recordsIdemKey()}
	movements := func(ctx context.Context, acct business.Account, q url.Values) (listPage[wire.Movement], error) {
		return s.api.ListMovements(ctx, acct, code, q)
	}
	if d.Movements, err = recordsList(&w, r, v, &d.recordsPaging, movements); err != nil {
		return err
	}
	return s.render(w, r, v, "item", x.ItemName, "inventory", d)
}

// adjustStock changes the item's stock by the posted signed quantity, for
// the posted reason, through adjust-stock (which refuses stock below zero),
// once per form drawn (its idem key).
func adjustStock(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	code := r.PathValue("item_code")
	body := recordsFormBody(r.PostForm, "quantity", "reason", "note")
	moved, err := s.api.AdjustStock(r.Context(), v.acct, code, body, r.PostForm.Get("idem"))
	if err != nil {
		return err
	}
	notice := "Stock adjusted: " + moved.Quantity.String() + " " + moved.Unit + " in stock now"
	return s.done(w, r, "/dashboard/inventory/"+url.PathEscape(code), strings.Join(strings.Fields(notice), " "))
}
