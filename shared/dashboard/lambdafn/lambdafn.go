// Package lambdafn starts the dashboard's Lambda functions. It is apart from
// shared/app, which the test helpers import, because it imports the
// dashboard, whose tests import those helpers.
package lambdafn

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/dashboard"

	"github.com/aws/aws-lambda-go/lambda"
)

// SignUp reads DASHBOARD_SIGNUP: sign-up from the sign-in page is
// on unless it is "off" (the template's DashboardSignUp parameter), so a
// deployment that invites its owners turns it off in one place.
func SignUp() bool { return os.Getenv("DASHBOARD_SIGNUP") != "off" }

// Handler returns the http.Handler of the dashboard's Lambda
// function name: board serving that function's share of dashboard.Routes
// (with the dashboard's own 404 page for any other /dashboard path), so each
// function holds only the routes its permissions were written for.
func Handler(board *dashboard.Server, name string) (http.Handler, error) {
	routes := dashboard.RoutesOf(name)
	if len(routes) == 0 {
		return nil, fmt.Errorf("no dashboard route for function %q", name)
	}
	return board.Handler(routes), nil
}

// RunFunction starts the dashboard's Lambda function name, as
// app.RunFunction starts an API route's: it wires the store, the API (whose
// handlers the dashboard runs for the signed-in owner) and the dashboard
// once, with Secure cookies (a deployment is HTTPS only), then serves API
// Gateway HTTP API (payload v2) events until the runtime stops the process.
// It returns only when the function cannot start, saying why.
func RunFunction(name string) error {
	ctx := context.Background()
	cfg, err := app.FromEnv()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	st, err := app.NewStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	log := app.Logger()
	srv := api.NewServer(st, log, cfg.KeyCacheTTL).AllowPrivateWebhooks(os.Getenv("WEBHOOK_ALLOW_PRIVATE") == "1")
	board := dashboard.New(st, srv, log, dashboard.Config{PlainHTTP: false, SignUp: SignUp()})
	h, err := Handler(board, name)
	if err != nil {
		return err
	}
	lambda.StartWithOptions(app.LambdaHandler(h), lambda.WithEnableSIGTERM())
	return nil
}
