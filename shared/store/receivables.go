package store

import (
	"encoding/json"
	"fmt"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Receivables kept as the books change.
//
// Every change of what a sale owes (its creation, an edit or payment, a
// void) says in its figures item what the sale owed before and after it
// (business.ReceivableChange); whoever applies the figures item moves the
// sums of the account's report partition by the difference, in the same
// transaction, so each change counts exactly once:
//
//   - OWED#M#<yyyy-mm>: d01..d31, the cents owed by open sales due each day
//     of the month (ADD);
//   - OWED#Y#<yyyy>: owed and open (the count of sales owing) of open sales
//     due in the year, and OWED#NONE those of sales with no due date (ADD);
//   - OWED#C#<customer id>: the customer's debt (v: owed, open, and cents by
//     due date), written whole by an applier that read it, on condition of
//     its version; while the customer owes anything it is listed in IX9
//     (A#<acct>#DEBTOR) largest first.
//
// Aging moves with the calendar, not only with writes: an aging on a date
// reads every year item (amounts due before the year of the date less 91
// days are over 90 days past due), the day items of at most 15 months (the
// days that fall in the buckets 1 to 90) and the 20 largest debts, whatever
// the size of the books.

const (
	owedMonthPrefix = "OWED#M#"
	owedYearPrefix  = "OWED#Y#"
	owedNone        = "OWED#NONE"
	debtPrefix      = "OWED#C#"
	// owedNoDue is the key of a debt's amounts with no due date.
	owedNoDue = business.NoDueDate
	// receivablesAttr holds, in a figures item, what the change moves in
	// receivables (JSON).
	receivablesAttr = "receivables"
)

// owedCountedAttr marks a sale whose debt is in the kept receivables: every
// write of this release sets it. A sale written before lacks it and counts
// as owing nothing; its next change counts it whole, and CountLegacyDebts
// counts the rest.
const owedCountedAttr = "owed_counted"

func markOwedCounted(it attrs) { it[owedCountedAttr] = &types.AttributeValueMemberBOOL{Value: true} }

func owedCounted(it attrs) bool { _, ok := it[owedCountedAttr]; return ok }

// owedBefore is what a sale as read counts for in the kept receivables:
// nothing when it was written before they were kept.
func owedBefore(rec SaleRecord) business.Owed {
	if !rec.owedCounted {
		return business.Owed{}
	}
	return business.OwedBy(rec.Sale)
}

// stillOwedUncounted adds to a version-guarded put of a sale read without
// owedCountedAttr the condition that it is still without it (CountLegacyDebts
// marks a sale without changing its version).
func stillOwedUncounted(it txItem, uncounted bool) txItem {
	return stillUnmarked(it, uncounted, "#owedc", owedCountedAttr)
}

func debtorsPK(account string) string { return acctPK(account) + "#DEBTOR" }

// storedOwed is a business.Owed as a figures item keeps it.
type storedOwed struct {
	CustomerID int64  `json:"c,omitempty"`
	Name       string `json:"n,omitempty"`
	Due        string `json:"d,omitempty"`
	Cents      int64  `json:"v,omitempty"`
}

type storedReceivable struct {
	Old storedOwed `json:"old"`
	New storedOwed `json:"new"`
}

func toStoredOwed(o business.Owed) storedOwed {
	return storedOwed{CustomerID: o.CustomerID, Name: o.CustomerName, Due: o.DueDate, Cents: o.Cents}
}

func fromStoredOwed(o storedOwed) business.Owed {
	return business.Owed{CustomerID: o.CustomerID, CustomerName: o.Name, DueDate: o.Due, Cents: o.Cents}
}

// putReceivables writes what a change moves in receivables into its figures
// item it.
func putReceivables(it attrs, cs []business.ReceivableChange) error {
	if len(cs) == 0 {
		return nil
	}
	out := make([]storedReceivable, len(cs))
	for i, c := range cs {
		out[i] = storedReceivable{Old: toStoredOwed(c.Old), New: toStoredOwed(c.New)}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("encode receivables: %w", err)
	}
	it[receivablesAttr] = str(string(b))
	return nil
}

// receivablesFrom reads what a figures item moves in receivables.
func receivablesFrom(it attrs) ([]business.ReceivableChange, error) {
	raw := getS(it, receivablesAttr)
	if raw == "" {
		return nil, nil
	}
	var stored []storedReceivable
	if err := json.Unmarshal([]byte(raw), &stored); err != nil {
		return nil, fmt.Errorf("figures item %s: %w: receivables: %v", getS(it, "SK"), errUnreadable, err)
	}
	out := make([]business.ReceivableChange, len(stored))
	for i, c := range stored {
		out[i] = business.ReceivableChange{Old: fromStoredOwed(c.Old), New: fromStoredOwed(c.New)}
	}
	return out, nil
}
