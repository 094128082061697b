package main

// The cost step's section: the table of routes, the goals and the writes
// item by item.

import (
	"bytes"
	"cmp"
	"compress/flate"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"bizdata/shared/store"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// costBefore is cost_before.json: rows measured on the design before the
// index redesign.
type costBefore struct {
	Commit  string    `json:"commit"`
	Command string    `json:"command"`
	Rows    []costRow `json:"rows"`
}

//go:embed cost_before.json
var costBeforeJSON []byte

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
		"and the movements page of an item with %d movements. "+
		"The invoice rows (last) are on a 1-line sale of their own there, due in 30 days: its add unpaid (which schedules its next notice, one item) and the same sale's add paid in full (none), "+
		"edits of the unpaid one that set its reminder_date and move it (each a new schedule item; the one left is dropped by the scheduler, not deleted), a payment edit that moves no notice, "+
		"then its invoice link made, replaced (the old link's lookup item deleted) and revoked.\n\n", len(descriptionWords), costLedgerMoves)
	b.printf("| route | method | case | table WCU | index WCU | RCU | calls | before, at %s: table WCU / index WCU / RCU |\n|---|---|---|---|---|---|---|---|\n", before.Commit)
	var calls, agreed int
	var differ []string
	for _, r := range rows {
		prev := ""
		if p, ok := was[r.Route+"|"+r.Case]; ok {
			prev = fmt.Sprintf("%s / %s / %s", plainNumber(p.TableWCU), plainNumber(p.IndexWCU), plainNumber(p.RCU))
		}
		b.printf("| %s | %s | %s | %s | %s | %s | %d | %s |\n", r.Route, r.Method, r.Case, plainNumber(r.TableWCU), plainNumber(r.IndexWCU), plainNumber(r.RCU), len(r.calls), prev)
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
		plainNumber(add3.TableWCU+edit3.TableWCU), plainNumber(add3.IndexWCU+edit3.IndexWCU), plainNumber(calc3), verdict(calc3 <= 60))
	b.printf("| a typical sale, 3-line add + one payment edit of it: WCU by DynamoDB Local's consumed capacity (table and indexes)%s | %s | at most 50 | %s |\n",
		localNote, plainNumber(local3), verdict(local3 <= 50))
	for _, r := range []costRow{edit100, add100} {
		what := "payment edit of a 100-line sale"
		if r.Route == "add-sale" {
			what = "add of a 100-line sale"
		}
		base := r.baseWCU()
		ratio := (r.TableWCU + r.IndexWCU) / base
		b.printf("| %s: total WCU ÷ table WCU of the sale item and its event items (transaction included): (%s + %s) ÷ %s | %.2f | at most 1.5 | %s |\n",
			what, plainNumber(r.TableWCU), plainNumber(r.IndexWCU), plainNumber(base), ratio, verdict(ratio <= 1.5))
		name, most := r.largestIndex()
		b.printf("| %s: largest index WCU of that request (%s) | %s | at most 4 per index | %s |\n", what, name, plainNumber(most), verdict(most <= 4))
	}
	b.printf("| index entries carrying sale lines (every index, for the items the 100-line add and edit wrote) | %d | 0 | %s |\n", withLines, verdict(withLines == 0))
	b.printf("| index entries carrying an event body (every index, for the items the 100-line add and edit wrote) | %d | 0 | %s |\n\n", withBody, verdict(withBody == 0))
	b.itemWrites("The typical sale's writes", []costRow{add3, edit3})
	b.itemWrites("The notice schedule's and the invoice links' writes (a sale unpaid and paid, edits that move its next notice or not, its link made, replaced and revoked)", invoiceCostRows(rows))
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
// each write cost by AWS's rules, under a caption beginning with what.
func (b *bench) itemWrites(what string, rows []costRow) {
	b.printf("%s item by item, by AWS's rules (a transaction's counted twice; an index's WCU per index the item entered, left, moved in or changed in):\n\n", what)
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
					per = append(per, fmt.Sprintf("%s %s", n, plainNumber(w.cost.index[n])))
				}
				b.printf("| %s %s | %s | %s (%d bytes) | %s | %s |\n", r.Route, r.Case, c.op, cmp.Or(typ, "?"), itemSize(w.image), plainNumber(w.cost.table),
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
					itemSize(w.image), plainNumber(w.cost.table), plainNumber(w.cost.indexTotal()))
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
