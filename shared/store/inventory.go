package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"bizdata/shared/business"
	"bizdata/shared/money"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"
)

// The inventory's worth kept as the books change.
//
// Every write of an item's quantity, unit cost, price or alert level
// records what the item was worth before and after it (business.WorthOf)
// in the change's figures item, and whoever applies that item (see
// applyTogether) moves the account's STOCK item (in the report partition)
// by the difference: cost and retail as exact decimal sums, which a
// DynamoDB Number holds to 38 digits (an item's worth has at most 22, so
// the sums stay exact far past any catalogue), and the counts by status.
// The low and out-of-stock items carry the keys of IX9 (ITEM#ALERT), set
// or removed in the same write as their quantity, so the report's list is
// one Query of the items that run short, in the report's order.

// worthCountedAttr marks an item whose worth is in the STOCK item: every
// write of this release sets it. An item written before lacks it and counts
// as worth nothing until its next change (which counts it whole) or `admin
// migrate` (CountLegacyItems).
const worthCountedAttr = "worth_counted"

func worthCounted(it attrs) bool { _, ok := it[worthCountedAttr]; return ok }

func markWorthCounted(it attrs) { it[worthCountedAttr] = &types.AttributeValueMemberBOOL{Value: true} }

// worthOf is what the item read as it counts for in the STOCK item: nothing
// when it is not there or not counted yet.
func worthOf(it attrs) business.StockWorth {
	if it == nil || !worthCounted(it) {
		return business.StockWorth{}
	}
	return business.WorthOf(invItemFrom(it))
}

const (
	stockSK        = "STOCK"
	alertPartition = "#ITEM#ALERT"
)

// alertKeys are the IX9 keys of an item that is low or out of stock (ok
// false when it is in stock): out before low, then by quantity and item
// code, as the report lists them.
func alertKeys(account string, x business.Item) (pk, sk string, ok bool) {
	status := x.Status()
	if status == business.StockIn {
		return "", "", false
	}
	rank := "1"
	if status == business.StockOut {
		rank = "0"
	}
	milli := decimal.RequireFromString(x.Quantity.String()).Shift(3).IntPart()
	return acctPK(account) + alertPartition, fmt.Sprintf("%s#%013d#%s", rank, milli, x.ItemCode), true
}

// setAlertKeys puts the IX9 keys of x on its item it (a whole item, put).
func setAlertKeys(it attrs, account string, x business.Item) {
	if pk, sk, ok := alertKeys(account, x); ok {
		it[IndexStatusDue.PK], it[IndexStatusDue.SK] = str(pk), str(sk)
	}
}

// alertUpdate is the part of an item's update expression that sets or
// removes its IX9 keys and marks its worth counted, with the values it
// names added to values.
func alertUpdate(account string, x business.Item, values attrs) (set, remove string) {
	values[":wc"] = &types.AttributeValueMemberBOOL{Value: true}
	set = worthCountedAttr + " = :wc"
	if pk, sk, ok := alertKeys(account, x); ok {
		values[":apk"], values[":ask"] = str(pk), str(sk)
		return set + fmt.Sprintf(", %s = :apk, %s = :ask", IndexStatusDue.PK, IndexStatusDue.SK), ""
	}
	return set, fmt.Sprintf(" REMOVE %s, %s", IndexStatusDue.PK, IndexStatusDue.SK)
}

// stillUnworthed adds to a version-guarded put of an item read without
// worthCountedAttr the condition that it is still without it:
// CountLegacyItems marks an item without changing its version, so a change
// that counts the item whole must not pass once the migration has counted
// it (it is retried, and reads the mark).
func stillUnworthed(it txItem, unmarked bool) txItem {
	if p := it.action.Put; unmarked && p != nil {
		p.ConditionExpression = aws.String(aws.ToString(p.ConditionExpression) + " AND attribute_not_exists(#wc)")
		if p.ExpressionAttributeNames == nil {
			p.ExpressionAttributeNames = map[string]string{}
		}
		p.ExpressionAttributeNames["#wc"] = worthCountedAttr
	}
	return it
}

// A figures item keeps what its change moves in the inventory's worth as
// JSON in stockAttr: per item, its worth before (o) and after (n), each
// absent when not counted, the status by its first letters.
const stockAttr = "stock"

type storedWorth struct {
	Cost   string `json:"c"`
	Retail string `json:"r"`
	Status string `json:"s"`
}

type storedStock struct {
	Old *storedWorth `json:"o,omitempty"`
	New *storedWorth `json:"n,omitempty"`
}

var statusCodes = map[string]string{business.StockIn: "in", business.StockLow: "low", business.StockOut: "out"}

func toStoredWorth(w business.StockWorth) *storedWorth {
	if !w.Counted {
		return nil
	}
	return &storedWorth{Cost: w.Cost, Retail: w.Retail, Status: statusCodes[w.Status]}
}

func fromStoredWorth(w *storedWorth) (business.StockWorth, error) {
	if w == nil {
		return business.StockWorth{}, nil
	}
	for status, code := range statusCodes {
		if code == w.Status {
			return business.StockWorth{Counted: true, Cost: w.Cost, Retail: w.Retail, Status: status}, nil
		}
	}
	return business.StockWorth{}, fmt.Errorf("stock status %q", w.Status)
}

// putStock writes what a change moves in the inventory's worth into its
// figures item it.
func putStock(it attrs, cs []business.StockChange) error {
	if len(cs) == 0 {
		return nil
	}
	out := make([]storedStock, len(cs))
	for i, c := range cs {
		out[i] = storedStock{Old: toStoredWorth(c.Old), New: toStoredWorth(c.New)}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("encode stock worth: %w", err)
	}
	it[stockAttr] = str(string(b))
	return nil
}

// stockFrom reads what a figures item moves in the inventory's worth.
func stockFrom(it attrs) ([]business.StockChange, error) {
	raw := getS(it, stockAttr)
	if raw == "" {
		return nil, nil
	}
	var stored []storedStock
	if err := json.Unmarshal([]byte(raw), &stored); err != nil {
		return nil, fmt.Errorf("figures item %s: %w: %v", getS(it, "SK"), errUnreadable, err)
	}
	out := make([]business.StockChange, len(stored))
	for i, c := range stored {
		o, err := fromStoredWorth(c.Old)
		if err != nil {
			return nil, fmt.Errorf("figures item %s: %w: %v", getS(it, "SK"), errUnreadable, err)
		}
		n, err := fromStoredWorth(c.New)
		if err != nil {
			return nil, fmt.Errorf("figures item %s: %w: %v", getS(it, "SK"), errUnreadable, err)
		}
		out[i] = business.StockChange{Old: o, New: n}
	}
	return out, nil
}

// stockDelta is what changes move the STOCK item by.
type stockDelta struct {
	cost, retail            decimal.Decimal
	in, low, out, itemCount int64
}

func (d *stockDelta) add(w business.StockWorth, sign int64) error {
	if !w.Counted {
		return nil
	}
	cost, err := decimal.NewFromString(w.Cost)
	if err != nil {
		return fmt.Errorf("%w: stock cost %q", errUnreadable, w.Cost)
	}
	retail, err := decimal.NewFromString(w.Retail)
	if err != nil {
		return fmt.Errorf("%w: stock retail %q", errUnreadable, w.Retail)
	}
	s := decimal.NewFromInt(sign)
	d.cost, d.retail = d.cost.Add(cost.Mul(s)), d.retail.Add(retail.Mul(s))
	d.itemCount += sign
	switch w.Status {
	case business.StockOut:
		d.out += sign
	case business.StockLow:
		d.low += sign
	default:
		d.in += sign
	}
	return nil
}

// stockActionsOf are the updates that apply cs to the account's inventory
// worth, in the transaction that applies their figures items: one ADD of
// their summed differences to the STOCK item (none when they cancel out).
// An ADD needs no read and no condition: the transaction applies each
// figures item once (its delete is conditional), and ADDs commute.
func (s *Store) stockActionsOf(ctx context.Context, account string, cs []business.StockChange) ([]txItem, error) {
	var d stockDelta
	for _, c := range cs {
		if err := d.add(c.Old, -1); err != nil {
			return nil, err
		}
		if err := d.add(c.New, 1); err != nil {
			return nil, err
		}
	}
	names := map[string]string{"#type": "type"}
	values := attrs{":type": str("stock_worth")}
	var adds []string
	add := func(attr string, v types.AttributeValue, zero bool) {
		if zero {
			return
		}
		n := fmt.Sprintf("#a%d", len(adds))
		names[n], values[":v"+n[1:]] = attr, v
		adds = append(adds, n+" :v"+n[1:])
	}
	add("cost", num(d.cost.String()), d.cost.IsZero())
	add("retail", num(d.retail.String()), d.retail.IsZero())
	add("in_stock", nInt(d.in), d.in == 0)
	add("low_stock", nInt(d.low), d.low == 0)
	add("out_of_stock", nInt(d.out), d.out == 0)
	add("items", nInt(d.itemCount), d.itemCount == 0)
	if len(adds) == 0 {
		return nil, nil
	}
	return []txItem{{action: types.TransactWriteItem{Update: &types.Update{TableName: aws.String(s.table), Key: key(reportPK(account), stockSK),
		UpdateExpression:         aws.String("SET #type = :type ADD " + strings.Join(adds, ", ")),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values}}}}, nil
}

// inventoryOf is the inventory report of the STOCK item stock (nil: nothing
// counted yet) and the IX9 alert entries read in index order (at most
// business.MaxStockAlerts+1), with the items count: each value rounded once
// to cents, as business.ReportStock rounds its sums.
func inventoryOf(stock attrs, alerts []attrs) (business.StockReport, int) {
	sum := func(attr string) decimal.Decimal {
		d, err := decimal.NewFromString(getN(stock, attr))
		if err != nil {
			return decimal.Zero
		}
		return d
	}
	r := business.StockReport{StockValue: money.FormatSum(sum("cost")), RetailValue: money.FormatSum(sum("retail")),
		InStock: int(getInt(stock, "in_stock")), LowStock: int(getInt(stock, "low_stock")), OutOfStock: int(getInt(stock, "out_of_stock"))}
	for _, it := range alerts {
		if len(r.Alerts) == business.MaxStockAlerts {
			r.AlertsTruncated = true
			break
		}
		r.Alerts = append(r.Alerts, invItemFrom(it))
	}
	return r, int(getInt(stock, "items"))
}

// Inventory returns the account's inventory report, with every change
// answered before the call counted (it applies the figures items still
// waiting first, as a summary does), its items count and how many items it
// read: the account (its timezone history, which dates the waiting
// figures), the waiting figures, the STOCK item and at most
// business.MaxStockAlerts+1 alert entries, read at once. Returns EBUSY when
// more changes wait than a report applies.
func (s *Store) Inventory(ctx context.Context, account string) (business.StockReport, int, int, error) {
	hist, err := s.timezoneHistory(ctx, account)
	if err != nil {
		return business.StockReport{}, 0, 1, err
	}
	waited, _, err := s.applyWaiting(ctx, account, hist)
	read := 1 + waited
	if err != nil {
		return business.StockReport{}, 0, read, err
	}
	var stock attrs
	var alerts []attrs
	var wg sync.WaitGroup
	var stockErr, alertsErr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		stock, stockErr = s.getItem(ctx, key(reportPK(account), stockSK), true)
	}()
	go func() {
		defer wg.Done()
		if alerts, alertsErr = s.queryStockAlerts(ctx, account); alertsErr != nil {
			return
		}
		// An item written before views is read from the table.
		for _, it := range alerts {
			if !hasView(it) {
				read++
			}
		}
		alertsErr = s.withViews(ctx, alerts)
	}()
	wg.Wait()
	read += 1 + len(alerts)
	if err := errors.Join(stockErr, alertsErr); err != nil {
		return business.StockReport{}, 0, read, err
	}
	r, n := inventoryOf(stock, alerts)
	return r, n, read, nil
}

// CountLegacyItems puts in the inventory's worth every item written before
// it was kept (one Scan of the table for items without worthCountedAttr;
// run from `admin migrate`, safe beside the API and again after an
// interruption). Each item is marked, given its alert keys and counted (a
// figures item) in one transaction, on condition that it is still unmarked
// and unchanged since read: an item changed meanwhile is read again (the
// change counted it, or it is counted as it now is). It returns how many
// items it counted.
func (s *Store) CountLegacyItems(ctx context.Context) (int, error) {
	pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{
		TableName:                 aws.String(s.table),
		FilterExpression:          aws.String("#t = :item AND attribute_not_exists(#c)"),
		ProjectionExpression:      aws.String("PK, SK"),
		ExpressionAttributeNames:  map[string]string{"#t": "type", "#c": worthCountedAttr},
		ExpressionAttributeValues: attrs{":item": str("item")},
	})
	n := 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return n, fmt.Errorf("scan for items not in the inventory's worth: %w", err)
		}
		for _, k := range page.Items {
			done, err := s.countLegacyItem(ctx, key(getS(k, "PK"), getS(k, "SK")))
			if err != nil {
				return n, fmt.Errorf("count %s in the inventory's worth (%d counted before it; run again to go on): %w", getS(k, "PK"), n, err)
			}
			if done {
				n++
			}
		}
	}
	return n, nil
}

// countLegacyItem counts one item written before the inventory's worth was
// kept; false when it is counted already.
func (s *Store) countLegacyItem(ctx context.Context, k attrs) (bool, error) {
	done := false
	err := retrying(ctx, func() error {
		done = false
		it, err := s.getItem(ctx, k, true)
		if err != nil || it == nil || worthCounted(it) || getS(it, "type") != "item" {
			return err
		}
		account, _, _ := strings.Cut(strings.TrimPrefix(getS(it, "PK"), "A#"), "#")
		x := invItemFrom(it)
		values := attrs{":v": nInt(getInt(it, "version"))}
		set, remove := alertUpdate(account, x, values)
		actions := []txItem{{action: types.TransactWriteItem{Update: &types.Update{TableName: aws.String(s.table), Key: k,
			UpdateExpression:          aws.String("SET " + set + remove),
			ConditionExpression:       aws.String("attribute_exists(PK) AND attribute_not_exists(" + worthCountedAttr + ") AND version = :v"),
			ExpressionAttributeValues: values}}, onFail: errRetry}}
		ev := newEvents(account, s.stamp())
		ev.worth(business.StockChange{New: business.WorthOf(x)})
		fig, err := s.figuresAction(ev, ev.ids.Next())
		if err != nil {
			return err
		}
		if err := s.transact(ctx, append(actions, *fig)); err != nil {
			return err
		}
		done = true
		return nil
	})
	return done, err
}
