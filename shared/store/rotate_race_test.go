package store_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// TestRotationEventShowsTheEndpointAsCommitted: an edit of the endpoint
// committed between the rotation's read of it and its transaction does not
// leave the secret_rotated event showing the endpoint as it was: the
// rotation reads it again, and its event carries the edited URL and
// version.
func TestRotationEventShowsTheEndpointAsCommitted(t *testing.T) {
	ctx := context.Background()
	var edit atomic.Pointer[func()]
	st, _ := testdb.NewStore(t, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("EditFirst",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					if _, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok {
						if f := edit.Swap(nil); f != nil {
							(*f)()
						}
					}
					return next.HandleInitialize(ctx, in)
				}), middleware.Before)
		})
	})
	acct, _ := testdb.NewAccount(t, st, "Rotate Shop", "ROT01")
	ep, err := st.CreateEndpoint(ctx, acct.ID, business.Endpoint{URL: "https://hooks.example.com/old", EnabledEvents: []string{"*"}}, business.NewEndpointSecret())
	if err != nil {
		t.Fatal(err)
	}
	f := func() {
		if _, err := st.UpdateEndpoint(ctx, acct.ID, ep.ID, func(e *business.Endpoint) error { e.URL = "https://hooks.example.com/new"; return nil }); err != nil {
			t.Error(err)
		}
	}
	edit.Store(&f)
	if err := st.RotateEndpointSecret(ctx, acct.ID, ep.ID, business.NewEndpointSecret(), time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	page, err := st.ListEvents(ctx, acct.ID, store.EventFilter{}, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range page.Items {
		var ev struct {
			Type     string `json:"type"`
			Resource struct {
				Version int64 `json:"version"`
			} `json:"resource"`
			Data struct {
				Endpoint struct {
					URL string `json:"url"`
				} `json:"webhook_endpoint"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == business.EventEndpointSecretRotated {
			if ev.Data.Endpoint.URL != "https://hooks.example.com/new" || ev.Resource.Version != 2 {
				t.Fatalf("the rotation's event after an edit it raced: %s", body)
			}
			return
		}
	}
	t.Fatalf("no %s event among %d", business.EventEndpointSecretRotated, len(page.Items))
}
