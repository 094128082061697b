package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A record's view: customers, expenses, categories, items and sales keep
// every field a list shows in one map attribute (viewAttr), which is all the
// list indexes carry besides keys. Left outside it: the keys, the type, the
// version (the condition of every edit reads it) and a sale's lines (no list
// shows them, so no index entry carries them). Records written before views
// have their fields at the top level; decoders read both (unpack), and a
// list entry without a view is read from the table (see withViews).

// pack moves the fields of it into its view and returns it.
func pack(it attrs) attrs {
	v := attrs{}
	for name, val := range it {
		if !outsideView(name) {
			v[name] = val
			delete(it, name)
		}
	}
	it[viewAttr] = &types.AttributeValueMemberM{Value: v}
	return it
}

func outsideView(name string) bool {
	switch name {
	case "PK", "SK", "type", "version", "lines", writeToken, countedAttr, owedCountedAttr, worthCountedAttr:
		return true
	}
	return strings.HasPrefix(name, "GSI")
}

// unpack returns it with its view's fields at the top level, as decoders
// read them; a record without a view is returned as it is.
func unpack(it attrs) attrs {
	v, ok := it[viewAttr].(*types.AttributeValueMemberM)
	if !ok {
		return it
	}
	out := make(attrs, len(it)+len(v.Value))
	for name, val := range it {
		if name != viewAttr {
			out[name] = val
		}
	}
	for name, val := range v.Value {
		out[name] = val
	}
	return out
}

// hasView reports whether it was written with a view.
func hasView(it attrs) bool {
	_, ok := it[viewAttr].(*types.AttributeValueMemberM)
	return ok
}

// viewKinds are the kinds of record written with a view.
var viewKinds = []string{"customer", "expense", "category", "item", "sale"}

// PackLegacyRecords rewrites every record written before views with its view
// (the same fields, moved into it), so that the list indexes carry it; it
// returns how many it rewrote. Each rewrite is conditional on the record
// being unchanged since it was read, so it runs safely beside the API, and
// running it again moves on from where it stopped.
func (s *Store) PackLegacyRecords(ctx context.Context) (int, error) {
	names := map[string]string{"#t": "type", "#v": viewAttr}
	values := attrs{}
	var kinds []string
	for i, k := range viewKinds {
		values[fmt.Sprintf(":k%d", i)] = str(k)
		kinds = append(kinds, fmt.Sprintf(":k%d", i))
	}
	pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{
		TableName:                 aws.String(s.table),
		FilterExpression:          aws.String("#t IN (" + strings.Join(kinds, ", ") + ") AND attribute_not_exists(#v)"),
		ProjectionExpression:      aws.String("PK, SK"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
	packed := 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return packed, fmt.Errorf("scan for records without a view: %w", err)
		}
		for _, k := range page.Items {
			done, err := s.packLegacy(ctx, key(getS(k, "PK"), getS(k, "SK")))
			if err != nil {
				return packed, fmt.Errorf("give %s a view (%d records rewritten before it; run again to go on): %w", getS(k, "PK"), packed, err)
			}
			if done {
				packed++
			}
		}
	}
	return packed, nil
}

// packLegacy rewrites one record with its view; false when it has one
// already (written since the scan saw it).
func (s *Store) packLegacy(ctx context.Context, k attrs) (bool, error) {
	done := false
	err := retrying(ctx, func() error {
		it, err := s.getItem(ctx, k, true)
		if err != nil || it == nil || hasView(it) {
			done = false
			return err
		}
		_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName:                 aws.String(s.table),
			Item:                      pack(it),
			ConditionExpression:       aws.String("attribute_not_exists(#v) AND version = :version"),
			ExpressionAttributeNames:  map[string]string{"#v": viewAttr},
			ExpressionAttributeValues: attrs{":version": it["version"]},
		})
		var cf *types.ConditionalCheckFailedException
		if errors.As(err, &cf) {
			return errRetry // changed since read: read it again
		}
		done = err == nil
		return err
	})
	return done, err
}
