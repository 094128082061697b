package store_test

import (
	"context"
	"strings"
	"testing"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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
