package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/wire"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The events feed: a transactional outbox. Every change writes its event(s)
// in the transaction that makes it, so there is no change without its event
// and no event without its change; the stream then carries each event to the
// webhook endpoints that subscribe to it.
//
// An event is one item, PK A#<acct>#EVENT#<event id>, SK EVENT, kept 30 days
// (TTL). Its view holds the whole event as the API shows it (its JSON), so a
// list page is one Query whatever its filter: newest first in IX1
// (A#<acct>#EVENT), by exact type in IX2 (…#EVENT#TYPE#<type>), by resource
// id in IX3 (…#EVENT#RES#<id>) and by family ("sale.*") in IX4
// (…#EVENT#FAM#<family>), every one sorted by event id, which sorts by time.

func eventKey(account, id string) attrs { return key(acctPK(account)+"#EVENT#"+id, "EVENT") }

func eventsPK(account string) string { return acctPK(account) + "#EVENT" }

// eventBody is the view's one field: the event's JSON.
const eventBody = "body"

// events collects the events of one change, to be written in its
// transaction. A nil *events writes nothing (a write that makes no event).
type events struct {
	account string
	now     time.Time
	ids     *business.EventIDs
	list    []business.Event
	// figures is what the change moves in the report figures (see count).
	figures []business.FigureChange
}

// newEvents starts the events of a change stamped now (whole seconds, as
// created_at shows); their ids take the time to the millisecond, so that
// one record's changes within a second sort in the order they were made.
func newEvents(account string, now time.Time) *events {
	return &events{account: account, now: now, ids: business.NewEventIDs(time.Now())}
}

// add records an event of type t about the record res (at its new version),
// whose data is the record as its GET answers it.
func (e *events) add(t string, res business.EventResource, data any) {
	e.list = append(e.list, business.Event{Type: t, CreatedAt: fmtTime(e.now), Resource: res, Data: data})
}

// actions returns the puts of the collected events.
func (s *Store) eventActions(e *events) ([]txItem, error) {
	if e == nil {
		return nil, nil
	}
	out := make([]txItem, 0, len(e.list)+1)
	first := ""
	for _, ev := range e.list {
		ev.ID = e.ids.Next()
		if first == "" {
			first = ev.ID
		}
		it, err := eventItem(e.account, ev, e.now)
		if err != nil {
			return nil, err
		}
		out = append(out, txItem{action: put(s.table, it, "attribute_not_exists(PK)"), onFail: errRetry})
	}
	if first == "" {
		first = e.ids.Next()
	}
	fig, err := s.figuresAction(e, first)
	if err != nil || fig == nil {
		return out, err
	}
	return append(out, *fig), nil
}

func eventItem(account string, ev business.Event, now time.Time) (attrs, error) {
	ev.Livemode = !business.IsTestAccount(account)
	body, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", ev.Type, err)
	}
	base := eventsPK(account)
	it := eventKey(account, ev.ID)
	it["type"] = str("event")
	it["account_id"] = str(account)
	it["event_id"] = str(ev.ID)
	it["event_type"] = str(ev.Type)
	it[TTLAttribute] = nInt(now.Add(business.EventRetention).Unix())
	it[viewAttr] = &types.AttributeValueMemberM{Value: attrs{
		eventBody: str(string(body)), TTLAttribute: nInt(now.Add(business.EventRetention).Unix()),
	}}
	it[IndexCreated.PK], it[IndexCreated.SK] = str(base), str(ev.ID)
	it[IndexPrimaryFilter.PK], it[IndexPrimaryFilter.SK] = str(base+"#TYPE#"+ev.Type), str(ev.ID)
	it[IndexType.PK], it[IndexType.SK] = str(base+"#RES#"+ev.Resource.Type+"#"+ev.Resource.ID), str(ev.ID)
	it[IndexStatus.PK], it[IndexStatus.SK] = str(base+"#FAM#"+business.EventFamily(ev.Type)), str(ev.ID)
	return it, nil
}

// EventFromImage returns the JSON of the event a stored item (or its stream
// image) holds, and its type; ok is false for an item that is not an event.
func EventFromImage(it map[string]types.AttributeValue) (body json.RawMessage, eventType string, ok bool) {
	if getS(it, "type") != "event" {
		return nil, "", false
	}
	v, _ := it[viewAttr].(*types.AttributeValueMemberM)
	if v == nil {
		return nil, "", false
	}
	return json.RawMessage(getS(v.Value, eventBody)), getS(it, "event_type"), true
}

// eventExpired reports whether an event's 30 days have passed (DynamoDB's
// TTL deletes items late, so lists and reads check).
func eventExpired(it attrs, now time.Time) bool {
	if v, ok := it[viewAttr].(*types.AttributeValueMemberM); ok {
		it = v.Value
	}
	return getN(it, TTLAttribute) != "" && getInt(it, TTLAttribute) < now.Unix()
}

// EventFilter selects events: Type is a type or a family pattern ("sale.*";
// "" or "*" for all), ResourceType and ResourceID the record they describe
// (ids are unique per kind: both or neither), and After, when set, an event
// id: the events after it, oldest first (catching up), instead of newest
// first.
type EventFilter struct {
	Type         string
	ResourceType string
	ResourceID   string
	After        string
	// Unsettled lists events after After up to now, as a replay does: it
	// resends what was written, and keeps no id to continue from.
	Unsettled bool
}

// EventSettle is how long after now a catch-up (EventFilter.After) stops:
// an event takes its id before its transaction commits, and the index that
// lists it lags the table, so an event younger than this may still appear
// behind one already listed. Stopping short of it means a client that keeps
// the last id it read misses nothing: the function that writes an event
// gives up within 10 s, and the index's lag is far below the rest.
const EventSettle = 15 * time.Second

// SetEventSettle changes how long a catch-up stays behind now (tests use 0).
func (s *Store) SetEventSettle(d time.Duration) { s.eventSettle = &d }

func (s *Store) settle() time.Duration {
	if s.eventSettle != nil {
		return *s.eventSettle
	}
	return EventSettle
}

// ListEvents returns a page of the account's events (their JSON). The
// partition read is the most selective the filter names: the resource's,
// the exact type's, the family's, or all of them; what the key does not
// select is a filter on the event's type.
func (s *Store) ListEvents(ctx context.Context, account string, f EventFilter, limit int, cursor string) (Page[json.RawMessage], error) {
	base := eventsPK(account)
	q := query{index: IndexCreated, pk: base, limit: limit, cursor: cursor, forward: f.After != ""}
	typ := f.Type
	if typ == "*" {
		typ = ""
	}
	family, isFamily := cutFamily(typ)
	switch {
	case f.ResourceID != "":
		// A resource has few events: their type is checked on the decoded
		// events below.
		q.index, q.pk, q.tag = IndexType, base+"#RES#"+f.ResourceType+"#"+f.ResourceID, typ
	case isFamily:
		q.index, q.pk = IndexStatus, base+"#FAM#"+family
	case typ != "":
		q.index, q.pk = IndexPrimaryFilter, base+"#TYPE#"+typ
	}
	now := s.now()
	// Only events still kept; when catching up, only those settled.
	q.within.From = business.EventIDAt(now.Add(-business.EventRetention))
	if f.After != "" {
		q.rng.From = f.After + "!" // ids have one length: this is every id after it
		if !f.Unsettled {
			q.within.To = business.EventIDAt(now.Add(-s.settle()))
		}
	}
	p, err := page(ctx, s, q, func(it attrs) attrs { return it })
	if err != nil {
		return Page[json.RawMessage]{}, err
	}
	out := Page[json.RawMessage]{Next: p.Next, Scanned: p.Scanned, Items: make([]json.RawMessage, 0, len(p.Items))}
	for _, it := range p.Items {
		body, t, ok := eventFromView(it)
		if !ok || eventExpired(it, now) || f.ResourceID != "" && typ != "" && !business.EventMatches(typ, t) {
			continue
		}
		out.Items = append(out.Items, body)
	}
	return out, nil
}

// cutFamily returns the family of a pattern "family.*".
func cutFamily(p string) (string, bool) {
	if len(p) > 2 && p[len(p)-2:] == ".*" {
		return p[:len(p)-2], true
	}
	return "", false
}

// eventFromView returns the JSON and type of an event's index entry.
func eventFromView(it attrs) (json.RawMessage, string, bool) {
	v, ok := it[viewAttr].(*types.AttributeValueMemberM)
	if !ok {
		return nil, "", false
	}
	body := getS(v.Value, eventBody)
	var head struct {
		Type string `json:"type"`
	}
	if body == "" || json.Unmarshal([]byte(body), &head) != nil {
		return nil, "", false
	}
	return json.RawMessage(body), head.Type, true
}

// FindEvent returns one event's JSON. Returns ENOTFOUND when the account has
// no such event (or it is more than 30 days old).
func (s *Store) FindEvent(ctx context.Context, account, id string) (json.RawMessage, error) {
	it, err := s.getOne(ctx, eventKey(account, id), "Event not found", false)
	if err != nil {
		return nil, err
	}
	body, _, ok := EventFromImage(it)
	if !ok || eventExpired(it, s.now()) {
		return nil, business.Errorf(business.ENOTFOUND, "Event not found")
	}
	return body, nil
}

// withEvents returns actions with the puts of the change's events appended.
func (s *Store) withEvents(actions []txItem, e *events) ([]txItem, error) {
	evs, err := s.eventActions(e)
	if err != nil {
		return nil, err
	}
	return append(actions, evs...), nil
}

// The resources events name, by kind.

func customerResource(c business.Customer) business.EventResource {
	return business.EventResource{Type: business.ResourceCustomer, ID: strconv.FormatInt(c.ID, 10), Version: c.Version}
}

func expenseResource(x business.Expense) business.EventResource {
	return business.EventResource{Type: business.ResourceExpense, ID: strconv.FormatInt(x.ID, 10), Version: x.Version}
}

func categoryResource(c business.Category) business.EventResource {
	return business.EventResource{Type: business.ResourceCategory, ID: strconv.FormatInt(c.ID, 10), Version: c.Version}
}

func itemResource(x business.Item) business.EventResource {
	return business.EventResource{Type: business.ResourceItem, ID: x.ItemCode, Version: x.Version}
}

func saleResource(x business.Sale) business.EventResource {
	return business.EventResource{Type: business.ResourceSale, ID: x.InvoiceCode, Version: x.Version}
}

// MaxEventData bounds the JSON of an event's data, so that an event stays
// far inside DynamoDB's item size (and its index entries cheap) however
// large its record grows.
const MaxEventData = 128 << 10

// sale records, ahead of the others, an event of type t about the sale of
// rec, as it now is. A sale whose data would pass MaxEventData (thousands of
// payments) keeps the newest payments and refunds that fit, then, if its
// lines alone are too large, none of them: the event says data_truncated,
// and the sale's GET has the rest.
func (e *events) sale(t string, rec SaleRecord) {
	ev := business.Event{Type: t, CreatedAt: fmtTime(e.now), Resource: saleResource(rec.Sale)}
	pays, refunds, sale := rec.Payments, rec.Refunds, rec.Sale
	for {
		ev.Data = wire.SaleData(sale, pays, refunds)
		b, err := json.Marshal(ev.Data)
		if err != nil || len(b) <= MaxEventData {
			break
		}
		ev.DataTruncated = true
		switch {
		case len(pays) > 0 || len(refunds) > 0: // the newest half of each
			pays, refunds = pays[(len(pays)+1)/2:], refunds[(len(refunds)+1)/2:]
		case len(sale.Lines) > 0:
			sale.Lines = nil
		default:
			e.list = append([]business.Event{ev}, e.list...)
			return
		}
	}
	e.list = append([]business.Event{ev}, e.list...)
}

// item adds an event of type t about item x, whose stock was before: and,
// when the change took the stock down to zero, item.out_of_stock, or down
// to its minimum_qty_alert or below, item.stock_low (one of the two: stock
// that runs out is also low, and the out-of-stock event says so).
func (e *events) item(t string, x business.Item, before money.Quantity) {
	data := wire.ItemData(x)
	e.add(t, itemResource(x), data)
	switch {
	case x.Quantity.IsZero() && !before.IsZero():
		e.add(business.EventItemOutOfStock, itemResource(x), data)
	case x.Quantity.Cmp(x.MinimumQtyAlert) <= 0 && before.Cmp(x.MinimumQtyAlert) > 0:
		e.add(business.EventItemStockLow, itemResource(x), data)
	}
}
