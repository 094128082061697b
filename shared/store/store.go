package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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
	eventSettle  *time.Duration
	debtsSettle  *time.Duration
	ids          idBlocks
	onParked     func(account, id string, cause error)
}

// New returns a Store over table, using db for every call.
func New(db *dynamodb.Client, table string) *Store {
	return &Store{db: db, table: table, now: func() time.Time { return time.Now().UTC() }}
}

// Now returns the store's clock: the time every write is stamped with.
func (s *Store) Now() time.Time { return s.now() }

// SetClock replaces the store's clock, before the store is used: tests move
// it to chosen instants (around a local midnight, across a timezone change).
// now must be safe for concurrent use.
func (s *Store) SetClock(now func() time.Time) { s.now = now }

// Table returns the table's name.
func (s *Store) Table() string { return s.table }

// Client returns the DynamoDB client the store uses.
func (s *Store) Client() *dynamodb.Client { return s.db }

// EnsureTable creates the table from TableDefinition when it does not exist,
// waits until it is active and turns on its time to live; on a table that
// exists it adds the indexes it lacks.
func (s *Store) EnsureTable(ctx context.Context) error {
	out, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.table)})
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		return s.CreateTable(ctx, TableDefinition(s.table))
	}
	if err != nil {
		return fmt.Errorf("describe table %s: %w", s.table, err)
	}
	return s.addMissingIndexes(ctx, out.Table)
}

// CreateTable creates the store's table as def describes (def names it),
// waits until it is active and turns its time to live on. A table created
// meanwhile by another process is waited for alike.
func (s *Store) CreateTable(ctx context.Context, def *dynamodb.CreateTableInput) error {
	if _, err := s.db.CreateTable(ctx, def); err != nil {
		var inUse *types.ResourceInUseException
		if !errors.As(err, &inUse) {
			return fmt.Errorf("create table %s: %w", s.table, err)
		}
	}
	w := dynamodb.NewTableExistsWaiter(s.db, func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = 100 * time.Millisecond })
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.table)}, time.Minute); err != nil {
		return fmt.Errorf("wait for table %s: %w", s.table, err)
	}
	_, err := s.db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
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

// addMissingIndexes adds to an existing table (the devserver's, kept in
// .data/ across upgrades) the indexes of TableDefinition it lacks, one at a
// time as DynamoDB requires, waiting for each to become active. Indexes it
// has beyond them are left alone.
func (s *Store) addMissingIndexes(ctx context.Context, t *types.TableDescription) error {
	have := map[string]bool{}
	filling := false
	for _, g := range t.GlobalSecondaryIndexes {
		have[aws.ToString(g.IndexName)] = true
		filling = filling || g.IndexStatus != types.IndexStatusActive
	}
	// An index an earlier start added and gave up waiting for may still be
	// filling: wait for it before using the table or adding another.
	if filling {
		if err := s.waitForIndexes(ctx, indexWait); err != nil {
			return err
		}
	}
	def := TableDefinition(s.table)
	for _, g := range def.GlobalSecondaryIndexes {
		if have[aws.ToString(g.IndexName)] {
			continue
		}
		_, err := s.db.UpdateTable(ctx, &dynamodb.UpdateTableInput{
			TableName:            aws.String(s.table),
			AttributeDefinitions: def.AttributeDefinitions,
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
				IndexName: g.IndexName, KeySchema: g.KeySchema, Projection: g.Projection,
			}}},
		})
		if err != nil {
			return fmt.Errorf("add index %s to %s: %w", aws.ToString(g.IndexName), s.table, err)
		}
		if err := s.waitForIndexes(ctx, indexWait); err != nil {
			return fmt.Errorf("add index %s to %s: %w", aws.ToString(g.IndexName), s.table, err)
		}
	}
	return nil
}

// indexWait bounds how long EnsureTable waits for an index to become
// active (a shorter ctx deadline ends it sooner): a backfill that never ends
// is an error naming the index, not a devserver that hangs at start.
const indexWait = 5 * time.Minute

// waitForIndexes polls the table until every index is active, for at most
// limit (or until ctx ends).
func (s *Store) waitForIndexes(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		out, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.table)})
		if err != nil {
			return fmt.Errorf("describe table %s while waiting for its indexes: %w", s.table, err)
		}
		var waiting []string
		for _, x := range out.Table.GlobalSecondaryIndexes {
			if x.IndexStatus != types.IndexStatusActive {
				waiting = append(waiting, aws.ToString(x.IndexName)+" "+string(x.IndexStatus))
			}
		}
		if len(waiting) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("indexes of %s not active after %s: %s", s.table, limit, strings.Join(waiting, ", "))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("indexes of %s not active (%w): %s", s.table, ctx.Err(), strings.Join(waiting, ", "))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// attrs is one DynamoDB item: its attributes by name.
type attrs = map[string]types.AttributeValue

// Attribute helpers.
