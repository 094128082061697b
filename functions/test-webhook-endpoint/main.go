// Command test-webhook-endpoint is the Lambda function serving the route of that name in
// shared/api's route table.
package main

import (
	"os"

	"bizdata/shared/app"
)

func main() {
	if err := app.RunFunction("test-webhook-endpoint"); err != nil {
		app.Logger().Error("startup failed", "error", err.Error())
		os.Exit(1)
	}
}
