package api_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestExpenses(t *testing.T) {
	e := newEnv(t)
	body := map[string]any{"expense_type": "Rent", "expense_amount": "1200.5", "payment_method": "Bank Transfer", "created_by": "Esi"}
	r := e.post("/api/v1/expenses/add", body)
	want(t, r, 200, "Expense added successfully")
	x := r.data()["expense"].(map[string]any)
	if x["id"] != float64(1) || x["expense_amount"] != "1200.50" || x["expense_image"] != nil {
		t.Fatalf("%s", r.raw)
	}
	if fmt.Sprint(r.data()["expenses"]) != fmt.Sprint(x) {
		t.Fatalf("data.expenses differs from data.expense: %s", r.raw)
	}
	want(t, e.post("/api/v1/expenses/add", map[string]any{"expense_type": "Fuel", "expense_amount": 80, "payment_method": "Cash",
		"created_by": "Esi", "expense_image": "https://cdn.example.com/r/1.jpg", "expense_description": "Generator"}), 200, "")

	g := e.get("/api/v1/expenses/2")
	want(t, g, 200, "Expense found")
	if g.data()["expense"].(map[string]any)["expense_description"] != "Generator" {
		t.Fatalf("%s", g.raw)
	}
	want(t, e.get("/api/v1/expenses/3"), 404, "Expense not found")
	want(t, e.get("/api/v1/expenses/x"), 404, "Expense not found")

	r = e.put("/api/v1/expenses/1", map[string]any{"expense_type": "Rent", "expense_amount": "1300.00", "payment_method": "Cash", "created_by": "Esi"})
	want(t, r, 200, "Expense updated successfully")
	if r.data()["expenses"].(map[string]any)["expense_amount"] != "1300.00" {
		t.Fatalf("%s", r.raw)
	}
	want(t, e.put("/api/v1/expenses/9", body), 404, "Expense not found")

	before := tableCount(t, e)
	for name, c := range map[string]struct {
		body  map[string]any
		field string
	}{
		"MissingType":  {map[string]any{"expense_amount": "1", "payment_method": "Cash", "created_by": "E"}, "expense_type"},
		"BadImage":     {map[string]any{"expense_type": "x", "expense_amount": "1", "payment_method": "Cash", "created_by": "E", "expense_image": "/local/file.png"}, "expense_image"},
		"BadAmount":    {map[string]any{"expense_type": "x", "expense_amount": "1.234", "payment_method": "Cash", "created_by": "E"}, "expense_amount"},
		"BlankCreator": {map[string]any{"expense_type": "x", "expense_amount": "1", "payment_method": "Cash", "created_by": " "}, "created_by"},
		"LongType":     {map[string]any{"expense_type": strings.Repeat("x", 101), "expense_amount": "1", "payment_method": "Cash", "created_by": "E"}, "expense_type"},
		"UnknownField": {map[string]any{"expense_type": "x", "expense_amount": "1", "payment_method": "Cash", "created_by": "E", "amount": 1}, "amount"},
	} {
		t.Run(name, func(t *testing.T) {
			r := e.post("/api/v1/expenses/add", c.body)
			want(t, r, 400, "")
			if field(r, c.field) == "" {
				t.Fatalf("field %s not named: %s", c.field, r.raw)
			}
			want(t, e.put("/api/v1/expenses/1", c.body), 400, "")
		})
	}
	if after := tableCount(t, e); after != before {
		t.Fatalf("rejected requests wrote %d items", after-before)
	}

	for q, n := range map[string]int{
		"": 2, "?expense_type=rent": 1, "?expense_type=Fuel": 1, "?expense_type=Food": 0,
		"?created_at=2000-01-01": 2, "?created_at=2999-01-01%2000:00:00": 0,
		"?updated_at=2999-12-31": 2, "?updated_at=2000-01-01": 0, "?expense_type=Rent&updated_at=2999-01-01": 1,
		"?created_at=2000-01-01&updated_at=2000-01-02": 0,
	} {
		r := e.get("/api/v1/expenses" + q)
		want(t, r, 200, fmt.Sprintf("Expenses found: %d", n))
	}
	want(t, e.get("/api/v1/expenses?updated_at=soon"), 400, "")

	_, keyB := e.newAccount("B", "BBB")
	want(t, e.req("GET", "/api/v1/expenses/1", keyB, nil), 404, "Expense not found")
	want(t, e.req("GET", "/api/v1/expenses", keyB, nil), 200, "Expenses found: 0")
	want(t, e.req("GET", "/api/v1/expenses", "", nil), 401, "Authentication invalid")
}

func TestCategoriesAndItems(t *testing.T) {
	e := newEnv(t)
	r := e.post("/api/v1/inventory/categories/add", map[string]any{"category_name": "Grains", "description": "Rice, maize"})
	want(t, r, 200, "Category added successfully")
	if r.data()["categories"].(map[string]any)["id"] != float64(1) {
		t.Fatalf("%s", r.raw)
	}
	want(t, e.post("/api/v1/inventory/categories/add", map[string]any{"category_name": "  grains "}), 409, "")
	r = e.post("/api/v1/inventory/categories/add", map[string]any{"category_name": "Oils"})
	want(t, r, 200, "")
	oilsID := r.data()["categories"].(map[string]any)["id"].(float64)
	oils := fmt.Sprintf("/api/v1/inventory/categories/%v", oilsID)
	want(t, e.put(oils, map[string]any{"category_name": "GRAINS"}), 409, "")
	want(t, e.put(oils, map[string]any{"category_name": "Cooking Oils"}), 200, "Category updated successfully")
	want(t, e.post("/api/v1/inventory/categories/add", map[string]any{"category_name": "oils"}), 200, "") // released name is free
	want(t, e.put("/api/v1/inventory/categories/9", map[string]any{"category_name": "x"}), 404, "Category not found")
	want(t, e.post("/api/v1/inventory/categories/add", map[string]any{"category_name": ""}), 400, "")
	for q, n := range map[string]int{"": 3, "?category_name=grains": 1, "?category_name=cooking%20oils": 1, "?category_name=Oil": 0,
		"?updated_at=2999-01-01": 3, "?created_at=2999-01-01": 0} {
		want(t, e.get("/api/v1/inventory/categories"+q), 200, fmt.Sprintf("Categories found: %d", n))
	}

	item := map[string]any{"item_code": "RICE-5", "item_name": "Rice 5kg Bag", "category_id": 1, "item_price": "85.50", "unit_cost": 60,
		"quantity": "10", "minimum_qty_alert": "3", "unit": "bag", "online": 1, "warehouse_id": 2,
		"item_images": []any{map[string]any{"image_url": "https://cdn.example.com/rice.jpg"}}}
	r = e.post("/api/v1/inventory/items/add", item)
	want(t, r, 200, "Item added successfully")
	x := r.data()["items"].(map[string]any)
	for k, v := range map[string]any{"id": float64(1), "item_price": 85.5, "unit_cost": float64(60), "previous_price": float64(0),
		"quantity": "10", "minimum_qty_alert": "3", "status": "in-stock", "item_slug": "rice-5kg-bag", "online": float64(1), "category_id": float64(1)} {
		if x[k] != v {
			t.Errorf("%s = %#v, want %#v", k, x[k], v)
		}
	}
	if imgs := x["item_images"].([]any); len(imgs) != 1 || imgs[0].(map[string]any)["id"] != float64(1) {
		t.Fatalf("images %v", imgs)
	}
	want(t, e.post("/api/v1/inventory/items/add", item), 409, "")
	// Same name, generated code: the slug is made unique.
	r = e.post("/api/v1/inventory/items/add", map[string]any{"item_name": "Rice 5kg bag", "category_id": 1, "item_price": 80})
	want(t, r, 200, "")
	x2 := r.data()["items"].(map[string]any)
	if !strings.HasPrefix(x2["item_code"].(string), "ITM-") || x2["item_slug"] == "rice-5kg-bag" || x2["status"] != "out-of-stock" {
		t.Fatalf("%s", r.raw)
	}
	want(t, e.post("/api/v1/inventory/items/add", map[string]any{"item_name": "Ghost", "category_id": 99, "item_price": 1}), 400, "")
	want(t, e.post("/api/v1/inventory/items/add", map[string]any{"item_name": "NoPrice", "category_id": 1}), 400, "")
	want(t, e.post("/api/v1/inventory/items/add", map[string]any{"item_name": "Bad", "category_id": 1, "item_price": 1, "online": 2}), 400, "")
	r = e.post("/api/v1/inventory/items/add", map[string]any{"item_name": "Bad", "category_id": 1, "item_price": 1,
		"item_images": []any{map[string]any{"image_url": "https://cdn.example.com/a.jpg", "alt": "x"}}})
	want(t, r, 400, "")
	if !strings.Contains(field(r, "item_images"), "unknown field(s): image.alt") {
		t.Fatalf("%s", r.raw)
	}
	r = e.post("/api/v1/inventory/items/add", map[string]any{"item_name": "Bad", "category_id": 1, "item_price": 1, "item_images": []any{"https://x.example/a.jpg"}})
	want(t, r, 400, "")
	if field(r, "item_images") != "image: must be a JSON object" {
		t.Fatalf("%s", r.raw)
	}

	want(t, e.get("/api/v1/inventory/items/RICE-5"), 200, "Item found")
	want(t, e.get("/api/v1/inventory/items/NOPE"), 404, "Item not found")
	r = e.put("/api/v1/inventory/items/RICE-5", map[string]any{"item_price": 90, "quantity": "2", "category_id": oilsID})
	want(t, r, 200, "Item updated successfully")
	x = r.data()["items"].(map[string]any)
	if x["previous_price"] != 85.5 || x["item_price"] != float64(90) || x["status"] != "low-stock" || x["category_id"] != oilsID {
		t.Fatalf("%s", r.raw)
	}
	want(t, e.put("/api/v1/inventory/items/RICE-5", map[string]any{"category_id": 42}), 400, "")
	want(t, e.put("/api/v1/inventory/items/RICE-5", map[string]any{"item_code": "OTHER"}), 400, "")
	want(t, e.put("/api/v1/inventory/items/NOPE", map[string]any{"item_price": 1}), 404, "Item not found")

	oilsQ := fmt.Sprintf("category_id=%v", oilsID)
	for q, n := range map[string]int{"": 2, "?category_id=1": 1, "?" + oilsQ: 1, "?category_id=99": 0,
		"?updated_at=2999-01-01": 2, "?created_at=2000-01-01%2000:00:00&" + oilsQ: 1} {
		want(t, e.get("/api/v1/inventory/items"+q), 200, fmt.Sprintf("Items found: %d", n))
	}
	want(t, e.get("/api/v1/inventory/items?category_id=abc"), 400, "")

	_, keyB := e.newAccount("B", "BBB")
	want(t, e.req("GET", "/api/v1/inventory/items/RICE-5", keyB, nil), 404, "Item not found")
	want(t, e.req("GET", "/api/v1/inventory/items", keyB, nil), 200, "Items found: 0")
	want(t, e.req("GET", "/api/v1/inventory/categories", keyB, nil), 200, "Categories found: 0")
}

// stockEnv has a customer 1, category 1 and item SOAP with qty units.
func stockEnv(t *testing.T, qty string) *env {
	t.Helper()
	e := newSaleEnv(t)
	want(t, e.post("/api/v1/inventory/categories/add", map[string]any{"category_name": "Soap"}), 200, "")
	want(t, e.post("/api/v1/inventory/items/add", map[string]any{"item_code": "SOAP", "item_name": "Soap", "category_id": 1,
		"item_price": "5.00", "quantity": qty}), 200, "")
	return e
}

func stockSale(code, qty string, extra map[string]any) map[string]any {
	q := map[string]float64{"1": 5, "2": 10, "3": 15, "4": 20}[qty]
	b := saleBody(map[string]any{"invoice_code": code, "invoice_number": code, "discount": "0", "amount_paid": "0", "payment_type": "None",
		"sub_total_amount": fmt.Sprintf("%.2f", q), "total_amount": fmt.Sprintf("%.2f", q),
		"items": []any{map[string]any{"item_code": "SOAP", "item_name": "Soap", "unit_price": "5.00", "quantity": qty}}})
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func stockOf(t *testing.T, e *env) string {
	t.Helper()
	return e.get("/api/v1/inventory/items/SOAP").data()["items"].(map[string]any)["quantity"].(string)
}

func TestStockMovesWithSales(t *testing.T) {
	e := stockEnv(t, "5")
	want(t, e.post("/api/v1/sales/add", stockSale("100001", "2", nil)), 200, "")
	if q := stockOf(t, e); q != "3" {
		t.Fatalf("stock %s after selling 2 of 5", q)
	}
	r := e.post("/api/v1/sales/add", stockSale("100002", "4", nil))
	want(t, r, 400, "insufficient stock of item SOAP")
	if q := stockOf(t, e); q != "3" {
		t.Fatalf("refused sale moved stock: %s", q)
	}
	want(t, e.get("/api/v1/sales/100002"), 404, "Sale not found")
	want(t, e.post("/api/v1/sales/add", stockSale("100003", "1", map[string]any{
		"items": []any{map[string]any{"item_code": "NOPE", "item_name": "x", "unit_price": "5.00", "quantity": "1"}}})), 400, "")

	// Editing the line from 2 to 4 takes 2 more; back to 1 gives 3 back.
	edit := func(qty string) resp {
		return e.put("/api/v1/sales/edit/100001", stockSale("100001", qty, map[string]any{"invoice_number": "INV-100001"}))
	}
	want(t, edit("4"), 200, "")
	if q := stockOf(t, e); q != "1" {
		t.Fatalf("stock %s after raising the line to 4", q)
	}
	want(t, edit("1"), 200, "")
	if q := stockOf(t, e); q != "4" {
		t.Fatalf("stock %s after lowering the line to 1", q)
	}
	r = e.get("/api/v1/inventory/items/SOAP")
	if r.data()["items"].(map[string]any)["status"] != "in-stock" {
		t.Fatalf("%s", r.raw)
	}
}

// TestConcurrentLastUnits sells the last units of one item from many
// goroutines: stock never goes below zero and what was sold is what was taken.
func TestConcurrentLastUnits(t *testing.T) {
	e := stockEnv(t, "5")
	var wg sync.WaitGroup
	var mu sync.Mutex
	sold := 0
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.post("/api/v1/sales/add", stockSale(fmt.Sprintf("2000%02d", i), "1", nil))
			switch {
			case r.code == 200:
				mu.Lock()
				sold++
				mu.Unlock()
			case r.code == 400 && strings.Contains(r.body["error"].(string), "insufficient stock"):
			default:
				t.Errorf("sale %d: %d %s", i, r.code, r.raw)
			}
		}()
	}
	wg.Wait()
	if q := stockOf(t, e); sold != 5 || q != "0" {
		t.Fatalf("sold %d, stock left %s; want 5 and 0", sold, q)
	}
	if s := e.get("/api/v1/inventory/items/SOAP").data()["items"].(map[string]any)["status"]; s != "out-of-stock" {
		t.Fatalf("status %v", s)
	}
}
