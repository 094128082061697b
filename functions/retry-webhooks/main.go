// Command retry-webhooks is the scheduled Lambda function that makes the
// webhook attempts that are due.
package main

import (
	"os"

	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
)

func main() {
	if err := lambdas.RunRetryWebhooks(); err != nil {
		app.Logger().Error("startup failed", "error", err.Error())
		os.Exit(1)
	}
}
