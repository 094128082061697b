package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Store reads and writes the product's records in one DynamoDB table. It is
// safe for concurrent use; build one per process and share it.
type Store struct {
	db    *dynamodb.Client
	table string
	now   func() time.Time

	cursorSecret []byte
	evaluated    int // items one list request may read; 0 means MaxEvaluated
}

// New returns a Store over table, using db for every call.
func New(db *dynamodb.Client, table string) *Store {
	return &Store{db: db, table: table, now: func() time.Time { return time.Now().UTC() }}
}

// Table returns the table's name.
func (s *Store) Table() string { return s.table }

// Client returns the DynamoDB client the store uses.
func (s *Store) Client() *dynamodb.Client { return s.db }

// EnsureTable creates the table from TableDefinition when it does not exist,
// waits until it is active and turns on its time to live.
func (s *Store) EnsureTable(ctx context.Context) error {
	_, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.table)})
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		if _, err := s.db.CreateTable(ctx, TableDefinition(s.table)); err != nil {
			var inUse *types.ResourceInUseException
			if !errors.As(err, &inUse) {
				return fmt.Errorf("create table %s: %w", s.table, err)
			}
		}
		w := dynamodb.NewTableExistsWaiter(s.db, func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = 100 * time.Millisecond })
		if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.table)}, time.Minute); err != nil {
			return fmt.Errorf("wait for table %s: %w", s.table, err)
		}
		_, err = s.db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
			TableName: aws.String(s.table),
			TimeToLiveSpecification: &types.TimeToLiveSpecification{
				AttributeName: aws.String(TTLAttribute), Enabled: aws.Bool(true),
			},
		})
		if err != nil {
			return fmt.Errorf("enable ttl on %s: %w", s.table, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("describe table %s: %w", s.table, err)
	}
	return nil
}

// attrs is one DynamoDB item: its attributes by name.
type attrs = map[string]types.AttributeValue

// txItem is one action of a transaction and the error to report when its
// condition is what cancelled the transaction.
type txItem struct {
	action types.TransactWriteItem
	onFail error
}

// errRetry marks a cancellation caused by a race the caller can retry (an id
// counter moved, a record's version moved under a read-modify-write).
var errRetry = errors.New("store: retry")

// transact runs items as one transaction. When a condition fails, it returns
// the onFail error of the first item whose condition failed, or EINTERNAL for
// an unexpected cancellation. Transaction conflicts (real DynamoDB only) are
// retried with jittered backoff.
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

// MaxItemBytes is the size a record may reach: DynamoDB's 400 KB item limit
// less room for the attributes the store adds as it changes.
const MaxItemBytes = 400*1024 - 8*1024

// wireNames maps stored attribute names to the request fields that fill them,
// for the message of a record that is too large.
var wireNames = map[string]string{"lines": "items"}

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

// maxContention bounds how long retrying keeps at a contended record before
// answering EBUSY; it stays under the functions' 10 s timeout.
const maxContention = 8 * time.Second

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

// Attribute helpers.

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func num(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
func nInt(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

// setS sets it[k] to v, or leaves it out when v is empty.
func setS(it attrs, k, v string) {
	if v != "" {
		it[k] = str(v)
	}
}

func getS(it attrs, k string) string {
	if v, ok := it[k].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func getN(it attrs, k string) string {
	if v, ok := it[k].(*types.AttributeValueMemberN); ok {
		return v.Value
	}
	return ""
}

func getInt(it attrs, k string) int64 {
	i, _ := strconv.ParseInt(getN(it, k), 10, 64)
	return i
}

func key(pk, sk string) attrs { return attrs{"PK": str(pk), "SK": str(sk)} }

// TimeFormat is the wire and storage format of datetimes (UTC).
const TimeFormat = "2006-01-02 15:04:05"

func fmtTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

func getTime(it attrs, k string) time.Time {
	t, _ := time.Parse(TimeFormat, getS(it, k))
	return t
}

// pad formats an id so that string order is numeric order.
func pad(id int64) string { return fmt.Sprintf("%012d", id) }

func acctPK(acct string) string { return "A#" + acct }
