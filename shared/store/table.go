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

// Index is one global secondary index: its name, the attributes of its
// keys, and what its entries carry besides keys.
type Index struct {
	Name, PK, SK string
	// Include lists the attributes an entry carries besides the keys; nil
	// means every attribute (projection ALL).
	Include []string
}

// viewAttr is the attribute that holds a record's list view: every field a
// list shows, as a map (see pack). Lists read it from index entries, so an
// entry carries what a list shows and never what it does not (a sale's
// lines).
const viewAttr = "v"

// deliveryListed is what a webhook delivery's entry in IndexCreated carries:
// the list of deliveries shows the whole record.
var deliveryListed = []string{"type", "account_id", "transaction_id", "webhook_id", "payload", "created_at", "state", "attempt", "round_start", "next_at", "attempts"}

// The indexes. Each list index serves one way of listing, overloaded across
// kinds of record by partition key prefix (A#<acct>#SALE, A#<acct>#EXPENSE,
// ...) and sparse (a record has a key only in the indexes its kind is listed
// by). The list indexes IXn are keyed on the attributes GSInPK and GSInSK
// that the first design's ALL-projected indexes GSIn used, so that an
// existing table moves to them without new keys on its items (see
// docs/decisions.md, "Indexes").
var (
	// IndexCreated lists every record of a kind, newest first (and webhook
	// deliveries).
	IndexCreated = Index{"IX1", "GSI1PK", "GSI1SK", append([]string{viewAttr}, deliveryListed...)}
	// IndexPrimaryFilter lists a kind by its main equality filter (sales by
	// customer, expenses by type, items by category, categories by name).
	IndexPrimaryFilter = Index{"IX2", "GSI2PK", "GSI2SK", []string{viewAttr}}
	// IndexType lists sales by invoice type.
	IndexType = Index{"IX3", "GSI3PK", "GSI3SK", []string{viewAttr}}
	// IndexStatus lists sales by payment status.
	IndexStatus = Index{"IX4", "GSI4PK", "GSI4SK", []string{viewAttr}}
	// IndexPaymentDate lists sales by payment date (only sales that have one).
	IndexPaymentDate = Index{"IX5", "GSI5PK", "GSI5SK", []string{viewAttr}}
	// IndexUpperBound orders a kind by the field its upper-bound filter reads
	// (sales: due_date; expenses, items, categories: updated_at).
	IndexUpperBound = Index{"IX6", "GSI6PK", "GSI6SK", []string{viewAttr}}
	// IndexDue is the webhook dispatcher's (see queue.go and sweep.go): in
	// shards DUE#NN, one ready entry per account with work due, by when; in
	// A#<acct>#DUE, that account's waiting deliveries, by when their next
	// attempt is due; in PAID#<hour>#NN, every payment, by when it was
	// written, for the sweep. Only small records enter it, whole.
	IndexDue = Index{"GSI7", "GSI7PK", "GSI7SK", nil}
	// IndexCustomerStatus lists sales by customer and payment status, newest
	// first: what a customer owes.
	IndexCustomerStatus = Index{"IX8", "GSI8PK", "GSI8SK", []string{viewAttr}}
	// IndexStatusDue lists sales by payment status, by due date: overdue
	// invoices.
	IndexStatusDue = Index{"IX9", "GSI9PK", "GSI9SK", []string{viewAttr}}
)

// TTLAttribute is the attribute DynamoDB's time to live reads (Unix seconds).
const TTLAttribute = "expires_at"

// Indexes lists every global secondary index of the table, in order.
var Indexes = []Index{IndexCreated, IndexPrimaryFilter, IndexType, IndexStatus, IndexPaymentDate, IndexUpperBound, IndexDue,
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
			types.AttributeDefinition{AttributeName: aws.String(ix.PK), AttributeType: types.ScalarAttributeTypeS},
			types.AttributeDefinition{AttributeName: aws.String(ix.SK), AttributeType: types.ScalarAttributeTypeS})
		proj := &types.Projection{ProjectionType: types.ProjectionTypeAll}
		if ix.Include != nil {
			proj = &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: ix.Include}
		}
		gsis = append(gsis, types.GlobalSecondaryIndex{
			IndexName: aws.String(ix.Name),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(ix.PK), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(ix.SK), KeyType: types.KeyTypeRange},
			},
			Projection: proj,
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
