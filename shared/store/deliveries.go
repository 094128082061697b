package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DueShards is how many partitions the accounts' ready entries are spread
// over (chosen by a hash of the account; see queue.go), so the dispatcher's
// reads scale out.
const DueShards = 16

// legacyDuePartition is where deliveries were due before sharding; it is
// still read, and what it holds moved on, so that none is left behind.
const legacyDuePartition = "DUE"

func duePartition(account string) string {
	h := fnv.New32a()
	h.Write([]byte(account))
	return fmt.Sprintf("DUE#%02d", h.Sum32()%DueShards)
}

// ErrNotClaimed says another runner holds the delivery's attempt, or it is no
// longer due; the caller skips it.
var ErrNotClaimed = errors.New("store: delivery not claimed")

// notClaimedOr is ErrNotClaimed when err is a failed condition of a
// conditional write, else err wrapped as what failed (nil when nil).
func notClaimedOr(err error, what string) error {
	var cf *types.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		return ErrNotClaimed
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func deliveryKey(account, tx string) attrs { return key(acctPK(account)+"#DELIVERY#"+tx, "DELIVERY") }

func deliveryItem(d business.Delivery) attrs {
	it := deliveryKey(d.AccountID, d.TransactionID)
	it["type"] = str("delivery")
	it["account_id"] = str(d.AccountID)
	it["transaction_id"] = str(d.TransactionID)
	it["webhook_id"] = str(d.WebhookID)
	it["payload"] = &types.AttributeValueMemberB{Value: d.Payload}
	it["created_at"] = str(fmtTime(d.CreatedAt))
	it[IndexCreated.PK] = str(acctPK(d.AccountID) + "#DELIVERY")
	it[IndexCreated.SK] = str(fmtTime(d.CreatedAt) + "#" + d.TransactionID)
	deliveryState(it, d)
	if _, _, ok := SplitEndpointQueue(d.AccountID); ok {
		// An endpoint's delivery carries its event, kept as long as events
		// are (a payment's delivery is the payment's record, kept for good).
		it[TTLAttribute] = nInt(d.CreatedAt.Add(business.EventRetention).Unix())
	}
	if d.Waiting() {
		it[IndexDue.PK], it[IndexDue.SK] = str(accountDuePK(d.AccountID)), str(dueSK(d))
	}
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

// leaseTokenBytes is the length of a lease's token (hex).
const leaseTokenBytes = 24

// Lease is a runner's exclusive hold on a delivery's next attempt.
type Lease struct {
	token string
	until int64
}

// ClaimDelivery takes the lease of d's next attempt until lease from now, so
// that no other runner makes the same attempt. It returns ErrNotClaimed when
// the attempt is not due, was made already, or is held by another runner
// whose lease has not expired (a runner that died mid-attempt loses it). The
// SDK's retry of a claim that committed though its answer was lost finds its
// own token and takes the lease still.
func (s *Store) ClaimDelivery(ctx context.Context, d business.Delivery, now time.Time, lease time.Duration) (Lease, error) {
	b := make([]byte, leaseTokenBytes/2)
	_, _ = rand.Read(b)
	l := Lease{token: hex.EncodeToString(b), until: now.Add(lease).Unix()}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.table),
		Key:                      deliveryKey(d.AccountID, d.TransactionID),
		UpdateExpression:         aws.String("SET lease_token = :t, lease_until = :u"),
		ConditionExpression:      aws.String("#st IN (:pending, :held) AND attempt = :n AND next_at <= :now AND (attribute_not_exists(lease_until) OR lease_until < :now OR lease_token = :t)"),
		ExpressionAttributeNames: map[string]string{"#st": "state"},
		ExpressionAttributeValues: attrs{
			":t": str(l.token), ":u": nInt(l.until), ":pending": str(business.DeliveryPending), ":held": str(business.DeliveryHeld),
			":n": nInt(int64(d.Attempt)), ":now": nInt(now.Unix()),
		},
	})
	if err := notClaimedOr(err, "claim delivery"); err != nil {
		return Lease{}, err
	}
	return l, nil
}

// ErrUnsavable says a delivery's record could not be stored as it is: too
// large for DynamoDB, or refused as invalid. Retrying cannot help; the caller
// ends the delivery with FailUnsavable.
var ErrUnsavable = errors.New("store: delivery record cannot be saved")

// SaveAttempt stores d after an attempt made under lease l: its state, log
// and, while it waits, its place in its account's due partition. Returns
// ErrNotClaimed when the lease was lost (the attempt outlived it and another
// runner took over), and ErrUnsavable when the record cannot be stored. The
// saved record keeps l's token (not its time, so the next attempt may be
// claimed): the SDK's retry of a save that committed though its answer was
// lost meets its own condition and writes the same record again, instead of
// reporting a lease it never lost.
func (s *Store) SaveAttempt(ctx context.Context, d business.Delivery, l Lease) error {
	it := deliveryItem(d)
	it["lease_token"] = str(l.token)
	if checkSize(it) != nil {
		return fmt.Errorf("%w: %d KB", ErrUnsavable, DeliveryItemBytes(d)/1024)
	}
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: it,
		ConditionExpression:       aws.String("lease_token = :t"),
		ExpressionAttributeValues: attrs{":t": str(l.token)},
	})
	var cf *types.ConditionalCheckFailedException
	var invalid interface{ ErrorCode() string }
	switch {
	case errors.As(err, &cf):
		return ErrNotClaimed
	case errors.As(err, &invalid) && invalid.ErrorCode() == "ValidationException":
		return fmt.Errorf("%w: %v", ErrUnsavable, err)
	case err != nil:
		return fmt.Errorf("save delivery: %w", err)
	}
	return nil
}

// DeliveryItemBytes is an upper bound of the size of d's stored record, its
// lease token included.
func DeliveryItemBytes(d business.Delivery) int {
	n := len("lease_token") + leaseTokenBytes
	for name, v := range deliveryItem(d) {
		n += len(name) + valueSize(v)
	}
	return n
}

// FailUnsavable ends a delivery whose record SaveAttempt could not store:
// failed, out of the due index, its log replaced by the last attempt and a
// note, under lease l (whose token it keeps, as SaveAttempt does, so the
// SDK's retry finds it). Returns ErrNotClaimed when the lease was lost.
func (s *Store) FailUnsavable(ctx context.Context, d business.Delivery, l Lease, last business.DeliveryAttempt) error {
	note := attrs{"at": str(fmtTime(last.At)), "status": nInt(int64(last.Status)), "ms": nInt(last.LatencyMS)}
	setS(note, "error", "the delivery's record could not be saved, so it was ended as failed; last attempt: "+last.Error)
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       deliveryKey(d.AccountID, d.TransactionID),
		UpdateExpression:          aws.String("SET #st = :failed, attempt = :n, attempts = :log REMOVE lease_until, " + IndexDue.PK + ", " + IndexDue.SK),
		ConditionExpression:       aws.String("lease_token = :t"),
		ExpressionAttributeNames:  map[string]string{"#st": "state"},
		ExpressionAttributeValues: attrs{":failed": str(business.DeliveryFailed), ":n": nInt(int64(d.Attempt)), ":log": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberM{Value: note}}}, ":t": str(l.token)},
	})
	return notClaimedOr(err, "fail delivery")
}

// ListDeliveries returns a page of an account's deliveries, newest first;
// state, when not empty, keeps only deliveries in that state. While the
// account's circuit is open its pending deliveries are shown held, due at the
// probe (they are not rewritten when the circuit opens: the account's queue
// item holds them all).
func (s *Store) ListDeliveries(ctx context.Context, account, state string, limit int, cursor string) (Page[business.Delivery], error) {
	q := query{index: IndexCreated, pk: acctPK(account) + "#DELIVERY", limit: limit, cursor: cursor}
	var queue Queue
	var qerr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); queue, qerr = s.FindQueue(ctx, account) }()
	if state == business.DeliveryPending || state == business.DeliveryHeld {
		// Which stored states answer the filter depends on the circuit.
		wg.Wait()
		if qerr != nil {
			return Page[business.Delivery]{}, qerr
		}
		if queue.Open() {
			if state == business.DeliveryPending {
				return Page[business.Delivery]{Items: []business.Delivery{}}, nil
			}
			state = "" // every waiting delivery shows held
			q.filter, q.names, q.values = "#st IN (:p, :h)", map[string]string{"#st": "state"}, attrs{":p": str(business.DeliveryPending), ":h": str(business.DeliveryHeld)}
		}
	}
	if state != "" {
		q.filter, q.names, q.values = "#st = :st", map[string]string{"#st": "state"}, attrs{":st": str(state)}
	}
	p, err := page(ctx, s, q, deliveryFrom)
	wg.Wait()
	if err == nil {
		err = qerr
	}
	if err != nil {
		return p, err
	}
	for i := range p.Items {
		p.Items[i] = queue.View(p.Items[i])
	}
	return p, nil
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
	err = s.transact(ctx, []txItem{
		{action: types.TransactWriteItem{Update: &types.Update{
			TableName:                 aws.String(s.table),
			Key:                       deliveryKey(account, tx),
			UpdateExpression:          aws.String("SET #st = :pending, round_start = :n, next_at = :now, " + IndexDue.PK + " = :due, " + IndexDue.SK + " = :sk REMOVE lease_token, lease_until"),
			ConditionExpression:       aws.String("attempt = :n AND NOT (#st IN (:pending, :held))"),
			ExpressionAttributeNames:  map[string]string{"#st": "state"},
			ExpressionAttributeValues: attrs{":pending": str(business.DeliveryPending), ":held": str(business.DeliveryHeld), ":n": nInt(int64(d.Attempt)), ":now": nInt(now.Unix()), ":due": str(accountDuePK(account)), ":sk": str(dueSK(d))},
		}}, onFail: business.Errorf(business.ECONFLICT, "delivery of %s changed meanwhile; look again", tx)},
		{action: types.TransactWriteItem{Update: s.wakeUpdate(account, now)}},
	})
	if err != nil {
		return d, err
	}
	return d, nil
}
