// Command retry-webhooks is the scheduled Lambda function that makes the
// webhook attempts that are due.
package main

import "bizdata/shared/app"

func main() { app.RunRetryWebhooks() }
