package store

import (
	"context"
	"sync/atomic"

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
