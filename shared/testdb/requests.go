package testdb

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// Requests records every DynamoDB call a client makes, with its input, so
// that a test can check what a store method asks DynamoDB for where DynamoDB
// Local's answers cannot show it (a consistent read, a condition): pass
// Option to NewStore. The zero value is ready to use.
type Requests struct {
	mu    sync.Mutex
	calls []Request
}

// Request is one DynamoDB call: its operation ("GetItem") and its input as
// the caller built it (a *dynamodb.GetItemInput). Retries of a call are one
// Request.
type Request struct {
	Operation string
	Input     any
}

// Option returns the DynamoDB client option that records into r.
func (r *Requests) Option() func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("RecordRequests",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					r.mu.Lock()
					r.calls = append(r.calls, Request{Operation: middleware.GetOperationName(ctx), Input: in.Parameters})
					r.mu.Unlock()
					return next.HandleInitialize(ctx, in)
				}), middleware.After)
		})
	}
}

// Mark returns a position in the record; Since reads from it.
func (r *Requests) Mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// Since returns the calls made after mark, in the order they began.
func (r *Requests) Since(mark int) []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.calls[mark:]...)
}
