package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func TestAuth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cases := []struct {
		name, path, header, want string
	}{
		{"SalesFamilyMissing", "/api/v1/user/authenticate", "", "Unauthorized: Missing Bearer Token"},
		{"SalesFamilyMalformed", "/api/v1/user/authenticate", "Basic abc", "Unauthorized: Missing Bearer Token"},
		{"SalesFamilyEmptyBearer", "/api/v1/user/authenticate", "Bearer ", "Unauthorized: Missing Bearer Token"},
		{"OtherFamilyMissing", "/api/v1/customers", "", "Authentication invalid"},
		{"OtherFamilyMalformed", "/api/v1/customers", "Token xyz", "Authentication invalid"},
		{"WrongKeySales", "/api/v1/user/authenticate", "Bearer bk_live_nope", "Unauthorized: Invalid API Key"},
		{"WrongKeyOther", "/api/v1/customers", "Bearer bk_live_nope", "Unauthorized: Invalid API Key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.req("GET", c.path, "", nil, "Authorization", c.header)
			want(t, r, 401, c.want)
		})
	}
	t.Run("OK", func(t *testing.T) {
		r := e.get("/api/v1/user/authenticate")
		want(t, r, 200, "Authenticated")
		acct := r.data()["account"].(map[string]any)
		if acct["id"] != e.acct.ID || acct["business_code"] != "KOFI01" {
			t.Fatalf("account %v", acct)
		}
	})
}

func TestKeyRotation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	newKey, err := e.store.RotateKey(context.Background(), e.acct.ID, nil, e.acct.Key.ID)
	if err != nil {
		t.Fatal(err)
	}
	want(t, e.req("GET", "/api/v1/user/authenticate", e.key, nil), 401, "Unauthorized: Invalid API Key")
	want(t, e.req("GET", "/api/v1/user/authenticate", newKey, nil), 200, "Authenticated")
	if strings.HasPrefix(newKey, "bk_live_") == false || len(newKey) < 40 {
		t.Fatalf("key %q lacks prefix or entropy", newKey)
	}
}

func TestRoutingErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	want(t, e.get("/api/v1/nope"), 404, "Route not found")
	want(t, e.get("/"), 404, "Route not found")
	r := e.req("DELETE", "/api/v1/customers/1", e.key, nil)
	want(t, r, 405, "Method not allowed")
	if r.header.Get("Allow") != "GET, PUT" {
		t.Fatalf("Allow %q", r.header.Get("Allow"))
	}
	r = e.req("DELETE", "/api/v1/customers/add", e.key, nil)
	want(t, r, 405, "Method not allowed")
	if r.header.Get("Allow") != "POST" {
		t.Fatalf("Allow %q", r.header.Get("Allow"))
	}
}

// TestCustomers covers the customer routes, outcome by outcome.
func TestCustomers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.post("/api/v1/customers/add", map[string]any{"name": "  Ama Mensah ", "email": "ama@example.com", "phone": "+233201234567"})
	ama := customerWire{ID: 1, Name: "Ama Mensah", Email: "ama@example.com", Phone: "+233201234567"}
	same(t, r, ama, dataAs[customerWire](t, r, "Customer added successfully", "customers"), noStamps)

	t.Run("Add/200", func(t *testing.T) {
		r := e.post("/api/v1/customers/add", map[string]any{"name": "Yaw"})
		got := dataAs[customerWire](t, r, "Customer added successfully", "customers")
		same(t, r, customerWire{ID: 2, Name: "Yaw"}, got, noStamps)
		if got.CreatedAt == "" || got.CreatedAt != got.UpdatedAt {
			t.Errorf("%s %s: created_at %q, updated_at %q: want both set, equal", r.method, r.path, got.CreatedAt, got.UpdatedAt)
		}
	})
	t.Run("Add/400", func(t *testing.T) {
		before := tableCount(t, e)
		wantRefused(t, e.post("/api/v1/customers/add", map[string]any{"name": " ", "email": "not-an-email"}), "name", "email")
		wantRefused(t, e.post("/api/v1/customers/add", map[string]any{"name": "x", "nmae": "y"}), "nmae")
		if after := tableCount(t, e); after != before {
			t.Fatalf("refused adds wrote %d items", after-before)
		}
	})
	t.Run("Get/200", func(t *testing.T) {
		r := e.get("/api/v1/customers/1")
		same(t, r, ama, dataAs[customerWire](t, r, "Customer found", "customers"), noStamps)
		if r.header.Get("ETag") != `"v1"` {
			t.Errorf("%s %s: ETag %q, want \"v1\"", r.method, r.path, r.header.Get("ETag"))
		}
	})
	t.Run("Get/404", func(t *testing.T) {
		want(t, e.get("/api/v1/customers/99"), 404, "Customer not found")
		want(t, e.get("/api/v1/customers/abc"), 404, "Customer not found")
	})
	t.Run("Edit/200", func(t *testing.T) {
		r := e.put("/api/v1/customers/1", map[string]any{"phone": "0201111111", "email": nil})
		edited := ama
		edited.Phone, edited.Email = "0201111111", ""
		same(t, r, edited, dataAs[customerWire](t, r, "Customer updated successfully", "customers"), noStamps)
		if r.header.Get("ETag") != `"v2"` {
			t.Errorf("%s %s: ETag %q, want \"v2\"", r.method, r.path, r.header.Get("ETag"))
		}
		r = e.put("/api/v1/customers/1", map[string]any{"name": "Ama M."}, "If-Match", `"v2"`)
		edited.Name = "Ama M."
		same(t, r, edited, dataAs[customerWire](t, r, "Customer updated successfully", "customers"), noStamps)
	})
	t.Run("Edit/400", func(t *testing.T) {
		before := e.get("/api/v1/customers/1").raw
		wantRefused(t, e.put("/api/v1/customers/1", map[string]any{"name": "  ", "email": "not-an-email"}), "name", "email")
		if after := e.get("/api/v1/customers/1").raw; string(after) != string(before) {
			t.Fatalf("refused edit changed the record:\n%s\n%s", before, after)
		}
	})
	t.Run("Edit/404", func(t *testing.T) {
		want(t, e.put("/api/v1/customers/99", map[string]any{"name": "x"}), 404, "Customer not found")
	})
	t.Run("Edit/412", func(t *testing.T) {
		want(t, e.put("/api/v1/customers/1", map[string]any{"name": "A"}, "If-Match", `"v1"`), 412, "")
	})
	t.Run("List/200", func(t *testing.T) {
		r := e.get("/api/v1/customers")
		got := dataAs[[]customerWire](t, r, "Customers found: 2", "customers")
		if len(got) != 2 || got[0].Name != "Yaw" || got[1].Name != "Ama M." {
			t.Errorf("%s %s: want Yaw then Ama M. (newest first): %s", r.method, r.path, r.raw)
		}
	})
	t.Run("List/400", func(t *testing.T) {
		wantRefused(t, e.get("/api/v1/customers?created_at=yesterday"), "created_at")
	})
}

func TestConcurrentCustomerEditsAllApply(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	want(t, e.post("/api/v1/customers/add", map[string]any{"name": "Base"}), 200, "")
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.put("/api/v1/customers/1", map[string]any{"address": fmt.Sprintf("addr %d", i)})
			if r.code != 200 {
				t.Errorf("edit %d: %d %s", i, r.code, r.raw)
			}
		}()
	}
	wg.Wait()
	// Ten successful version-guarded writes on version 1 leave version 11.
	if got := e.get("/api/v1/customers/1").header.Get("ETag"); got != `"v11"` {
		t.Fatalf("ETag %s after 10 concurrent edits, want \"v11\"", got)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cases := []struct {
		name   string
		body   any
		hdr    []string
		code   int
		errHas string
	}{
		{"NotJSON", "{name:", nil, 400, "not valid JSON"},
		{"Empty", "", nil, 400, "not valid JSON"},
		{"Array", `[{"name":"x"}]`, nil, 400, "must be a JSON object"},
		{"Null", `null`, nil, 400, "must be a JSON object"},
		{"Trailing", `{"name":"x"} {"name":"y"}`, nil, 400, "nothing after it"},
		{"UnknownField", `{"name":"x","nmae":"y"}`, nil, 400, "unknown field(s): nmae"},
		{"WrongType", `{"name":42}`, nil, 400, "name: must be a string"},
		{"Blank", `{"name":"   "}`, nil, 400, "name: is required"},
		{"TooLong", map[string]string{"name": strings.Repeat("x", 201)}, nil, 400, "at most 200"},
		{"TextPlain", `{"name":"x"}`, []string{"Content-Type", "text/plain"}, 415, "Content-Type must be application/json"},
		{"NoContentType", `{"name":"x"}`, []string{"Content-Type", ""}, 415, "Content-Type must be application/json"},
		{"TooLarge", `{"name":"` + strings.Repeat("x", 1<<20) + `"}`, nil, 413, "at most 1 MiB"},
		{"BadIdempotencyKey", `{"name":"x"}`, []string{"Idempotency-Key", "has space"}, 400, "Idempotency-Key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.post("/api/v1/customers/add", c.body, c.hdr...)
			want(t, r, c.code, "")
			if msg, _ := r.body["error"].(string); !strings.Contains(msg, c.errHas) {
				t.Fatalf("error %q does not contain %q", msg, c.errHas)
			}
		})
	}
	t.Run("NothingWritten", func(t *testing.T) {
		r := e.get("/api/v1/customers")
		want(t, r, 200, "Customers found: 0")
	})
	t.Run("ListParams", func(t *testing.T) {
		for q, fieldName := range map[string]string{
			"?limit=0":                    "limit",
			"?limit=201":                  "limit",
			"?limit=x":                    "limit",
			"?colour=red":                 "colour",
			"?created_at=yesterday":       "created_at",
			"?created_at=2024-02-30":      "created_at",
			"?cursor=abc":                 "cursor",
			"?cursor=eyJQSyI6IngifQ.AAAA": "cursor",
		} {
			wantRefused(t, e.get("/api/v1/customers"+q), fieldName)
		}
	})
}

func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	want(t, e.post("/api/v1/customers/add", map[string]any{"name": "Only A's"}), 200, "")
	_, keyB := e.newAccount("Other Shop", "OTHER1")
	want(t, e.req("GET", "/api/v1/customers/1", keyB, nil), 404, "Customer not found")
	want(t, e.req("PUT", "/api/v1/customers/1", keyB, map[string]any{"name": "stolen"}), 404, "Customer not found")
	r := e.req("GET", "/api/v1/customers", keyB, nil)
	want(t, r, 200, "Customers found: 0")
	// B's first customer gets id 1 of its own, and A's record is untouched.
	r = e.req("POST", "/api/v1/customers/add", keyB, map[string]any{"name": "B's"})
	if r.data()["customers"].(map[string]any)["id"] != float64(1) {
		t.Fatalf("B's first id: %s", r.raw)
	}
	if e.get("/api/v1/customers/1").data()["customers"].(map[string]any)["name"] != "Only A's" {
		t.Fatal("A's customer changed")
	}
	// A cursor from A's list does not page B's.
	for i := 0; i < 2; i++ {
		e.post("/api/v1/customers/add", map[string]any{"name": "more"})
	}
	cur := e.get("/api/v1/customers?limit=1").data()["next_cursor"].(string)
	want(t, e.req("GET", "/api/v1/customers?cursor="+cur, keyB, nil), 400, "")
}

func TestPagination(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 23
	for i := 0; i < n; i++ {
		want(t, e.post("/api/v1/customers/add", map[string]any{"name": fmt.Sprintf("c%d", i)}), 200, "")
	}
	seen := map[float64]bool{}
	cursor := ""
	pages := 0
	last := float64(n + 1)
	for {
		path := "/api/v1/customers?limit=5"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		r := e.get(path)
		want(t, r, 200, "")
		pages++
		list := r.data()["customers"].([]any)
		if want := fmt.Sprintf("Customers found: %d", len(list)); r.body["message"] != want {
			t.Fatalf("message %v, want %s", r.body["message"], want)
		}
		for _, c := range list {
			id := c.(map[string]any)["id"].(float64)
			if seen[id] {
				t.Fatalf("id %v seen twice", id)
			}
			if id >= last {
				t.Fatalf("not newest first: %v after %v", id, last)
			}
			last = id
			seen[id] = true
		}
		next := r.data()["next_cursor"]
		if next == nil {
			break
		}
		cursor = next.(string)
	}
	if len(seen) != n || pages != 5 {
		t.Fatalf("saw %d customers in %d pages, want %d in 5", len(seen), pages, n)
	}
	// A page that ends exactly at the last record has no next cursor.
	r := e.get("/api/v1/customers?limit=23")
	if len(r.data()["customers"].([]any)) != 23 || r.data()["next_cursor"] != nil {
		t.Fatalf("full page: %s", r.raw)
	}
}

func TestIdempotency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := map[string]any{"name": "Once"}
	first := e.post("/api/v1/customers/add", body, "Idempotency-Key", "k-1")
	want(t, first, 200, "Customer added successfully")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.post("/api/v1/customers/add", body, "Idempotency-Key", "k-1")
			if r.code != 200 || string(r.raw) != string(first.raw) {
				t.Errorf("replay %d: %d %s", i, r.code, r.raw)
			}
		}()
	}
	wg.Wait()
	want(t, e.post("/api/v1/customers/add", map[string]any{"name": "Other"}, "Idempotency-Key", "k-1"), http.StatusConflict, "")
	want(t, e.get("/api/v1/customers"), 200, "Customers found: 1")
}

func TestCreatedAtFilter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	want(t, e.post("/api/v1/customers/add", map[string]any{"name": "a"}), 200, "")
	want(t, e.get("/api/v1/customers?created_at=2000-01-01+00:00:00"), 200, "Customers found: 1")
	want(t, e.get("/api/v1/customers?created_at=2000-01-01%201:2:3"), 200, "Customers found: 1")
	want(t, e.get("/api/v1/customers?created_at=2999-01-01"), 200, "Customers found: 0")
}
