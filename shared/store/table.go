// Package store keeps the product's records in one DynamoDB table
// (single-table design) and turns DynamoDB's outcomes into business errors:
// a failed uniqueness condition becomes ECONFLICT, a missing item ENOTFOUND.
// It knows nothing of HTTP.
//
// Keys. Every record of an account lives under a partition key that starts
// with "A#<account id>#", so no query can cross accounts:
//
//	account          PK A#<acct>                      SK ACCOUNT
//	api key          PK KEY#<sha256 of key>           SK KEY
//	id counter       PK A#<acct>                      SK COUNTER#<kind>
//	customer         PK A#<acct>#CUSTOMER#<id>        SK CUSTOMER
//	sale (+ lines)   PK A#<acct>#SALE#<invoice code>  SK SALE
//	sale payment     PK A#<acct>#SALE#<invoice code>  SK PAY#<seq>
//	unique value     PK A#<acct>#UNIQUE#<what>#<val>  SK UNIQUE
//	idempotency key  PK A#<acct>#IDEM#<route>#<key>   SK IDEM (expires via TTL)
//	test-send count  PK A#<acct>                      SK TESTSEND#<Unix minute> (expires via TTL)
//	webhook queue    PK A#<acct>                      SK WEBHOOKQ (ready entry, circuit breaker)
//	delivery         PK A#<acct>#DELIVERY#<tx>        SK DELIVERY
//	sweep cursor     PK SWEEP                         SK PAYMENTS
//
// Lists read global secondary indexes whose partition key names the account,
// the kind and (for equality filters) the filter value, and whose sort key is
// "<timestamp or date>#<padded id>", so each filter is a single Query that
// reads only what it returns.
package store

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Index names. Each index has partition key <name>PK and sort key <name>SK.
const (
	// IndexCreated lists every record of a kind, newest first.
	IndexCreated = "GSI1"
	// IndexPrimaryFilter lists a kind by its main equality filter (sales by
	// customer, expenses by type, items by category, categories by name).
	IndexPrimaryFilter = "GSI2"
	// IndexType lists sales by invoice type.
	IndexType = "GSI3"
	// IndexStatus lists sales by payment status.
	IndexStatus = "GSI4"
	// IndexPaymentDate lists sales by payment date.
	IndexPaymentDate = "GSI5"
	// IndexUpperBound orders a kind by the field its upper-bound filter reads
	// (sales: due_date; expenses, items, categories: updated_at).
	IndexUpperBound = "GSI6"
	// IndexDue is the webhook dispatcher's (see queue.go and sweep.go): in
	// shards DUE#NN, one ready entry per account with work due, by when; in
	// A#<acct>#DUE, that account's waiting deliveries, by when their next
	// attempt is due; in PAID#<hour>#NN, every payment, by when it was
	// written, for the sweep.
	IndexDue = "GSI7"
	// IndexCustomerStatus lists sales by customer and payment status, newest
	// first: what a customer owes.
	IndexCustomerStatus = "GSI8"
	// IndexStatusDue lists sales by payment status, by due date: overdue
	// invoices.
	IndexStatusDue = "GSI9"
)

// TTLAttribute is the attribute DynamoDB's time to live reads (Unix seconds).
const TTLAttribute = "expires_at"

// Indexes lists every global secondary index of the table, in order.
var Indexes = []string{IndexCreated, IndexPrimaryFilter, IndexType, IndexStatus, IndexPaymentDate, IndexUpperBound, IndexDue,
	IndexCustomerStatus, IndexStatusDue}

// TableDefinition returns the table's definition, the one the devserver and
// tests create and that template.yaml must match (a test checks it).
func TableDefinition(name string) *dynamodb.CreateTableInput {
	attrs := []types.AttributeDefinition{
		{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS},
		{AttributeName: aws.String("SK"), AttributeType: types.ScalarAttributeTypeS},
	}
	var gsis []types.GlobalSecondaryIndex
	for _, ix := range Indexes {
		attrs = append(attrs,
			types.AttributeDefinition{AttributeName: aws.String(ix + "PK"), AttributeType: types.ScalarAttributeTypeS},
			types.AttributeDefinition{AttributeName: aws.String(ix + "SK"), AttributeType: types.ScalarAttributeTypeS})
		gsis = append(gsis, types.GlobalSecondaryIndex{
			IndexName: aws.String(ix),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(ix + "PK"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(ix + "SK"), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		})
	}
	return &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: attrs,
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: gsis,
		StreamSpecification: &types.StreamSpecification{
			StreamEnabled:  aws.Bool(true),
			StreamViewType: types.StreamViewTypeNewAndOldImages,
		},
	}
}
