package dashboard

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// inventoryStock makes a category named category and, in it, one item per
// code with its quantity (alert level 3, price 5.00), through the API, and
// returns the category's id.
func inventoryStock(o *owner, category string, quantities map[string]string) int64 {
	o.t.Helper()
	var cat struct {
		Category struct {
			ID int64 `json:"id"`
		} `json:"categories"`
	}
	if err := json.Unmarshal(o.recordsAPI(http.MethodPost, "/api/v1/inventory/categories/add", map[string]any{"category_name": category}), &cat); err != nil {
		o.t.Fatal(err)
	}
	for code, qty := range quantities {
		o.recordsAPI(http.MethodPost, "/api/v1/inventory/items/add", map[string]any{"item_code": code, "item_name": "Item " + code,
			"category_id": cat.Category.ID, "item_price": "5.00", "quantity": qty, "minimum_qty_alert": "3", "unit": "pcs"})
	}
	return cat.Category.ID
}

// inventoryQuantity is the item's quantity as get-item reports it.
func inventoryQuantity(o *owner, code string) string {
	o.t.Helper()
	var got struct {
		Item struct {
			Quantity string `json:"quantity"`
		} `json:"items"`
	}
	if err := json.Unmarshal(o.recordsAPI(http.MethodGet, "/api/v1/inventory/items/"+code, nil), &got); err != nil {
		o.t.Fatal(err)
	}
	return got.Item.Quantity
}

// TestInventoryPage: items made through the API appear with their category,
// price, quantity and stock status in words, counted by status, a page at a
// time (the category filter kept); a bad date is the API's message, 400.
func TestInventoryPage(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("RECINV1")
	drinks := inventoryStock(o, "Drinks", map[string]string{"COLA": "10", "MALT": "2", "WATER": "0"})
	inventoryStock(o, "Snacks", map[string]string{"CHIPS": "7"})

	st, page, _ := o.get("/dashboard/inventory")
	if st != http.StatusOK {
		t.Fatalf("inventory: %d", st)
	}
	mustContain(t, page, "Item COLA", "Drinks", "Snacks", "GHS 5.00", "10 pcs",
		`<span class="status in_stock">In stock</span>`, `<span class="status low_stock">Low stock</span>`,
		`<span class="status out_of_stock">Out of stock</span>`, `href="/dashboard/inventory/MALT"`)

	first := "/dashboard/inventory?limit=2&category_id=" + strconv.FormatInt(drinks, 10)
	pages := recordsWalk(t, o, first, "Next page of items")
	if len(pages) != 2 {
		t.Fatalf("drinks on %d pages, want 2", len(pages))
	}
	all := strings.Join(pages, "")
	mustContain(t, all, "Item COLA", "Item MALT", "Item WATER")
	if strings.Contains(all, "Item CHIPS") {
		t.Error("the category filter was lost on a page")
	}

	st, page, _ = o.get("/dashboard/inventory?updated_at=soon")
	if st != http.StatusBadRequest {
		t.Errorf("bad date: %d, want 400", st)
	}
	mustContain(t, page, "must be a date YYYY-MM-DD or a datetime", `id="filter-updated_at-err"`)
}

// TestAdjustStockForm: an adjustment through the form shows as a movement
// and changes get-item's quantity; one that would take stock below zero is
// refused with the API's message beside the field, 400, changing nothing;
// the movements page a page at a time.
func TestAdjustStockForm(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("RECINV2")
	inventoryStock(o, "Drinks", map[string]string{"COLA": "10"})

	st, page, path := o.post("/dashboard/inventory/COLA/adjustments",
		url.Values{"quantity": {"-4"}, "reason": {"damaged"}, "note": {"dropped crate"}})
	if st != http.StatusOK || path != "/dashboard/inventory/COLA" {
		t.Fatalf("adjust: %d at %s", st, path)
	}
	mustContain(t, page, "Stock adjusted: 6 pcs in stock now", "Adjustment", "-4", "damaged", "dropped crate")
	if q := inventoryQuantity(o, "COLA"); q != "6" {
		t.Errorf("quantity after the adjustment: %s, want 6", q)
	}
	movements := o.recordsCount("/api/v1/inventory/items/COLA/movements", "movements")

	st, page, _ = o.post("/dashboard/inventory/COLA/adjustments", url.Values{"quantity": {"-7"}, "reason": {"lost"}})
	if st != http.StatusBadRequest {
		t.Errorf("below zero: %d, want 400", st)
	}
	mustContain(t, page, "would take the stock below zero: 6 in stock", `id="quantity-err"`, `aria-invalid="true"`, `value="-7"`)
	if q := inventoryQuantity(o, "COLA"); q != "6" {
		t.Errorf("a refused adjustment changed the quantity to %s", q)
	}
	if n := o.recordsCount("/api/v1/inventory/items/COLA/movements", "movements"); n != movements {
		t.Errorf("a refused adjustment added a movement: %d, was %d", n, movements)
	}

	for _, change := range []string{"5", "-1", "2"} {
		o.recordsAPI(http.MethodPost, "/api/v1/inventory/items/COLA/adjustments", map[string]any{"quantity": change, "reason": "count"})
	}
	pages := recordsWalk(t, o, "/dashboard/inventory/COLA?limit=2", "Older stock movements")
	if want := (movements + 3 + 1) / 2; len(pages) != want {
		t.Errorf("movements on %d pages, want %d", len(pages), want)
	}

	if st, _, _ := o.get("/dashboard/inventory/NOSUCH"); st != http.StatusNotFound {
		t.Errorf("unknown item: %d, want 404", st)
	}
}
