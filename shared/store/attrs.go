package store

import (
	"fmt"
	"strconv"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attribute helpers: building and reading the values of an item (attrs), and
// the key and time formats every record uses (times as business.TimeFormat,
// the API's own).

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func num(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

func nInt(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

// setS sets it[k] to v, or leaves it out when v is empty.
func setS(it attrs, k, v string) {
	if v != "" {
		it[k] = str(v)
	}
}

func getS(it attrs, k string) string {
	if v, ok := it[k].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func getN(it attrs, k string) string {
	if v, ok := it[k].(*types.AttributeValueMemberN); ok {
		return v.Value
	}
	return ""
}

func getInt(it attrs, k string) int64 {
	i, _ := strconv.ParseInt(getN(it, k), 10, 64)
	return i
}

func key(pk, sk string) attrs { return attrs{"PK": str(pk), "SK": str(sk)} }

func fmtTime(t time.Time) string { return t.UTC().Format(business.TimeFormat) }

func getTime(it attrs, k string) time.Time {
	t, _ := time.Parse(business.TimeFormat, getS(it, k))
	return t
}

// pad formats an id so that string order is numeric order.
func pad(id int64) string { return fmt.Sprintf("%012d", id) }

func acctPK(acct string) string { return "A#" + acct }
