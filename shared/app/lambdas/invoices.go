package lambdas

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"bizdata/shared/app"
	"bizdata/shared/hosted"
	"bizdata/shared/mail"
	"bizdata/shared/notices"
	"bizdata/shared/store"

	"github.com/aws/aws-lambda-go/lambda"
)

// HostedHandler returns the http.Handler of the public function name: a
// ServeMux holding its one route.
func HostedHandler(srv *hosted.Server, name string) (http.Handler, error) {
	rt, ok := hosted.RouteByFunction(name)
	if !ok {
		return nil, fmt.Errorf("no hosted route for function %q", name)
	}
	return srv.Handler([]hosted.Route{rt}), nil
}

// RunHostedFunction starts the public function name (the hosted invoice
// page or its PDF). Like RunFunction, it returns only when the function
// cannot start.
func RunHostedFunction(name string) error {
	st, _, err := storeFromEnv(name)
	if err != nil {
		return err
	}
	h, err := HostedHandler(hosted.NewServer(st, app.Logger()), name)
	if err != nil {
		return err
	}
	lambda.StartWithOptions(app.LambdaHandler(h), lambda.WithEnableSIGTERM())
	return nil
}

// NoticeRunner builds the send-notices function's runner from the
// environment: the store, the mail sender (mail.FromEnv: SES on AWS, SMTP
// offline) and PUBLIC_BASE_URL, where the hosted invoices are served.
func NoticeRunner(ctx context.Context, st *store.Store, log *slog.Logger) (*notices.Runner, error) {
	base := strings.TrimRight(os.Getenv("PUBLIC_BASE_URL"), "/")
	if base == "" {
		return nil, errors.New("PUBLIC_BASE_URL is not set")
	}
	awsCfg, err := app.AWSConfig(ctx)
	if err != nil {
		return nil, err
	}
	sender, err := mail.FromEnv(ctx, awsCfg)
	if err != nil {
		return nil, err
	}
	return &notices.Runner{Store: st, Mail: sender, BaseURL: base, Log: log}, nil
}

// RunSendNotices starts the scheduled function that sends the reminders and
// overdue notices due: one notices run per invocation, which fails (so the
// schedule's metrics show it) when any notice failed; a failed notice stays
// for the next run.
func RunSendNotices() error {
	const name = "send-notices"
	log := app.Logger()
	st, _, err := storeFromEnv(name)
	if err != nil {
		return err
	}
	runner, err := NoticeRunner(context.Background(), st, log)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	lambda.StartWithOptions(func(ctx context.Context) error {
		res, err := runner.Run(ctx)
		log.InfoContext(ctx, "notices", "reminded", res.Reminded, "overdue", res.Overdue,
			"dropped", res.Dropped, "deferred", res.Deferred, "failed", res.Failed)
		return err
	}, lambda.WithEnableSIGTERM())
	return nil
}
