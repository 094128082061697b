package app

import (
	"context"
	"fmt"
	"os"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/lambda"
)

// DispatchFor is how long one run of the retry-webhooks function keeps
// dispatching (it is started every minute), and DispatchPoll how often it
// looks for due deliveries meanwhile: a due attempt waits at most a few
// seconds on AWS, between runs about ten.
const (
	DispatchFor  = 50 * time.Second
	DispatchPoll = time.Second
)

// NewWebhookService builds the webhook service from the environment:
// WEBHOOK_ALLOW_PRIVATE=1 lets deliveries reach private addresses (local
// development only) and WEBHOOK_RETRY_SCHEDULE (e.g. "1s,2s,4s") replaces the
// three-day retry schedule.
func NewWebhookService(ctx context.Context, c Config) (*webhook.Service, error) {
	st, err := NewStore(ctx, c)
	if err != nil {
		return nil, err
	}
	schedule := business.DefaultRetrySchedule
	if v := os.Getenv("WEBHOOK_RETRY_SCHEDULE"); v != "" {
		if schedule, err = business.ParseRetrySchedule(v); err != nil {
			return nil, err
		}
	}
	sender := webhook.NewSender(os.Getenv("WEBHOOK_ALLOW_PRIVATE") == "1")
	return webhook.NewService(st, sender, schedule, Logger()), nil
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
		svc.Dispatch(ctx, time.Now().Add(DispatchFor), DispatchPoll)
		return nil
	}
	lambda.StartWithOptions(dispatch, lambda.WithEnableSIGTERM())
	return nil
}

func webhookServiceFromEnv() (*webhook.Service, error) {
	cfg, err := FromEnv()
	if err != nil {
		return nil, err
	}
	return NewWebhookService(context.Background(), cfg)
}
