// Command retry-webhooks is the scheduled Lambda function that makes the
// webhook attempts that are due.
package main

import (
	"os"

	"bizdata/shared/app"
)

func main() {
	if err := app.RunRetryWebhooks(); err != nil {
		app.Logger().Error("startup failed", "error", err.Error())
		os.Exit(1)
	}
}
