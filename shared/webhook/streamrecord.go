package webhook

import (
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// StreamRecord converts a record read with the DynamoDB Streams API into the
// record Lambda's event source hands a function, as far as HandleStream and
// the report figures' handler read it (its name, sequence number and new
// image). The devserver's poller and the drain of the failure queue both
// read the stream themselves and hand what they read through it, so a record
// reaches the handlers alike by every path.
func StreamRecord(r st.Record) events.DynamoDBEventRecord {
	rec := events.DynamoDBEventRecord{EventID: aws.ToString(r.EventID), EventName: string(r.EventName)}
	if r.Dynamodb != nil {
		rec.Change = events.DynamoDBStreamRecord{
			SequenceNumber: aws.ToString(r.Dynamodb.SequenceNumber),
			NewImage:       StreamImage(r.Dynamodb.NewImage),
		}
	}
	return rec
}

// StreamImage converts the Streams API's attribute values into the events
// package's, as Lambda would deliver them.
func StreamImage(img map[string]st.AttributeValue) map[string]events.DynamoDBAttributeValue {
	out := make(map[string]events.DynamoDBAttributeValue, len(img))
	for k, v := range img {
		out[k] = streamValue(v)
	}
	return out
}

func streamValue(v st.AttributeValue) events.DynamoDBAttributeValue {
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
		return events.NewMapAttribute(StreamImage(v.Value))
	case *st.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = streamValue(e)
		}
		return events.NewListAttribute(l)
	}
	return events.NewNullAttribute()
}
