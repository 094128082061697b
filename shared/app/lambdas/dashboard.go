package lambdas

import (
	"fmt"
	"net/http"
	"os"

	"bizdata/shared/app"
	"bizdata/shared/dashboard"

	"github.com/aws/aws-lambda-go/lambda"
)

// DashboardSignUp reads DASHBOARD_SIGNUP: sign-up from the sign-in page is
// on unless it is "off" (the template's DashboardSignUp parameter), so a
// deployment that invites its owners turns it off in one place.
func DashboardSignUp() bool { return os.Getenv("DASHBOARD_SIGNUP") != "off" }

// DashboardHandler returns the http.Handler of the dashboard's Lambda
// function name: board serving that function's share of dashboard.Routes
// (with the dashboard's own 404 page for any other /dashboard path), so each
// function holds only the routes its permissions were written for.
func DashboardHandler(board *dashboard.Server, name string) (http.Handler, error) {
	routes := dashboard.RoutesOf(name)
	if len(routes) == 0 {
		return nil, fmt.Errorf("no dashboard route for function %q", name)
	}
	return board.Handler(routes), nil
}

// RunDashboardFunction starts the dashboard's Lambda function name, as
// RunFunction starts an API route's: it wires the store, the API (whose
// handlers the dashboard runs for the signed-in owner) and the dashboard
// once, with Secure cookies (a deployment is HTTPS only), then serves API
// Gateway HTTP API (payload v2) events until the runtime stops the process.
// It returns only when the function cannot start, saying why.
func RunDashboardFunction(name string) error {
	log := app.Logger()
	st, srv, err := apiServerFromEnv(name, log)
	if err != nil {
		return err
	}
	board := dashboard.New(st, srv, log, dashboard.Config{PlainHTTP: false, SignUp: DashboardSignUp()})
	h, err := DashboardHandler(board, name)
	if err != nil {
		return err
	}
	lambda.StartWithOptions(app.LambdaHandler(h), lambda.WithEnableSIGTERM())
	return nil
}
