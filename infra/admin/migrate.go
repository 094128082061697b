package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"bizdata/shared/store"
)

var migrateCommands = []command{
	{"migrate", `migrate [--json]  (after an upgrade: moves callback secrets off account items,
                          gives records written before views theirs, counts records written
                          before reports in them, moves events stored before the sharded
                          feed into it; safe to run again)`, migrate},
}

// migrations are the steps of `migrate`, in order: each brings what was
// stored before a change of layout up to it, and says how many it moved
// (its key in the JSON, and its phrase in the line printed).
var migrations = []struct {
	key, phrase string
	run         func(*store.Store, context.Context) (int, error)
}{
	// Callback secrets still on the account item, where every function may
	// read it, move to their own item. The secrets are never printed: only
	// how many accounts moved.
	{"migrated", "migrated %d accounts", (*store.Store).MigrateLegacySecrets},
	// Records written before views get theirs, so the list indexes carry
	// them.
	{"records", "%d records", (*store.Store).PackLegacyRecords},
	// Items written before the ledger get their opening movement, so their
	// movements add up to their stock.
	{"ledgers", "%d item ledgers opened", (*store.Store).OpenLedgers},
	// Sales, payments, refunds and expenses written before reports get
	// their figures, once.
	{"reported", "%d records counted in reports", (*store.Store).CountLegacyRecords},
	// Sales written before receivables were kept add what they owe.
	{"receivables", "%d sales counted in receivables", (*store.Store).CountLegacyDebts},
	// Debts kept before their IX9 entries carried their aging are laid out
	// again, so reports age the largest from the index alone.
	{"debts", "%d debts laid out again", (*store.Store).RelayoutDebts},
	// Items written before the inventory's worth was kept add what they
	// are worth, and those low or out of stock join its alerts.
	{"stock", "%d items counted in the inventory's worth", (*store.Store).CountLegacyItems},
	// Events stored before the feed was sharded move into it, so the feed
	// and the event's read still find them.
	{"events", "%d events moved to the sharded feed", (*store.Store).MoveLegacyEvents},
	// Open sales written before sales planned their notices plan their
	// next reminder or overdue day.
	{"notices", "%d sales planned their notices", (*store.Store).PlanLegacyNotices},
}

// migrate runs every migration, stopping at the first that fails, and
// prints how many each moved.
func migrate(ctx context.Context, o options, out io.Writer) error {
	st, err := openStore(ctx)
	if err != nil {
		return err
	}
	counts := map[string]int{}
	phrases := make([]string, len(migrations))
	for i, m := range migrations {
		n, err := m.run(st, ctx)
		if err != nil {
			return err
		}
		counts[m.key] = n
		phrases[i] = fmt.Sprintf(m.phrase, n)
	}
	if o.asJSON {
		return json.NewEncoder(out).Encode(counts)
	}
	fmt.Fprintln(out, strings.Join(phrases, ", "))
	return nil
}
