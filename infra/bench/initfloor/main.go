// Command initfloor is the floor the bench's init step measures every
// function against: a Lambda program that imports only the Lambda runtime
// client and starts a handler, so its init is what any Go function pays
// (the runtime, the client, reaching the Runtime API) and nothing of this
// repository's. A cost every function shares, such as a package-level
// variable in a package they all import, shows as their ratios to it.
package main

import "github.com/aws/aws-lambda-go/lambda"

func main() {
	lambda.Start(func() error { return nil })
}
