package lambdas

import (
	"context"
	"fmt"
	"os"
	"time"

	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/lambda"
)

// DispatchFor is how long one run of the retry-webhooks function keeps
// starting attempts, and DispatchPoll how often it looks for due work
// meanwhile. The function is started every minute and dispatches for the
// whole minute, so a run hands over to the next as it stops starting
// attempts (the two overlap while the first drains, which claims make safe):
// a due attempt waits at most DispatchPoll and a pass, never the gap between
// runs. DrainFor is how long the run then lets the attempts under way
// finish: the run's context ends at DispatchFor+DrainFor, so no attempt
// (webhook.Timeout) and no DynamoDB call with the SDK's retries outlives it,
// and the function returns before its Timeout in template.yaml (a test
// checks DispatchFor+DrainFor+ReturnMargin against it). An attempt cut short
// there keeps its lease; the attempt is made again when the lease ends, with
// the same webhook-id.
const (
	DispatchFor  = time.Minute
	DispatchPoll = 500 * time.Millisecond
	DrainFor     = 25 * time.Second
	ReturnMargin = 10 * time.Second
)

// NewWebhookService builds the webhook service from the environment:
// WEBHOOK_ALLOW_PRIVATE=1 lets deliveries reach private addresses (local
// development only), WEBHOOK_RETRY_SCHEDULE (e.g. "1s,2s,4s") replaces the
// three-day retry schedule and WEBHOOK_ENDPOINT_DISABLE_AFTER (a Go
// duration, e.g. "30s") how long an endpoint's attempts may all fail before
// it is disabled (business.EndpointDisableAfter).
func NewWebhookService(ctx context.Context, c app.Config) (*webhook.Service, error) {
	st, err := app.NewStore(ctx, c)
	if err != nil {
		return nil, err
	}
	schedule := business.DefaultRetrySchedule
	if v := os.Getenv("WEBHOOK_RETRY_SCHEDULE"); v != "" {
		if schedule, err = business.ParseRetrySchedule(v); err != nil {
			return nil, err
		}
	}
	disableAfter := business.EndpointDisableAfter
	if v := os.Getenv("WEBHOOK_ENDPOINT_DISABLE_AFTER"); v != "" {
		if disableAfter, err = time.ParseDuration(v); err != nil || disableAfter <= 0 {
			return nil, fmt.Errorf("WEBHOOK_ENDPOINT_DISABLE_AFTER %q: want a positive duration such as 120h", v)
		}
	}
	sender := webhook.NewSender(os.Getenv("WEBHOOK_ALLOW_PRIVATE") == "1")
	svc := webhook.NewService(st, sender, schedule, app.Logger())
	svc.DisableAfter = disableAfter
	return svc, nil
}

// RunDeliverWebhooks starts the stream-triggered function that records each
// payment's delivery (it never waits on a receiver). Like RunFunction, it
// returns only when the function cannot start.
func RunDeliverWebhooks() error {
	svc, err := webhookServiceFromEnv()
	if err != nil {
		return fmt.Errorf("deliver-webhooks: %w", err)
	}
	lambda.StartWithOptions(svc.HandleStream, lambda.WithEnableSIGTERM())
	return nil
}

// RunRetryWebhooks starts the scheduled function that makes the due attempts
// (first ones and retries) for DispatchFor on each invocation. Like
// RunFunction, it returns only when the function cannot start.
func RunRetryWebhooks() error {
	svc, err := webhookServiceFromEnv()
	if err != nil {
		return fmt.Errorf("retry-webhooks: %w", err)
	}
	dispatch := func(ctx context.Context) error {
		start := time.Now()
		ctx, cancel := context.WithDeadline(ctx, start.Add(DispatchFor+DrainFor))
		defer cancel()
		svc.Dispatch(ctx, start.Add(DispatchFor), DispatchPoll)
		return nil
	}
	lambda.StartWithOptions(dispatch, lambda.WithEnableSIGTERM())
	return nil
}

func webhookServiceFromEnv() (*webhook.Service, error) {
	cfg, err := app.FromEnv()
	if err != nil {
		return nil, err
	}
	return NewWebhookService(context.Background(), cfg)
}
