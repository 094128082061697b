package app

import (
	"context"
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
// payment's delivery (it never waits on a receiver).
func RunDeliverWebhooks() {
	runWebhooks(func(svc *webhook.Service) any { return svc.HandleStream })
}

// RunRetryWebhooks starts the scheduled function that makes the due attempts
// (first ones and retries) for DispatchFor, then returns.
func RunRetryWebhooks() {
	runWebhooks(func(svc *webhook.Service) any {
		return func(ctx context.Context) error {
			svc.Dispatch(ctx, time.Now().Add(DispatchFor), DispatchPoll)
			return nil
		}
	})
}

func runWebhooks(handler func(*webhook.Service) any) {
	log := Logger()
	cfg, err := FromEnv()
	if err == nil {
		var svc *webhook.Service
		if svc, err = NewWebhookService(context.Background(), cfg); err == nil {
			lambda.StartWithOptions(handler(svc), lambda.WithEnableSIGTERM())
			return
		}
	}
	log.Error("startup failed", "error", err.Error())
	os.Exit(1)
}
