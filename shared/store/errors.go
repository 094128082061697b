package store

import (
	"context"
	"errors"
	"net"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// transientCodes are DynamoDB's error codes for a request that may succeed
// when made again: throttling, a fault on DynamoDB's side, a transaction
// that kept meeting others.
var transientCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"RequestLimitExceeded":                   true,
	"ThrottlingException":                    true,
	"Throttling":                             true,
	"InternalServerError":                    true,
	"ServiceUnavailable":                     true,
	"TransactionConflictException":           true,
	"TransactionInProgressException":         true,
}

// Unavailable turns a failure that says DynamoDB could not be reached or
// could not serve the request now (throttled, its own fault, a transaction
// conflict that outlasted the retries, a connection that failed, the time
// budget spent) into EUNAVAILABLE, which callers answer with 503 and
// Retry-After. Business errors and anything else are returned unchanged.
func Unavailable(err error) error {
	if err == nil {
		return nil
	}
	var be *business.Error
	if errors.As(err, &be) {
		return err
	}
	if transient(err) {
		return &business.Error{Code: business.EUNAVAILABLE, Message: "the database is unavailable or busy right now; retry the request shortly", Cause: err}
	}
	return err
}

func transient(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) && transientCodes[api.ErrorCode()] {
		return true
	}
	var tc *types.TransactionCanceledException
	if errors.As(err, &tc) {
		for _, r := range tc.CancellationReasons {
			if r.Code != nil && (*r.Code == "TransactionConflict" || *r.Code == "ThrottlingError" || *r.Code == "ProvisionedThroughputExceeded") {
				return true
			}
		}
	}
	var send *smithyhttp.RequestSendError
	var netErr net.Error
	var maxAttempts *retry.MaxAttemptsError
	return errors.As(err, &send) || errors.As(err, &netErr) ||
		(errors.As(err, &maxAttempts) && transient(maxAttempts.Err)) ||
		errors.Is(err, context.DeadlineExceeded)
}
