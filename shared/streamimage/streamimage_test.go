package streamimage_test

import (
	"reflect"
	"testing"

	"bizdata/shared/streamimage"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// A record read with the Streams API reaches a handler as Lambda would hand
// it, and its image reads back as the item the store wrote, whatever its
// attributes' types.
func TestRecordReadsBackAsItsItem(t *testing.T) {
	r := st.Record{EventID: aws.String("ev1"), EventName: st.OperationTypeInsert, Dynamodb: &st.StreamRecord{
		SequenceNumber: aws.String("42"),
		NewImage: map[string]st.AttributeValue{"PK": &st.AttributeValueMemberS{Value: "A#acct_1"}, "n": &st.AttributeValueMemberN{Value: "7"},
			"ok": &st.AttributeValueMemberBOOL{Value: true}, "nil": &st.AttributeValueMemberNULL{Value: true}, "b": &st.AttributeValueMemberB{Value: []byte{0, 1, 2}},
			"ss": &st.AttributeValueMemberSS{Value: []string{"a", "b"}}, "ns": &st.AttributeValueMemberNS{Value: []string{"1", "2"}}, "bs": &st.AttributeValueMemberBS{Value: [][]byte{{9}}},
			"l": &st.AttributeValueMemberL{Value: []st.AttributeValue{&st.AttributeValueMemberM{Value: map[string]st.AttributeValue{"qty": &st.AttributeValueMemberN{Value: "2"}}}}}},
	}}
	rec := streamimage.LambdaRecord(r)
	if rec.EventID != "ev1" || rec.EventName != "INSERT" || rec.Change.SequenceNumber != "42" ||
		rec.Change.NewImage["ss"].DataType() != events.DataTypeStringSet {
		t.Fatalf("record %+v", rec)
	}
	want := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A#acct_1"}, "n": &types.AttributeValueMemberN{Value: "7"},
		"ok": &types.AttributeValueMemberBOOL{Value: true}, "nil": &types.AttributeValueMemberNULL{Value: true}, "b": &types.AttributeValueMemberB{Value: []byte{0, 1, 2}},
		"ss": &types.AttributeValueMemberSS{Value: []string{"a", "b"}}, "ns": &types.AttributeValueMemberNS{Value: []string{"1", "2"}}, "bs": &types.AttributeValueMemberBS{Value: [][]byte{{9}}},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"qty": &types.AttributeValueMemberN{Value: "2"}}}}}}
	if got := streamimage.Item(rec.Change.NewImage); !reflect.DeepEqual(got, want) {
		t.Errorf("item:\n got %#v\nwant %#v", got, want)
	}
}

// A record without its change (a removal's, say) keeps its name and id.
func TestRecordWithoutChange(t *testing.T) {
	rec := streamimage.LambdaRecord(st.Record{EventID: aws.String("ev2"), EventName: st.OperationTypeRemove})
	if rec.EventID != "ev2" || rec.EventName != "REMOVE" || rec.Change.NewImage != nil {
		t.Fatalf("record %+v", rec)
	}
}

// An insert answers its item's type; a modification, an insert without a
// type, or one whose type is not a string answers "".
func TestInsertedType(t *testing.T) {
	withType := func(name string, v events.DynamoDBAttributeValue) events.DynamoDBEventRecord {
		return events.DynamoDBEventRecord{EventName: name, Change: events.DynamoDBStreamRecord{
			NewImage: map[string]events.DynamoDBAttributeValue{"type": v}}}
	}
	if got := streamimage.InsertedType(withType("INSERT", events.NewStringAttribute("figures"))); got != "figures" {
		t.Errorf("insert of figures: %q", got)
	}
	if got := streamimage.InsertedType(withType("MODIFY", events.NewStringAttribute("figures"))); got != "" {
		t.Errorf("modify: %q", got)
	}
	if got := streamimage.InsertedType(withType("INSERT", events.NewNumberAttribute("1"))); got != "" {
		t.Errorf("number type: %q", got)
	}
	if got := streamimage.InsertedType(events.DynamoDBEventRecord{EventName: "INSERT"}); got != "" {
		t.Errorf("no type: %q", got)
	}
}
