package main

import (
	"bytes"
	"cmp"
	"compress/flate"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
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
	words := rand.New(rand.NewPCG(100, 1000)) // the same descriptions every run
	for i := range business.MaxSaleLines {
		big.lines = append(big.lines, map[string]any{"item_name": fmt.Sprintf("Kente %d", i+1),
			"description": description(words, 1000), "unit_price": "12.50", "quantity": "2", "tax": "1.00"})
	}
	return []saleCase{small, big}
}

// description returns n characters of text as a shop writes it: sentences
// of words drawn by r from descriptionWords, with a few quantities, so that
// it compresses as such text does (repeated text would shrink far more).
func description(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		words := 6 + r.IntN(10)
		for w := range words {
			word := descriptionWords[r.IntN(len(descriptionWords))]
			switch {
			case w == 0:
				word = strings.ToUpper(word[:1]) + word[1:]
			case r.IntN(12) == 0:
				word = fmt.Sprintf("%d %s", 1+r.IntN(250), descriptionUnits[r.IntN(len(descriptionUnits))])
			case w < words-1 && r.IntN(9) == 0:
				word += ","
			}
			b.WriteString(word)
			if w < words-1 {
				b.WriteByte(' ')
			}
		}
		b.WriteString(". ")
	}
	text := strings.TrimRight(b.String()[:n-1], " ,.")
	return text + strings.Repeat(".", n-len(text)) // n characters, the last sentence ended
}

var descriptionUnits = []string{"kg", "g", "l", "ml", "cm", "mm", "m", "yards", "pieces", "pairs", "packs", "sheets", "rolls", "bags", "boxes", "sets"}

// descriptionWords are the words of the 100-line sale's descriptions.
var descriptionWords = strings.Fields(`
	hand woven kente strip gold green red black yellow blue white orange purple brown grey silver cream maroon navy
	cotton silk wool linen polyester rayon leather suede canvas denim velvet lace batik wax print adinkra smock fugu
	dress shirt blouse skirt trousers shorts jacket coat scarf headwrap cap hat sandals shoes slippers belt bag purse
	wallet necklace bracelet earrings ring beads bangle anklet pendant brooch tie bow tailored fitted loose long short
	sleeve sleeveless collar button zip pocket lining hem seam stitch embroidered beaded pleated gathered draped wrapped
	traditional modern classic casual formal ceremonial wedding funeral festival church office school party weekend
	holiday market durable soft smooth rough light heavy thick thin warm cool breathable washable colourfast handmade
	locally sourced imported premium standard economy deluxe large medium small extra size pattern stripe check floral
	geometric plain dyed bleached natural organic recycled bamboo cane raffia straw clay wood carved polished painted
	glazed bowl plate cup jug pot basket mat stool chair table shelf frame mirror lamp candle soap shea butter cocoa
	palm oil coconut groundnut honey pepper ginger garlic onion tomato plantain cassava yam maize rice beans millet
	sorghum flour sugar salt tea coffee milk juice water bottle sachet carton crate sack tin jar tube packet bundle
	pair set dozen piece roll sheet length width height weight colour finish quality delivery pickup order stock
	available limited edition new arrival best seller gift wrapped boxed labelled sealed fresh dried smoked roasted
	ground whole sliced chopped mixed assorted spicy sweet mild rich fragrant scented unscented gentle strong quick
	easy simple elegant bold bright vivid muted pastel deep rich matching contrasting border trim fringe tassel cord
	strap handle lid base edge corner front back side inner outer upper lower left right double single triple layer
	for with and the of in on from by to each per every our your this that customer tailor weaver artisan workshop
	Kumasi Accra Bonwire Tamale Ho Cape Coast Volta Ashanti Northern region village town city family cooperative
	guaranteed inspected tested approved certified repaired replaced returned exchanged measured cut sewn pressed
`)

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

func (b *bench) costReport(rows []costRow, withLines, withBody int) error {
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
		"10 sales of each size; no Idempotency-Key; the sales routes' lines name no inventory item (no stock moves); each line of the 100-line sale has a 1000-character description, "+
		"sentences of words drawn (by a seeded generator, the same every run) from %d shop and product words with a few quantities, as varied as a shop's own text. "+
		"The corrections (after the other routes, each case of the round-trips step's once) are on records of their own there: each refund the first of a paid sale of 2 stocked lines "+
		"(2 units of each of 2 items), each void of an unpaid sale of 2 lines (without items, or 2 units of each of 2 other items), the adjustment and the quantity edit on items of their own, "+
		"and the movements page of an item with %d movements.\n\n", len(descriptionWords), costLedgerMoves)
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
	row := func(route, kase string) costRow {
		for _, r := range rows {
			if r.Route == route && r.Case == kase {
				return r
			}
		}
		return costRow{}
	}
	met := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "**no**"
	}
	sale := func(n string) (costRow, costRow) {
		return row("add-sale", n), row("edit-sale", "payment edit (draft -> partial) of a "+n)
	}
	add3, edit3 := sale("3-line sale")
	calc3 := add3.TableWCU + add3.IndexWCU + edit3.TableWCU + edit3.IndexWCU
	local3, unreported := 0.0, 0
	for _, c := range append(add3.calls, edit3.calls...) {
		local3 += c.local.table + c.local.indexTotal()
		if c.written != nil && c.calc.indexTotal() > 0 && !c.localIndexes {
			unreported++
		}
	}
	localNote := ""
	if unreported > 0 {
		localNote = fmt.Sprintf(" (%d writes without Local's figures per index: their index WCU not counted)", unreported)
	}
	add100, edit100 := sale("100-line sale")
	b.printf("| goal | measured | target | met |\n|---|---|---|---|\n")
	b.printf("| a typical sale, 3-line add + one payment edit of it: table / index WCU (total), AWS's rules | %s / %s (%s) | at most 60 | %s |\n",
		num(add3.TableWCU+edit3.TableWCU), num(add3.IndexWCU+edit3.IndexWCU), num(calc3), met(calc3 <= 60))
	b.printf("| a typical sale, 3-line add + one payment edit of it: WCU by DynamoDB Local's consumed capacity (table and indexes)%s | %s | at most 50 | %s |\n",
		localNote, num(local3), met(local3 <= 50))
	for _, r := range []costRow{edit100, add100} {
		what := "payment edit of a 100-line sale"
		if r.Route == "add-sale" {
			what = "add of a 100-line sale"
		}
		base := r.baseWCU()
		ratio := (r.TableWCU + r.IndexWCU) / base
		b.printf("| %s: total WCU ÷ table WCU of the sale item and its event items (transaction included): (%s + %s) ÷ %s | %.2f | at most 1.5 | %s |\n",
			what, num(r.TableWCU), num(r.IndexWCU), num(base), ratio, met(ratio <= 1.5))
		name, most := r.largestIndex()
		b.printf("| %s: largest index WCU of that request (%s) | %s | at most 4 per index | %s |\n", what, name, num(most), met(most <= 4))
	}
	b.printf("| index entries carrying sale lines (every index, for the items the 100-line add and edit wrote) | %d | 0 | %s |\n", withLines, met(withLines == 0))
	b.printf("| index entries carrying an event body (every index, for the items the 100-line add and edit wrote) | %d | 0 | %s |\n\n", withBody, met(withBody == 0))
	b.itemWrites([]costRow{add3, edit3})
	b.eventSizes([]costRow{row("add-customer", "`/api/v1/customers/add`"), add3, edit3, add100, edit100})
	if path := os.Getenv("BENCH_COST_JSON"); path != "" {
		return writeCostBefore(path, rows)
	}
	return nil
}

// baseWCU is the table WCU of the sale item and the event items r wrote
// (twice, for a transaction).
func (r costRow) baseWCU() float64 {
	t := 0.0
	for _, c := range r.calls {
		for _, w := range c.items {
			if typ := stringOf(w.image["type"]); typ == "sale" || typ == "event" {
				t += w.cost.table
			}
		}
	}
	return t
}

// largestIndex returns the index r wrote most to, and its WCU.
func (r costRow) largestIndex() (string, float64) {
	per := map[string]float64{}
	for _, c := range r.calls {
		for name, u := range c.calc.index {
			per[name] += u
		}
	}
	name, most := "none", 0.0
	for _, n := range slices.Sorted(maps.Keys(per)) {
		if per[n] > most {
			name, most = n, per[n]
		}
	}
	return name, most
}

func stringOf(v types.AttributeValue) string {
	if s, ok := v.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// eventTypeOf returns the type of an event item (in its view).
func eventTypeOf(it item) string {
	_, t, _ := store.EventFromImage(it)
	return t
}

// itemWrites reports, item by item, what rows' requests wrote and what
// each write cost by AWS's rules.
func (b *bench) itemWrites(rows []costRow) {
	b.printf("The typical sale's writes item by item, by AWS's rules (a transaction's counted twice; an index's WCU per index the item entered, left, moved in or changed in):\n\n")
	b.printf("| request | call | item | table WCU | index WCU |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		for _, c := range r.calls {
			for _, w := range c.items {
				typ := stringOf(w.image["type"])
				if typ == "event" {
					typ += " " + eventTypeOf(w.image)
				}
				var per []string
				for _, n := range slices.Sorted(maps.Keys(w.cost.index)) {
					per = append(per, fmt.Sprintf("%s %s", n, num(w.cost.index[n])))
				}
				b.printf("| %s %s | %s | %s (%d bytes) | %s | %s |\n", r.Route, r.Case, c.op, cmp.Or(typ, "?"), itemSize(w.image), num(w.cost.table),
					cmp.Or(strings.Join(per, ", "), "0"))
			}
		}
	}
	b.printf("\n")
}

// eventSizes reports the event items rows' requests wrote, as read back
// from the table after each request: the event's JSON and what the item
// stores of it (the JSON, or deflated when that is smaller).
func (b *bench) eventSizes(rows []costRow) {
	b.printf("Event items as stored, read back from the table after each request: the event's JSON, and the attribute that holds it " +
		"(`body`, the JSON; `body_z`, deflated, for JSON of at least 512 bytes that deflating makes smaller); the item's size and what writing it cost, by AWS's rules.\n\n")
	b.printf("| request | event | JSON (bytes) | as stored (bytes) | item (bytes) | table WCU (transaction included) | index WCU |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		for _, c := range r.calls {
			for _, w := range c.items {
				if stringOf(w.image["type"]) != "event" {
					continue
				}
				n, stored := eventBodySizes(w.image)
				b.printf("| %s %s | %s | %d | %s | %d | %s | %s |\n", r.Route, r.Case, eventTypeOf(w.image), n, stored,
					itemSize(w.image), num(w.cost.table), num(w.cost.indexTotal()))
			}
		}
	}
	b.printf("\n")
}

// eventBodySizes returns the bytes of the JSON an event item holds, and
// what it stores: "`body` n" or "`body_z` n (p% of the JSON)".
func eventBodySizes(it item) (int, string) {
	if z, ok := it["body_z"].(*types.AttributeValueMemberB); ok {
		j, err := io.ReadAll(flate.NewReader(bytes.NewReader(z.Value)))
		if err != nil {
			return 0, fmt.Sprintf("`body_z` %d (does not inflate: %v)", len(z.Value), err)
		}
		return len(j), fmt.Sprintf("`body_z` %d (%.0f%% of the JSON)", len(z.Value), 100*float64(len(z.Value))/float64(len(j)))
	}
	j := stringOf(it["body"])
	return len(j), fmt.Sprintf("`body` %d", len(j))
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
