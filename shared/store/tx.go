package store

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Transactions, guards and the reads they rely on: the helpers every kind of
// record shares.

// getOne reads one item; a missing one is ENOTFOUND with notFound as message.
func (s *Store) getOne(ctx context.Context, k attrs, notFound string, consistent bool) (attrs, error) {
	it, err := s.getItem(ctx, k, consistent)
	if err == nil && it == nil {
		return nil, business.Errorf(business.ENOTFOUND, "%s", notFound)
	}
	return it, err
}

// getItem reads one item; nil when it is missing.
func (s *Store) getItem(ctx context.Context, k attrs, consistent bool) (attrs, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: k, ConsistentRead: aws.Bool(consistent)})
	if err != nil {
		return nil, fmt.Errorf("get item: %w", err)
	}
	return out.Item, nil
}

// guardedPut is a Put that succeeds only if the item still has version.
func (s *Store) guardedPut(it attrs, version int64) txItem {
	p := &types.Put{TableName: aws.String(s.table), Item: it}
	versionGuard(p, version)
	return txItem{action: types.TransactWriteItem{Put: p}, onFail: errRetry}
}

func put(table string, it attrs, cond string) types.TransactWriteItem {
	p := &types.Put{TableName: aws.String(table), Item: it}
	if cond != "" {
		p.ConditionExpression = aws.String(cond)
	}
	return types.TransactWriteItem{Put: p}
}

func uniqueKey(account, what, value string) attrs {
	return key(acctPK(account)+"#UNIQUE#"+what+"#"+value, "UNIQUE")
}

// guardPut claims a unique value for the record named by owner.
func (s *Store) guardPut(account, what, value, owner string, onFail error) txItem {
	g := uniqueKey(account, what, value)
	g["type"], g["owner"] = str("unique"), str(owner)
	return txItem{action: put(s.table, g, "attribute_not_exists(PK)"), onFail: onFail}
}

func (s *Store) guardDelete(account, what, value string) txItem {
	return txItem{action: types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: uniqueKey(account, what, value)}}}
}

// versionGuard is the condition of a read-modify-write Put. The item also
// gets a token of its own (writeToken): made as one PutItem (see single),
// a write whose condition fails on an item equal to its own takes it for its
// own earlier try whose answer was lost, and two writers that set the same
// values in the same second (two voids of one sale) would otherwise each
// take the other's write for theirs.
func versionGuard(put *types.Put, version int64) {
	put.ConditionExpression = aws.String("version = :v")
	put.ExpressionAttributeValues = attrs{":v": nInt(version)}
	var b [8]byte
	_, _ = crand.Read(b[:])
	put.Item[writeToken] = str(hex.EncodeToString(b[:]))
}

// writeToken is the attribute that tells one write of a record from another.
const writeToken = "write_id"

// txItem is one action of a transaction and the error to report when its
// condition is what cancelled the transaction.
type txItem struct {
	action types.TransactWriteItem
	onFail error
	// failed, when set, decides the error from the item as it was when the
	// condition failed (the action must ask for it: ALL_OLD).
	failed func(old attrs) error
}

// errRetry marks a cancellation caused by a race the caller can retry (an id
// counter moved, a record's version moved under a read-modify-write).
var errRetry = errors.New("store: retry")

// maxContention bounds how long retrying keeps at a contended record before
// answering EBUSY; it stays under the functions' 10 s timeout.
const maxContention = 8 * time.Second

// MaxItemBytes is the size a record may reach: DynamoDB's 400 KB item limit
// less room for the attributes the store adds as it changes.
const MaxItemBytes = 400*1024 - 8*1024

// wireNames maps stored attribute names to the request fields that fill them,
// for the message of a record that is too large.
var wireNames = map[string]string{"lines": "items"}

// transact runs items as one transaction. When a condition fails, it returns
// the onFail error of the first item whose condition failed, or EINTERNAL for
// an unexpected cancellation. Transaction conflicts (real DynamoDB only) are
// retried with jittered backoff. A single Put is made with PutItem, which is
// just as atomic and costs half: DynamoDB bills every write in a
// transaction twice.
func (s *Store) transact(ctx context.Context, items []txItem) error {
	actions := make([]types.TransactWriteItem, len(items))
	for i, it := range items {
		actions[i] = it.action
		if p := it.action.Put; p != nil {
			if err := checkSize(p.Item); err != nil {
				return err
			}
		}
	}
	if len(items) == 1 && items[0].action.Put != nil {
		return s.single(ctx, items[0])
	}
	for attempt := 0; ; attempt++ {
		_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions})
		if err == nil {
			return nil
		}
		var tc *types.TransactionCanceledException
		if !errors.As(err, &tc) {
			return fmt.Errorf("transact: %w", err)
		}
		conflict := false
		for i, r := range tc.CancellationReasons {
			switch aws.ToString(r.Code) {
			case "ConditionalCheckFailed":
				if i < len(items) && items[i].failed != nil {
					return items[i].failed(r.Item)
				}
				if i < len(items) && items[i].onFail != nil {
					return items[i].onFail
				}
				return fmt.Errorf("transact: condition failed on action %d", i)
			case "TransactionConflict":
				conflict = true
			}
		}
		if !conflict || attempt >= 6 {
			return fmt.Errorf("transact: %w", err)
		}
		if err := sleep(ctx, attempt); err != nil {
			return err
		}
	}
}

// single makes one Put of a transaction's shape with PutItem. A PutItem
// has no request token as a transaction has, so when the SDK retries one
// whose answer was lost after it committed, the retry fails its own
// condition: the item DynamoDB returns with that failure tells, as it is the
// item this call writes. Transaction conflicts (a transaction in flight on
// the item; real DynamoDB only) are retried like a transaction's.
func (s *Store) single(ctx context.Context, it txItem) error {
	p := it.action.Put
	for attempt := 0; ; attempt++ {
		_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: p.TableName, Item: p.Item,
			ConditionExpression: p.ConditionExpression, ExpressionAttributeNames: p.ExpressionAttributeNames,
			ExpressionAttributeValues:           p.ExpressionAttributeValues,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
		var cf *types.ConditionalCheckFailedException
		var tc *types.TransactionConflictException
		switch {
		case err == nil:
			return nil
		case errors.As(err, &cf):
			if sameItem(cf.Item, p.Item) {
				return nil // this call's own earlier try
			}
			if it.onFail != nil {
				return it.onFail
			}
			return fmt.Errorf("put: condition failed")
		case errors.As(err, &tc) && attempt < 6:
			if err := sleep(ctx, attempt); err != nil {
				return err
			}
		default:
			return fmt.Errorf("put: %w", err)
		}
	}
}

// sameItem reports whether two items hold the same values (numbers compared
// as numbers: DynamoDB gives them back normalised).
func sameItem(a, b attrs) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !sameValue(v, w) {
			return false
		}
	}
	return true
}

func sameValue(a, b types.AttributeValue) bool {
	switch a := a.(type) {
	case *types.AttributeValueMemberS:
		b, ok := b.(*types.AttributeValueMemberS)
		return ok && a.Value == b.Value
	case *types.AttributeValueMemberN:
		b, ok := b.(*types.AttributeValueMemberN)
		if !ok {
			return false
		}
		x, okx := new(big.Rat).SetString(a.Value)
		y, oky := new(big.Rat).SetString(b.Value)
		return okx && oky && x.Cmp(y) == 0
	case *types.AttributeValueMemberB:
		b, ok := b.(*types.AttributeValueMemberB)
		return ok && bytes.Equal(a.Value, b.Value)
	case *types.AttributeValueMemberBOOL:
		b, ok := b.(*types.AttributeValueMemberBOOL)
		return ok && a.Value == b.Value
	case *types.AttributeValueMemberNULL:
		_, ok := b.(*types.AttributeValueMemberNULL)
		return ok
	case *types.AttributeValueMemberL:
		b, ok := b.(*types.AttributeValueMemberL)
		if !ok || len(a.Value) != len(b.Value) {
			return false
		}
		for i := range a.Value {
			if !sameValue(a.Value[i], b.Value[i]) {
				return false
			}
		}
		return true
	case *types.AttributeValueMemberM:
		b, ok := b.(*types.AttributeValueMemberM)
		return ok && sameItem(a.Value, b.Value)
	}
	return false // sets are not stored
}

// checkSize returns EINVALID, naming the largest attribute, when it is
// larger than DynamoDB can store (MaxItemBytes), so that the request is
// refused with a reason instead of failing in DynamoDB.
func checkSize(it attrs) error {
	total, largest, largestSize := 0, "", 0
	for name, v := range it {
		n := len(name) + valueSize(v)
		total += n
		if n > largestSize {
			largest, largestSize = name, n
		}
	}
	if total <= MaxItemBytes {
		return nil
	}
	if w, ok := wireNames[largest]; ok {
		largest = w
	}
	return &business.Error{Code: business.EINVALID,
		Message: fmt.Sprintf("the record is too large to store: %d KB of text and values, at most %d KB; shorten %s", total/1024, MaxItemBytes/1024, largest),
		Fields:  map[string]string{largest: fmt.Sprintf("is too long: the whole record may hold at most %d KB", MaxItemBytes/1024)}}
}

// valueSize is an upper bound of the bytes DynamoDB counts for v.
func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return len(v.Value)/2 + 2
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	}
	return 1
}

// sleep waits an exponentially growing, jittered delay.
func sleep(ctx context.Context, attempt int) error {
	d := time.Duration(5<<attempt) * time.Millisecond
	d = d/2 + rand.N(d)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// retrying runs fn until it returns something other than errRetry, backing
// off with full jitter (up to 200 ms); contention that outlasts
// maxContention is EBUSY.
func retrying(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(maxContention)
	for attempt := 0; ; attempt++ {
		err := fn()
		if !errors.Is(err, errRetry) {
			return err
		}
		if time.Now().After(deadline) {
			return business.Errorf(business.EBUSY, "too many concurrent changes to this record; retry the request")
		}
		backoff := min(time.Duration(5<<min(attempt, 6))*time.Millisecond, 200*time.Millisecond)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rand.N(backoff) + time.Millisecond):
		}
	}
}
