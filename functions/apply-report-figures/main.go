// Command apply-report-figures is the Lambda function fed by the table's
// stream (filtered to report figures inserts): it adds each change's figures
// to its account's report days.
package main

import (
	"os"

	"bizdata/shared/app"
)

func main() {
	if err := app.RunApplyReportFigures(); err != nil {
		app.Logger().Error("startup failed", "error", err.Error())
		os.Exit(1)
	}
}
