package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"sync"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DueShards is how many partitions the due index is spread over: an
// account's deliveries live in one (chosen by a hash of the account), so
// retries scale out and one account's backlog never hides another's.
const DueShards = 16

// legacyDuePartition is where deliveries were due before sharding; it is
// still read so that none is left behind.
const legacyDuePartition = "DUE"

func duePartition(account string) string {
	h := fnv.New32a()
	h.Write([]byte(account))
	return fmt.Sprintf("DUE#%02d", h.Sum32()%DueShards)
}

// ErrNotClaimed says another runner holds the delivery's attempt, or it is no
// longer due; the caller skips it.
var ErrNotClaimed = errors.New("store: delivery not claimed")

func deliveryKey(account, tx string) attrs { return key(acctPK(account)+"#DELIVERY#"+tx, "DELIVERY") }

func deliveryItem(d business.Delivery) attrs {
	it := deliveryKey(d.AccountID, d.TransactionID)
	it["type"] = str("delivery")
	it["account_id"] = str(d.AccountID)
	it["transaction_id"] = str(d.TransactionID)
	it["webhook_id"] = str(d.WebhookID)
	it["payload"] = &types.AttributeValueMemberB{Value: d.Payload}
	it["created_at"] = str(fmtTime(d.CreatedAt))
	it[IndexCreated+"PK"] = str(acctPK(d.AccountID) + "#DELIVERY")
	it[IndexCreated+"SK"] = str(fmtTime(d.CreatedAt) + "#" + d.TransactionID)
	deliveryState(it, d)
	return it
}

// deliveryState writes the fields that change with each attempt.
func deliveryState(it attrs, d business.Delivery) {
	it["state"] = str(d.State)
	it["attempt"] = nInt(int64(d.Attempt))
	it["round_start"] = nInt(int64(d.RoundStart))
	it["next_at"] = nInt(d.NextAt.Unix())
	log := make([]types.AttributeValue, len(d.Attempts))
	for i, a := range d.Attempts {
		m := attrs{"at": str(fmtTime(a.At)), "status": nInt(int64(a.Status)), "ms": nInt(a.LatencyMS)}
		setS(m, "error", a.Error)
		log[i] = &types.AttributeValueMemberM{Value: m}
	}
	it["attempts"] = &types.AttributeValueMemberL{Value: log}
}

func dueSK(d business.Delivery) string {
	return fmt.Sprintf("%012d#%s#%s", d.NextAt.Unix(), d.AccountID, d.TransactionID)
}

func deliveryFrom(it attrs) business.Delivery {
	d := business.Delivery{
		AccountID: getS(it, "account_id"), TransactionID: getS(it, "transaction_id"), WebhookID: getS(it, "webhook_id"),
		State: getS(it, "state"), Attempt: int(getInt(it, "attempt")), RoundStart: int(getInt(it, "round_start")),
		NextAt: time.Unix(getInt(it, "next_at"), 0).UTC(), CreatedAt: getTime(it, "created_at"),
	}
	if b, ok := it["payload"].(*types.AttributeValueMemberB); ok {
		d.Payload = b.Value
	}
	if l, ok := it["attempts"].(*types.AttributeValueMemberL); ok {
		for _, v := range l.Value {
			if m, ok := v.(*types.AttributeValueMemberM); ok {
				d.Attempts = append(d.Attempts, business.DeliveryAttempt{
					At: getTime(m.Value, "at"), Status: int(getInt(m.Value, "status")),
					LatencyMS: getInt(m.Value, "ms"), Error: getS(m.Value, "error"),
				})
			}
		}
	}
	return d
}

// CreateDelivery stores a new delivery, due at once when pending. It returns
// false, without error, when the delivery already exists (a stream record
// seen twice), so each payment gets exactly one delivery.
func (s *Store) CreateDelivery(ctx context.Context, d business.Delivery) (bool, error) {
	it := deliveryItem(d)
	if d.Waiting() {
		it[IndexDue+"PK"], it[IndexDue+"SK"] = str(duePartition(d.AccountID)), str(dueSK(d))
	}
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: it, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	var cf *types.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("put delivery: %w", err)
	}
	return true, nil
}

// FindDelivery returns one delivery. Returns ENOTFOUND when missing.
func (s *Store) FindDelivery(ctx context.Context, account, tx string) (business.Delivery, error) {
	it, err := s.getOne(ctx, deliveryKey(account, tx), "Delivery not found", true)
	if err != nil {
		return business.Delivery{}, err
	}
	return deliveryFrom(it), nil
}

// Lease is a runner's exclusive hold on a delivery's next attempt.
type Lease struct {
	token string
	until int64
}

// ClaimDelivery takes the lease of d's next attempt until lease from now, so
// that no other runner makes the same attempt. It returns ErrNotClaimed when
// the attempt is not due, was made already, or is held by another runner
// whose lease has not expired (a runner that died mid-attempt loses it).
func (s *Store) ClaimDelivery(ctx context.Context, d business.Delivery, now time.Time, lease time.Duration) (Lease, error) {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	l := Lease{token: hex.EncodeToString(b), until: now.Add(lease).Unix()}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.table),
		Key:                      deliveryKey(d.AccountID, d.TransactionID),
		UpdateExpression:         aws.String("SET lease_token = :t, lease_until = :u"),
		ConditionExpression:      aws.String("#st IN (:pending, :held) AND attempt = :n AND next_at <= :now AND (attribute_not_exists(lease_until) OR lease_until < :now)"),
		ExpressionAttributeNames: map[string]string{"#st": "state"},
		ExpressionAttributeValues: attrs{
			":t": str(l.token), ":u": nInt(l.until), ":pending": str(business.DeliveryPending), ":held": str(business.DeliveryHeld),
			":n": nInt(int64(d.Attempt)), ":now": nInt(now.Unix()),
		},
	})
	var cf *types.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		return Lease{}, ErrNotClaimed
	}
	if err != nil {
		return Lease{}, fmt.Errorf("claim delivery: %w", err)
	}
	return l, nil
}

// SaveAttempt stores d after an attempt (or a hold) made under lease l: its
// state, log and, while it waits, its place in the due index. Returns ErrNotClaimed when
// the lease was lost (the attempt outlived it and another runner took over).
func (s *Store) SaveAttempt(ctx context.Context, d business.Delivery, l Lease) error {
	it := deliveryItem(d)
	if d.Waiting() {
		it[IndexDue+"PK"], it[IndexDue+"SK"] = str(duePartition(d.AccountID)), str(dueSK(d))
	}
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: it,
		ConditionExpression:       aws.String("lease_token = :t"),
		ExpressionAttributeValues: attrs{":t": str(l.token)},
	})
	var cf *types.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		return ErrNotClaimed
	}
	if err != nil {
		return fmt.Errorf("save delivery: %w", err)
	}
	return nil
}

// DueDeliveries returns deliveries whose next attempt is due at now, up to
// perShard from each shard of the due index (read in parallel), earliest
// first.
func (s *Store) DueDeliveries(ctx context.Context, now time.Time, perShard int) ([]business.Delivery, error) {
	partitions := []string{legacyDuePartition}
	for i := 0; i < DueShards; i++ {
		partitions = append(partitions, fmt.Sprintf("DUE#%02d", i))
	}
	results := make([][]business.Delivery, len(partitions))
	errs := make([]error, len(partitions))
	var wg sync.WaitGroup
	for i, pk := range partitions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := s.db.Query(ctx, &dynamodb.QueryInput{
				TableName:                 aws.String(s.table),
				IndexName:                 aws.String(IndexDue),
				KeyConditionExpression:    aws.String(IndexDue + "PK = :pk AND " + IndexDue + "SK < :to"),
				ExpressionAttributeValues: attrs{":pk": str(pk), ":to": str(fmt.Sprintf("%012d$", now.Unix()))},
				Limit:                     aws.Int32(int32(perShard)),
			})
			if err != nil {
				errs[i] = fmt.Errorf("query due deliveries: %w", err)
				return
			}
			for _, it := range out.Items {
				results[i] = append(results[i], deliveryFrom(it))
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var ds []business.Delivery
	for _, r := range results {
		ds = append(ds, r...)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].NextAt.Before(ds[j].NextAt) })
	return ds, nil
}

// ListDeliveries returns a page of an account's deliveries, newest first;
// state, when not empty, keeps only deliveries in that state.
func (s *Store) ListDeliveries(ctx context.Context, account, state string, limit int, cursor string) (Page[business.Delivery], error) {
	q := query{index: IndexCreated, pk: acctPK(account) + "#DELIVERY", limit: limit, cursor: cursor}
	if state != "" {
		q.filter, q.names, q.values = "#st = :st", map[string]string{"#st": "state"}, attrs{":st": str(state)}
	}
	return page(ctx, s, q, deliveryFrom)
}

// Redeliver queues a delivery that is not pending for a new round of
// attempts, due at now, with the same webhook-id, and returns it. Returns
// ENOTFOUND when missing and ECONFLICT when it is still pending.
func (s *Store) Redeliver(ctx context.Context, account, tx string, now time.Time) (business.Delivery, error) {
	d, err := s.FindDelivery(ctx, account, tx)
	if err != nil {
		return d, err
	}
	if d.Waiting() {
		return d, business.Errorf(business.ECONFLICT, "delivery of %s is still %s (attempt %d); it will be retried", tx, d.State, d.Attempt+1)
	}
	d.State, d.RoundStart, d.NextAt = business.DeliveryPending, d.Attempt, now
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       deliveryKey(account, tx),
		UpdateExpression:          aws.String("SET #st = :pending, round_start = :n, next_at = :now, " + IndexDue + "PK = :due, " + IndexDue + "SK = :sk REMOVE lease_token, lease_until"),
		ConditionExpression:       aws.String("attempt = :n AND NOT (#st IN (:pending, :held))"),
		ExpressionAttributeNames:  map[string]string{"#st": "state"},
		ExpressionAttributeValues: attrs{":pending": str(business.DeliveryPending), ":held": str(business.DeliveryHeld), ":n": nInt(int64(d.Attempt)), ":now": nInt(now.Unix()), ":due": str(duePartition(account)), ":sk": str(dueSK(d))},
	})
	var cf *types.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		return d, business.Errorf(business.ECONFLICT, "delivery of %s changed meanwhile; look again", tx)
	}
	if err != nil {
		return d, fmt.Errorf("redeliver: %w", err)
	}
	return d, nil
}
