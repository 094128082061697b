// Package lambdas holds the entry points of the product's Lambda functions:
// functions/<name>/main.go calls one Run function and exits when it returns
// an error (only main decides the process's end). Each wires its function
// once from the environment (shared/app), then serves its events: an API
// route, the dashboard's routes, the table's stream, the failure queue or
// the schedule.
package lambdas

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/store"

	"github.com/aws/aws-lambda-go/lambda"
)

// FunctionHandler returns the http.Handler of the Lambda function name: a
// ServeMux holding that one route, so path values work as they do locally;
// or, for api.DefaultFunction, the answer to what no route matches.
func FunctionHandler(srv *api.Server, name string) (http.Handler, error) {
	if name == api.DefaultFunction {
		return srv.FallbackHandler(), nil
	}
	rt, ok := api.RouteByFunction(name)
	if !ok {
		return nil, fmt.Errorf("no route for function %q", name)
	}
	return srv.Handler([]api.Route{rt}), nil
}

// RunFunction starts the Lambda function name: it wires everything once, then
// serves API Gateway HTTP API (payload v2) events until the runtime stops the
// process. It returns only when the function cannot start, saying why.
func RunFunction(name string) error {
	_, srv, err := apiServerFromEnv(name, app.Logger())
	if err != nil {
		return err
	}
	h, err := FunctionHandler(srv, name)
	if err != nil {
		return err
	}
	lambda.StartWithOptions(app.LambdaHandler(h), lambda.WithEnableSIGTERM())
	return nil
}

// storeFromEnv builds the store function name works on from the
// environment; its errors name the function.
func storeFromEnv(name string) (*store.Store, app.Config, error) {
	cfg, err := app.FromEnv()
	if err != nil {
		return nil, cfg, fmt.Errorf("%s: %w", name, err)
	}
	st, err := app.NewStore(context.Background(), cfg)
	if err != nil {
		return nil, cfg, fmt.Errorf("%s: %w", name, err)
	}
	return st, cfg, nil
}

// apiServerFromEnv builds the store and the API's server an HTTP function
// (an API route's or the dashboard's) serves with.
func apiServerFromEnv(name string, log *slog.Logger) (*store.Store, *api.Server, error) {
	st, cfg, err := storeFromEnv(name)
	if err != nil {
		return nil, nil, err
	}
	srv := api.NewServer(st, log, cfg.KeyCacheTTL).AllowPrivateWebhooks(os.Getenv("WEBHOOK_ALLOW_PRIVATE") == "1").
		SetPublicBaseURL(os.Getenv("PUBLIC_BASE_URL"))
	return st, srv, nil
}
