// Command route-not-found is the Lambda function of the HTTP API's $default
// route: it answers every request no route matches with the API's own 404
// "Route not found", or 405 "Method not allowed" with Allow for a known path,
// so API Gateway never answers with a body of its own.
package main

import (
	"os"

	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
)

func main() {
	if err := lambdas.RunFunction("route-not-found"); err != nil {
		app.Logger().Error("startup failed", "error", err.Error())
		os.Exit(1)
	}
}
