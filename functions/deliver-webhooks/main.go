// Command deliver-webhooks is the Lambda function fed by the table's stream
// (filtered to payment inserts): it records each payment's webhook delivery
// and makes the first attempt.
package main

import "bizdata/shared/app"

func main() { app.RunDeliverWebhooks() }
