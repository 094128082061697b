package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
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

// costBefore is cost_before.json: rows measured on the design before the
// index redesign.
type costBefore struct {
	Commit  string    `json:"commit"`
	Command string    `json:"command"`
	Rows    []costRow `json:"rows"`
}

//go:embed cost_before.json
var costBeforeJSON []byte

// saleCase is one sale size of the sales routes.
type saleCase struct {
	name     string
	customer int
	code     int // the measured sale's invoice code; 9 more follow it
	lines    []map[string]any
	sub, tot string
}

func saleCases() []saleCase {
	small := saleCase{name: "3-line sale", customer: 1, code: 300000, sub: "29.00", tot: "32.00", lines: []map[string]any{
		{"item_name": "Rice 5kg", "description": "bag", "unit_price": "10.00", "quantity": "2", "tax": "2.00"},
		{"item_name": "Salt", "description": "1 kg", "unit_price": "2.50", "quantity": "2", "tax": "1.00"},
		{"item_name": "Cooking oil", "description": "1 l bottle", "unit_price": "4.00", "quantity": "1", "tax": "0"},
	}}
	big := saleCase{name: "100-line sale", customer: 2, code: 400000, sub: "2500.00", tot: "2600.00"}
	text := strings.Repeat("Hand-woven kente strip, gold and green, 6 yards, tailored to order. ", 20)
	for i := range business.MaxSaleLines {
		big.lines = append(big.lines, map[string]any{"item_name": fmt.Sprintf("Kente %d", i+1),
			"description": fmt.Sprintf("%03d %s", i+1, text)[:1000], "unit_price": "12.50", "quantity": "2", "tax": "1.00"})
	}
	return []saleCase{small, big}
}

// cost reports the DynamoDB capacity each route's request consumes, as AWS
// bills it (see capacity.go), checked against what DynamoDB Local reports.
// It makes its own records, in an account of its own, through an API server
// whose DynamoDB client carries the meter.
func (b *bench) cost() error {
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
	a, _ := business.NewAccount("Cost Shop", fmt.Sprintf("COST%d", time.Now().UnixNano()), "GHS", "")
	acct, apiKey, err := st.CreateAccount(b.ctx, a)
	if err != nil {
		return err
	}
	benchKey := b.key
	b.key = apiKey
	defer func() { b.key = benchKey }()
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
		var body any
		if c.body != nil {
			body = c.body(0)
		}
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
	withLines, err := m.entriesWithLines(b.ctx, linesKeys)
	if err != nil {
		return err
	}
	return b.costReport(rows, withLines)
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
		var body any
		if c.body != nil {
			body = c.body(0)
		}
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

func (sc saleCase) body(code string) map[string]any {
	return map[string]any{"invoice_code": code, "invoice_number": code, "customer_id": sc.customer,
		"sub_total_amount": sc.sub, "total_amount": sc.tot, "amount_paid": "0", "payment_type": "None",
		"invoice_type": "main", "due_date": "2026-12-31", "issued_by": "Bench", "items": sc.lines}
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

// serve sends one request through h with the bench's key and returns the
// response body; anything but a 200 is an error.
func (b *bench) serve(h http.Handler, method, target string, body any) (string, error) {
	rec := b.send(h, method, target, body)
	if rec.Code != http.StatusOK {
		return "", fmt.Errorf("%s %s: %d %s", method, target, rec.Code, rec.Body.String())
	}
	return rec.Body.String(), nil
}

// entriesWithLines counts the entries of every index, for the items keys
// name, that carry an attribute named lines (at the top or in a map).
func (m *meter) entriesWithLines(ctx context.Context, keys []key) (int, error) {
	seen, n := map[string]bool{}, 0
	for _, k := range keys {
		id := m.schema.id(k.key)
		if seen[id] {
			continue
		}
		seen[id] = true
		it, err := m.images(ctx, []key{k})
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
				if m.schema.id(e) == id && hasLines(e) {
					n++
				}
			}
		}
	}
	return n, nil
}

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

func (b *bench) costReport(rows []costRow, withLines int) error {
	var before costBefore
	if err := json.Unmarshal(costBeforeJSON, &before); err != nil {
		return fmt.Errorf("cost_before.json: %w", err)
	}
	was := map[string]costRow{}
	for _, r := range before.Rows {
		was[r.Route+"|"+r.Case] = r
	}
	b.printf("## Cost per operation\n\n")
	b.printf("DynamoDB capacity each request consumes, as AWS bills it, computed for every DynamoDB call from the sizes of the items it read or wrote "+
		"(each written item read before and after the call by a separate client) with AWS's published rules: an item's size is its attribute names and values; "+
		"a write costs ceil(size / 1 KB) WCU, size being the larger of the item before and after; an index entry (table keys, index keys, projected attributes) "+
		"costs the same per write, one write when the item enters or leaves the index or a projected attribute changes, two (delete, put) when its index keys change, "+
		"none otherwise; every write in a TransactWriteItems counts twice (prepare and commit, as AWS documents for the table's items; the index writes a transaction causes "+
		"are doubled too, an upper bound), a ConditionCheck as two writes of its item; a read costs ceil(size / 4 KB) RCU per item (GetItem, BatchGetItem) "+
		"or for all a Query read together (index entries, on an index), half when eventually consistent, at least one unit. "+
		"Every call also asked DynamoDB Local for its consumed capacity (ReturnConsumedCapacity INDEXES), and the two were compared (below the table). "+
		"Requests go through the API's handler with the key cache warm, in an account of this step's own holding 10 customers, categories, items and expenses and "+
		"10 sales of each size; no Idempotency-Key; the sales routes' lines name no inventory item (no stock moves); each line of the 100-line sale has a 1000-character description. "+
		"The corrections (after the other routes, each case of the round-trips step's once) are on records of their own there: each refund the first of a paid sale of 2 stocked lines "+
		"(2 units of each of 2 items), each void of an unpaid sale of 2 lines (without items, or 2 units of each of 2 other items), the adjustment and the quantity edit on items of their own, "+
		"and the movements page of an item with %d movements.\n\n", costLedgerMoves)
	b.printf("| route | method | case | table WCU | index WCU | RCU | calls | before, at %s: table WCU / index WCU / RCU |\n|---|---|---|---|---|---|---|---|\n", before.Commit)
	var calls, agreed int
	var differ []string
	for _, r := range rows {
		prev := ""
		if p, ok := was[r.Route+"|"+r.Case]; ok {
			prev = fmt.Sprintf("%s / %s / %s", num(p.TableWCU), num(p.IndexWCU), num(p.RCU))
		}
		b.printf("| %s | %s | %s | %s | %s | %s | %d | %s |\n", r.Route, r.Method, r.Case, num(r.TableWCU), num(r.IndexWCU), num(r.RCU), len(r.calls), prev)
		for _, c := range r.calls {
			calls++
			if d := c.mismatch(); d != "" {
				differ = append(differ, fmt.Sprintf("| %s | %s | %s | %s | %s |", r.Route, r.Case, c.op, d, c.note))
			} else {
				agreed++
			}
		}
	}
	b.printf("\nBefore: every row but the 100-line ones as this step measured them at commit %s, the design before the index redesign "+
		"(infra/bench/cost_before.json holds them and the command).\n\n", before.Commit)
	b.printf("Calculator against DynamoDB Local: %d of %d DynamoDB calls agreed on every figure Local reports (the table's and each index's WCU of every write, "+
		"transactions included, and the RCU of every read).\n\n", agreed, calls)
	if len(differ) > 0 {
		b.printf("| route | case | call | figures | why |\n|---|---|---|---|---|\n%s\n\n", strings.Join(differ, "\n"))
	}
	ratio := func(route string) string {
		for _, r := range rows {
			if r.Route == route && strings.Contains(r.Case, "100-line") {
				return fmt.Sprintf("%.2f", (r.TableWCU+r.IndexWCU)/r.TableWCU)
			}
		}
		return "n/a"
	}
	b.printf("| goal | measured | target |\n|---|---|---|\n")
	b.printf("| payment edit of a 100-line sale: total WCU ÷ WCU of the base items written (transaction included) | %s | at most 1.5 |\n", ratio("edit-sale"))
	b.printf("| add of a 100-line sale: total WCU ÷ WCU of the base items written (transaction included) | %s | at most 1.5 |\n", ratio("add-sale"))
	b.printf("| index entries carrying sale lines (every index, for the items the 100-line add and edit wrote) | %d | 0 |\n\n", withLines)
	if path := os.Getenv("BENCH_COST_JSON"); path != "" {
		return writeCostBefore(path, rows)
	}
	return nil
}

// writeCostBefore saves rows but the 100-line ones for cost_before.json
// (BENCH_COST_JSON; the commit and the command are filled in by hand).
func writeCostBefore(path string, rows []costRow) error {
	out := costBefore{}
	for _, r := range rows {
		if !strings.Contains(r.Case, "100-line") {
			out.Rows = append(out.Rows, r)
		}
	}
	j, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(j, '\n'), 0o644)
}
