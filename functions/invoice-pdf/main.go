// Command invoice-pdf is the Lambda function serving the public route of
// that name in shared/hosted's route table.
package main

import (
	"os"

	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
)

func main() {
	if err := lambdas.RunHostedFunction("invoice-pdf"); err != nil {
		app.Logger().Error("startup failed", "error", err.Error())
		os.Exit(1)
	}
}
