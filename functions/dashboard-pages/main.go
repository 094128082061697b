// Command dashboard-pages is the Lambda function serving the dashboard routes
// of that name in shared/dashboard's route table.
package main

import (
	"os"

	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
)

func main() {
	if err := lambdas.RunDashboardFunction("dashboard-pages"); err != nil {
		app.Logger().Error("startup failed", "error", err.Error())
		os.Exit(1)
	}
}
