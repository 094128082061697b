package store_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// The callback secret is kept in an item of its own under
// store.SecretKeyPrefix, never on the account item the API reads.
func TestWebhookSecretItsOwnItem(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "SHOP1")
	if err := st.SetWebhook(ctx, a.ID, business.Webhook{CallbackURL: "https://example.com/h", CallbackSecret: "s3cret-value-123"}); err != nil {
		t.Fatal(err)
	}
	_, wh, err := st.FindAccount(ctx, a.ID)
	if err != nil || wh.CallbackSecret != "s3cret-value-123" || wh.CallbackURL != "https://example.com/h" {
		t.Fatalf("%+v %v", wh, err)
	}
	out, err := st.Client().Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(st.Table())})
	if err != nil {
		t.Fatal(err)
	}
	holders := 0
	for _, it := range out.Items {
		for _, v := range it {
			if s, ok := v.(*types.AttributeValueMemberS); ok && s.Value == "s3cret-value-123" {
				holders++
				if pk := it["PK"].(*types.AttributeValueMemberS).Value; !strings.HasPrefix(pk, store.SecretKeyPrefix) {
					t.Errorf("the secret is on item %s", pk)
				}
			}
		}
	}
	if holders != 1 {
		t.Fatalf("the secret is on %d items", holders)
	}
	// Removing the secret removes its item; the URL stays.
	if err := st.SetWebhook(ctx, a.ID, business.Webhook{CallbackURL: "https://example.com/h"}); err != nil {
		t.Fatal(err)
	}
	if _, wh, _ := st.FindAccount(ctx, a.ID); wh.CallbackSecret != "" || wh.CallbackURL == "" {
		t.Fatalf("%+v", wh)
	}
	if err := st.SetWebhook(ctx, "acct_missing", business.Webhook{}); business.ErrorCode(err) != business.ENOTFOUND {
		t.Fatalf("missing account: %v", err)
	}
}

// A request authenticates with one GetItem of its key's item, and that read
// must be consistent: right after a rotation an eventually consistent read
// may still find the old key's item, or miss the new one. DynamoDB Local
// always answers consistently, so the test checks the request itself.
func TestFindAccountByKeyHashReadsConsistently(t *testing.T) {
	var reqs testdb.Requests
	st, _ := testdb.NewStore(t, reqs.Option())
	ctx := context.Background()
	a, oldKey := testdb.NewAccount(t, st, "Shop", "SHOP1")
	newKey, err := st.RotateKey(ctx, a.ID, nil, a.Key.ID)
	if err != nil {
		t.Fatal(err)
	}

	mark := reqs.Mark()
	if got, err := st.FindAccountByKeyHash(ctx, business.HashAPIKey(newKey)); err != nil || got.ID != a.ID {
		t.Fatalf("new key: %+v %v", got, err)
	}
	if _, err := st.FindAccountByKeyHash(ctx, business.HashAPIKey(oldKey)); business.ErrorCode(err) != business.EUNAUTHORIZED {
		t.Fatalf("old key after rotation: %v, want EUNAUTHORIZED", err)
	}
	calls := reqs.Since(mark)
	if len(calls) != 2 {
		t.Fatalf("%d DynamoDB calls for two lookups, want 2: %+v", len(calls), calls)
	}
	for i, c := range calls {
		in, ok := c.Input.(*dynamodb.GetItemInput)
		if !ok {
			t.Fatalf("lookup %d made %s, want GetItem", i+1, c.Operation)
		}
		if !aws.ToBool(in.ConsistentRead) {
			t.Errorf("lookup %d: its GetItem is not a consistent read", i+1)
		}
	}
}

// setLegacySecret writes callback_secret on the account item, as SetWebhook
// did before secrets had items of their own.
func setLegacySecret(ctx context.Context, st *store.Store, accountID, secret string) error {
	_, err := st.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(st.Table()),
		Key:                       map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A#" + accountID}, "SK": &types.AttributeValueMemberS{Value: "ACCOUNT"}},
		UpdateExpression:          aws.String("SET callback_secret = :s"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: secret}},
	})
	return err
}

// A legacy secret that changes between the migration's read and its
// transaction is not overwritten by the one read: the transaction's
// condition fails, the account is read again and the newer secret moves.
func TestMigrateLegacySecretsStartsOverAfterAConcurrentChange(t *testing.T) {
	var (
		st      *store.Store
		account string
		armed   atomic.Bool
		changes atomic.Int64
	)
	// Just before the migration's first transaction, an old writer sets
	// another secret on the account item.
	interfere := func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("ConcurrentLegacyWriter",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					if middleware.GetOperationName(ctx) == "TransactWriteItems" && armed.CompareAndSwap(true, false) {
						if err := setLegacySecret(ctx, st, account, "the-newer-legacy-secret"); err != nil {
							return middleware.InitializeOutput{}, middleware.Metadata{}, err
						}
						changes.Add(1)
					}
					return next.HandleInitialize(ctx, in)
				}), middleware.After)
		})
	}
	st, _ = testdb.NewStore(t, interfere)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Old Shop", "OLD1")
	account = a.ID
	if err := setLegacySecret(ctx, st, a.ID, "the-first-legacy-secret"); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	n, err := st.MigrateLegacySecrets(ctx)
	if err != nil || n != 1 || changes.Load() != 1 {
		t.Fatalf("migrated %d, %v (%d concurrent changes made), want 1", n, err, changes.Load())
	}
	if _, wh, err := st.FindAccount(ctx, a.ID); err != nil || wh.CallbackSecret != "the-newer-legacy-secret" {
		t.Fatalf("deliveries sign with %q (%v), want the secret set last", wh.CallbackSecret, err)
	}
	if n, err := st.MigrateLegacySecrets(ctx); err != nil || n != 0 {
		t.Fatalf("second run migrated %d, %v; want 0", n, err)
	}
}

// TestURLChangeKeepsLegacySecret: changing only the URL of an account whose
// secret still lives on the account item (before secrets had their own item)
// keeps deliveries signed with that secret.
func TestURLChangeKeepsLegacySecret(t *testing.T) {
	st, _ := testdb.NewStore(t)
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Old", "OLD1")
	if err := st.SetWebhook(ctx, a.ID, business.Webhook{CallbackURL: "https://example.com/a"}); err != nil {
		t.Fatal(err)
	}
	if err := setLegacySecret(ctx, st, a.ID, "legacy-secret-0123456"); err != nil {
		t.Fatal(err)
	}
	url := "https://example.com/b"
	out, err := st.UpdateWebhook(ctx, a.ID, &url, nil)
	if err != nil || !out.Signed {
		t.Fatalf("update: %+v %v", out, err)
	}
	if _, wh, err := st.FindAccount(ctx, a.ID); err != nil || wh.CallbackSecret != "legacy-secret-0123456" || wh.CallbackURL != url {
		t.Fatalf("after a URL change deliveries sign with %q to %q (%v), want the legacy secret", wh.CallbackSecret, wh.CallbackURL, err)
	}
}
