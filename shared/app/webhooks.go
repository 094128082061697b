package app

import (
	"context"
	"os"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/lambda"
)

// RetryBatch is how many due deliveries one retry run attempts.
const RetryBatch = 50

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

// RunDeliverWebhooks starts the stream-triggered function that records and
// first attempts each payment's webhook.
func RunDeliverWebhooks() {
	runWebhooks(func(svc *webhook.Service) any { return svc.HandleStream })
}

// RunRetryWebhooks starts the scheduled function that makes due retries.
func RunRetryWebhooks() {
	runWebhooks(func(svc *webhook.Service) any {
		return func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
			defer cancel()
			return svc.RetryDue(ctx, RetryBatch)
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
