package store

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func debtKey(account string, customer int64) attrs {
	return key(reportPK(account), debtPrefix+strconv.FormatInt(customer, 10))
}

// legacyDueAttr is where debts written before their aging was kept in
// their view held their cents by due date (a map, outside the view, so the
// debtors' IX9 entries could not age them). A debt still so laid out is
// read from the table (debtsNow) and rewritten in today's layout by its
// next change or by RelayoutDebts.
const legacyDueAttr = "due"

// The debt's view keeps its cents by due date in agingAttr (agingFormat,
// then for each date in order the days since the previous one, the first
// since 1970-01-01, and its cents, both as varints) and those with no due
// date in undatedAttr. A few bytes a due date: the debtors' IX9 entries
// carry them, so the largest debts age from the index alone, however many
// due dates a customer has open (hundreds come to a few KB).
const (
	agingAttr   = "aging"
	undatedAttr = "undated"
	agingFormat = 1
)

// encodeAging is due's dated amounts (owedNoDue left out) as agingAttr
// keeps them.
func encodeAging(due map[string]int64) []byte {
	days := make([]int64, 0, len(due))
	cents := make(map[int64]int64, len(due))
	for d, c := range due {
		t, err := time.Parse(business.DateFormat, d)
		if d == owedNoDue || c == 0 || err != nil {
			continue
		}
		day := t.Unix() / 86400
		days, cents[day] = append(days, day), c
	}
	slices.Sort(days)
	out := make([]byte, 1, 1+len(days)*5)
	out[0] = agingFormat
	prev := int64(0)
	for _, day := range days {
		out = binary.AppendVarint(out, day-prev)
		out = binary.AppendVarint(out, cents[day])
		prev = day
	}
	return out
}

// decodeAging adds the amounts b (agingAttr) holds into due, by date.
func decodeAging(b []byte, due map[string]int64) error {
	if len(b) == 0 || b[0] != agingFormat {
		return fmt.Errorf("%w: debt aging of format %v", errUnreadable, b[:min(len(b), 1)])
	}
	day := int64(0)
	for rest := b[1:]; len(rest) > 0; {
		step, n := binary.Varint(rest)
		if n <= 0 {
			return fmt.Errorf("%w: debt aging cut short", errUnreadable)
		}
		c, m := binary.Varint(rest[n:])
		if m <= 0 {
			return fmt.Errorf("%w: debt aging cut short", errUnreadable)
		}
		day, rest = day+step, rest[n+m:]
		due[time.Unix(day*86400, 0).UTC().Format(business.DateFormat)] += c
	}
	return nil
}

// debt is one customer's debt as its item keeps it.
type debt struct {
	business.Debt
	// legacy is a debt laid out before its view kept its aging: an IX9
	// entry of one does not say what it owes by due date.
	legacy bool
}

// debtFrom reads a debt item, or its IX9 entry, or nil (no debt yet).
func debtFrom(it attrs) (debt, error) {
	d := debt{Debt: business.Debt{Due: map[string]int64{}}}
	v, ok := it[viewAttr].(*types.AttributeValueMemberM)
	if !ok {
		return d, nil
	}
	d.CustomerID, d.Name = getInt(v.Value, "customer_id"), getS(v.Value, "name")
	d.Owed, d.Open = getInt(v.Value, "owed"), getInt(v.Value, "open")
	aging, ok := v.Value[agingAttr].(*types.AttributeValueMemberB)
	if !ok {
		d.legacy = true
		if due, ok := it[legacyDueAttr].(*types.AttributeValueMemberM); ok {
			for k := range due.Value {
				at := k
				if _, err := time.Parse(business.DateFormat, k); err != nil {
					at = owedNoDue // counted as current, as the sums count it
				}
				d.Due[at] += getInt(due.Value, k)
			}
		}
		return d, nil
	}
	if c := getInt(v.Value, undatedAttr); c != 0 {
		d.Due[owedNoDue] = c
	}
	if err := decodeAging(aging.Value, d.Due); err != nil {
		return d, fmt.Errorf("debt of customer %d: %w", d.CustomerID, err)
	}
	return d, nil
}

// maxOwed is the most a debtor's listing key orders (15 digits of cents).
const maxOwed = 999999999999999

// debtWrite writes customer's debt as read (was, nil when it has none yet)
// moved by m, named as the customer is now (cust; nil when the customer is
// not found); nil when it moves nothing. A debt laid out before its view
// kept its aging is rewritten whole even when m moves nothing.
func (s *Store) debtWrite(account string, customer int64, was, cust attrs, m business.DebtMove) (*txItem, error) {
	d, err := debtFrom(was)
	if err != nil {
		return nil, err
	}
	var now *business.Customer
	if cust != nil {
		c := customerFrom(cust)
		now = &c
	}
	next, moved := d.Move(m, now)
	moved = moved || was != nil && d.legacy
	if !moved || was == nil && len(next.Due) == 0 && next.Open == 0 {
		return nil, nil
	}
	d.Debt = next
	v := attrs{"customer_id": nInt(customer), "owed": nInt(d.Owed), "open": nInt(d.Open),
		agingAttr: &types.AttributeValueMemberB{Value: encodeAging(d.Due)}}
	if c := d.Due[owedNoDue]; c != 0 {
		v[undatedAttr] = nInt(c)
	}
	setS(v, "name", d.Name)
	names := map[string]string{"#type": "type", "#v": viewAttr, "#due": legacyDueAttr, "#version": "version", "#pk": IndexStatusDue.PK, "#sk": IndexStatusDue.SK}
	vals := attrs{":type": str("owed_customer"), ":v": &types.AttributeValueMemberM{Value: v}}
	set, remove := "SET #type = :type, #v = :v, #version = :next", " REMOVE #due"
	var cond string
	if was == nil {
		cond, vals[":next"] = "attribute_not_exists(PK)", nInt(1)
	} else {
		cond, vals[":was"], vals[":next"] = "#version = :was", nInt(getInt(was, "version")), nInt(getInt(was, "version")+1)
	}
	if d.Owed > 0 {
		set += ", #pk = :pk, #sk = :sk"
		vals[":pk"], vals[":sk"] = str(debtorsPK(account)), str(debtorSK(d.Owed, customer))
	} else {
		remove += ", #pk, #sk"
	}
	return &txItem{action: types.TransactWriteItem{Update: &types.Update{TableName: aws.String(s.table), Key: debtKey(account, customer),
		UpdateExpression: aws.String(set + remove), ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: vals}},
		onFail: errTypesMoved}, nil
}

// debtorSK orders debtors by what they owe, largest first, then by
// customer id.
func debtorSK(owed, customer int64) string {
	return fmt.Sprintf("%015d#%019d", maxOwed-min(owed, maxOwed), customer)
}
