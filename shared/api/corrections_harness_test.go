package api_test

// Contract tests of corrections: refunds, voids, stock
// adjustments and the stock ledger, by outcome, against DynamoDB Local.
// Each contract test runs twice, over HTTP and through the Lambda path (API
// Gateway v2 events into each route's function); the concurrency tests use
// the real HTTP server from many goroutines.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// client sends one env's requests with its key, over HTTP or, with lc set,
// as API Gateway hands them to the route's function.
type client struct {
	e  *env
	lc *lambdaCaller
}

// bothPaths runs f on a fresh env (customer 1, category 1, item SOAP with
// 10 in stock) over HTTP and through the Lambda path.
func bothPaths(t *testing.T, f func(t *testing.T, c *client)) {
	onBothPaths(t, func(t *testing.T) *env { return stockEnv(t, "10") }, f)
}

// onBothPaths runs f over HTTP and through the Lambda path, each on a fresh
// env that setup makes.
func onBothPaths(t *testing.T, setup func(t *testing.T) *env, f func(t *testing.T, c *client)) {
	for _, path := range []string{"HTTP", "Lambda"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			c := &client{e: e}
			if path == "Lambda" {
				c.lc = newLambdaCaller(t, e)
			}
			f(t, c)
		})
	}
}

// stockEnv has a customer 1, category 1 and item SOAP with qty units.
func stockEnv(t *testing.T, qty string) *env {
	t.Helper()
	e := newSaleEnv(t)
	want(t, e.post("/api/v1/inventory/categories/add", map[string]any{"category_name": "Shop"}), 200, "")
	want(t, e.post("/api/v1/inventory/items/add", map[string]any{"item_code": "SOAP", "item_name": "Soap", "category_id": 1,
		"item_price": "5.00", "quantity": qty}), 200, "")
	return e
}

func (c *client) do(t *testing.T, method, path string, body any, headers ...string) resp {
	t.Helper()
	if c.lc == nil {
		return c.e.req(method, path, c.e.key, body, headers...)
	}
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		raw = j
	}
	h := map[string]string{}
	for i := 0; i+1 < len(headers); i += 2 {
		h[headers[i]] = headers[i+1]
	}
	code, header, out := c.lc.call(method, path, c.e.key, raw, h)
	r := resp{method: method, path: path, code: code, header: header, raw: out}
	if err := json.Unmarshal(out, &r.body); err != nil {
		t.Fatalf("%s %s (Lambda): body is not JSON: %s", method, path, out)
	}
	if got, _ := r.body["status"].(float64); int(got) != code {
		t.Fatalf("%s %s (Lambda): body status %v != status %d", method, path, r.body["status"], code)
	}
	return r
}

func (c *client) get(t *testing.T, path string) resp { t.Helper(); return c.do(t, "GET", path, nil) }

func (c *client) post(t *testing.T, path string, body any, headers ...string) resp {
	t.Helper()
	return c.do(t, "POST", path, body, headers...)
}

func (c *client) put(t *testing.T, path string, body any, headers ...string) resp {
	t.Helper()
	return c.do(t, "PUT", path, body, headers...)
}

// corrSale is the body of sale code: soap units of SOAP at 5.00 (line 1)
// and one Delivery at 5.00 with no item code (line 2), paid received.
func corrSale(code string, soap int, paid string) map[string]any {
	pt := "Cash"
	if paid == "0" || paid == "0.00" {
		pt = "None"
	}
	total := fmt.Sprintf("%d.00", 5*soap+5)
	return map[string]any{"invoice_code": code, "invoice_number": code, "customer_id": 1,
		"sub_total_amount": total, "total_amount": total, "amount_paid": paid, "discount": "0",
		"invoice_type": "main", "payment_type": pt, "due_date": "2026-12-31", "issued_by": "Kwame",
		"items": []any{
			map[string]any{"item_code": "SOAP", "item_name": "Soap", "unit_price": "5.00", "quantity": strconv.Itoa(soap)},
			map[string]any{"item_name": "Delivery", "unit_price": "5.00", "quantity": "1"},
		}}
}

func refundPath(code string) string { return "/api/v1/sales/" + code + "/refunds" }
func voidPath(code string) string   { return "/api/v1/sales/" + code + "/void" }

// The new fields of a sale and its lines, over the wire types of wire_test.go
// (embedded under exported names, which cmp compares).
type (
	SaleWire     = saleWire
	SaleLineWire = saleLineWire
)

type corrSaleWire struct {
	SaleWire
	AmountRefunded string  `json:"amount_refunded"`
	VoidReason     *string `json:"void_reason"`
	VoidedAt       *string `json:"voided_at"`
}

type corrLineWire struct {
	SaleLineWire
	QuantityReturned string `json:"quantity_returned"`
}

type refundWire struct {
	RefundID     string           `json:"refund_id"`
	InvoiceCode  string           `json:"invoice_code"`
	Amount       string           `json:"amount"`
	Reason       *string          `json:"reason"`
	RefundMethod string           `json:"refund_method"`
	IssuedBy     *string          `json:"issued_by"`
	Lines        []refundLineWire `json:"lines"`
	RefundedAt   string           `json:"refunded_at"`
	CreatedAt    string           `json:"created_at"`
}

type refundLineWire struct {
	SalesItemID int     `json:"sales_item_id"`
	ItemCode    *string `json:"item_code"`
	Quantity    string  `json:"quantity"`
}

type movementWire struct {
	ID            int64   `json:"id"`
	Kind          string  `json:"kind"`
	Quantity      string  `json:"quantity"`
	QuantityAfter string  `json:"quantity_after"`
	Reason        *string `json:"reason"`
	Note          *string `json:"note"`
	InvoiceCode   *string `json:"invoice_code"`
	CreatedAt     string  `json:"created_at"`
}

var (
	refundIDRE = regexp.MustCompile(`^ref_[0-9a-f]{24}$`)
	stampRE    = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$`)
)

// errText is a failure's error text.
func errText(r resp) string { s, _ := r.body["error"].(string); return s }

// wantField fails the test unless r is 400 naming field with a message that
// contains has.
func wantField(t *testing.T, r resp, name, has string) {
	t.Helper()
	wantRefused(t, r, name)
	if !strings.Contains(field(r, name), has) {
		t.Errorf("%s %s: field %s is %q, want it to contain %q: %s", r.method, r.path, name, field(r, name), has, r.raw)
	}
}

// itemQty returns item code's quantity as GET answers it.
func itemQty(t *testing.T, c *client, code string) string {
	t.Helper()
	return dataAs[itemWire](t, c.get(t, "/api/v1/inventory/items/"+code), "Item found", "items").Quantity
}

// ledger returns every movement of item code, newest first, following the
// cursors of pages of limit.
func ledger(t *testing.T, c *client, code string, limit int) []movementWire {
	t.Helper()
	var all []movementWire
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("movements: the cursors never end")
		}
		path := fmt.Sprintf("/api/v1/inventory/items/%s/movements?limit=%d", code, limit)
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		r := c.get(t, path)
		want(t, r, 200, "")
		page := dataAs[[]movementWire](t, r, "", "movements")
		if msg := r.body["message"]; msg != fmt.Sprintf("Movements found: %d", len(page)) {
			t.Fatalf("%s: message %v for %d movements", path, msg, len(page))
		}
		if len(page) > limit {
			t.Fatalf("%s: %d movements on a page of %d", path, len(page), limit)
		}
		all = append(all, page...)
		next, _ := r.data()["next_cursor"].(string)
		if next == "" {
			return all
		}
		if len(page) == 0 {
			t.Fatalf("%s: an empty page with a next_cursor", path)
		}
		cursor = next
	}
}

// thousandths parses a decimal string the API wrote (quantities, signed
// changes, amounts) as thousandths.
func thousandths(t *testing.T, s string) int64 {
	t.Helper()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 3 {
		t.Fatalf("decimal %q: more than 3 decimals", s)
	}
	frac += strings.Repeat("0", 3-len(frac))
	w, err1 := strconv.ParseInt(whole, 10, 64)
	f, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("not a decimal: %q", s)
	}
	if neg {
		return -(w*1000 + f)
	}
	return w*1000 + f
}

// checkLedger fails the test unless item code's movements, read whole, are
// newest first with decreasing ids, each quantity_after is the running sum
// of the changes from the oldest, and they add up to the item's quantity.
func checkLedger(t *testing.T, c *client, code string) []movementWire {
	t.Helper()
	moves := ledger(t, c, code, 200)
	qty := itemQty(t, c, code)
	var sum int64
	for i := len(moves) - 1; i >= 0; i-- {
		m := moves[i]
		if i > 0 && moves[i-1].ID <= m.ID {
			t.Errorf("%s: movement ids not newest first: %d before %d", code, moves[i-1].ID, m.ID)
		}
		sum += thousandths(t, m.Quantity)
		if after := thousandths(t, m.QuantityAfter); after != sum {
			t.Errorf("%s: movement %d (%s %s) has quantity_after %s, but the movements up to it add up to %d/1000", code, m.ID, m.Kind, m.Quantity, m.QuantityAfter, sum)
		}
		if sum < 0 {
			t.Errorf("%s: stock below zero after movement %d", code, m.ID)
		}
	}
	if sum != thousandths(t, qty) {
		t.Errorf("%s: quantity %s, but its %d movements add up to %d/1000: %+v", code, qty, len(moves), sum, moves)
	}
	return moves
}
