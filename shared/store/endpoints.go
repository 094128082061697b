package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/wire"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Webhook endpoints: where an account's events are delivered.
//
// An endpoint is one item in its account's partition (A#<acct> /
// WHEP#<id>), so the list of them is one Query. Its secrets live apart, in
// an item SECRET#<acct> / WHEP#<id> (see SecretKeyPrefix) that only the
// signing functions may read: the functions that create, rotate and delete
// it write it blind. Each endpoint has a webhook queue of its own (see
// queue.go), named EndpointQueue(account, id): its deliveries, its ready
// entry and its circuit breaker are those of that queue, so one failing
// endpoint never holds up another of the same account.
//
// An account has at most business.MaxEndpoints endpoints, counted by an
// item of its own (A#<acct> / WHEPCOUNT, attribute n) that the create's
// transaction increments on condition that it stays within the limit and
// the delete's decrements: no Query on the write path, and two concurrent
// creates cannot both take the last place.

const (
	endpointSKPrefix = "WHEP#"
	endpointCountSK  = "WHEPCOUNT"
	endpointNotFound = "Webhook endpoint not found"
)

func endpointKey(account, id string) attrs { return key(acctPK(account), endpointSKPrefix+id) }

func endpointSecretKey(account, id string) attrs {
	return key(SecretKeyPrefix+account, endpointSKPrefix+id)
}

func endpointCountKey(account string) attrs { return key(acctPK(account), endpointCountSK) }

// endpointQueueSep joins an account and an endpoint id in a queue name;
// account ids never hold it.
const endpointQueueSep = "#EP#"

// EndpointQueue returns the name of an endpoint's webhook queue: what the
// queue and delivery code calls its account. Its deliveries are keyed
// A#<acct>#EP#<id>#DELIVERY#<event id>, its queue item A#<acct>#EP#<id> /
// WEBHOOKQ.
func EndpointQueue(account, id string) string { return account + endpointQueueSep + id }

// SplitEndpointQueue returns the account and endpoint id of an endpoint's
// queue name; ok is false for any other queue (an account's own, of the
// payment webhook).
func SplitEndpointQueue(name string) (account, id string, ok bool) {
	account, id, ok = strings.Cut(name, endpointQueueSep)
	return account, id, ok && account != "" && id != ""
}

func endpointItem(account string, e business.Endpoint) attrs {
	it := endpointKey(account, e.ID)
	it["type"] = str("webhook_endpoint")
	it["account_id"] = str(account)
	it["endpoint_id"] = str(e.ID)
	it["url"] = str(e.URL)
	events := make([]types.AttributeValue, len(e.EnabledEvents))
	for i, p := range e.EnabledEvents {
		events[i] = str(p)
	}
	it["enabled_events"] = &types.AttributeValueMemberL{Value: events}
	setS(it, "description", e.Description)
	it["status"] = str(e.Status)
	setS(it, "disabled_reason", e.DisabledReason)
	if !e.DisabledAt.IsZero() {
		it["disabled_at"] = str(fmtTime(e.DisabledAt))
	}
	it["created_at"] = str(fmtTime(e.CreatedAt))
	// created_at shows whole seconds; the list orders by the nanosecond.
	it["created_ns"] = nInt(e.CreatedAt.UnixNano())
	it["updated_at"] = str(fmtTime(e.UpdatedAt))
	it["version"] = nInt(e.Version)
	return it
}

func endpointFrom(it attrs) business.Endpoint {
	e := business.Endpoint{
		ID: getS(it, "endpoint_id"), URL: getS(it, "url"), Description: getS(it, "description"),
		Status: getS(it, "status"), DisabledReason: getS(it, "disabled_reason"), DisabledAt: getTime(it, "disabled_at"),
		CreatedAt: getTime(it, "created_at"), UpdatedAt: getTime(it, "updated_at"), Version: getInt(it, "version"),
	}
	if getN(it, "created_ns") != "" {
		e.CreatedAt = time.Unix(0, getInt(it, "created_ns")).UTC()
	}
	if l, ok := it["enabled_events"].(*types.AttributeValueMemberL); ok {
		for _, v := range l.Value {
			if s, ok := v.(*types.AttributeValueMemberS); ok {
				e.EnabledEvents = append(e.EnabledEvents, s.Value)
			}
		}
	}
	return e
}

// CreateEndpoint stores a new endpoint e (its id, status, stamps and
// version are set here) with its signing secret, and returns it. Returns
// ECONFLICT when the account has business.MaxEndpoints endpoints already.
func (s *Store) CreateEndpoint(ctx context.Context, account string, e business.Endpoint, secret string) (business.Endpoint, error) {
	e.Status, e.DisabledReason, e.DisabledAt = business.EndpointEnabled, "", time.Time{}
	e.CreatedAt, e.Version = s.now(), 1
	e.UpdatedAt = e.CreatedAt.Truncate(time.Second)
	err := retrying(ctx, func() error {
		e.ID = business.NewEndpointID() // a collision (never seen) draws another
		sec := endpointSecretKey(account, e.ID)
		sec["type"], sec["account_id"], sec["endpoint_id"], sec["secret"] = str("webhook_endpoint_secret"), str(account), str(e.ID), str(secret)
		ev := newEvents(account, e.CreatedAt)
		ev.add(business.EventEndpointCreated, endpointResource(e), wire.EndpointData(e))
		actions, err := s.withEvents([]txItem{
			{action: types.TransactWriteItem{Update: &types.Update{
				TableName: aws.String(s.table), Key: endpointCountKey(account),
				UpdateExpression:          aws.String("SET #type = :type ADD n :one"),
				ConditionExpression:       aws.String("attribute_not_exists(n) OR n < :max"),
				ExpressionAttributeNames:  map[string]string{"#type": "type"},
				ExpressionAttributeValues: attrs{":type": str("webhook_endpoint_count"), ":one": nInt(1), ":max": nInt(business.MaxEndpoints)},
			}}, onFail: business.TooManyEndpoints()},
			{action: put(s.table, endpointItem(account, e), "attribute_not_exists(PK)"), onFail: errRetry},
			{action: put(s.table, sec, "attribute_not_exists(PK)"), onFail: errRetry},
		}, ev)
		if err != nil {
			return err
		}
		return s.transact(ctx, actions)
	})
	if err != nil {
		return business.Endpoint{}, err
	}
	return e, nil
}

// endpointResource names endpoint e, at its version, in its events.
func endpointResource(e business.Endpoint) business.EventResource {
	return business.EventResource{Type: business.ResourceEndpoint, ID: e.ID, Version: e.Version}
}

// ListEndpoints returns every endpoint of the account (at most
// business.MaxEndpoints), oldest first: one Query of its partition, read
// consistently. The stream's fan-out lists the endpoints an event goes to
// with it: an endpoint created just before the event was committed must
// not be missing from that list, or it never gets the event.
func (s *Store) ListEndpoints(ctx context.Context, account string) ([]business.Endpoint, error) {
	out := []business.Endpoint{}
	pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		ConsistentRead:            aws.Bool(true),
		KeyConditionExpression:    aws.String("PK = :pk AND begins_with(SK, :prefix)"),
		ExpressionAttributeValues: attrs{":pk": str(acctPK(account)), ":prefix": str(endpointSKPrefix)},
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list webhook endpoints: %w", err)
		}
		for _, it := range page.Items {
			out = append(out, endpointFrom(it))
		}
	}
	// Ids are random: the order a merchant recognises is creation's.
	slices.SortStableFunc(out, func(a, b business.Endpoint) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// FindEndpoint returns one endpoint (eventually consistent). Returns
// ENOTFOUND when the account has no endpoint with that id.
func (s *Store) FindEndpoint(ctx context.Context, account, id string) (business.Endpoint, error) {
	it, err := s.getOne(ctx, endpointKey(account, id), endpointNotFound, false)
	if err != nil {
		return business.Endpoint{}, err
	}
	return endpointFrom(it), nil
}

// UpdateEndpoint applies edit to the current endpoint and stores the result
// (see editRecord and business.EditEndpoint). An endpoint enabled again has
// its queue start afresh in the same transaction: the failure count and
// any open circuit are cleared and the queue is woken. One disabled by its
// owner keeps its queue as it is (the dispatcher parks a disabled
// endpoint's queue). The edit's one event, in the same transaction, has
// for data the endpoint as its GET answers it afterwards, with "changed",
// the fields the edit changed. Returns ENOTFOUND when the endpoint does
// not exist.
func (s *Store) UpdateEndpoint(ctx context.Context, account, id string, edit func(*business.Endpoint) error) (business.Endpoint, error) {
	return editRecord(ctx, s, endpointKey(account, id), endpointNotFound, endpointFrom, edit,
		func(old business.Endpoint, e *business.Endpoint) ([]txItem, error) {
			now := s.stamp()
			edited := business.EditEndpoint(old, *e, now)
			*e = edited.Endpoint
			actions := []txItem{s.guardedPut(endpointItem(account, *e), old.Version)}
			if edited.Reenabled {
				actions = append(actions, txItem{action: types.TransactWriteItem{Update: s.restartUpdate(EndpointQueue(account, id), now)}})
			}
			data := wire.EndpointData(*e)
			data["changed"] = edited.Changed
			ev := newEvents(account, now)
			ev.add(edited.Event, endpointResource(*e), data)
			return s.withEvents(actions, ev)
		})
}

// restartUpdate is the update of a queue whose endpoint was enabled again:
// a fresh start (no failures counted, no streak of them toward being
// disabled, the circuit closed) and a ready entry at now, as Wake sets it.
func (s *Store) restartUpdate(queue string, now time.Time) *types.Update {
	return &types.Update{
		TableName: aws.String(s.table),
		Key:       queueKey(queue),
		UpdateExpression: aws.String("SET #type = :type, account_id = :a, queued_at = :now, ready_at = :now, failures = :zero, " +
			IndexDue.PK + " = :shard, " + IndexDue.SK + " = :sk ADD gen :one REMOVE held_until, held_sk, probe_until, failing_since"),
		ExpressionAttributeNames: map[string]string{"#type": "type"},
		ExpressionAttributeValues: attrs{":type": str("webhook_queue"), ":a": str(queue), ":now": nInt(now.Unix()), ":zero": nInt(0),
			":shard": str(duePartition(queue)), ":sk": str(readySK(now, queue)), ":one": nInt(1)},
	}
}

// DeleteEndpoint removes an endpoint, its secrets and its queue item in one
// transaction, and gives its place back to the account's count. Deliveries
// already recorded stay as they are; with no queue item no dispatcher looks
// at them again. The webhook_endpoint.deleted event, in the same
// transaction, holds the endpoint as it was (read consistently first, and
// the delete guarded by its version). Returns ENOTFOUND when the endpoint
// does not exist.
func (s *Store) DeleteEndpoint(ctx context.Context, account, id string) error {
	return retrying(ctx, func() error {
		it, err := s.getOne(ctx, endpointKey(account, id), endpointNotFound, true)
		if err != nil {
			return err
		}
		old := endpointFrom(it)
		gone := old
		gone.Version++
		ev := newEvents(account, s.now())
		ev.add(business.EventEndpointDeleted, endpointResource(gone), wire.EndpointData(old))
		actions, err := s.withEvents(s.endpointDeletes(account, id, old.Version), ev)
		if err != nil {
			return err
		}
		return s.transact(ctx, actions)
	})
}

// endpointDeletes are the actions that delete endpoint id, on condition
// that it is still at version, with its secrets and queue item, and give
// its place back to the count.
func (s *Store) endpointDeletes(account, id string, version int64) []txItem {
	return []txItem{
		{action: types.TransactWriteItem{Delete: &types.Delete{
			TableName: aws.String(s.table), Key: endpointKey(account, id), ConditionExpression: aws.String("version = :v"),
			ExpressionAttributeValues: attrs{":v": nInt(version)},
		}}, onFail: errRetry},
		{action: types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: endpointSecretKey(account, id)}}},
		{action: types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: queueKey(EndpointQueue(account, id))}}},
		{action: types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.table), Key: endpointCountKey(account),
			UpdateExpression: aws.String("ADD n :less"), ExpressionAttributeValues: attrs{":less": nInt(-1)},
		}}},
	}
}

// RotateEndpointSecret makes secret the endpoint's signing secret. For
// overlap after now, the secret it replaces keeps signing beside it (every
// delivery carries both signatures), so receivers can switch without
// refusing one; with no overlap it stops at once. The secret item is
// written without being read (this function may not read secrets); an
// older previous secret is dropped. The webhook_endpoint.secret_rotated
// event, in the same transaction, holds the endpoint as its GET answers it
// (at its version: a rotation leaves the endpoint's item as it is) and
// previous_secret_expires_at, never a secret; the transaction holds only
// while the endpoint is still at the version read. Returns ENOTFOUND when
// the endpoint does not exist.
func (s *Store) RotateEndpointSecret(ctx context.Context, account, id, secret string, overlap time.Duration, now time.Time) error {
	return retrying(ctx, func() error {
		it, err := s.getOne(ctx, endpointKey(account, id), endpointNotFound, true)
		if err != nil {
			return err
		}
		e := endpointFrom(it)
		up := &types.Update{
			TableName: aws.String(s.table), Key: endpointSecretKey(account, id),
			UpdateExpression:          aws.String("SET secret = :new REMOVE previous_secret, previous_until"),
			ConditionExpression:       aws.String("attribute_exists(PK)"),
			ExpressionAttributeValues: attrs{":new": str(secret)},
		}
		data := wire.EndpointData(e)
		data["previous_secret_expires_at"] = nil
		if overlap > 0 {
			up.UpdateExpression = aws.String("SET previous_secret = secret, previous_until = :until, secret = :new")
			up.ExpressionAttributeValues[":until"] = nInt(now.Add(overlap).Unix())
			data["previous_secret_expires_at"] = now.Add(overlap).UTC().Format(business.TimeFormat)
		}
		ev := newEvents(account, now)
		ev.add(business.EventEndpointSecretRotated, endpointResource(e), data)
		// The event shows the endpoint as read: an edit or a delete since
		// then reads it again (a delete then answers not found).
		unchanged := txItem{action: types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: aws.String(s.table),
			Key: endpointKey(account, id), ConditionExpression: aws.String("version = :v"),
			ExpressionAttributeValues: attrs{":v": nInt(e.Version)}}}, onFail: errRetry}
		actions, err := s.withEvents([]txItem{unchanged, {action: types.TransactWriteItem{Update: up}, onFail: business.Errorf(business.ENOTFOUND, endpointNotFound)}}, ev)
		if err != nil {
			return err
		}
		return s.transact(ctx, actions)
	})
}

// EndpointSecrets returns the secrets that sign the endpoint's deliveries
// at now: the current one, then the one it replaced while its overlap
// lasts. The read is consistent, so a rotation applies to the very next
// delivery. Only the signing functions may call it on AWS. Returns
// ENOTFOUND when the endpoint does not exist.
func (s *Store) EndpointSecrets(ctx context.Context, account, id string, now time.Time) ([]string, error) {
	it, err := s.getOne(ctx, endpointSecretKey(account, id), endpointNotFound, true)
	if err != nil {
		return nil, err
	}
	out := []string{getS(it, "secret")}
	if prev := getS(it, "previous_secret"); prev != "" && now.Unix() < getInt(it, "previous_until") {
		out = append(out, prev)
	}
	return out, nil
}

// DisableEndpoint disables an enabled endpoint for reason (the dispatcher's,
// when its deliveries kept failing) and records the webhook_endpoint.disabled
// event in the same transaction: its data is the endpoint's GET answer's
// (wire.EndpointData) afterwards. It returns false when the endpoint was disabled
// already (nothing written), and ENOTFOUND when it does not exist.
func (s *Store) DisableEndpoint(ctx context.Context, account, id, reason string, now time.Time) (bool, error) {
	disabled := false
	err := retrying(ctx, func() error {
		it, err := s.getOne(ctx, endpointKey(account, id), endpointNotFound, true)
		if err != nil {
			return err
		}
		old := endpointFrom(it)
		var e business.Endpoint
		if e, disabled = business.DisableEndpoint(old, reason, now.UTC().Truncate(time.Second)); !disabled {
			return nil
		}
		ev := newEvents(account, now)
		ev.add(business.EventEndpointDisabled, endpointResource(e), wire.EndpointData(e))
		acts, err := s.eventActions(ev)
		if err != nil {
			return err
		}
		return s.transact(ctx, append([]txItem{s.guardedPut(endpointItem(account, e), old.Version)}, acts...))
	})
	return disabled, err
}

// replayWorkers bounds the deliveries one replay writes at once, so a page
// of a thousand events is a few dozen round trips deep, not a thousand.
const replayWorkers = 16

// ReplayEndpoint queues again, for endpoint e, the account's events after
// the event id after (any string that sorts below the first one wanted;
// oldest first, at most limit read) that e subscribes to: each gets its
// delivery created, or an existing one that is no longer waiting starts a
// new round due at now (same webhook-id, the event's id); one still waiting
// is left as it is. The endpoint's queue is then woken. It returns how many
// deliveries it queued, whether more events follow, and the id of the last
// event it read, where the next call continues ("" when it read none).
func (s *Store) ReplayEndpoint(ctx context.Context, account string, e business.Endpoint, after string, limit int, now time.Time) (queued int, more bool, last string, err error) {
	p, err := s.ListEvents(ctx, account, EventFilter{After: after, Unsettled: true}, limit, "")
	if err != nil {
		return 0, false, "", err
	}
	type wanted struct {
		id   string
		body []byte
	}
	var todo []wanted
	for _, body := range p.Items {
		var head struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		}
		if err := json.Unmarshal(body, &head); err != nil || head.ID == "" {
			return 0, false, "", fmt.Errorf("read event for replay: not an event: %.100s", body)
		}
		last = head.ID
		if e.Wants(head.Type) {
			todo = append(todo, wanted{head.ID, body})
		}
	}
	queue := EndpointQueue(account, e.ID)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	sem := make(chan struct{}, replayWorkers)
	for _, w := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ok, err := s.requeueDelivery(ctx, queue, w.id, w.body, now)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else if ok {
				queued++
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, false, "", err
	}
	if queued > 0 {
		// The queue is woken only while the endpoint exists: a delete
		// between the caller's read and here leaves no queue item behind
		// (its deliveries are never attempted and expire with their events).
		err := s.transact(ctx, []txItem{
			{action: types.TransactWriteItem{Update: s.wakeUpdate(queue, now)}},
			{action: types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: aws.String(s.table),
				Key: endpointKey(account, e.ID), ConditionExpression: aws.String("attribute_exists(PK)")}}, onFail: business.Errorf(business.ENOTFOUND, endpointNotFound)},
		})
		if err != nil {
			return 0, false, "", err
		}
	}
	// A page cut short by the store's read bound has a cursor though it
	// may be the last; the next call then reads nothing and says so.
	return queued, p.Next != "" && last != "", last, nil
}

// requeueDelivery creates the delivery of event id to an endpoint's queue,
// due at now, or starts an existing one that is not waiting on a new
// round. It reports whether it queued one: false for a delivery still
// waiting, or one that changed under it (another replay or attempt got
// there first).
func (s *Store) requeueDelivery(ctx context.Context, queue, id string, body []byte, now time.Time) (bool, error) {
	d := business.Delivery{AccountID: queue, TransactionID: id, WebhookID: id, Payload: body,
		State: business.DeliveryPending, NextAt: now, CreatedAt: now}
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: deliveryItem(d), ConditionExpression: aws.String("attribute_not_exists(PK)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var cf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		return true, nil
	case !errors.As(err, &cf):
		return false, fmt.Errorf("put replayed delivery: %w", err)
	}
	old := deliveryFrom(cf.Item)
	if old.Waiting() {
		return false, nil
	}
	old.State, old.RoundStart, old.NextAt = business.DeliveryPending, old.Attempt, now
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.table),
		Key:                      deliveryKey(queue, id),
		UpdateExpression:         aws.String("SET #st = :pending, round_start = :n, next_at = :now, " + IndexDue.PK + " = :due, " + IndexDue.SK + " = :sk REMOVE lease_token, lease_until"),
		ConditionExpression:      aws.String("attempt = :n AND NOT (#st IN (:pending, :held))"),
		ExpressionAttributeNames: map[string]string{"#st": "state"},
		ExpressionAttributeValues: attrs{":pending": str(business.DeliveryPending), ":held": str(business.DeliveryHeld), ":n": nInt(int64(old.Attempt)),
			":now": nInt(now.Unix()), ":due": str(accountDuePK(queue)), ":sk": str(dueSK(old))},
	})
	if errors.As(err, &cf) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("requeue replayed delivery: %w", err)
	}
	return true, nil
}
