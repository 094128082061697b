package main

// The cost step: the DynamoDB capacity each route's request consumes, on
// records of its own, through a server whose client carries the meter.

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// costRow is one row of the cost table: what one request consumed.
type costRow struct {
	Route    string  `json:"route"`
	Method   string  `json:"method"`
	Case     string  `json:"case"`
	TableWCU float64 `json:"table_wcu"`
	IndexWCU float64 `json:"index_wcu"`
	RCU      float64 `json:"rcu"`
	calls    []metered
}

// costPerOperation reports the DynamoDB capacity each route's request consumes, as AWS
// bills it (see capacity.go), checked against what DynamoDB Local reports.
// It makes its own records, in an account of its own, through an API server
// whose DynamoDB client carries the meter.
func (b *bench) costPerOperation() error {
	plain, err := app.NewDynamoDB(b.ctx, b.cfg.Endpoint)
	if err != nil {
		return err
	}
	m := newMeter(store.TableDefinition(b.cfg.TableName), plain)
	st, err := app.NewStore(b.ctx, b.cfg, m.option)
	if err != nil {
		return err
	}
	h := api.NewServer(st, b.quiet, time.Hour).Handler(api.Routes)
	acct, apiKey, err := createAccount(b.ctx, st, "Cost Shop", fmt.Sprintf("COST%d", time.Now().UnixNano()))
	if err != nil {
		return err
	}
	defer b.actAs(apiKey)()
	if err := b.costSetup(h, st, acct.ID); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	measure := func(route, method, kase, target string, body any) (costRow, error) {
		m.start()
		res, err := b.serve(h, method, target, body)
		row := costRow{Route: route, Method: method, Case: kase, calls: m.stop()}
		if err != nil {
			return row, err
		}
		if after := afterCall[route]; after != nil {
			after(b, res)
		}
		for _, c := range row.calls {
			if c.err != nil {
				return row, fmt.Errorf("%s %s: %s: %w", route, kase, c.op, c.err)
			}
			row.TableWCU += c.calc.table
			row.IndexWCU += c.calc.indexTotal()
			row.RCU += c.calc.read
		}
		return row, nil
	}

	// The sales routes, for each size: add, payment edit, get, list.
	sales := map[string][]costRow{}
	var linesKeys []key
	for _, sc := range saleCases() {
		code := fmt.Sprint(sc.code)
		add, err := measure("add-sale", "POST", sc.name, "/api/v1/sales/add", sc.body(code))
		if err != nil {
			return err
		}
		for i := 1; i < 10; i++ {
			if _, err := b.serve(h, "POST", "/api/v1/sales/add", sc.body(fmt.Sprint(sc.code+i))); err != nil {
				return err
			}
		}
		edit, err := measure("edit-sale", "PUT", "payment edit (draft -> partial) of a "+sc.name, "/api/v1/sales/edit/"+code,
			map[string]any{"invoice_code": code, "invoice_number": code, "customer_id": sc.customer,
				"sub_total_amount": sc.sub, "total_amount": sc.tot, "amount_paid": "10.00", "payment_type": "Cash"})
		if err != nil {
			return err
		}
		get, err := measure("get-sale", "GET", sc.name+" with its payment", "/api/v1/sales/"+code, nil)
		if err != nil {
			return err
		}
		list, err := measure("list-sales", "GET", "page of 10 "+sc.name+"s (customer_id filter)",
			fmt.Sprintf("/api/v1/sales?customer_id=%d&limit=10", sc.customer), nil)
		if err != nil {
			return err
		}
		for _, r := range []costRow{add, edit, get, list} {
			sales[r.Route] = append(sales[r.Route], r)
		}
		if len(sc.lines) == business.MaxSaleLines {
			for _, c := range append(add.calls, edit.calls...) {
				linesKeys = append(linesKeys, c.written...)
			}
		}
	}
	// Every route, in the bench's order; the sales routes with both sizes.
	var rows []costRow
	for _, c := range b.benchCalls() {
		if r, ok := sales[c.function]; ok {
			rows = append(rows, r...)
			continue
		}
		body := bodyAt(c.body, 0)
		target := c.path
		if c.query != "" {
			target += "?" + c.query
		}
		r, err := measure(c.function, c.method, "`"+target+"`", target, body)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}
	corr, err := b.costCorrections(h, measure)
	if err != nil {
		return fmt.Errorf("corrections: %w", err)
	}
	rows = append(rows, corr...)
	inv, err := b.costInvoices(measure)
	if err != nil {
		return fmt.Errorf("invoices: %w", err)
	}
	rows = append(rows, inv...)
	withLines, err := m.entriesWith(b.ctx, linesKeys, hasLines)
	if err != nil {
		return err
	}
	withBody, err := m.entriesWith(b.ctx, linesKeys, hasEventBody)
	if err != nil {
		return err
	}
	return b.costReport(rows, withLines, withBody)
}

// Records of the cost step's corrections: the sales (invoice codes from
// costRefund) and items they use.
const (
	costRefund      = 500000 // 2 paid sales of 2 stocked lines, each refunded once
	costVoid        = 500002 // an unpaid sale without stocked lines, then one of 2 stocked lines
	costAdjustItem  = "ITEM-00004"
	costCountItem   = "ITEM-00005"
	costLedgerItem  = "ITEM-00003"
	costLedgerMoves = 30 // movements of costLedgerItem: its initial and 29 adjustments
)

// costCorrections measures each of the round-trips step's correction cases
// once, on records of its own in the cost step's account: each refund the
// first of a paid sale of 2 stocked lines (ITEM-00001 and ITEM-00002, 2
// each), each void of an unpaid sale of 2 lines (unstocked, or of 2 units
// of ITEM-00008 and ITEM-00009), the adjustment and the count on items of
// their own, and a page of movements of an item with costLedgerMoves.
func (b *bench) costCorrections(h http.Handler, measure func(route, method, kase, target string, body any) (costRow, error)) ([]costRow, error) {
	stocked := func(a, b int) []any {
		return []any{
			map[string]any{"item_code": fmt.Sprintf("ITEM-%05d", a), "item_name": fmt.Sprintf("Item %d", a), "unit_price": "12.50", "quantity": "2"},
			map[string]any{"item_code": fmt.Sprintf("ITEM-%05d", b), "item_name": fmt.Sprintf("Item %d", b), "unit_price": "12.50", "quantity": "2"},
		}
	}
	plain := []any{map[string]any{"item_name": "Service", "unit_price": "25.00", "quantity": "2"}}
	for _, s := range []struct {
		code  int
		paid  bool
		lines []any
	}{{costRefund, true, stocked(1, 2)}, {costRefund + 1, true, stocked(1, 2)}, {costVoid, false, plain}, {costVoid + 1, false, stocked(8, 9)}} {
		code := fmt.Sprint(s.code)
		body := map[string]any{"invoice_code": code, "invoice_number": code, "customer_id": 1, "sub_total_amount": "50.00", "total_amount": "50.00",
			"amount_paid": "0", "payment_type": "None", "invoice_type": "pos", "due_date": "2026-12-31", "items": s.lines}
		if s.paid {
			body["amount_paid"], body["payment_type"], body["payment_date"] = "50.00", "Cash", "2026-10-01"
		}
		if _, err := b.serve(h, "POST", "/api/v1/sales/add", body); err != nil {
			return nil, err
		}
	}
	for i := 1; i < costLedgerMoves; i++ {
		q := "3"
		if i%2 == 0 {
			q = "-2"
		}
		if _, err := b.serve(h, "POST", "/api/v1/inventory/items/"+costLedgerItem+"/adjustments", map[string]any{"quantity": q, "reason": "count"}); err != nil {
			return nil, err
		}
	}
	// An item's updated_at (whole seconds) keys it in IndexUpperBound: a
	// write in the second of the item's last one moves no index entry, and
	// costs 2 WCU less per item moved than one made later, as corrections
	// are. So the measured requests come a second after the setup, and each
	// moves items no other one moves (the refund ITEM-00001, the void
	// ITEM-00008 and ITEM-00009).
	time.Sleep(time.Second)
	// The target of each function's cases, in correctionCases' order.
	targets := map[string][]string{
		"refund-sale":    {fmt.Sprintf("/api/v1/sales/%d/refunds", costRefund), fmt.Sprintf("/api/v1/sales/%d/refunds", costRefund+1)},
		"void-sale":      {fmt.Sprintf("/api/v1/sales/%d/void", costVoid), fmt.Sprintf("/api/v1/sales/%d/void", costVoid+1)},
		"adjust-stock":   {"/api/v1/inventory/items/" + costAdjustItem + "/adjustments"},
		"edit-item":      {"/api/v1/inventory/items/" + costCountItem},
		"list-movements": {"/api/v1/inventory/items/" + costLedgerItem + "/movements"},
	}
	var rows []costRow
	for _, c := range b.correctionCases() {
		if len(targets[c.function]) == 0 {
			return nil, fmt.Errorf("%s (%s) has no record in the cost step", c.function, c.what)
		}
		target := targets[c.function][0]
		targets[c.function] = targets[c.function][1:]
		if c.query != "" {
			target += "?" + c.query
		}
		body := bodyAt(c.body, 0)
		kase := c.what
		if c.function == "list-movements" { // the round-trips step's item has corrMoves
			kase = fmt.Sprintf("movements list, a page of %d of an item's %d", corrMovesMax, costLedgerMoves)
		}
		r, err := measure(c.function, c.method, kase, target, body)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// costSetup makes what the bench's requests name: customers 1-10 (1 buys
// the 3-line sales, 2 the 100-line ones), categories 1-10, items ITEM-00001
// to ITEM-00010, expenses 1-10 and the delivery txn_bench.
func (b *bench) costSetup(h http.Handler, st *store.Store, account string) error {
	for i := 1; i <= 10; i++ {
		for _, r := range []struct {
			path string
			body map[string]any
		}{
			{"/api/v1/customers/add", map[string]any{"name": fmt.Sprintf("Customer %d", i), "phone": "0201234567"}},
			{"/api/v1/inventory/categories/add", map[string]any{"category_name": fmt.Sprintf("Category %d", i)}},
			{"/api/v1/inventory/items/add", map[string]any{"item_code": fmt.Sprintf("ITEM-%05d", i), "item_name": fmt.Sprintf("Item %d", i),
				"category_id": i, "item_price": "12.50", "quantity": "1000"}},
			{"/api/v1/expenses/add", map[string]any{"expense_type": expenseTypes[i%len(expenseTypes)], "expense_amount": "40.00",
				"payment_method": "Cash", "created_by": "Bench"}},
		} {
			if _, err := b.serve(h, "POST", r.path, r.body); err != nil {
				return err
			}
		}
	}
	now := time.Now().UTC()
	_, err := st.CreateDelivery(b.ctx, business.Delivery{AccountID: account, TransactionID: "txn_bench", WebhookID: "msg_txn_bench",
		Payload: []byte(`{"amount":"1.00"}`), State: business.DeliveryDelivered, NextAt: now, CreatedAt: now})
	return err
}

// entriesWith counts the entries of every index, for the items keys name,
// that carry what has looks for.
func (m *meter) entriesWith(ctx context.Context, keys []key, has func(item) bool) (int, error) {
	seen, n := map[string]bool{}, 0
	for _, k := range keys {
		id := m.schema.id(k.key)
		if seen[id] {
			continue
		}
		seen[id] = true
		it, err := m.readImages(ctx, []key{k})
		if err != nil {
			return 0, err
		}
		for _, g := range m.schema.indexes {
			if it[0] == nil || m.schema.entry(g, it[0]) == nil {
				continue
			}
			out, err := m.plain.Query(ctx, &dynamodb.QueryInput{TableName: &k.table, IndexName: aws.String(g.name),
				KeyConditionExpression:    aws.String("#p = :p AND #s = :s"),
				ExpressionAttributeNames:  map[string]string{"#p": g.keys[0], "#s": g.keys[1]},
				ExpressionAttributeValues: item{":p": it[0][g.keys[0]], ":s": it[0][g.keys[1]]}})
			if err != nil {
				return 0, err
			}
			for _, e := range out.Items {
				if m.schema.id(e) == id && has(e) {
					n++
				}
			}
		}
	}
	return n, nil
}

// hasLines reports whether it has an attribute named lines (at the top or
// in a map).
func hasLines(it item) bool {
	for name, v := range it {
		if name == "lines" {
			return true
		}
		if m, ok := v.(*types.AttributeValueMemberM); ok && hasLines(m.Value) {
			return true
		}
	}
	return false
}

// hasEventBody reports whether it has an event's JSON (as it is or
// deflated).
func hasEventBody(it item) bool { return it["body"] != nil || it["body_z"] != nil }
