package store

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/wire"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The events feed: a transactional outbox. Every change writes its event(s)
// in the transaction that makes it, so there is no change without its event
// and no event without its change; the stream then carries each event to the
// webhook endpoints that subscribe to it.
//
// An event is one item, written once, kept 30 days (TTL): PK
// A#<acct>#EVENT#<shard>, SK its id, where the shard (0 to EventShards-1)
// is a hash of the id, so one account's events spread over EventShards
// partitions and no one partition's write limit caps the feed. The item
// holds the event's JSON (deflated when that is smaller), and is the
// unfiltered feed itself: a page reads the shards' partitions at once and
// merges them by id. The filters' index entries carry the keys and the
// event's type (the item's view), never the body: by exact type in IX2 (…#EVENT#TYPE#<type>#<shard>), by resource in
// IX3 (…#EVENT#RES#<type>#<id>: one record's events are written no faster
// than the record, so they need no shards) and by family ("sale.*") in IX4
// (…#EVENT#FAM#<family>#<shard>); a filtered page reads the entries, then
// the bodies of the events it returns (one BatchGetItem).

// EventShards is how many partitions one account's events are spread over
// (the table's, and each type's and family's index partitions).
const EventShards = 8

// eventShard is the partition of event id: a hash, so that one change's
// events and one second's changes spread over all of them.
func eventShard(id string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32() % EventShards)
}

func eventKey(account, id string) attrs {
	return key(eventsPK(account)+"#"+strconv.Itoa(eventShard(id)), id)
}

func eventsPK(account string) string { return acctPK(account) + "#EVENT" }

// The event's JSON: as it is, or deflated (see encodeEventBody); and its
// type, in the item's view.
const (
	eventTypeAttr     = "event_type"
	eventBody         = "body"
	eventBodyDeflated = "body_z"
)

// events collects the events of one change, to be written in its
// transaction. A nil *events writes nothing (a write that makes no event).
type events struct {
	account string
	now     time.Time
	ids     *business.EventIDs
	list    []business.Event
	// figures is what the change moves in the report figures (see count).
	figures []business.FigureChange
	// recv and stock are what it moves in receivables and in the
	// inventory's worth (see owe and worth).
	recv  []business.ReceivableChange
	stock []business.StockChange
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
	shard := "#" + strconv.Itoa(eventShard(ev.ID))
	it := eventKey(account, ev.ID)
	// The account and the id are in the keys (EventOf reads them there),
	// and the id in each index's sort key: the item repeats neither, so a
	// small sale's event stays within one write unit.
	it["type"] = str("event")
	// The type is the view's one field, so the index entries carry it (a
	// resource's page filtered by type reads only the events it returns).
	it[viewAttr] = &types.AttributeValueMemberM{Value: attrs{eventTypeAttr: str(ev.Type)}}
	it[TTLAttribute] = nInt(now.Add(business.EventRetention).Unix())
	name, value := encodeEventBody(body)
	it[name] = value
	it[IndexPrimaryFilter.PK], it[IndexPrimaryFilter.SK] = str(base+"#TYPE#"+ev.Type+shard), str(ev.ID)
	it[IndexType.PK], it[IndexType.SK] = str(base+"#RES#"+ev.Resource.Type+"#"+ev.Resource.ID), str(ev.ID)
	it[IndexStatus.PK], it[IndexStatus.SK] = str(base+"#FAM#"+business.EventFamily(ev.Type)+shard), str(ev.ID)
	return it, nil
}

// deflateFrom is the size of JSON worth deflating: below it the saving
// is smaller than a write unit's rounding.
const deflateFrom = 512

// encodeEventBody returns the attribute that holds an event's JSON: the
// JSON itself, or deflated when that is smaller (a sale's lines and
// payments repeat their field names, and shrink to a third or less).
func encodeEventBody(body []byte) (string, types.AttributeValue) {
	if len(body) >= deflateFrom {
		var buf bytes.Buffer
		zw, _ := flate.NewWriter(&buf, flate.DefaultCompression)
		_, _ = zw.Write(body)
		if zw.Close() == nil && buf.Len() < len(body) {
			return eventBodyDeflated, &types.AttributeValueMemberB{Value: buf.Bytes()}
		}
	}
	return eventBody, str(string(body))
}

// decodeEventBody returns the JSON an event item holds.
func decodeEventBody(it attrs) ([]byte, bool) {
	if z, ok := it[eventBodyDeflated].(*types.AttributeValueMemberB); ok {
		b, err := io.ReadAll(flate.NewReader(bytes.NewReader(z.Value)))
		return b, err == nil && len(b) > 0
	}
	b := getS(it, eventBody)
	if v, ok := it[viewAttr].(*types.AttributeValueMemberM); ok && b == "" {
		b = getS(v.Value, eventBody) // an event of the earlier layout
	}
	return []byte(b), b != ""
}

// typeOfEvent returns the type of an event item, its stream image or an index
// entry of it (in the view; an event of the earlier layout has it beside).
func typeOfEvent(it attrs) string {
	if t := getS(it, eventTypeAttr); t != "" {
		return t
	}
	if v, ok := it[viewAttr].(*types.AttributeValueMemberM); ok {
		return getS(v.Value, eventTypeAttr)
	}
	return ""
}

// EventTypeOf returns the type of an event item or its stream image, without
// reading its body ("" for any other item).
func EventTypeOf(it map[string]types.AttributeValue) string {
	if getS(it, "type") != "event" {
		return ""
	}
	return typeOfEvent(it)
}

// EventOf returns the account and id of an event item (or its stream
// image): from its keys, A#<acct>#EVENT#<shard> / <id>, or the attributes
// an event of the earlier layout carries.
func EventOf(it map[string]types.AttributeValue) (account, id string) {
	if account, id = getS(it, "account_id"), getS(it, "event_id"); account != "" && id != "" {
		return account, id
	}
	pk, sk := getS(it, "PK"), getS(it, "SK")
	rest, ok := strings.CutPrefix(pk, "A#")
	if i := strings.LastIndex(rest, "#EVENT#"); ok && i > 0 && strings.HasPrefix(sk, "evt_") {
		return rest[:i], sk
	}
	return "", ""
}

// EventFromImage returns the JSON of the event a stored item (or its stream
// image) holds, and its type; ok is false for an item that is not an event.
func EventFromImage(it map[string]types.AttributeValue) (body json.RawMessage, eventType string, ok bool) {
	if getS(it, "type") != "event" {
		return nil, "", false
	}
	b, ok := decodeEventBody(it)
	if !ok {
		return nil, "", false
	}
	return json.RawMessage(b), typeOfEvent(it), true
}

// eventExpired reports whether an event's 30 days have passed (DynamoDB's
// TTL deletes items late, so lists and reads check).
func eventExpired(it attrs, now time.Time) bool {
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
// partitions read are the most selective the filter names: the resource's,
// the exact type's shards, the family's shards, or the table's shards of
// all of them; what the key does not select is a filter on the event's
// type.
func (s *Store) ListEvents(ctx context.Context, account string, f EventFilter, limit int, cursor string) (Page[json.RawMessage], error) {
	base := eventsPK(account)
	q := query{pk: base, limit: max(limit, 1), cursor: cursor, forward: f.After != ""}
	typ := f.Type
	if typ == "*" {
		typ = ""
	}
	family, isFamily := cutFamily(typ)
	sharded := true
	switch {
	case f.ResourceID != "":
		// A resource has few events: their type is checked on the events
		// read below.
		q.index, q.pk, q.tag, sharded = IndexType, base+"#RES#"+f.ResourceType+"#"+f.ResourceID, typ, false
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
	pks := []string{q.pk}
	if sharded {
		pks = make([]string, EventShards)
		for i := range pks {
			pks[i] = q.pk + "#" + strconv.Itoa(i)
		}
	}
	got, next, scanned, err := s.mergeShards(ctx, q, pks)
	if err != nil {
		return Page[json.RawMessage]{}, err
	}
	if q.index.Name != "" && len(got) > 0 {
		// Index entries carry keys and the type: read the events' items,
		// those of the type asked for.
		keys := make([]attrs, 0, len(got))
		for _, it := range got {
			if t := typeOfEvent(it); f.ResourceID == "" || typ == "" || t == "" || business.EventMatches(typ, t) {
				keys = append(keys, key(getS(it, "PK"), getS(it, "SK")))
			}
		}
		if got, err = s.batchGet(ctx, keys); err != nil {
			return Page[json.RawMessage]{}, err
		}
		scanned += len(keys)
	}
	out := Page[json.RawMessage]{Next: next, Scanned: scanned, Items: make([]json.RawMessage, 0, len(got))}
	for _, it := range got {
		if it == nil || eventExpired(it, now) {
			continue // deleted or expired by its TTL since it was listed
		}
		body, t, ok := EventFromImage(it)
		if !ok || f.ResourceID != "" && typ != "" && !business.EventMatches(typ, t) {
			continue
		}
		out.Items = append(out.Items, body)
	}
	return out, nil
}

// mergeShards reads a page of q from the partitions pks (shards of one
// list, each sorted by event id), all at once, and merges them by id. Each
// shard is read for a share of the page and a half more; the page ends
// where the first shard that has more stops (the merge knows every item
// up to there), so it may come short of the limit, with a cursor. The
// cursor is the last id returned: every shard continues after it.
func (s *Store) mergeShards(ctx context.Context, q query, pks []string) ([]attrs, string, int, error) {
	fp := q.fingerprint()
	// Ordered by the list's sort key: the event id (an event of the earlier
	// layout, not yet moved, has its id there but SK EVENT on the table).
	_, skName := q.keyNames()
	start, err := s.decodeCursor(q.cursor, "PK", q.pk, fp)
	if err != nil {
		return nil, "", 0, err
	}
	rng := q.bounds()
	after := getS(start, "SK") // exclusive: the last id the previous page returned
	if after != "" {
		if q.forward && after+"!" > rng.From {
			rng.From = after + "!"
		}
		if before := idBefore(after); !q.forward && (rng.To == "" || before < rng.To) {
			if before == "" {
				return nil, "", 0, nil // nothing sorts before it
			}
			rng.To = before
		}
	}
	if rng.empty() {
		return nil, "", 0, nil // nothing between the bounds (yet)
	}
	per := q.limit // one partition: a page is its next limit items
	if len(pks) > 1 {
		per = (3*q.limit+2*len(pks)-1)/(2*len(pks)) + 1
	}
	type shard struct {
		items   []attrs
		more    bool
		scanned int
	}
	res := make([]shard, len(pks))
	errs := make([]error, len(pks))
	var wg sync.WaitGroup
	for i, pk := range pks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := shardQuery(s.table, q, pk, rng, per)
			out, err := s.db.Query(ctx, in)
			if err != nil {
				errs[i] = fmt.Errorf("query events %s: %w", q.index.Name, err)
				return
			}
			res[i] = shard{items: out.Items, more: out.LastEvaluatedKey != nil, scanned: int(out.ScannedCount)}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, "", 0, err
	}
	// frontier: the id up to which every shard's items are known.
	frontier, more, scanned := "", false, 0
	var all []attrs
	for _, r := range res {
		scanned += r.scanned
		all = append(all, r.items...)
		if !r.more || len(r.items) == 0 {
			continue
		}
		more = true
		last := getS(r.items[len(r.items)-1], skName)
		if frontier == "" || q.forward && last < frontier || !q.forward && last > frontier {
			frontier = last
		}
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := getS(all[i], skName), getS(all[j], skName)
		if q.forward {
			return a < b
		}
		return a > b
	})
	if frontier != "" {
		n := 0
		for n < len(all) && (q.forward && getS(all[n], skName) <= frontier || !q.forward && getS(all[n], skName) >= frontier) {
			n++
		}
		all = all[:n]
	}
	if len(all) > q.limit {
		all, more = all[:q.limit], true
	}
	next := ""
	if more && len(all) > 0 {
		next = s.encodeCursor(attrs{"PK": str(q.pk), "SK": all[len(all)-1][skName]}, fp)
	}
	return all, next, scanned, nil
}

// idBefore returns the greatest id that sorts before id (ids have one
// length and hex digits after "evt_"), so that an inclusive bound excludes
// id itself; "" when none does.
func idBefore(id string) string {
	b := []byte(id)
	for i := len(b) - 1; i >= len("evt_"); i-- {
		switch b[i] {
		case '0':
			b[i] = 'f' // and borrow from the digit before
			continue
		case 'a':
			b[i] = '9'
		default:
			b[i]--
		}
		return string(b)
	}
	return ""
}

// shardQuery is the Query of one shard's partition pk between rng's
// inclusive bounds, in q's order, for at most limit items.
func shardQuery(table string, q query, pk string, rng Range, limit int) *dynamodb.QueryInput {
	cond, names, values := q.keyCondition(pk, rng)
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(q.forward),
		Limit:                     aws.Int32(int32(limit)),
	}
	if q.index.Name != "" {
		in.IndexName = aws.String(q.index.Name)
	}
	return in
}

// cutFamily returns the family of a pattern "family.*".
func cutFamily(p string) (string, bool) {
	if len(p) > 2 && p[len(p)-2:] == ".*" {
		return p[:len(p)-2], true
	}
	return "", false
}

// FindEvent returns one event's JSON. Returns ENOTFOUND when the account has
// no such event (or it is more than 30 days old).
func (s *Store) FindEvent(ctx context.Context, account, id string) (json.RawMessage, error) {
	it, err := s.getOne(ctx, eventKey(account, id), "Event not found", false)
	if business.ErrorCode(err) == business.ENOTFOUND && business.ValidEventID(id) {
		// Not moved yet: an event of the earlier layout (see MoveLegacyEvents).
		it, err = s.getOne(ctx, key(eventsPK(account)+"#"+id, legacyEventSK), "Event not found", false)
	}
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
