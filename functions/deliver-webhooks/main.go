// Command deliver-webhooks is the Lambda function fed by the table's stream
// (filtered to payment inserts): it records each payment's webhook delivery
// and makes the first attempt.
package main

import (
	"os"

	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
)

func main() {
	if err := lambdas.RunDeliverWebhooks(); err != nil {
		app.Logger().Error("startup failed", "error", err.Error())
		os.Exit(1)
	}
}
