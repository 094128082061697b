package main

// Corrections (refunds, voids, the stock ledger) change records that only
// allow so much (a sale refunds what was paid, and is voided once), so their
// requests get records of their own, made once before they are measured:
// a customer, stocked items, sales to refund and sales to void, and an item
// with a ledger of more than 100 movements. The memory step gets sales of
// its own to refund and void.

import (
	"fmt"
	"sync"
	"time"

	"bizdata/shared/business"
)

const (
	corrStockA   = "CORR-STOCK-A" // sold, returned and given back by voids
	corrStockB   = "CORR-STOCK-B"
	corrAdjust   = "CORR-ADJUST" // adjusted by the adjust-stock request
	corrCount    = "CORR-COUNT"  // counted by the edit-item request
	corrLedger   = "CORR-LEDGER" // the item whose movements are listed
	corrMoves    = 200           // movements of corrLedger: its initial and 199 adjustments (the memory step lists 200)
	corrRuns     = 8             // runs of each correction request
	refundPlain  = 700001        // a paid sale without stocked lines
	refundStock  = 700002        // a paid sale of corrRuns+2 of corrStockA
	voidPlain    = 700100        // corrRuns unpaid sales without stocked lines, from here
	voidStocked  = 700200        // corrRuns unpaid sales of corrStockA and corrStockB, from here
	refundMemory = 700003        // the memory step's paid sale of 10 of corrStockA
	refundLines  = 700004        // the memory step's paid sale of business.MaxSaleLines lines of 1 unit
	voidMemory   = 700300        // memRuns unpaid sales for the memory step, from here: by turns without and with stocked lines
	memRuns      = 7             // requests of a memory plan (see memoryCorrection)
	corrMovesMax = 20            // the page of movements listed
)

var (
	corrOnce sync.Once
	corrErr  error
)

// corrections makes the records the correction requests need, once.
func (b *bench) corrections() error {
	corrOnce.Do(func() { corrErr = b.makeCorrections() })
	return corrErr
}

func (b *bench) makeCorrections() error {
	// made adds a record and returns its id.
	made := func(path, key string, body map[string]any) (int, error) {
		_, out, err := b.request("POST", path, body)
		if err != nil {
			return 0, err
		}
		data, _ := out["data"].(map[string]any)
		rec, _ := data[key].(map[string]any)
		id, _ := rec["id"].(float64)
		if id == 0 {
			return 0, fmt.Errorf("%s answered no %s id: %v", path, key, out)
		}
		return int(id), nil
	}
	customer, err := made("/api/v1/customers/add", "customers", map[string]any{"name": "Corrections customer"})
	if err != nil {
		return err
	}
	category, err := made("/api/v1/inventory/categories/add", "categories", map[string]any{"category_name": "Corrections"})
	if err != nil {
		return err
	}
	for _, code := range []string{corrStockA, corrStockB, corrAdjust, corrCount, corrLedger} {
		if _, err := made("/api/v1/inventory/items/add", "items", map[string]any{"item_code": code, "item_name": "Corrections " + code,
			"category_id": category, "item_price": "5.00", "quantity": "100000"}); err != nil {
			return err
		}
	}
	sale := func(code int, paid string, lines []any) error {
		pt := "Cash"
		if paid == "0" {
			pt = "None"
		}
		body := map[string]any{"invoice_code": fmt.Sprint(code), "invoice_number": fmt.Sprint(code), "customer_id": customer,
			"sub_total_amount": "50.00", "total_amount": "50.00", "amount_paid": paid, "payment_type": pt,
			"invoice_type": "pos", "due_date": "2026-12-31", "items": lines}
		if paid != "0" {
			body["payment_date"] = "2026-10-01"
		}
		_, _, err := b.request("POST", "/api/v1/sales/add", body)
		return err
	}
	goods := []any{map[string]any{"item_name": "Service", "unit_price": "25.00", "quantity": "2"}}
	stocked := func(n int) []any {
		return []any{map[string]any{"item_code": corrStockA, "item_name": "Stocked goods", "unit_price": "5.00", "quantity": fmt.Sprint(n)}}
	}
	twoStocked := []any{
		map[string]any{"item_code": corrStockA, "item_name": "Stocked goods", "unit_price": "5.00", "quantity": "4"},
		map[string]any{"item_code": corrStockB, "item_name": "Other goods", "unit_price": "6.00", "quantity": "5"},
	}
	var hundred []any // 100 x 0.50
	for i := range business.MaxSaleLines {
		hundred = append(hundred, map[string]any{"item_name": fmt.Sprintf("Service %d", i+1), "unit_price": "0.50", "quantity": "1"})
	}
	for _, s := range []struct {
		code  int
		lines []any
	}{{refundPlain, goods}, {refundStock, stocked(corrRuns + 2)}, {refundMemory, stocked(10)}, {refundLines, hundred}} {
		if err := sale(s.code, "50.00", s.lines); err != nil {
			return err
		}
	}
	for i := 0; i < corrRuns; i++ {
		if err := sale(voidPlain+i, "0", goods); err != nil {
			return err
		}
		if err := sale(voidStocked+i, "0", twoStocked); err != nil {
			return err
		}
	}
	for i := 0; i < memRuns; i++ {
		lines := goods
		if i%2 == 1 {
			lines = twoStocked
		}
		if err := sale(voidMemory+i, "0", lines); err != nil {
			return err
		}
	}
	for i := 1; i < corrMoves; i++ {
		q := "3"
		if i%2 == 0 {
			q = "-2"
		}
		if _, _, err := b.request("POST", "/api/v1/inventory/items/"+corrLedger+"/adjustments",
			map[string]any{"quantity": q, "reason": "count", "note": fmt.Sprintf("bench %d", i)}); err != nil {
			return err
		}
	}
	return nil
}

// correctionCase is one kind of correction request: run i of corrRuns.
type correctionCase struct {
	function, what, method string
	path                   func(i int) string
	query                  string
	body                   func(i int) any
	target                 int // sequential round trips at most (GET: calls too)
}

func (b *bench) correctionCases() []correctionCase {
	same := func(p string) func(int) string { return func(int) string { return p } }
	refund := fmt.Sprintf("/api/v1/sales/%d/refunds", refundPlain)
	refundLine := fmt.Sprintf("/api/v1/sales/%d/refunds", refundStock)
	return []correctionCase{
		{"refund-sale", "refund without lines (money only)", "POST", same(refund), "", func(i int) any {
			return map[string]any{"amount": "1.00", "reason": "overcharged"}
		}, 2},
		{"refund-sale", "refund with a returned stocked line (1 unit back to stock)", "POST", same(refundLine), "", func(i int) any {
			return map[string]any{"amount": "5.00", "reason": "returned", "lines": []any{map[string]any{"sales_item_id": 1, "quantity": "1"}}}
		}, 2},
		{"void-sale", "void of an unpaid sale without stocked lines", "POST", func(i int) string {
			return fmt.Sprintf("/api/v1/sales/%d/void", voidPlain+i)
		}, "", func(int) any { return map[string]any{"reason": "entered twice"} }, 2},
		{"void-sale", "void of an unpaid sale of 2 stocked lines (2 items back to stock)", "POST", func(i int) string {
			return fmt.Sprintf("/api/v1/sales/%d/void", voidStocked+i)
		}, "", func(int) any { return map[string]any{"reason": "order cancelled"} }, 2},
		{"adjust-stock", "adjustment (+1, received)", "POST", same("/api/v1/inventory/items/" + corrAdjust + "/adjustments"), "", func(int) any {
			return map[string]any{"quantity": "1", "reason": "received"}
		}, 2},
		{"edit-item", "item edit of quantity (a count: an adjustment movement)", "PUT", same("/api/v1/inventory/items/" + corrCount), "", func(i int) any {
			return map[string]any{"quantity": fmt.Sprint(5000 + i)}
		}, 2},
		{"list-movements", fmt.Sprintf("movements list, a page of %d of an item's %d", corrMovesMax, corrMoves), "GET",
			same("/api/v1/inventory/items/" + corrLedger + "/movements"), fmt.Sprintf("limit=%d", corrMovesMax), nil, 1},
	}
}

// correctionTrips reports the round trips of the correction requests, in a
// table of their own with the target beside each and whether it is met; it
// marks their functions covered.
func (b *bench) correctionTrips(covered map[string]bool) error {
	if err := b.corrections(); err != nil {
		return err
	}
	b.printf("### Corrections\n\nRefunds, voids and the stock ledger, each case on records of its own made beforehand (a sale to refund %d times; %d sales to void, one a run; an item with %d movements), through the Lambda function with the API key cache warm; every POST carries a new Idempotency-Key, as a client that retries safely sends it (the key's record is read beside the sale or item, in parallel). Each case made %d times, the typical run reported. Target (issue 21): refund and void at most 2 sequential; the movements list 1 read; adjustments and item edits, as every other write, at most 2 sequential. A refund or void that gives stock back reads the sale, then the items it moves (a movement's quantity_after is the quantity the write leaves, so each item moved is read at its version), then writes.\n\n",
		corrRuns, corrRuns, corrMoves, corrRuns)
	b.printf(tripsTableHead)
	stamp := time.Now().UnixNano()
	for n, c := range b.correctionCases() {
		covered[c.function] = true
		typical, differed, err := b.typicalRun(corrRuns, func(i int) error {
			body := bodyAt(c.body, i)
			var headers map[string]string
			if c.method == "POST" {
				headers = map[string]string{"idempotency-key": fmt.Sprintf("bench-%d-%d-%d", stamp, n, i)}
			}
			_, err := b.invokeWith(c.function, c.method, c.path(i), c.query, body, headers)
			return err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", c.what, err)
		}
		target, met := fmt.Sprintf("<= %d", c.target), typical.depth <= c.target
		if c.method == "GET" {
			target, met = fmt.Sprintf("%d read", c.target), typical.calls <= c.target && typical.depth <= c.target
		}
		b.printTripRow(c.function, c.what, c.method, typical, differed, target, verdict(met))
	}
	b.printf("\n")
	return nil
}

// ledgerRead returns the items read and returned by one page of the
// movements list (the route's Query, as list-movements makes it).
func (b *bench) ledgerRead() (read, returned int, err error) {
	if err := b.corrections(); err != nil {
		return 0, 0, err
	}
	p, err := b.store.ListMovements(b.ctx, b.acct.ID, corrLedger, corrMovesMax, "")
	if err != nil {
		return 0, 0, err
	}
	if len(p.Items) != corrMovesMax || p.Next == "" {
		return 0, 0, fmt.Errorf("movements of %s: %d returned (next %q), want a full page of %d and more", corrLedger, len(p.Items), p.Next, corrMovesMax)
	}
	return p.Scanned, len(p.Items), nil
}
