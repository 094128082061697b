package webhook

import (
	"errors"

	"bizdata/shared/business"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// errUnprocessable marks a stream record that lacks what its kind must
// carry (an account, a transaction or event id, a body).
var errUnprocessable = errors.New("stream record cannot be processed")

// Unprocessable reports whether handing a stream record again cannot change
// err: the record lacks what it must carry, its account is gone (a test twin
// retired by a clear, whose payments, refunds and figures the stream still
// carries for a while; the account item is read consistently, so a miss is
// final). Such a record is logged and
// passed over, never reported as a batch item failure: Lambda hands a shard
// again from the lowest failed record, so one that can never succeed would
// hold every later record of the shard, every merchant's, until its retries
// ran out. Anything else (throttling, a timeout, a denied call, a write
// DynamoDB refuses) is reported and retried, and reaches the failure queue
// and its alarm if it outlasts the retries: passing it over would lose a
// delivery without a word.
func Unprocessable(err error) bool {
	return errors.Is(err, errUnprocessable) || business.ErrorCode(err) == business.ENOTFOUND
}

// FromStreamImage converts a stream record's image (the Lambda events
// package's own attribute type) into the SDK's attribute values.
func FromStreamImage(img map[string]events.DynamoDBAttributeValue) map[string]types.AttributeValue {
	out := make(map[string]types.AttributeValue, len(img))
	for k, v := range img {
		out[k] = fromStream(v)
	}
	return out
}

func fromStream(v events.DynamoDBAttributeValue) types.AttributeValue {
	switch v.DataType() {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: v.String()}
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: v.Number()}
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: v.Binary()}
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: v.Boolean()}
	case events.DataTypeNull:
		return &types.AttributeValueMemberNULL{Value: true}
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: v.StringSet()}
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: v.NumberSet()}
	case events.DataTypeBinarySet:
		return &types.AttributeValueMemberBS{Value: v.BinarySet()}
	case events.DataTypeMap:
		return &types.AttributeValueMemberM{Value: FromStreamImage(v.Map())}
	case events.DataTypeList:
		l := v.List()
		out := make([]types.AttributeValue, len(l))
		for i, e := range l {
			out[i] = fromStream(e)
		}
		return &types.AttributeValueMemberL{Value: out}
	}
	return &types.AttributeValueMemberNULL{Value: true}
}
