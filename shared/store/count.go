package store

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// CountCalls returns a DynamoDB client option that adds one to n for every
// API call the client makes (retries of one call count once). Tests and
// benchmarks use it to prove how many round trips a request costs.
func CountCalls(n *atomic.Int64) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("CountCalls",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					n.Add(1)
					return next.HandleInitialize(ctx, in)
				}), middleware.After)
		})
	}
}

// Calls records when each DynamoDB call of a client began and ended, so that
// a test or benchmark can tell how many calls a request made and how many of
// them were sequential (calls made in parallel count once).
type Calls struct {
	mu    sync.Mutex
	spans []span
}

type span struct{ start, end time.Time }

// Option returns the DynamoDB client option that records into c.
func (c *Calls) Option() func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("RecordCalls",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					start := time.Now()
					out, md, err := next.HandleInitialize(ctx, in)
					c.mu.Lock()
					c.spans = append(c.spans, span{start, time.Now()})
					c.mu.Unlock()
					return out, md, err
				}), middleware.After)
		})
	}
}

// Mark returns a position in the record; Since reads from it.
func (c *Calls) Mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.spans)
}

// Since returns the number of calls ended after mark and their sequential
// depth: the longest chain of those calls in which each began after the
// previous one ended.
func (c *Calls) Since(mark int) (calls, depth int) {
	c.mu.Lock()
	spans := append([]span(nil), c.spans[mark:]...)
	c.mu.Unlock()
	sort.Slice(spans, func(i, j int) bool { return spans[i].end.Before(spans[j].end) })
	chain := make([]int, len(spans))
	for i, s := range spans {
		chain[i] = 1
		for j := 0; j < i; j++ {
			if !spans[j].end.After(s.start) && chain[j]+1 > chain[i] {
				chain[i] = chain[j] + 1
			}
		}
		depth = max(depth, chain[i])
	}
	return len(spans), depth
}
