// Package streamimage converts DynamoDB stream records between the three
// shapes they take here: as the DynamoDB Streams API reads them, as
// Lambda's event source hands them to a function, and as the SDK's
// attribute values the store reads items in.
package streamimage

import (
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// LambdaRecord converts a record read with the DynamoDB Streams API into the
// record Lambda's event source hands a function, as far as the webhook and
// report figures' handlers read it (its name, sequence number and new
// image). The devserver's poller and the drain of the failure queue both
// read the stream themselves and hand what they read through it, so a record
// reaches the handlers alike by every path.
func LambdaRecord(r st.Record) events.DynamoDBEventRecord {
	rec := events.DynamoDBEventRecord{EventID: aws.ToString(r.EventID), EventName: string(r.EventName)}
	if r.Dynamodb != nil {
		rec.Change = events.DynamoDBStreamRecord{
			SequenceNumber: aws.ToString(r.Dynamodb.SequenceNumber),
			NewImage:       LambdaImage(r.Dynamodb.NewImage),
		}
	}
	return rec
}

// InsertedType returns the type of the item a stream record inserts ("" for
// any other record), which decides the function that takes it.
func InsertedType(r events.DynamoDBEventRecord) string {
	t, ok := r.Change.NewImage["type"]
	if r.EventName != "INSERT" || !ok || t.DataType() != events.DataTypeString {
		return ""
	}
	return t.String()
}

// LambdaImage converts the Streams API's attribute values into the events
// package's, as Lambda would deliver them.
func LambdaImage(img map[string]st.AttributeValue) map[string]events.DynamoDBAttributeValue {
	return convertMap(img, lambdaValue)
}

func lambdaValue(v st.AttributeValue) events.DynamoDBAttributeValue {
	switch v := v.(type) {
	case *st.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value)
	case *st.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value)
	case *st.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value)
	case *st.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value)
	case *st.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value)
	case *st.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value)
	case *st.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value)
	case *st.AttributeValueMemberM:
		return events.NewMapAttribute(LambdaImage(v.Value))
	case *st.AttributeValueMemberL:
		return events.NewListAttribute(convertList(v.Value, lambdaValue))
	}
	return events.NewNullAttribute()
}

// Item converts a stream record's image (the Lambda events package's own
// attribute type) into the SDK's attribute values, as the store reads items.
func Item(img map[string]events.DynamoDBAttributeValue) map[string]types.AttributeValue {
	return convertMap(img, itemValue)
}

func itemValue(v events.DynamoDBAttributeValue) types.AttributeValue {
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
		return &types.AttributeValueMemberM{Value: Item(v.Map())}
	case events.DataTypeList:
		return &types.AttributeValueMemberL{Value: convertList(v.List(), itemValue)}
	}
	return &types.AttributeValueMemberNULL{Value: true}
}

// convertMap converts each value of an image, or of a map attribute.
func convertMap[V, W any](m map[string]V, convert func(V) W) map[string]W {
	out := make(map[string]W, len(m))
	for k, v := range m {
		out[k] = convert(v)
	}
	return out
}

// convertList converts each element of a list attribute.
func convertList[V, W any](l []V, convert func(V) W) []W {
	out := make([]W, len(l))
	for i, v := range l {
		out[i] = convert(v)
	}
	return out
}
