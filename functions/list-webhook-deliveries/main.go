// Command list-webhook-deliveries is the Lambda function serving the route of that name in
// shared/api's route table.
package main

import "bizdata/shared/app"

func main() { app.RunFunction("list-webhook-deliveries") }
