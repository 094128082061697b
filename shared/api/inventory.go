package api

import (
	"fmt"
	"net/http"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/store"
	"bizdata/shared/wire"
)

type categoryRequest struct {
	Name        Opt[string] `json:"category_name"`
	Description Opt[string] `json:"description"`
}

// categoryKind is how the API addresses and shows inventory categories.
var categoryKind = kind[int64, business.Category]{
	noun: "Category", nouns: "Categories", plural: "categories", one: "categories",
	key:     byID("Category not found"),
	version: func(c business.Category) int64 { return c.Version },
	json:    func(c business.Category) any { return wire.NewCategory(c) },
}

func (req categoryRequest) apply(c *business.Category) error {
	setText(&c.Name, req.Name)
	setText(&c.Description, req.Description)
	return c.Validate()
}

func listCategories(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	q := parseList(r, "category_name", "created_at", "updated_at")
	f := store.CategoryFilter{Name: q.text("category_name", 100), CreatedFrom: q.lowerBound("created_at"), UpdatedTo: q.upperBound("updated_at")}
	return listRecords(w, r, acct, categoryKind, q, f, s.store.ListCategories)
}

func addCategory(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	return addRecord(s, w, r, acct, categoryKind, applyToNew(decodeJSON[categoryRequest]), s.store.CreateCategory)
}

func editCategory(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	return editRecord(w, r, acct, categoryKind, decodeJSON[categoryRequest], s.store.UpdateCategory)
}

// Flag is the online flag: 0/1 or false/true.
type Flag bool

// UnmarshalJSON accepts 0, 1, false and true.
func (f *Flag) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "0", "false":
		*f = false
	case "1", "true":
		*f = true
	default:
		return business.Errorf(business.EINVALID, "must be 0 or 1")
	}
	return nil
}

// imageRequest is one of item_images: {"image_url": "https://..."}.
type imageRequest struct {
	URL string
}

// UnmarshalJSON decodes an image as strictly as a request body: unknown
// fields are refused and image_url is required.
func (i *imageRequest) UnmarshalJSON(b []byte) error {
	var raw struct {
		URL Opt[string] `json:"image_url"`
	}
	if err := decodeObject(b, &raw, "image."); err != nil {
		return err
	}
	if !hasValue(raw.URL) {
		return business.Errorf(business.EINVALID, "each image must be an object with an image_url")
	}
	i.URL = raw.URL.V
	return nil
}

type itemRequest struct {
	ItemCode        Opt[Code]           `json:"item_code"`
	ItemName        Opt[string]         `json:"item_name"`
	Images          Opt[[]imageRequest] `json:"item_images"`
	CategoryID      Opt[Int]            `json:"category_id"`
	Unit            Opt[string]         `json:"unit"`
	Description     Opt[string]         `json:"description"`
	UnitCost        Opt[money.Amount]   `json:"unit_cost"`
	ItemPrice       Opt[money.Amount]   `json:"item_price"`
	Quantity        Opt[money.Quantity] `json:"quantity"`
	MinimumQtyAlert Opt[money.Quantity] `json:"minimum_qty_alert"`
	Online          Opt[Flag]           `json:"online"`
	Barcode         Opt[string]         `json:"barcode"`
	SKU             Opt[string]         `json:"sku"`
	WarehouseID     Opt[Int]            `json:"warehouse_id"`
	Location        Opt[string]         `json:"item_location"`
}

// apply copies the fields the request lists onto x, then validates it. An
// item_code, if sent, must be x's own: it cannot be changed.
func (req itemRequest) apply(x *business.Item) error {
	if req.ItemCode.Set && string(req.ItemCode.V) != x.ItemCode {
		return business.FieldErrors{"item_code": fmt.Sprintf("must equal the item code in the path (%s); an item code cannot be changed", x.ItemCode)}.Err()
	}
	setText(&x.ItemName, req.ItemName)
	setText(&x.Unit, req.Unit)
	setText(&x.Description, req.Description)
	setText(&x.Barcode, req.Barcode)
	setText(&x.SKU, req.SKU)
	setText(&x.Location, req.Location)
	if req.Images.Set {
		x.Images = nil
		for i, img := range req.Images.V {
			x.Images = append(x.Images, business.ItemImage{ID: int64(i + 1), URL: strings.TrimSpace(img.URL)})
		}
	}
	x.CategoryID = int64(req.CategoryID.Value(Int(x.CategoryID)))
	x.UnitCost = req.UnitCost.Value(x.UnitCost)
	x.ItemPrice = req.ItemPrice.Value(x.ItemPrice)
	x.Quantity = req.Quantity.Value(x.Quantity)
	x.MinimumQtyAlert = req.MinimumQtyAlert.Value(x.MinimumQtyAlert)
	x.Online = bool(req.Online.Value(Flag(x.Online)))
	if req.WarehouseID.Set {
		x.WarehouseID = int64(req.WarehouseID.V)
	}
	return x.Validate()
}

// itemKind is how the API addresses and shows inventory items.
var itemKind = kind[string, business.Item]{
	noun: "Item", nouns: "Items", plural: "items", one: "items",
	key: func(r *http.Request) (string, error) {
		return pathCode(r, "item_code", business.ValidItemCode, "Item not found")
	},
	version: func(x business.Item) int64 { return x.Version },
	json:    func(x business.Item) any { return wire.NewItem(x) },
}

func listItems(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	q := parseList(r, "category_id", "created_at", "updated_at")
	f := store.ItemFilter{CategoryID: q.id("category_id"), CreatedFrom: q.lowerBound("created_at"), UpdatedTo: q.upperBound("updated_at")}
	return listRecords(w, r, acct, itemKind, q, f, s.store.ListItems)
}

func getItem(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	return getRecord(w, r, acct, itemKind, s.store.FindItemByCode)
}

func addItem(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	return addRecord(s, w, r, acct, itemKind, toNewItem, s.store.CreateItem)
}

// toNewItem reads and validates an add-item body; without an item_code, one
// is generated (and drawn again by the store on a collision).
func toNewItem(body []byte) (store.NewItem, error) {
	var n store.NewItem
	req, err := decodeJSON[itemRequest](body)
	if err != nil {
		return n, err
	}
	fe := business.FieldErrors{}
	requireFields(fe, map[string]bool{"item_name": hasValue(req.ItemName), "category_id": hasValue(req.CategoryID), "item_price": hasValue(req.ItemPrice)})
	if err := fe.Err(); err != nil {
		return n, err
	}
	n.CodeGenerated = !hasValue(req.ItemCode)
	n.Item.ItemCode = business.NewItemCode()
	if !n.CodeGenerated {
		n.Item.ItemCode = string(req.ItemCode.V)
	}
	req.ItemCode = Opt[Code]{} // set just above; apply's check is for edits
	return n, req.apply(&n.Item)
}

func editItem(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	return editRecord(w, r, acct, itemKind, decodeJSON[itemRequest], s.store.UpdateItem)
}
