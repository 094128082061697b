package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The webhook queue of an account. The dispatcher does not read deliveries
// from one shared index: each account has one queue item (PK A#<acct>, SK
// WEBHOOKQ) whose entry in the due index's shard says when the account next
// has work ("ready"), and the account's waiting deliveries are due-ordered in
// a partition of the same index of their own (A#<acct>#DUE). So one entry per
// account, however deep its backlog, is all a shard holds: a merchant with
// thousands of waiting deliveries takes one place in its shard, as a merchant
// with one does.
//
// The queue item also carries the account's circuit breaker, shared by every
// dispatcher: consecutive failures, held-until, and the claim of the one
// probe per interval. While the circuit is open the ready entry waits at
// held-until and the held deliveries are not touched.
//
// The ready entry may be early (a dispatcher finds nothing due and moves it
// on) but never late: it is brought to now when a delivery is queued (Wake)
// and moved later only by Park, from a read of the account's partition, on
// the condition that nothing was queued since that read began.

const queueSK = "WEBHOOKQ"

func queueKey(account string) attrs { return key(acctPK(account), queueSK) }

// accountDuePK is the due index partition of one account's waiting
// deliveries.
func accountDuePK(account string) string { return acctPK(account) + "#DUE" }

func readySK(at time.Time, account string) string { return fmt.Sprintf("%012d#%s", at.Unix(), account) }

// ShardOf returns the due index shard (0..DueShards-1) of an account's ready
// entry: tests and benchmarks use it to put merchants side by side.
func ShardOf(account string) int {
	var n int
	_, _ = fmt.Sscanf(duePartition(account), "DUE#%d", &n)
	return n
}

// Queue is an account's ready entry and circuit breaker as read.
type Queue struct {
	AccountID string
	ReadyAt   time.Time
	// Gen counts the times deliveries were queued; Park is conditional on it.
	Gen int64
	// QueuedAt is when a delivery was last queued.
	QueuedAt time.Time
	// Failures counts consecutive failed attempts.
	Failures int
	// HeldUntil is when the open circuit allows its next probe; zero when
	// the circuit is closed.
	HeldUntil time.Time
	// ProbeUntil is the lease of the probe under way, if any.
	ProbeUntil time.Time
	// FailingSince is when the first of the failed attempts since the last
	// success was made; zero when the last attempt succeeded. A webhook
	// endpoint failing for long enough is disabled.
	FailingSince time.Time
}

// Held reports whether the account's circuit is open at now and not yet due
// for its probe.
func (q Queue) Held(now time.Time) bool { return !q.HeldUntil.IsZero() && now.Before(q.HeldUntil) }

// Open reports whether the account's circuit is open (held, or waiting for
// its probe).
func (q Queue) Open() bool { return !q.HeldUntil.IsZero() }

// View is d as a merchant sees it: a waiting delivery of an account whose
// circuit is open is held until the probe.
func (q Queue) View(d business.Delivery) business.Delivery {
	if q.Open() && d.Waiting() {
		d.State = business.DeliveryHeld
		if d.NextAt.Before(q.HeldUntil) {
			d.NextAt = q.HeldUntil
		}
	}
	return d
}

func unixAt(it attrs, k string) time.Time {
	if getN(it, k) == "" {
		return time.Time{}
	}
	return time.Unix(getInt(it, k), 0).UTC()
}

func queueFrom(it attrs) Queue {
	return Queue{
		AccountID: getS(it, "account_id"), ReadyAt: unixAt(it, "ready_at"), Gen: getInt(it, "gen"),
		QueuedAt: unixAt(it, "queued_at"), Failures: int(getInt(it, "failures")),
		HeldUntil: unixAt(it, "held_until"), ProbeUntil: unixAt(it, "probe_until"),
		FailingSince: unixAt(it, "failing_since"),
	}
}

// wakeUpdate brings the account's ready entry to now (or, while its circuit
// is open, to the probe time, which it keeps), and records that deliveries
// were queued.
func (s *Store) wakeUpdate(account string, now time.Time) *types.Update {
	return &types.Update{
		TableName: aws.String(s.table),
		Key:       queueKey(account),
		UpdateExpression: aws.String("SET #type = :type, account_id = :a, queued_at = :now, " +
			"ready_at = if_not_exists(held_until, :now), " + IndexDue.PK + " = :shard, " +
			IndexDue.SK + " = if_not_exists(held_sk, :sk) ADD gen :one"),
		ExpressionAttributeNames: map[string]string{"#type": "type"},
		ExpressionAttributeValues: attrs{":type": str("webhook_queue"), ":a": str(account), ":now": nInt(now.Unix()),
			":shard": str(duePartition(account)), ":sk": str(readySK(now, account)), ":one": nInt(1)},
	}
}

// Wake tells the dispatcher that the account has deliveries due at now: call
// it after they are stored.
func (s *Store) Wake(ctx context.Context, account string, now time.Time) error {
	u := s.wakeUpdate(account, now)
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression,
		ExpressionAttributeNames: u.ExpressionAttributeNames, ExpressionAttributeValues: u.ExpressionAttributeValues,
	})
	if err != nil {
		return fmt.Errorf("wake webhook queue: %w", err)
	}
	return nil
}

// ReadyPages bounds how many pages of ready entries one read takes from a
// shard: 4 pages of 100 accounts, 6,400 accounts due at once over the shards.
const ReadyPages = 4

// ReadyQueues returns the accounts whose ready entry is due at now, from
// every shard of the due index and the legacy partition (read in parallel),
// earliest first; when a shard cannot be read, what the others hold and the
// error. A delivery left in a shard by an earlier version of the dispatcher
// is moved to its account's partition, its account woken first, on the way.
func (s *Store) ReadyQueues(ctx context.Context, now time.Time) ([]Queue, error) {
	partitions := []string{legacyDuePartition}
	for i := 0; i < DueShards; i++ {
		partitions = append(partitions, fmt.Sprintf("DUE#%02d", i))
	}
	results := make([][]Queue, len(partitions))
	errs := make([]error, len(partitions))
	var wg sync.WaitGroup
	for i, pk := range partitions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = s.readyIn(ctx, pk, now)
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	var qs []Queue
	for _, r := range results {
		for _, q := range r {
			if !seen[q.AccountID] {
				seen[q.AccountID] = true
				qs = append(qs, q)
			}
		}
	}
	sort.SliceStable(qs, func(i, j int) bool { return qs[i].ReadyAt.Before(qs[j].ReadyAt) })
	return qs, errors.Join(errs...)
}

func (s *Store) readyIn(ctx context.Context, pk string, now time.Time) ([]Queue, error) {
	var qs []Queue
	var start attrs
	for p := 0; p < ReadyPages; p++ {
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			IndexName:                 aws.String(IndexDue.Name),
			KeyConditionExpression:    aws.String(IndexDue.PK + " = :pk AND " + IndexDue.SK + " < :to"),
			ExpressionAttributeValues: attrs{":pk": str(pk), ":to": str(fmt.Sprintf("%012d$", now.Unix()))},
			Limit:                     aws.Int32(100),
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return qs, fmt.Errorf("query ready accounts: %w", err)
		}
		woken := map[string]bool{}
		for _, it := range out.Items {
			switch getS(it, "type") {
			case "webhook_queue":
				qs = append(qs, queueFrom(it))
			case "delivery":
				// Wake first: a delivery moved out of the shard must find its
				// account ready.
				if account := getS(it, "account_id"); !woken[account] {
					if err := s.Wake(ctx, account, now); err != nil {
						return qs, err
					}
					woken[account] = true
				}
				if err := s.moveLegacyDue(ctx, it); err != nil {
					return qs, err
				}
			}
		}
		if out.LastEvaluatedKey == nil {
			break
		}
		start = out.LastEvaluatedKey
	}
	return qs, nil
}

// moveLegacyDue moves a waiting delivery from a shard of the due index (where
// deliveries were due before each account had its own partition) to its
// account's partition.
func (s *Store) moveLegacyDue(ctx context.Context, it attrs) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key(getS(it, "PK"), getS(it, "SK")),
		UpdateExpression:          aws.String("SET " + IndexDue.PK + " = :pk"),
		ConditionExpression:       aws.String(IndexDue.PK + " = :old"),
		ExpressionAttributeValues: attrs{":pk": str(accountDuePK(getS(it, "account_id"))), ":old": it[IndexDue.PK]},
	})
	var cf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &cf) {
		return fmt.Errorf("move legacy due delivery: %w", err)
	}
	return nil
}

// DueDelivery is a waiting delivery as the due index holds it, with the
// lease of an attempt under way, if any.
type DueDelivery struct {
	business.Delivery
	LeaseUntil time.Time
}

// AccountDue returns up to limit of the account's waiting deliveries, earliest
// due first, whether or not they are due yet, and whether more follow.
func (s *Store) AccountDue(ctx context.Context, account string, limit int) ([]DueDelivery, bool, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(IndexDue.Name),
		KeyConditionExpression:    aws.String(IndexDue.PK + " = :pk"),
		ExpressionAttributeValues: attrs{":pk": str(accountDuePK(account))},
		Limit:                     aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, false, fmt.Errorf("query account's due deliveries: %w", err)
	}
	ds := make([]DueDelivery, len(out.Items))
	for i, it := range out.Items {
		ds[i] = DueDelivery{Delivery: deliveryFrom(it), LeaseUntil: unixAt(it, "lease_until")}
	}
	return ds, out.LastEvaluatedKey != nil, nil
}

// Park moves the account's ready entry to next, or removes it when next is
// zero (nothing waits), unless deliveries were queued since q was read or its
// circuit opened meanwhile. It returns ErrNotClaimed when it did not.
func (s *Store) Park(ctx context.Context, q Queue, next time.Time) error {
	in := &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       queueKey(q.AccountID),
		ConditionExpression:       aws.String("attribute_exists(PK) AND gen = :gen AND attribute_not_exists(held_until)"),
		ExpressionAttributeValues: attrs{":gen": nInt(q.Gen)},
	}
	if next.IsZero() {
		in.UpdateExpression = aws.String("REMOVE ready_at, " + IndexDue.PK + ", " + IndexDue.SK)
	} else {
		in.UpdateExpression = aws.String("SET ready_at = :at, " + IndexDue.PK + " = :shard, " + IndexDue.SK + " = :sk")
		in.ExpressionAttributeValues[":at"] = nInt(next.Unix())
		in.ExpressionAttributeValues[":shard"] = str(duePartition(q.AccountID))
		in.ExpressionAttributeValues[":sk"] = str(readySK(next, q.AccountID))
	}
	_, err := s.db.UpdateItem(ctx, in)
	return notClaimedOr(err, "park webhook queue")
}

// FindQueue returns the account's webhook queue (zero when it has none).
func (s *Store) FindQueue(ctx context.Context, account string) (Queue, error) {
	it, err := s.getItem(ctx, queueKey(account), true)
	if err != nil || it == nil {
		return Queue{AccountID: account}, err
	}
	return queueFrom(it), nil
}

// ClaimProbe takes the one probe of the account's open circuit, whose time
// has come, for lease; ErrNotClaimed when another dispatcher holds it or the
// circuit changed since q was read.
func (s *Store) ClaimProbe(ctx context.Context, q Queue, now time.Time, lease time.Duration) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       queueKey(q.AccountID),
		UpdateExpression:          aws.String("SET probe_until = :until"),
		ConditionExpression:       aws.String("held_until = :held AND held_until <= :now AND (attribute_not_exists(probe_until) OR probe_until < :now)"),
		ExpressionAttributeValues: attrs{":until": nInt(now.Add(lease).Unix()), ":held": nInt(q.HeldUntil.Unix()), ":now": nInt(now.Unix())},
	})
	return notClaimedOr(err, "claim probe")
}

// holdSet is the update that opens (or keeps open) the account's circuit
// until: the ready entry waits at the probe time.
func holdSet(account string, until time.Time, v attrs) string {
	v[":until"], v[":heldsk"], v[":shard"] = nInt(until.Unix()), str(readySK(until, account)), str(duePartition(account))
	return "held_until = :until, held_sk = :heldsk, ready_at = :until, " + IndexDue.PK + " = :shard, " + IndexDue.SK + " = :heldsk"
}

// AttemptFailed counts a failed attempt of the account's deliveries and
// opens its circuit until now+hold when the count reaches threshold, or when
// the attempt was the probe of an open circuit. It returns whether the
// circuit opened (for the first time: a failed probe keeps it open), until
// when the circuit holds when it is open, and since when every attempt has
// failed (the streak a probe's failure extends too, so an endpoint held by
// its circuit keeps counting toward being disabled).
func (s *Store) AttemptFailed(ctx context.Context, account string, now time.Time, threshold int, hold time.Duration, probe bool) (opened bool, until, since time.Time, err error) {
	until = now.Add(hold).Truncate(time.Second)
	if probe {
		v := attrs{":one": nInt(1), ":now": nInt(now.Unix())}
		out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.table), Key: queueKey(account),
			UpdateExpression: aws.String("SET " + holdSet(account, until, v) + ", failing_since = if_not_exists(failing_since, :now) " +
				"ADD failures :one REMOVE probe_until"),
			ExpressionAttributeValues: v,
			ReturnValues:              types.ReturnValueAllNew,
		})
		if err != nil {
			return false, time.Time{}, time.Time{}, fmt.Errorf("hold webhook queue: %w", err)
		}
		return false, until, queueFrom(out.Attributes).FailingSince, nil
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: queueKey(account),
		UpdateExpression: aws.String("SET #type = :type, account_id = :a, gen = if_not_exists(gen, :zero), " +
			"failing_since = if_not_exists(failing_since, :now) ADD failures :one"),
		ExpressionAttributeNames: map[string]string{"#type": "type"},
		ExpressionAttributeValues: attrs{":one": nInt(1), ":zero": nInt(0), ":type": str("webhook_queue"), ":a": str(account),
			":now": nInt(now.Unix())},
		ReturnValues: types.ReturnValueAllNew,
	})
	if err != nil {
		return false, time.Time{}, time.Time{}, fmt.Errorf("count webhook failure: %w", err)
	}
	q := queueFrom(out.Attributes)
	since = q.FailingSince
	if q.Open() {
		return false, q.HeldUntil, since, nil
	}
	if q.Failures < threshold {
		return false, time.Time{}, since, nil
	}
	v := attrs{":n": nInt(int64(threshold))}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: queueKey(account),
		UpdateExpression:          aws.String("SET " + holdSet(account, until, v)),
		ConditionExpression:       aws.String("attribute_not_exists(held_until) AND failures >= :n"),
		ExpressionAttributeValues: v,
	})
	var cf *types.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		return false, time.Time{}, since, nil // a success reset it, or another dispatcher opened it
	}
	if err != nil {
		return false, time.Time{}, since, fmt.Errorf("open webhook circuit: %w", err)
	}
	return true, until, since, nil
}

// AttemptSucceeded closes the account's circuit and resets its failure
// count and streak; an account held until now is due at once for the rest of
// its deliveries.
func (s *Store) AttemptSucceeded(ctx context.Context, account string, now time.Time) error {
	return s.closeCircuit(ctx, account, now, ", failing_since")
}

// CloseCircuit closes the account's circuit and resets its failure count
// without an attempt having succeeded (its probe found nothing due to make
// one with): the streak of failed attempts goes on, so an endpoint whose
// deliveries all fail is still disabled in time.
func (s *Store) CloseCircuit(ctx context.Context, account string, now time.Time) error {
	return s.closeCircuit(ctx, account, now, "")
}

// closeCircuit is AttemptSucceeded and CloseCircuit; remove lists more
// attributes to remove (", a, b").
func (s *Store) closeCircuit(ctx context.Context, account string, now time.Time, remove string) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: queueKey(account),
		UpdateExpression: aws.String("SET failures = :zero, ready_at = :now, " + IndexDue.PK + " = :shard, " + IndexDue.SK + " = :sk " +
			"REMOVE held_until, held_sk, probe_until" + remove),
		ConditionExpression: aws.String("attribute_exists(PK)"),
		ExpressionAttributeValues: attrs{":zero": nInt(0), ":now": nInt(now.Unix()), ":shard": str(duePartition(account)),
			":sk": str(readySK(now, account))},
	})
	var cf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &cf) {
		return fmt.Errorf("close webhook circuit: %w", err)
	}
	return nil
}
