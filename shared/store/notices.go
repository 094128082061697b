package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Notices. A sale's planned notices (business.PlanNotices) are items of the
// schedule: partition "NOTICE#<UTC day>" of the day each begins, sort key
// "<instant>#<account>#<code>#<kind>#<date>". The scheduler reads the
// partitions of the last few days up to now, so its reads grow with the
// notices due, never with the books. A sent notice leaves a marker in the
// sale's partition (SK "NOTICE#<kind>#<date>"), written only if absent: each
// kind is sent at most once per sale and date, whatever the edits between.

const noticeSchedulePrefix = "NOTICE#"

// NoticeLookback is how far back the scheduler looks for notices it has not
// yet handled: after a schedule stopped for up to this long, each sale's
// planned notice is still handled, late. The one after it is planned as of
// then, as any plan is, so a second notice of the same sale whose day fell
// within the stop is not sent (a date already past is never sent).
const NoticeLookback = 7 * 24 * time.Hour

func noticeSK(account, code string, n business.Notice) string {
	return fmtTime(n.At) + "#" + account + "#" + code + "#" + n.Kind + "#" + n.Date
}

// noticeScheduleKey is the key of a schedule item from its sort key, which
// begins with its instant.
func noticeScheduleKey(sk string) attrs {
	return key(noticeSchedulePrefix+sk[:len(business.DateFormat)], sk)
}

func noticeScheduleItem(account, code string, n business.Notice) attrs {
	sk := noticeSK(account, code, n)
	it := noticeScheduleKey(sk)
	it["type"] = str("notice_due")
	return it
}

// planNotices returns the schedule write that gives the sale next its next
// notice, planned as of now (business.NextNotice), and sets next.Scheduled
// to its key. A notice already in the schedule (cur planned it too) writes
// nothing. One that no longer applies is not deleted here: the scheduler
// drops it when its instant comes, so a create or an edit adds at most one
// action to its transaction.
func (s *Store) planNotices(account string, cur *SaleRecord, next *business.Sale, hist business.TimezoneHistory, now time.Time) []txItem {
	var old []string
	var sent []SentNotice
	if cur != nil {
		old, sent = cur.Sale.Scheduled, cur.Notices
	}
	next.Scheduled = nil
	n := business.NextNotice(*next, hist, now, handledIn(sent, nil))
	if n == nil {
		return nil
	}
	it := noticeScheduleItem(account, next.InvoiceCode, *n)
	next.Scheduled = []string{getS(it, "SK")}
	if slices.Contains(old, next.Scheduled[0]) {
		return nil
	}
	return []txItem{{action: put(s.table, it, "")}}
}

// noticesMove reports whether an edit from cur to next may change the
// notices planned: a date moved, or the sale asks for money again.
func noticesMove(cur, next business.Sale) bool {
	if !next.Owes() {
		return false // left planned: the scheduler drops them unsent
	}
	if !cur.Owes() {
		return true
	}
	for _, k := range business.NoticeKinds {
		if business.NoticeDate(cur, k) != business.NoticeDate(next, k) {
			return true
		}
	}
	return false
}

// DueNotice is a planned notice whose instant has come.
type DueNotice struct {
	Account     string
	InvoiceCode string
	business.Notice
	sk string
}

func dueNoticeFrom(it attrs) (DueNotice, bool) {
	sk := getS(it, "SK")
	parts := strings.Split(sk, "#")
	if len(parts) != 5 {
		return DueNotice{}, false
	}
	at, err := time.Parse(business.TimeFormat, parts[0])
	if err != nil {
		return DueNotice{}, false
	}
	return DueNotice{Account: parts[1], InvoiceCode: parts[2], Notice: business.Notice{Kind: parts[3], Date: parts[4], At: at}, sk: sk}, true
}

// DueNotices returns up to limit planned notices whose instant is at or
// before now, oldest first, from the schedule's last NoticeLookback days.
func (s *Store) DueNotices(ctx context.Context, now time.Time, limit int) ([]DueNotice, error) {
	var out []DueNotice
	bound := fmtTime(now.Add(time.Second))
	for day := now.Add(-NoticeLookback).UTC(); !day.After(now) && len(out) < limit; day = day.AddDate(0, 0, 1) {
		p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
			TableName:              aws.String(s.table),
			KeyConditionExpression: aws.String("PK = :pk AND SK < :b"),
			ExpressionAttributeValues: attrs{
				":pk": str(noticeSchedulePrefix + day.Format(business.DateFormat)), ":b": str(bound),
			},
			Limit: aws.Int32(int32(limit - len(out))),
		})
		for p.HasMorePages() && len(out) < limit {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("query notices: %w", err)
			}
			for _, it := range page.Items {
				if n, ok := dueNoticeFrom(it); ok && len(out) < limit {
					out = append(out, n)
				}
			}
		}
	}
	return out, nil
}

// NoticeCase is what deciding a notice needs: the sale with its link and
// sent notices, its account with the zone history, and the customer's
// email address.
type NoticeCase struct {
	Sale          SaleRecord
	Account       business.Account
	Timezones     business.TimezoneHistory
	CustomerEmail string
}

// FindNoticeCase reads the case of notice n: the sale and the account
// together, then the customer. Returns ENOTFOUND when the sale or the
// account is gone.
func (s *Store) FindNoticeCase(ctx context.Context, n DueNotice) (NoticeCase, error) {
	doc, err := s.FindInvoice(ctx, n.Account, n.InvoiceCode)
	if err != nil {
		return NoticeCase{}, err
	}
	c := NoticeCase{Sale: doc.Sale, Account: doc.Account, Timezones: doc.Timezones}
	if n.Kind == business.NoticeReminder {
		cust, err := s.getItem(ctx, customerKey(n.Account, doc.Sale.Sale.CustomerID), true)
		if err != nil {
			return NoticeCase{}, err
		}
		if cust != nil {
			c.CustomerEmail = customerFrom(cust).Email
		}
	}
	return c, nil
}

// handledIn reports the notices sent, and the one being handled.
func handledIn(sent []SentNotice, handling *DueNotice) func(kind, date string) bool {
	return func(kind, date string) bool {
		if handling != nil && handling.Kind == kind && handling.Date == date {
			return true
		}
		return slices.ContainsFunc(sent, func(m SentNotice) bool { return m.Kind == kind && m.Date == date })
	}
}

// afterNotice returns the writes that take n out of the schedule and put
// the sale's next notice in (c nil: the sale is gone, so none).
func (s *Store) afterNotice(n DueNotice, c *NoticeCase, now time.Time) []txItem {
	acts := []txItem{{action: types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: noticeScheduleKey(n.sk)}}}}
	if c == nil {
		return acts
	}
	next := business.NextNotice(c.Sale.Sale, c.Timezones, now, handledIn(c.Sale.Notices, &n))
	if next == nil {
		return acts
	}
	return append(acts, txItem{action: put(s.table, noticeScheduleItem(n.Account, n.InvoiceCode, *next), "")})
}

// DropNotice removes a planned notice unsent (c nil: its sale or account is
// gone) and plans the sale's next one.
func (s *Store) DropNotice(ctx context.Context, n DueNotice, c *NoticeCase) error {
	if acts := s.afterNotice(n, c, s.stamp()); len(acts) > 0 {
		return s.transact(ctx, acts)
	}
	return nil
}

// PlanNoticeAgain moves a notice to instant at: where its date begins in the
// account's zone now (the account moved west since it was planned), or an
// hour on for a reminder the mail server refused. The sale's record of its
// schedule is left as it is: the moved item is handled as any other, and an
// edit that plans anew puts the sale's next notice beside it (the one that
// no longer applies is dropped when its instant comes).
func (s *Store) PlanNoticeAgain(ctx context.Context, n DueNotice, at time.Time) error {
	if at.Equal(n.At) {
		return nil
	}
	moved := n.Notice
	moved.At = at
	return s.transact(ctx, []txItem{
		{action: put(s.table, noticeScheduleItem(n.Account, n.InvoiceCode, moved), "")},
		{action: types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: noticeScheduleKey(n.sk)}}},
	})
}

// SentNotice is the marker a handled notice leaves in its sale's partition.
// Sending is a reminder claimed but not yet known sent (see ClaimNotice).
type SentNotice struct {
	Kind    string
	Date    string
	At      time.Time
	Sending bool
}

func sentNoticeFrom(it attrs) SentNotice {
	return SentNotice{Kind: getS(it, "kind"), Date: getS(it, "date"), At: getTime(it, "at"), Sending: getS(it, "state") == "sending"}
}

func noticeMarkerKey(account, code, kind, date string) attrs {
	return key(salePK(account, code), "NOTICE#"+kind+"#"+date)
}

// ErrNoticeTaken says a notice's marker exists: it was sent, or is being
// sent by another run.
var ErrNoticeTaken = errors.New("store: notice already handled")

// ClaimNotice writes the marker of a reminder about to be sent, in the state
// "sending", only if the notice has none: of two runs only one sends.
// Returns ErrNoticeTaken with the marker found.
func (s *Store) ClaimNotice(ctx context.Context, n DueNotice) (SentNotice, error) {
	m := noticeMarkerKey(n.Account, n.InvoiceCode, n.Kind, n.Date)
	m["type"], m["kind"], m["date"] = str("notice"), str(n.Kind), str(n.Date)
	m["state"], m["at"] = str("sending"), str(fmtTime(s.stamp()))
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: m, ConditionExpression: aws.String("attribute_not_exists(PK)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var cf *types.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		return sentNoticeFrom(cf.Item), ErrNoticeTaken
	}
	if err != nil {
		return SentNotice{}, fmt.Errorf("claim notice: %w", err)
	}
	return sentNoticeFrom(m), nil
}

// ReleaseNotice deletes a claimed reminder's marker whose email was not
// sent, so the next run tries again.
func (s *Store) ReleaseNotice(ctx context.Context, n DueNotice) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table), Key: noticeMarkerKey(n.Account, n.InvoiceCode, n.Kind, n.Date),
		ConditionExpression: aws.String("#s = :sending"), ExpressionAttributeNames: map[string]string{"#s": "state"},
		ExpressionAttributeValues: attrs{":sending": str("sending")},
	})
	var cf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &cf) {
		return fmt.Errorf("release notice: %w", err)
	}
	return nil
}

// RecordNotice records notice n of the sale as sent, with its event
// (sale.reminder_sent or sale.overdue), and removes it from the schedule,
// in one transaction. The marker is written only if absent, or if this
// run's claim holds it ("sending"): a notice already recorded is only
// removed from the schedule.
func (s *Store) RecordNotice(ctx context.Context, n DueNotice, c NoticeCase) error {
	now := s.stamp()
	m := noticeMarkerKey(n.Account, n.InvoiceCode, n.Kind, n.Date)
	m["type"], m["kind"], m["date"] = str("notice"), str(n.Kind), str(n.Date)
	m["state"], m["at"] = str("sent"), str(fmtTime(now))
	p := &types.Put{
		TableName: aws.String(s.table), Item: m,
		ConditionExpression:      aws.String("attribute_not_exists(PK) OR #s = :sending"),
		ExpressionAttributeNames: map[string]string{"#s": "state"}, ExpressionAttributeValues: attrs{":sending": str("sending")},
	}
	ev := newEvents(n.Account, now)
	ev.sale(noticeEvents[n.Kind], c.Sale)
	actions, err := s.withEvents(append([]txItem{{action: types.TransactWriteItem{Put: p}, onFail: ErrNoticeTaken}}, s.afterNotice(n, &c, now)...), ev)
	if err != nil {
		return err
	}
	err = s.transact(ctx, actions)
	if errors.Is(err, ErrNoticeTaken) {
		return s.DropNotice(ctx, n, &c)
	}
	return err
}

var noticeEvents = map[string]string{
	business.NoticeReminder: business.EventSaleReminderSent,
	business.NoticeOverdue:  business.EventSaleOverdue,
}

// InvoiceLinkToken returns the token of the sale's active link, making a
// link when it has none (or when its token cannot be opened, which only a
// changed CURSOR_SECRET causes). Making one is a new version of the sale:
// rec's sale becomes it, so that what is recorded next (the reminder's
// event) shows the sale as it now is.
func (s *Store) InvoiceLinkToken(ctx context.Context, account, code string, rec *SaleRecord) (string, error) {
	if l := rec.Sale.Link; l != nil {
		if t := s.openToken(l.Sealed); t != "" {
			return t, nil
		}
	}
	made, err := s.CreateInvoiceLink(ctx, account, code)
	if err != nil {
		return "", err
	}
	rec.Sale = made.Sale
	return made.Sale.Link.Token, nil
}
