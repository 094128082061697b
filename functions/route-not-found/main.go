// Command route-not-found is the Lambda function of the HTTP API's $default
// route: it answers every request no route matches with the API's own 404
// "Route not found", or 405 "Method not allowed" with Allow for a known path,
// so API Gateway never answers with a body of its own.
package main

import "bizdata/shared/app"

func main() { app.RunFunction("route-not-found") }
