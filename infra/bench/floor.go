package main

// The create-floor step: a create against one bare PutItem.

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// createFloor compares add-customer through its Lambda function with the
// floor of any create: one bare, unconditional PutItem of the same item on
// the same client, interleaved. Without an Idempotency-Key the create is one
// conditional PutItem; with one, a TransactWriteItems of the customer and
// the key's record, so the write the create makes is also replayed bare
// (without its conditions), to tell the handler's cost from DynamoDB's.
func (b *bench) createFloor() error {
	b.printf("## Creates against the floor\n\n`add-customer` through its Lambda function (event -> httpadapter -> handler -> response) versus one bare, unconditional PutItem of the very customer item it wrote, on the same client, interleaved, 300 runs each after 30 warm-ups; medians. Targets: at most 1.5 without an Idempotency-Key, at most 2 with one.\n\n")
	b.printf("| request | DynamoDB calls of the create (typical run) | median via Lambda adapter | median bare PutItem | ratio | target | median bare replay of the create's write | ratio to it |\n|---|---|---|---|---|---|---|---|\n")
	for _, withKey := range []bool{false, true} {
		var viaAdapter, bare, write []time.Duration
		calls := map[string]int{}
		for i := 0; i < 330; i++ {
			var headers map[string]string
			if withKey {
				headers = map[string]string{"idempotency-key": fmt.Sprintf("floor-%d-%d", time.Now().UnixNano(), i)}
			}
			inputs, d1, err := b.captureCalls(func() error {
				_, err := b.invokeWith("add-customer", "POST", "/api/v1/customers/add", "",
					map[string]any{"name": fmt.Sprintf("Floor %d", i), "email": "floor@example.com"}, headers)
				return err
			})
			if err != nil {
				return err
			}
			item, names := createdItem(inputs)
			if item == nil {
				return fmt.Errorf("add-customer wrote no customer item (calls: %s)", names)
			}
			calls[names]++
			start := time.Now()
			if _, err := b.db.PutItem(b.ctx, &dynamodb.PutItemInput{TableName: &b.cfg.TableName, Item: item}); err != nil {
				return err
			}
			d2 := time.Since(start)
			start = time.Now()
			if err := b.replayWrite(inputs); err != nil {
				return err
			}
			d3 := time.Since(start)
			if i >= 30 {
				viaAdapter, bare, write = append(viaAdapter, d1), append(bare, d2), append(write, d3)
			}
		}
		typical, n := "", 0
		for names, c := range calls {
			if c > n {
				typical, n = names, c
			}
		}
		req, target := "POST /api/v1/customers/add", "1.5"
		if withKey {
			req, target = "POST /api/v1/customers/add with an Idempotency-Key", "2"
		}
		m1, m2, m3 := median(viaAdapter), median(bare), median(write)
		b.printf("| %s | %s (%d of 330 runs) | %s | %s | %.2f | at most %s | %s | %.2f |\n", req, typical, n, m1.Round(time.Microsecond), m2.Round(time.Microsecond),
			float64(m1)/float64(m2), target, m3.Round(time.Microsecond), float64(m1)/float64(m3))
	}
	b.printf("\nThe other runs also reserved a block of customer ids on the account's counter (one UpdateItem, every few creates while blocks are small).\n\n")
	return nil
}

// createdItem returns the first item the captured calls put, and the names
// of the calls.
func createdItem(inputs []any) (map[string]types.AttributeValue, string) {
	var item map[string]types.AttributeValue
	names := ""
	for _, in := range inputs {
		name := fmt.Sprintf("%T", in)
		switch in := in.(type) {
		case *dynamodb.PutItemInput:
			name = "PutItem"
			if item == nil {
				item = in.Item
			}
		case *dynamodb.TransactWriteItemsInput:
			name = "TransactWriteItems"
			if item == nil && len(in.TransactItems) > 0 && in.TransactItems[0].Put != nil {
				item = in.TransactItems[0].Put.Item
			}
		case *dynamodb.UpdateItemInput:
			name = "UpdateItem"
		case *dynamodb.GetItemInput:
			name = "GetItem"
		}
		if names != "" {
			names += " + "
		}
		names += name
	}
	return item, names
}

// replayWrite makes the write among the captured calls again, bare and
// without its conditions (the items exist now), on the same client.
func (b *bench) replayWrite(inputs []any) error {
	for _, in := range inputs {
		switch in := in.(type) {
		case *dynamodb.PutItemInput:
			_, err := b.db.PutItem(b.ctx, &dynamodb.PutItemInput{TableName: in.TableName, Item: in.Item})
			return err
		case *dynamodb.TransactWriteItemsInput:
			var items []types.TransactWriteItem
			for _, it := range in.TransactItems {
				if it.Put != nil {
					items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: it.Put.TableName, Item: it.Put.Item}})
				}
			}
			_, err := b.db.TransactWriteItems(b.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
			return err
		}
	}
	return fmt.Errorf("the create made no write")
}
