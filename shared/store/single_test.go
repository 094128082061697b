package store_test

import (
	"context"
	"sync/atomic"
	"testing"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// loseAnswers makes the first n PutItem or TransactWriteItems calls that
// commit answer with a retryable error instead, as a lost response does: the
// SDK sends the call again (a transaction with the same client request
// token, which DynamoDB answers as the first time).
func loseAnswers(n *atomic.Int64) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("LoseAnswer",
				func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
					out, md, err := next.HandleDeserialize(ctx, in)
					if op := middleware.GetOperationName(ctx); err == nil && (op == "PutItem" || op == "TransactWriteItems") && n.Load() > 0 && n.Add(-1) >= 0 {
						return out, md, &smithy.GenericAPIError{Code: "ThrottlingException", Message: "answer lost"}
					}
					return out, md, err
				}), middleware.Before)
		})
	}
}

// A write whose answer is lost after it committed is retried by the SDK: a
// transaction (every record's write, with its event) carries the same client
// request token and DynamoDB answers it as the first time; a single PutItem
// fails its own condition, and the store recognises its own item. Either
// way the create is not refused (and not made twice by a client's retry)
// and the edit is not applied twice.
func TestWriteWithLostAnswer(t *testing.T) {
	var lose atomic.Int64
	st, _ := testdb.NewStore(t, loseAnswers(&lose))
	a, _ := testdb.NewAccount(t, st, "Shop", "SHOP1")
	ctx := context.Background()
	lose.Store(1)
	if _, err := st.CreateCustomer(ctx, a.ID, business.Customer{Name: "Ama"}, nil, render[business.Customer]); err != nil {
		t.Fatalf("create with its answer lost: %v", err)
	}
	lose.Store(1)
	c, err := st.UpdateCustomer(ctx, a.ID, 1, func(c *business.Customer) error { c.Phone = "0201234567"; return nil })
	if err != nil || c.Version != 2 {
		t.Fatalf("edit with its answer lost: version %d, %v", c.Version, err)
	}
	if lose.Load() != 0 {
		t.Fatal("no answer was lost: the test proves nothing")
	}
	page, err := st.ListCustomers(ctx, a.ID, store.CustomerFilter{}, 10, "")
	if err != nil || len(page.Items) != 1 || page.Items[0].Phone != "0201234567" {
		t.Fatalf("customers %+v %v, want the one, edited once", page.Items, err)
	}
	if got, _ := st.FindCustomerByID(ctx, a.ID, 1); got.Version != 2 {
		t.Fatalf("stored version %d, want 2", got.Version)
	}
}
