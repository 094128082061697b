// Command send-notices is the scheduled Lambda function that sends the
// sales' reminders and overdue notices whose day has come.
package main

import (
	"os"

	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
)

func main() {
	if err := lambdas.RunSendNotices(); err != nil {
		app.Logger().Error("startup failed", "error", err.Error())
		os.Exit(1)
	}
}
