// Command create-invoice-link is the Lambda function serving the route of that name in
// shared/api's route table.
package main

import (
	"os"

	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
)

func main() {
	if err := lambdas.RunFunction("create-invoice-link"); err != nil {
		app.Logger().Error("startup failed", "error", err.Error())
		os.Exit(1)
	}
}
