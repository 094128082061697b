package store

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"bizdata/shared/business"
)

// The dashboard's overview: this month beside last month, the last 30 days,
// receivables and the stock running out, read from what the reports keep in
// one round of reads beside the account's, and one read of the debtors'
// names after. It is for a person at a screen: it shows the figures as the
// last applied change left them and applies none of the changes still
// waiting (the stream applies them within a second or so; a report of the
// API applies them first, and so answers exactly).

// Overview is what the overview shows of an account.
type Overview struct {
	Account   business.Account
	Timezones business.TimezoneHistory
	Today     string // the account's local date
	// Days holds the day sums of at least the local dates from the first
	// of last month (or 29 days before today, if that is earlier) to today.
	Days map[string]business.Figures
	// Parked counts the changes set aside (see ReportSums.Parked).
	Parked      int
	Receivables business.Receivables // on Today
	Stock       business.StockReport
	Items       int // the inventory's items count
}

// overviewSlack is how far the account's local date may be from the UTC
// date: the reads begin before the account (and its timezone) is read, so
// they cover every date it may be.
const overviewSlack = 24 * time.Hour

// Overview reads the account (live or a test twin) and what its overview
// shows, as of the last change applied to its reports. At once: the account
// item (one GetItem), the day sums (one Query of DAY# items over the dates
// any timezone may make last month to today), the receivables' sums, the
// inventory's worth and the changes set aside (one Query from the aging's
// first OWED#M# item to STOCK: OWED#M#, OWED#NONE, OWED#Y#, PARKED#, STOCK),
// the largest debts, with their aging and names, and the stock alerts
// (IX9, one Query each). Five calls, side by side, whatever the size of the
// books; then, for a few seconds after a debt was written (the index may
// trail the table) or while some of the largest are laid out as before
// their IX9 entries carried their aging, one BatchGetItem of those debts
// and their customers.
func (s *Store) Overview(ctx context.Context, account string) (Overview, error) {
	now := s.now().UTC()
	early, late := now.Add(-overviewSlack), now.Add(overviewSlack)
	from := time.Date(early.Year(), early.Month()-1, 1, 0, 0, 0, 0, time.UTC)
	if d := early.AddDate(0, 0, -29); d.Before(from) {
		from = d
	}
	firstOwed, _ := business.AgingMonths(early.Format(business.DateFormat))

	var ov Overview
	var acct, stock attrs
	var owed, debtors, alerts []attrs
	var days []attrs
	var names map[string]string
	errs := make([]error, 5)
	var wg sync.WaitGroup
	wg.Go(func() { acct, errs[0] = s.getAccountItem(ctx, account) })
	wg.Go(func() {
		days, errs[1] = s.reportRange(ctx, account, dayPrefix+from.Format(business.DateFormat), dayPrefix+late.Format(business.DateFormat))
	})
	wg.Go(func() {
		var items []attrs
		items, errs[2] = s.reportRange(ctx, account, owedMonthPrefix+firstOwed, stockSK)
		for _, it := range items {
			switch sk := getS(it, "SK"); {
			case sk == stockSK:
				stock = it
			case strings.HasPrefix(sk, parkedPrefix):
				ov.Parked++
			default:
				owed = append(owed, it)
			}
		}
	})
	wg.Go(func() {
		debtors, errs[3] = s.largestDebts(ctx, account)
	})
	wg.Go(func() {
		if alerts, errs[4] = s.queryStockAlerts(ctx, account); errs[4] == nil {
			errs[4] = s.withViews(ctx, alerts) // an item written before views
		}
	})
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Overview{}, err
	}
	if !s.debtsSettled(owed, debtors) {
		var err error
		if names, _, err = s.debtsNow(ctx, account, debtors); err != nil {
			return Overview{}, err
		}
	}
	ov.Account, ov.Timezones = accountFrom(acct), timezonesFrom(acct)
	ov.Today = ov.Timezones.Today(now)
	ov.Days = make(map[string]business.Figures, len(days))
	for _, it := range days {
		ov.Days[getS(it, "date")] = sumsFrom(it)
	}
	var err error
	if ov.Receivables, err = receivablesOf(ov.Today, owed, debtors, names); err != nil {
		return Overview{}, err
	}
	ov.Stock, ov.Items = inventoryOf(stock, alerts)
	return ov, nil
}

// reportRange reads the items of the account's report partition whose sort
// keys are from..to (consistently, every page).
func (s *Store) reportRange(ctx context.Context, account, from, to string) ([]attrs, error) {
	var items []attrs
	err := s.readReport(ctx, account, []sortKeys{{from, to}}, "overview "+from, func(page []attrs) { items = append(items, page...) })
	if err != nil {
		return nil, err
	}
	return items, nil
}

// StockCounts returns how many of the account's items are in stock, low and
// out, as the last applied change left them (one GetItem of the STOCK item;
// the changes still waiting are not applied): for the dashboard's inventory
// page, whose items list beside them is read as it is.
func (s *Store) StockCounts(ctx context.Context, account string) (in, low, out int, err error) {
	stock, err := s.getItem(ctx, key(reportPK(account), stockSK), true)
	if err != nil {
		return 0, 0, 0, err
	}
	r, _ := inventoryOf(stock, nil)
	return r.InStock, r.LowStock, r.OutOfStock, nil
}
