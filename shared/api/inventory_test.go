package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestExpenses covers the expense routes, outcome by outcome.
func TestExpenses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := map[string]any{"expense_type": "Rent", "expense_amount": "1200.5", "payment_method": "Bank Transfer", "created_by": "Esi"}
	rent := expenseWire{ID: 1, ExpenseType: "Rent", Amount: "1200.50", PaymentMethod: "Bank Transfer", CreatedBy: "Esi"}
	fuel := expenseWire{ID: 2, ExpenseType: "Fuel", Description: "Generator", Amount: "80.00", PaymentMethod: "Cash", CreatedBy: "Esi",
		Image: ptr("https://cdn.example.com/r/1.jpg")}

	t.Run("Add/200", func(t *testing.T) {
		r := e.post("/api/v1/expenses/add", body)
		same(t, r, rent, dataAs[expenseWire](t, r, "Expense added successfully", "expense"), noStamps)
		same(t, r, rent, dataAs[expenseWire](t, r, "Expense added successfully", "expenses"), noStamps)
		r = e.post("/api/v1/expenses/add", map[string]any{"expense_type": "Fuel", "expense_amount": 80, "payment_method": "Cash",
			"created_by": "Esi", "expense_image": "https://cdn.example.com/r/1.jpg", "expense_description": "Generator"})
		same(t, r, fuel, dataAs[expenseWire](t, r, "Expense added successfully", "expense"), noStamps)
	})
	t.Run("Add/400", func(t *testing.T) {
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
				wantRefused(t, e.post("/api/v1/expenses/add", c.body), c.field)
				wantRefused(t, e.put("/api/v1/expenses/1", c.body), c.field)
			})
		}
		if after := tableCount(t, e); after != before {
			t.Fatalf("refused requests wrote %d items", after-before)
		}
	})
	t.Run("Get/200", func(t *testing.T) {
		r := e.get("/api/v1/expenses/2")
		same(t, r, fuel, dataAs[expenseWire](t, r, "Expense found", "expense"), noStamps)
	})
	t.Run("Get/404", func(t *testing.T) {
		want(t, e.get("/api/v1/expenses/3"), 404, "Expense not found")
		want(t, e.get("/api/v1/expenses/x"), 404, "Expense not found")
		_, keyB := e.newAccount("B", "BBB")
		want(t, e.req("GET", "/api/v1/expenses/1", keyB, nil), 404, "Expense not found")
	})
	t.Run("Edit/200", func(t *testing.T) {
		r := e.put("/api/v1/expenses/1", map[string]any{"expense_type": "Rent", "expense_amount": "1300.00", "payment_method": "Cash", "created_by": "Esi"})
		edited := rent
		edited.Amount, edited.PaymentMethod = "1300.00", "Cash"
		same(t, r, edited, dataAs[expenseWire](t, r, "Expense updated successfully", "expenses"), noStamps)
	})
	t.Run("Edit/404", func(t *testing.T) {
		want(t, e.put("/api/v1/expenses/9", body), 404, "Expense not found")
	})
	t.Run("List/200", func(t *testing.T) {
		for q, n := range map[string]int{
			"": 2, "?expense_type=rent": 1, "?expense_type=Fuel": 1, "?expense_type=Food": 0,
			"?created_at=2000-01-01": 2, "?created_at=2999-01-01%2000:00:00": 0,
			"?updated_at=2999-12-31": 2, "?updated_at=2000-01-01": 0, "?expense_type=Rent&updated_at=2999-01-01": 1,
			"?created_at=2000-01-01&updated_at=2000-01-02": 0,
		} {
			wantList[expenseWire](t, e.get("/api/v1/expenses"+q), "Expenses found: %d", "expenses", n)
		}
		_, keyC := e.newAccount("C", "CCC")
		want(t, e.req("GET", "/api/v1/expenses", keyC, nil), 200, "Expenses found: 0")
	})
	t.Run("List/400", func(t *testing.T) {
		wantRefused(t, e.get("/api/v1/expenses?updated_at=soon"), "updated_at")
	})
	t.Run("401", func(t *testing.T) {
		want(t, e.req("GET", "/api/v1/expenses", "", nil), 401, "Authentication invalid")
	})
}

// TestCategories covers the category routes, outcome by outcome.
func TestCategories(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	oils := "/api/v1/inventory/categories/2"
	t.Run("Add/200", func(t *testing.T) {
		r := e.post("/api/v1/inventory/categories/add", map[string]any{"category_name": "Grains", "description": "Rice, maize"})
		same(t, r, categoryWire{ID: 1, Name: "Grains", Description: "Rice, maize"}, dataAs[categoryWire](t, r, "Category added successfully", "categories"), noStamps)
		r = e.post("/api/v1/inventory/categories/add", map[string]any{"category_name": "Oils"})
		same(t, r, categoryWire{ID: 2, Name: "Oils"}, dataAs[categoryWire](t, r, "Category added successfully", "categories"), noStamps)
	})
	t.Run("Add/400", func(t *testing.T) {
		wantRefused(t, e.post("/api/v1/inventory/categories/add", map[string]any{"category_name": ""}), "category_name")
	})
	t.Run("Add/409", func(t *testing.T) {
		want(t, e.post("/api/v1/inventory/categories/add", map[string]any{"category_name": "  grains "}), 409, "")
	})
	t.Run("Get/405", func(t *testing.T) {
		// Categories have no get route: the path is only edited.
		want(t, e.get(oils), 405, "Method not allowed")
	})
	t.Run("Edit/200", func(t *testing.T) {
		r := e.put(oils, map[string]any{"category_name": "Cooking Oils"})
		same(t, r, categoryWire{ID: 2, Name: "Cooking Oils"}, dataAs[categoryWire](t, r, "Category updated successfully", "categories"), noStamps)
		// The released name is free again (the id is the next one drawn:
		// refused adds leave gaps).
		r = e.post("/api/v1/inventory/categories/add", map[string]any{"category_name": "oils"})
		got := dataAs[categoryWire](t, r, "Category added successfully", "categories")
		if got.ID <= 2 {
			t.Errorf("%s %s: id %d, want one above 2", r.method, r.path, got.ID)
		}
		same(t, r, categoryWire{ID: got.ID, Name: "oils"}, got, noStamps)
	})
	t.Run("Edit/404", func(t *testing.T) {
		want(t, e.put("/api/v1/inventory/categories/9", map[string]any{"category_name": "x"}), 404, "Category not found")
	})
	t.Run("Edit/409", func(t *testing.T) {
		want(t, e.put(oils, map[string]any{"category_name": "GRAINS"}), 409, "")
	})
	t.Run("List/200", func(t *testing.T) {
		for q, n := range map[string]int{"": 3, "?category_name=grains": 1, "?category_name=cooking%20oils": 1, "?category_name=Oil": 0,
			"?updated_at=2999-01-01": 3, "?created_at=2999-01-01": 0} {
			wantList[categoryWire](t, e.get("/api/v1/inventory/categories"+q), "Categories found: %d", "categories", n)
		}
		_, keyB := e.newAccount("B", "BBB")
		want(t, e.req("GET", "/api/v1/inventory/categories", keyB, nil), 200, "Categories found: 0")
	})
	t.Run("List/400", func(t *testing.T) {
		wantRefused(t, e.get("/api/v1/inventory/categories?created_at=soon"), "created_at")
	})
}

// TestItems covers the item routes, outcome by outcome.
func TestItems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	want(t, e.post("/api/v1/inventory/categories/add", map[string]any{"category_name": "Grains"}), 200, "")
	want(t, e.post("/api/v1/inventory/categories/add", map[string]any{"category_name": "Oils"}), 200, "")
	body := map[string]any{"item_code": "RICE-5", "item_name": "Rice 5kg Bag", "category_id": 1, "item_price": "85.50", "unit_cost": 60,
		"quantity": "10", "minimum_qty_alert": "3", "unit": "bag", "online": 1, "warehouse_id": 2,
		"item_images": []any{map[string]any{"image_url": "https://cdn.example.com/rice.jpg"}}}
	rice := itemWire{ID: 1, ItemCode: "RICE-5", ItemName: "Rice 5kg Bag", CategoryID: 1, Unit: "bag",
		Images: []imageWire{{ID: 1, URL: "https://cdn.example.com/rice.jpg"}}, UnitCost: "60.00", ItemPrice: "85.50", PreviousPrice: "0.00",
		Quantity: "10", MinimumQtyAlert: "3", Online: 1, Status: "in-stock", WarehouseID: 2, Slug: "rice-5kg-bag"}

	t.Run("Add/200", func(t *testing.T) {
		r := e.post("/api/v1/inventory/items/add", body)
		same(t, r, rice, dataAs[itemWire](t, r, "Item added successfully", "items"), noStamps)
		// Same name, generated code: the slug is made unique.
		r = e.post("/api/v1/inventory/items/add", map[string]any{"item_name": "Rice 5kg bag", "category_id": 1, "item_price": 80})
		got := dataAs[itemWire](t, r, "Item added successfully", "items")
		if !strings.HasPrefix(got.ItemCode, "ITM-") || got.Slug != "rice-5kg-bag-"+strings.ToLower(got.ItemCode) || got.Status != "out-of-stock" {
			t.Errorf("%s %s: generated code, suffixed slug and out-of-stock expected: %+v", r.method, r.path, got)
		}
	})
	t.Run("Add/400", func(t *testing.T) {
		before := tableCount(t, e)
		wantRefused(t, e.post("/api/v1/inventory/items/add", map[string]any{"item_name": "Ghost", "category_id": 99, "item_price": 1}), "category_id")
		wantRefused(t, e.post("/api/v1/inventory/items/add", map[string]any{"item_name": "NoPrice", "category_id": 1}), "item_price")
		wantRefused(t, e.post("/api/v1/inventory/items/add", map[string]any{"item_name": "Bad", "category_id": 1, "item_price": 1, "online": 2}), "online")
		r := e.post("/api/v1/inventory/items/add", map[string]any{"item_name": "Bad", "category_id": 1, "item_price": 1,
			"item_images": []any{map[string]any{"image_url": "https://cdn.example.com/a.jpg", "alt": "x"}}})
		wantRefused(t, r, "item_images")
		if !strings.Contains(field(r, "item_images"), "unknown field(s): image.alt") {
			t.Errorf("%s %s: %s", r.method, r.path, r.raw)
		}
		r = e.post("/api/v1/inventory/items/add", map[string]any{"item_name": "Bad", "category_id": 1, "item_price": 1, "item_images": []any{"https://x.example/a.jpg"}})
		wantRefused(t, r, "item_images")
		if field(r, "item_images") != "image: must be a JSON object" {
			t.Errorf("%s %s: %s", r.method, r.path, r.raw)
		}
		if after := tableCount(t, e); after != before {
			t.Fatalf("refused adds wrote %d items", after-before)
		}
	})
	t.Run("Add/409", func(t *testing.T) {
		want(t, e.post("/api/v1/inventory/items/add", body), 409, "")
	})
	t.Run("Get/200", func(t *testing.T) {
		r := e.get("/api/v1/inventory/items/RICE-5")
		same(t, r, rice, dataAs[itemWire](t, r, "Item found", "items"), noStamps)
	})
	t.Run("Get/404", func(t *testing.T) {
		want(t, e.get("/api/v1/inventory/items/NOPE"), 404, "Item not found")
		_, keyB := e.newAccount("B", "BBB")
		want(t, e.req("GET", "/api/v1/inventory/items/RICE-5", keyB, nil), 404, "Item not found")
	})
	t.Run("Edit/200", func(t *testing.T) {
		r := e.put("/api/v1/inventory/items/RICE-5", map[string]any{"item_price": 90, "quantity": "2", "category_id": 2})
		edited := rice
		edited.ItemPrice, edited.PreviousPrice, edited.Quantity, edited.Status, edited.CategoryID = "90.00", "85.50", "2", "low-stock", 2
		same(t, r, edited, dataAs[itemWire](t, r, "Item updated successfully", "items"), noStamps)
	})
	t.Run("Edit/400", func(t *testing.T) {
		wantRefused(t, e.put("/api/v1/inventory/items/RICE-5", map[string]any{"category_id": 42}), "category_id")
		wantRefused(t, e.put("/api/v1/inventory/items/RICE-5", map[string]any{"item_code": "OTHER"}), "item_code")
	})
	t.Run("Edit/404", func(t *testing.T) {
		want(t, e.put("/api/v1/inventory/items/NOPE", map[string]any{"item_price": 1}), 404, "Item not found")
	})
	t.Run("List/200", func(t *testing.T) {
		for q, n := range map[string]int{"": 2, "?category_id=1": 1, "?category_id=2": 1, "?category_id=99": 0,
			"?updated_at=2999-01-01": 2, "?created_at=2000-01-01%2000:00:00&category_id=2": 1} {
			wantList[itemWire](t, e.get("/api/v1/inventory/items"+q), "Items found: %d", "items", n)
		}
		_, keyC := e.newAccount("C", "CCC")
		want(t, e.req("GET", "/api/v1/inventory/items", keyC, nil), 200, "Items found: 0")
	})
	t.Run("List/400", func(t *testing.T) {
		wantRefused(t, e.get("/api/v1/inventory/items?category_id=abc"), "category_id")
	})
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
	t.Parallel()
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
	t.Parallel()
	e := stockEnv(t, "5")
	var wg sync.WaitGroup
	var mu sync.Mutex
	sold := 0
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A 503 (the item's version contended past the write's retries,
			// nothing committed) is sent again, as its Retry-After asks a
			// client to: the same invoice code, so a sale committed twice
			// would be refused and fail the test.
			r := e.post("/api/v1/sales/add", stockSale(fmt.Sprintf("2000%02d", i), "1", nil))
			for try := 1; r.code == http.StatusServiceUnavailable && try < 4; try++ {
				time.Sleep(time.Duration(try) * 100 * time.Millisecond)
				r = e.post("/api/v1/sales/add", stockSale(fmt.Sprintf("2000%02d", i), "1", nil))
			}
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
