package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DebtsSettle is how long after a debt's write its IX9 entry is not trusted
// to show it: indexes follow the table within a fraction of a second, under
// normal conditions.
const DebtsSettle = 5 * time.Second

// SetDebtsSettle changes how long after a debt's write reports read the
// debts from the table (tests use 0, or an hour).
func (s *Store) SetDebtsSettle(d time.Duration) { s.debtsSettle = &d }

// debtsSettled says whether the debts' IX9 entries may be read as the
// debts: none is laid out as before their entries carried their aging, and
// no debt was written within the settle time (owed holds OWED#NONE, if it
// exists).
func (s *Store) debtsSettled(owed, debtors []attrs) bool {
	settle := DebtsSettle
	if s.debtsSettle != nil {
		settle = *s.debtsSettle
	}
	for _, it := range owed {
		if getS(it, "SK") == owedNone && time.Since(time.UnixMilli(getInt(it, debtsMovedAttr))) < settle {
			return false
		}
	}
	for _, it := range debtors {
		if v, ok := it[viewAttr].(*types.AttributeValueMemberM); !ok || v.Value[agingAttr] == nil {
			return false
		}
	}
	return true
}

// receivablesOf assembles the receivables on asOf from what was read: owed,
// the account's sums items (any superset of the OWED#M#, OWED#Y# and
// OWED#NONE items AgingMonths needs; others are ignored), debtors, the
// debts IX9 lists (largest first; at most business.MaxDebtors are named)
// and names, the customers' current names by id (a customer missing keeps
// the name its debt holds).
func receivablesOf(asOf string, owed []attrs, debtors []attrs, names map[string]string) (business.Receivables, error) {
	sums := business.OwedSums{ByYear: map[string]int64{}, ByDay: map[string]int64{}}
	for _, it := range owed {
		switch sk := getS(it, "SK"); {
		case sk == owedNone:
			sums.Outstanding += getInt(it, "owed")
			sums.Open += int(getInt(it, "open"))
		case strings.HasPrefix(sk, owedYearPrefix):
			sums.ByYear[strings.TrimPrefix(sk, owedYearPrefix)] += getInt(it, "owed")
			sums.Outstanding += getInt(it, "owed")
			sums.Open += int(getInt(it, "open"))
		case strings.HasPrefix(sk, owedMonthPrefix):
			month := strings.TrimPrefix(sk, owedMonthPrefix)
			for a := range it {
				if len(a) == 3 && a[0] == 'd' {
					if c := getInt(it, a); c != 0 {
						sums.ByDay[month+"-"+a[1:]] += c
					}
				}
			}
		}
	}
	debts := make([]business.Debt, 0, len(debtors))
	for _, it := range debtors {
		d, err := debtFrom(it)
		if err != nil {
			return business.Receivables{}, err
		}
		if n, ok := names[strconv.FormatInt(d.CustomerID, 10)]; ok {
			d.Name = n
		}
		debts = append(debts, d.Debt)
	}
	return sums.Receivables(asOf, debts), nil
}

// Receivables returns what the account is owed on asOf (a local date; ""
// for today where the merchant is), with every change answered before the
// call counted, and how many items it read. Usually it is one round trip:
// at once the account item, the waiting figures items, the sums and the
// largest debts' IX9 entries, which carry their aging and names. What waits
// is applied first (EBUSY past maxPendingApplied) and the sums read again;
// within DebtsSettle of a debt's write, or while a debt listed is laid out
// as before, the debts listed are read from the table with their customers
// (one BatchGetItem). Whatever the size of the books, it reads at most the
// waiting items, one item per year with sales due, 17 month items, the
// account item and 60 more.
func (s *Store) Receivables(ctx context.Context, account, asOf string) (business.Receivables, int, error) {
	// The sums' months a day either side of UTC's date cover today's
	// wherever the merchant is, so the reads need not wait for the
	// account's timezone.
	first, last := business.AgingMonths(asOf)
	if asOf == "" {
		now := s.now().UTC()
		first, _ = business.AgingMonths(now.AddDate(0, 0, -1).Format(business.DateFormat))
		_, last = business.AgingMonths(now.AddDate(0, 0, 1).Format(business.DateFormat))
	}
	var hist business.TimezoneHistory
	var waiting, owed, debtors []attrs
	var more bool
	var read int
	errs := make([]error, 3)
	var wg sync.WaitGroup
	wg.Go(func() { hist, errs[0] = s.timezoneHistory(ctx, account) })
	wg.Go(func() { waiting, more, errs[1] = s.readWaiting(ctx, account, maxPendingApplied+1) })
	wg.Go(func() { owed, debtors, read, errs[2] = s.owedAndDebtors(ctx, account, first, last) })
	wg.Wait()
	read += 1 + len(waiting) // the account item, and what waits
	if err := errors.Join(errs...); err != nil {
		return business.Receivables{}, read, err
	}
	if asOf == "" {
		asOf = hist.Today(s.now())
	}
	if len(waiting) > 0 { // counted, then the sums read again
		if _, err := s.applyRead(ctx, account, hist, waiting, more); err != nil {
			return business.Receivables{}, read, err
		}
		var n int
		if owed, debtors, n, errs[2] = s.owedAndDebtors(ctx, account, first, last); errs[2] != nil {
			return business.Receivables{}, read + n, errs[2]
		}
		read += n
	}
	var names map[string]string
	if !s.debtsSettled(owed, debtors) { // what a report applies stamps OWED#NONE too
		var n int
		var err error
		if names, n, err = s.debtsNow(ctx, account, debtors); err != nil {
			return business.Receivables{}, read + n, err
		}
		read += n
	}
	r, err := receivablesOf(asOf, owed, debtors, names)
	return r, read, err
}

// largestDebts reads the IX9 entries of the account's largest debts
// (business.MaxDebtors of them, largest first, each with its aging; a page
// of 1 MB holds them unless debts run to tens of thousands of open due
// dates, when it reads on).
func (s *Store) largestDebts(ctx context.Context, account string) ([]attrs, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(IndexStatusDue.Name),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": IndexStatusDue.PK},
		ExpressionAttributeValues: attrs{":pk": str(debtorsPK(account))},
		Limit:                     aws.Int32(business.MaxDebtors),
	}
	var found []attrs
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("query debtors: %w", err)
		}
		found = append(found, out.Items...)
		if len(found) >= business.MaxDebtors || out.LastEvaluatedKey == nil {
			return found, nil
		}
		in.ExclusiveStartKey, in.Limit = out.LastEvaluatedKey, aws.Int32(int32(business.MaxDebtors-len(found)))
	}
}

// debtsNow reads, in one BatchGetItem, the debts debtors lists as they are
// now (the index may trail the table by a moment, and entries laid out as
// before hold no aging), replacing each entry found, and their customers,
// whose current names it returns by id; and how many items it read.
func (s *Store) debtsNow(ctx context.Context, account string, debtors []attrs) (map[string]string, int, error) {
	ids := make([]int64, len(debtors))
	keys := make([]attrs, 0, 2*len(debtors))
	for i, it := range debtors {
		d, err := debtFrom(it)
		if err != nil {
			return nil, 0, err
		}
		ids[i] = d.CustomerID
		keys = append(keys, debtKey(account, ids[i]), customerKey(account, ids[i]))
	}
	found, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, 0, err
	}
	names, read := map[string]string{}, 0
	for i, id := range ids {
		if it := found[2*i]; it != nil {
			debtors[i] = it
			read++
		}
		if it := found[2*i+1]; it != nil {
			names[strconv.FormatInt(id, 10)] = customerFrom(it).Name
			read++
		}
	}
	return names, read, nil
}

// owedAndDebtors reads, at once, the account's OWED#NONE and year items
// (one Query), its OWED#M# items of the months first..last (one Query;
// none when last is before first) and the largest debts' IX9 entries; it
// returns them and how many items it read.
func (s *Store) owedAndDebtors(ctx context.Context, account, first, last string) (owed, debtors []attrs, read int, err error) {
	spans := []sortKeys{{owedNone, owedYearPrefix + "~"}}
	if last >= first {
		spans = append(spans, sortKeys{owedMonthPrefix + first, owedMonthPrefix + last})
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() {
		errs[0] = s.readReport(ctx, account, spans, "receivables", func(items []attrs) {
			mu.Lock()
			owed, read = append(owed, items...), read+len(items)
			mu.Unlock()
		})
	})
	wg.Go(func() {
		found, err := s.largestDebts(ctx, account)
		mu.Lock()
		debtors, read, errs[1] = found, read+len(found), err
		mu.Unlock()
	})
	wg.Wait()
	return owed, debtors, read, errors.Join(errs...)
}
