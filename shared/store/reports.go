package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Reports: the summary's sums (kept as figures.go says), and what
// receivables and the inventory report read.

// ReportDays returns the figures of the account's local days from..to
// (inclusive), by date, with every change answered before the call counted
// (see ReportFigures), and how many items it read.
func (s *Store) ReportDays(ctx context.Context, account, from, to string) (map[string]business.Figures, int, error) {
	hist, err := s.timezoneHistory(ctx, account)
	if err != nil {
		return nil, 0, err
	}
	r, err := s.ReportFigures(ctx, account, hist, []business.Period{{Start: from, End: to}}, nil)
	return r.Days, r.Read + 1, err
}

// ReportSums is what ReportFigures read.
type ReportSums struct {
	Days, Months map[string]business.Figures // by date, by yyyy-mm
	// Parked counts the account's changes set aside because they could not
	// be applied (and those that could not be set aside either, left
	// waiting): while there are any, the figures leave them out.
	Parked int
	Read   int // items read
}

// ReportFigures returns the figures of the account's local days within
// dayRanges and of its local months (yyyy-mm) months, by date and by month
// (those without any are absent), with every change answered before the
// call counted: it applies the figures items still waiting, then reads the
// days and months (one Query per day range and one for the months, at
// once, with a look for changes set aside). hist is the account's timezone
// history, read consistently as the request began: a zone takes effect
// TimezoneDelay after its change, so it holds every zone in effect at the
// instants of the changes waiting. Returns EBUSY when more than
// maxPendingApplied changes wait (the stream's consumer is behind; a retry
// goes on from where this one stopped).
func (s *Store) ReportFigures(ctx context.Context, account string, hist business.TimezoneHistory, dayRanges []business.Period, months []string) (ReportSums, error) {
	read, parked, err := s.applyWaiting(ctx, account, hist)
	if err != nil {
		return ReportSums{Read: read}, err
	}
	var spans []sortKeys
	for _, r := range dayRanges {
		spans = append(spans, sortKeys{dayPrefix + r.Start, dayPrefix + r.End})
	}
	if len(months) > 0 {
		spans = append(spans, sortKeys{monthPrefix + slices.Min(months), monthPrefix + slices.Max(months)})
	}
	spans = append(spans, sortKeys{parkedPrefix, parkedPrefix + "~"})
	days, monthly := map[string]business.Figures{}, map[string]business.Figures{}
	err = s.readReport(ctx, account, spans, "report figures", func(items []attrs) {
		read += len(items)
		for _, it := range items {
			switch sk := getS(it, "SK"); {
			case strings.HasPrefix(sk, parkedPrefix):
				parked++
			case strings.HasPrefix(sk, monthPrefix):
				monthly[getS(it, "date")] = sumsFrom(it)
			default:
				days[getS(it, "date")] = sumsFrom(it)
			}
		}
	})
	return ReportSums{Days: days, Months: monthly, Parked: parked, Read: read}, err
}

// sortKeys is a range of sort keys, from..to, both included.
type sortKeys struct{ from, to string }

// readReport reads the spans of the account's report partition at once,
// each consistently and to its end, handing got each page in turn; what
// names the read in its errors.
func (s *Store) readReport(ctx context.Context, account string, spans []sortKeys, what string, got func([]attrs)) error {
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(spans))
	for i, sp := range spans {
		wg.Go(func() {
			pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
				TableName:                 aws.String(s.table),
				KeyConditionExpression:    aws.String("PK = :pk AND SK BETWEEN :from AND :to"),
				ExpressionAttributeValues: attrs{":pk": str(reportPK(account)), ":from": str(sp.from), ":to": str(sp.to)},
				ConsistentRead:            aws.Bool(true),
			})
			for pages.HasMorePages() {
				out, err := pages.NextPage(ctx)
				if err != nil {
					errs[i] = fmt.Errorf("query %s: %w", what, err)
					return
				}
				mu.Lock()
				got(out.Items)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// OpenSales returns what receivables need of every sale that is neither
// paid nor void (draft and partial), read from the status index (IX4) to
// the end of each status's partition, and how many items that read: one per
// open sale (and, for a sale written before views, its item from the
// table). A sale paid in part while the drafts were read may be listed by
// both statuses: it is kept once, as the later version. It is a recount,
// against which the receivables kept as the books change (Receivables) are
// checked.
func (s *Store) OpenSales(ctx context.Context, account string) ([]business.Sale, int, error) {
	var out []business.Sale
	read := 0
	at := map[string]int{}
	for _, status := range []string{business.StatusDraft, business.StatusPartial} {
		n, err := s.wholePartition(ctx, IndexStatus, acctPK(account)+"#SALE#STATUS#"+status, func(it attrs) {
			x := saleSummaryFrom(it)
			if i, ok := at[x.InvoiceCode]; ok {
				if x.Version > out[i].Version {
					out[i] = x
				}
				return
			}
			at[x.InvoiceCode] = len(out)
			out = append(out, x)
		})
		read += n
		if err != nil {
			return nil, read, err
		}
	}
	return out, read, nil
}

// wholePartition reads an index partition to its end, page by page as
// DynamoDB pages it (each entry read once), giving each entry to got with
// its view; entries of records written before views are read from the
// table. It returns how many items it read.
func (s *Store) wholePartition(ctx context.Context, ix Index, pk string, got func(attrs)) (int, error) {
	pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(ix.Name),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": ix.PK},
		ExpressionAttributeValues: attrs{":pk": str(pk)},
	})
	read := 0
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return read, fmt.Errorf("query %s: %w", ix.Name, err)
		}
		read += len(out.Items)
		for _, it := range out.Items {
			if !hasView(it) {
				read++
			}
		}
		if err := s.withViews(ctx, out.Items); err != nil {
			return read, err
		}
		for _, it := range out.Items {
			got(it)
		}
	}
	return read, nil
}

// CustomerNames returns the current names of the customers ids names (one
// BatchGetItem per 100); a customer that no longer exists is left out.
func (s *Store) CustomerNames(ctx context.Context, account string, ids []int64) (map[string]string, error) {
	keys := make([]attrs, len(ids))
	for i, id := range ids {
		keys[i] = customerKey(account, id)
	}
	found, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, it := range found {
		if it != nil {
			out[strconv.FormatInt(ids[i], 10)] = customerFrom(it).Name
		}
	}
	return out, nil
}

// AllItems returns every inventory item of the account (their views, from
// IX1 to the end of the account's items), and how many items that read: a
// recount, against which the worth kept as the books change (Inventory) is
// checked.
func (s *Store) AllItems(ctx context.Context, account string) ([]business.Item, int, error) {
	var out []business.Item
	read, err := s.wholePartition(ctx, IndexCreated, acctPK(account)+"#ITEM", func(it attrs) { out = append(out, invItemFrom(it)) })
	return out, read, err
}
