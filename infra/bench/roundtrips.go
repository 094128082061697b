package main

// The round-trips step: DynamoDB calls per request of every route.

import (
	"fmt"

	"bizdata/shared/api"
)

// oneTripCreates are the creates whose common case is one call: the id
// from the process's block, every uniqueness and existence check a
// condition of the write.
var oneTripCreates = map[string]bool{"add-customer": true, "add-expense": true, "add-category": true, "add-item": true}

// roundTrips counts DynamoDB calls per request of every endpoint, with the
// API key cache warm. Each request is made 8 times and the typical run (the
// most frequent count) is reported, so that a create which happens to
// reserve a new block of ids is not mistaken for the common case; the runs
// that differed are counted beside it.
func (b *bench) roundTrips() error {
	b.printf("## DynamoDB round trips per request\n\nEvery endpoint through its Lambda function (API Gateway v2 event -> httpadapter), API key cache warm; calls counted by SDK middleware, and sequential round trips (calls made in parallel count once) from when each call began and ended; each request made 8 times (test-webhook 4, under its limit of 5 a minute; redeliver-webhook and rotate-api-key once: a delivery is queued again once, and a new key is not yet cached), the typical run reported. Target: 1 for reads; 1 for the creates of customers, expenses, categories and items; at most 2 sequential for other writes (add-sale reads the customer whose name the sale carries).\n\n| function | method | calls | sequential round trips | runs that differed | target |\n|---|---|---|---|---|---|\n")
	if err := b.invokeCall(b.benchCalls()[0], 0); err != nil { // warms the key cache
		return err
	}
	covered := map[string]bool{}
	for _, c := range b.benchCalls() {
		covered[c.function] = true
		runs := 8
		switch c.function {
		case "test-webhook":
			runs = 4 // under its limit of 5 a minute per account
		case "redeliver-webhook":
			runs = 1 // a delivery is queued again once; then it is pending
		case "rotate-api-key":
			runs = 1 // the next run's key would not be in the cache yet
		}
		typical, differed, err := b.typicalRun(runs, func(i int) error { return b.invokeCall(c, i) })
		if err != nil {
			return err
		}
		target := "1"
		switch {
		case c.function == "authenticate":
			target = "0 (cached key)"
		case oneTripCreates[c.function]:
			target = "1"
		case c.method != "GET":
			target = "<= 2"
		}
		b.printf("| %s | %s | %d | %d | %s | %s |\n", c.function, c.method, typical.calls, typical.depth, differed, target)
	}
	b.printf("\n")
	if err := b.correctionTrips(covered); err != nil {
		return fmt.Errorf("corrections: %w", err)
	}
	if err := b.eventTrips(covered); err != nil {
		return fmt.Errorf("events and webhook endpoints: %w", err)
	}
	if err := b.settingsTrips(covered); err != nil {
		return fmt.Errorf("settings and reports: %w", err)
	}
	if err := b.keyTrips(covered); err != nil {
		return fmt.Errorf("api keys: %w", err)
	}
	if err := b.invoiceTrips(covered); err != nil {
		return fmt.Errorf("invoice links and PDFs: %w", err)
	}
	for _, r := range api.Routes {
		if !covered[r.Function] {
			return fmt.Errorf("route %s has no benchmark request", r.Function)
		}
	}
	return nil
}
