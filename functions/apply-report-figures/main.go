// Command apply-report-figures is the Lambda function fed by the table's
// stream (filtered to report figures inserts): it adds each change's figures
// to its account's report days.
package main

import (
	"os"

	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
)

func main() {
	if err := lambdas.RunApplyReportFigures(); err != nil {
		app.Logger().Error("startup failed", "error", err.Error())
		os.Exit(1)
	}
}
