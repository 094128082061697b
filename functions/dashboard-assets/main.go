// Command dashboard-assets is the Lambda function serving the dashboard routes
// of that name in shared/dashboard's route table.
package main

import (
	"os"

	"bizdata/shared/app"
	"bizdata/shared/dashboard/lambdafn"
)

func main() {
	if err := lambdafn.RunFunction("dashboard-assets"); err != nil {
		app.Logger().Error("startup failed", "error", err.Error())
		os.Exit(1)
	}
}
