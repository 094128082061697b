package store

import "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

// PaymentItem is paymentItem for tests that write a sale's payment records
// directly, as the store stores them.
var PaymentItem = paymentItem

// SaleItem is saleItem, for tests that store a sale as an earlier release
// did.
var SaleItem = saleItem

// EventKey is eventKey: the table key of an account's event.
func EventKey(account, id string) map[string]types.AttributeValue { return eventKey(account, id) }
