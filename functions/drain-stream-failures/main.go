// Command drain-stream-failures is the Lambda function fed by the queue of
// stream batches the deliver-webhooks function gave up on: it reads each
// batch again from the table's stream and records its deliveries.
package main

import (
	"os"

	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
)

func main() {
	if err := lambdas.RunDrainStreamFailures(); err != nil {
		app.Logger().Error("startup failed", "error", err.Error())
		os.Exit(1)
	}
}
