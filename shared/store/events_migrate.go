package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Events stored before the feed was sharded: each one its own item, PK
// A#<acct>#EVENT#<event id>, SK EVENT, its JSON in the view and all four
// indexes. The feed no longer reads them; MoveLegacyEvents writes each in
// the sharded layout, where the feed and the event's read find it again.

// legacyEventSK is the sort key of every event item of the earlier layout.
const legacyEventSK = "EVENT"

// EventMovedAttribute marks an event item MoveLegacyEvents wrote: an event
// made and announced before, whose insert in the stream is a move, not a
// change.
const EventMovedAttribute = "moved_at"

// EventMoved reports whether an event item (or its stream image) is an
// earlier event moved into the sharded layout: its endpoints had their
// deliveries when it was made, and an endpoint created since must not get
// it.
func EventMoved(it map[string]types.AttributeValue) bool {
	_, ok := it[EventMovedAttribute]
	return ok
}

// errEventMoved cancels a move whose event has its item in the sharded
// layout already; errEventGone one whose earlier item is gone (moved by
// another run meanwhile, or deleted by its TTL).
var (
	errEventMoved = errors.New("store: event moved already")
	errEventGone  = errors.New("store: event gone")
)

// MoveLegacyEvents moves every event stored in the earlier layout into the
// sharded one (one Scan of the table for them; run once per deployment from
// `admin migrate`, safe beside the API and again after an interruption):
// one transaction puts the event's item, with the same id, JSON and expiry,
// on condition that it is not there yet, and deletes the earlier item. An
// event past its 30 days is left to its TTL. It returns how many it moved.
func (s *Store) MoveLegacyEvents(ctx context.Context) (int, error) {
	return s.countEach(ctx, &dynamodb.ScanInput{
		TableName:                 aws.String(s.table),
		FilterExpression:          aws.String("SK = :sk AND #t = :event"),
		ExpressionAttributeNames:  map[string]string{"#t": "type"},
		ExpressionAttributeValues: attrs{":sk": str(legacyEventSK), ":event": str("event")},
	}, "events of the earlier layout", func(it attrs, before int) (bool, error) {
		done, err := s.moveLegacyEvent(ctx, it)
		if err != nil {
			return false, fmt.Errorf("move event %s (%d moved before it; run again to go on): %w", getS(it, "event_id"), before, err)
		}
		return done, nil
	})
}

// moveLegacyEvent moves one event of the earlier layout; false when there
// was nothing to move (moved meanwhile, or expired). An event never changes
// once written, so the item the Scan read is the one moved.
func (s *Store) moveLegacyEvent(ctx context.Context, old attrs) (bool, error) {
	if eventExpired(old, s.now()) {
		return false, nil
	}
	account := getS(old, "account_id")
	body, _, ok := EventFromImage(old)
	if account == "" || !ok {
		return false, fmt.Errorf("event item %s holds no account or JSON", getS(old, "PK"))
	}
	it, err := movedEventItem(account, body, old[TTLAttribute], s.stamp())
	if err != nil {
		return false, err
	}
	if _, id := EventOf(it); id != getS(old, "event_id") {
		return false, fmt.Errorf("event item %s holds the JSON of event %s", getS(old, "PK"), id)
	}
	oldKey := key(getS(old, "PK"), legacyEventSK)
	err = s.transact(ctx, []txItem{
		{action: put(s.table, it, "attribute_not_exists(PK)"), onFail: errEventMoved},
		{action: types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: oldKey,
			ConditionExpression: aws.String("attribute_exists(PK)")}}, onFail: errEventGone},
	})
	switch {
	case errors.Is(err, errEventGone):
		return false, nil
	case errors.Is(err, errEventMoved):
		// The sharded item is there: the earlier one is a copy of it.
		_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: oldKey})
		if err != nil {
			return false, fmt.Errorf("delete moved event: %w", err)
		}
		return false, nil
	}
	return err == nil, err
}

// movedEventItem is the item eventItem writes for the event whose JSON is
// body, with that JSON kept byte for byte, the expiry it had (expires) and
// the mark of a move made at now.
func movedEventItem(account string, body []byte, expires types.AttributeValue, now time.Time) (attrs, error) {
	var ev business.Event
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID == "" || ev.Type == "" {
		return nil, fmt.Errorf("event JSON without its id or type (%v)", err)
	}
	ev.Data = nil // the item holds body as it is, below
	it, err := eventItem(account, ev, now)
	if err != nil {
		return nil, err
	}
	delete(it, eventBody)
	delete(it, eventBodyDeflated)
	name, value := encodeEventBody(body)
	it[name] = value
	if expires != nil {
		it[TTLAttribute] = expires
	}
	it[EventMovedAttribute] = str(fmtTime(now))
	return it, nil
}
