package main

import (
	"reflect"
	"testing"

	"bizdata/shared/streamimage"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The memory step hands the stream consumers items read from the table as
// stream images; each consumer reads them back with streamimage.Item,
// which must give the item again, whatever its attributes' types.
func TestStreamImageRoundTrip(t *testing.T) {
	item := map[string]types.AttributeValue{
		"PK":      &types.AttributeValueMemberS{Value: "A#acct_1#REPORT#PEND2"},
		"version": &types.AttributeValueMemberN{Value: "7"},
		"live":    &types.AttributeValueMemberBOOL{Value: true},
		"gone":    &types.AttributeValueMemberNULL{Value: true},
		"raw":     &types.AttributeValueMemberB{Value: []byte{0, 1, 2}},
		"tags":    &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"counts":  &types.AttributeValueMemberNS{Value: []string{"1", "2"}},
		"blobs":   &types.AttributeValueMemberBS{Value: [][]byte{{9}}},
		"lines": &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"qty": &types.AttributeValueMemberN{Value: "2"}}},
		}},
	}
	img := streamImage(item)
	if len(img) != len(item) {
		t.Fatalf("image has %d attributes, want %d: %v", len(img), len(item), img)
	}
	if back := streamimage.Item(img); !reflect.DeepEqual(back, item) {
		t.Errorf("round trip:\n got %#v\nwant %#v", back, item)
	}
}
