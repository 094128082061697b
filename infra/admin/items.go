package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"bizdata/shared/money"
	"bizdata/shared/store"
	"bizdata/shared/wire"
)

var itemCommands = []command{
	{"item movements", `item movements (--account ID | --business-code C) --item CODE [--limit N] [--json]
                         (the item's stock ledger, newest first, N entries, default 50)`, showMovements},
}

// showMovements prints the newest --limit movements of the item --item of
// the account.
func showMovements(ctx context.Context, o options, out io.Writer) error {
	if o.item == "" {
		return fmt.Errorf("%w: --item is required", errUsage)
	}
	if o.limit < 1 {
		return fmt.Errorf("%w: --limit must be at least 1", errUsage)
	}
	st, id, err := openNamedAccount(ctx, o)
	if err != nil {
		return err
	}
	return printMovements(ctx, st, id, o.item, o.limit, o.asJSON, out)
}

// printMovements prints up to limit of the item's movements, newest first,
// and, when that is its whole ledger, whether they add up to its quantity.
func printMovements(ctx context.Context, st *store.Store, account, code string, limit int, asJSON bool, out io.Writer) error {
	item, err := st.FindItemByCode(ctx, account, code)
	if err != nil {
		return err
	}
	v := wire.ItemLedger{ItemCode: item.ItemCode, ItemName: item.ItemName, Quantity: item.Quantity, Movements: []wire.Movement{}}
	cursor := ""
	for {
		page, err := st.ListMovements(ctx, account, code, min(limit-len(v.Movements), 200), cursor)
		if err != nil {
			return err
		}
		for _, m := range page.Items {
			v.Movements = append(v.Movements, wire.NewMovement(m))
		}
		cursor = page.Next
		if cursor == "" || len(v.Movements) >= limit {
			break
		}
	}
	if v.Complete = cursor == ""; v.Complete {
		var sum money.Delta
		for _, m := range v.Movements {
			sum = sum.Add(m.Quantity)
		}
		v.LedgerSum = &sum
	}
	if asJSON {
		return json.NewEncoder(out).Encode(v)
	}
	fmt.Fprintf(out, "item_code: %s\nitem_name: %s\nquantity:  %s\nmovements (%d, newest first):\n", v.ItemCode, v.ItemName, v.Quantity, len(v.Movements))
	for _, m := range v.Movements {
		why := orDash(m.Reason)
		if m.Note != nil {
			why += ": " + *m.Note
		}
		fmt.Fprintf(out, "  %6d  %-10s  %10s  -> %-12s  %s  invoice %-6s  %s\n", m.ID, m.Kind, m.Quantity, m.QuantityAfter, m.CreatedAt, orDash(m.InvoiceCode), why)
	}
	switch {
	case !v.Complete:
		fmt.Fprintf(out, "(older movements not shown: raise --limit to see the whole ledger)\n")
	case v.LedgerSum.Sub(v.Quantity.Delta()).IsZero():
		fmt.Fprintf(out, "ledger: the %d movements add up to %s, the item's quantity\n", len(v.Movements), v.LedgerSum)
	default:
		fmt.Fprintf(out, "ledger: MISMATCH: the %d movements add up to %s but the item holds %s (an item stocked before the ledger gets its opening movement from `admin migrate`; stock moved while this ran shows as a difference too: run again)\n",
			len(v.Movements), v.LedgerSum, v.Quantity)
	}
	return nil
}
