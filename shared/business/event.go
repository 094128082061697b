package business

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Event types: one for every change a merchant's systems may follow.
const (
	EventSaleCreated = "sale.created"
	EventSaleUpdated = "sale.updated"
	EventSaleVoided  = "sale.voided"
	// EventSaleReminderSent: the sale's reminder went to its customer.
	EventSaleReminderSent = "sale.reminder_sent"
	// EventSaleOverdue: the day after the due date began, the sale unpaid.
	EventSaleOverdue        = "sale.overdue"
	EventPaymentReceived    = "payment.received"
	EventPaymentRefunded    = "payment.refunded"
	EventExpenseCreated     = "expense.created"
	EventExpenseUpdated     = "expense.updated"
	EventItemCreated        = "item.created"
	EventItemUpdated        = "item.updated"
	EventItemStockLow       = "item.stock_low"
	EventItemOutOfStock     = "item.out_of_stock"
	EventStockAdjusted      = "stock.adjusted"
	EventCustomerCreated    = "customer.created"
	EventCustomerUpdated    = "customer.updated"
	EventCategoryCreated    = "category.created"
	EventCategoryUpdated    = "category.updated"
	EventEndpointDisabled   = "webhook_endpoint.disabled"
	EventRetention          = 30 * 24 * time.Hour
	eventIDRandomHexDigits  = 10
	eventIDSequenceHexDigit = 2
)

// Configuration events: a change of the account's set-up, not of its books,
// written in the change's transaction as every event is. Their data names
// what changed and never holds a secret, a key or a hash: an endpoint as its
// GET answers it, a key as its list shows it without its prefix, settings by
// the names of the fields that changed.
const (
	EventEndpointCreated       = "webhook_endpoint.created"
	EventEndpointUpdated       = "webhook_endpoint.updated"
	EventEndpointEnabled       = "webhook_endpoint.enabled"
	EventEndpointDeleted       = "webhook_endpoint.deleted"
	EventEndpointSecretRotated = "webhook_endpoint.secret_rotated"
	EventAPIKeyCreated         = "api_key.created"
	EventAPIKeyRevoked         = "api_key.revoked"
	EventAPIKeyRotated         = "api_key.rotated"
	EventSettingsUpdated       = "settings.updated"
)

// EventEndpointTest is the type of the event an endpoint's test send posts
// to it alone. It is not in EventTypes: no change makes it, the feed never
// lists it, and no endpoint subscribes to it.
const EventEndpointTest = "webhook_endpoint.test"

// EventTypes lists every event type, in the order the API documents them.
var EventTypes = []string{
	EventSaleCreated, EventSaleUpdated, EventSaleVoided, EventSaleReminderSent, EventSaleOverdue, EventPaymentReceived, EventPaymentRefunded,
	EventExpenseCreated, EventExpenseUpdated, EventItemCreated, EventItemUpdated, EventItemStockLow,
	EventItemOutOfStock, EventStockAdjusted, EventCustomerCreated, EventCustomerUpdated,
	EventCategoryCreated, EventCategoryUpdated, EventEndpointCreated, EventEndpointUpdated,
	EventEndpointEnabled, EventEndpointDisabled, EventEndpointDeleted, EventEndpointSecretRotated,
	EventAPIKeyCreated, EventAPIKeyRevoked, EventAPIKeyRotated, EventSettingsUpdated,
}

// Resource kinds an event names.
const (
	ResourceSale     = "sale"
	ResourceExpense  = "expense"
	ResourceItem     = "item"
	ResourceCustomer = "customer"
	ResourceCategory = "category"
	ResourceEndpoint = "webhook_endpoint"
	ResourceAPIKey   = "api_key"
	// ResourceSettings is the account's settings (its name, timezone and
	// webhook): the id is the account's.
	ResourceSettings = "settings"
)

// EventResource names the record an event describes and its version after
// the change (the number in its ETag). An API key and the settings have no
// version of their own: theirs is the account's, which every change of
// either bumps (a deleted endpoint's is one past its last).
type EventResource struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Version int64  `json:"version"`
}

// Event is one change, as the events feed and endpoint deliveries carry it.
// Data is the record as its GET answers it at Resource.Version, already in
// its wire form.
type Event struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	CreatedAt string `json:"created_at"`
	// Livemode is false for an event of a test twin (made with a test key).
	Livemode bool          `json:"livemode"`
	Resource EventResource `json:"resource"`
	Data     any           `json:"data"`
	// DataTruncated says data leaves out part of a record too large for an
	// event (a sale's oldest payments and refunds): GET the record for all.
	DataTruncated bool `json:"data_truncated,omitempty"`
}

// EventIDs hands out the ids of the events one transaction writes: "evt_",
// the time in milliseconds (12 hex digits), a random part shared by the
// transaction (10 hex digits) and a sequence within it (2 hex digits). Ids
// sort by time, and the events of one change in the order they were made.
type EventIDs struct {
	prefix string
	next   int
}

// NewEventIDs starts the ids of one transaction's events, made at now.
func NewEventIDs(now time.Time) *EventIDs {
	var b [eventIDRandomHexDigits / 2]byte
	_, _ = rand.Read(b[:])
	return &EventIDs{prefix: fmt.Sprintf("evt_%012x%s", now.UnixMilli(), hex.EncodeToString(b[:]))}
}

// Next returns the next id.
func (e *EventIDs) Next() string {
	e.next++
	return fmt.Sprintf("%s%0*x", e.prefix, eventIDSequenceHexDigit, e.next)
}

// EventIDLength is the length of every event id.
const EventIDLength = len("evt_") + 12 + eventIDRandomHexDigits + eventIDSequenceHexDigit

// ValidEventID reports whether id has the shape of an event id.
func ValidEventID(id string) bool {
	if len(id) != EventIDLength || !strings.HasPrefix(id, "evt_") {
		return false
	}
	for _, c := range id[len("evt_"):] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// EventIDAt returns the smallest event id of the millisecond t: every event
// made at t or later sorts at or after it.
func EventIDAt(t time.Time) string {
	return fmt.Sprintf("evt_%012x%s", t.UnixMilli(), strings.Repeat("0", eventIDRandomHexDigits+eventIDSequenceHexDigit))
}

// EventTime returns when the event with id was made (to the millisecond).
func EventTime(id string) time.Time {
	var ms int64
	_, _ = fmt.Sscanf(id[len("evt_"):len("evt_")+12], "%x", &ms)
	return time.UnixMilli(ms).UTC()
}

// ResourceTypes are the kinds of record events describe.
var ResourceTypes = []string{ResourceSale, ResourceExpense, ResourceItem, ResourceCustomer, ResourceCategory, ResourceEndpoint,
	ResourceAPIKey, ResourceSettings}

// EventResourceType returns the kind of record every event matching
// pattern p describes, or "" when it may be more than one ("*").
func EventResourceType(p string) string {
	switch EventFamily(p) {
	case "sale", "payment":
		return ResourceSale
	case "item", "stock":
		return ResourceItem
	case "expense", "customer", "category", "webhook_endpoint", "api_key", "settings":
		return EventFamily(p)
	}
	return ""
}

// EventFamily returns the part of an event type before its dot ("sale" of
// "sale.created").
func EventFamily(eventType string) string {
	f, _, _ := strings.Cut(eventType, ".")
	return f
}

// ValidEventPattern reports whether p names event types: a type, a family
// followed by ".*" ("sale.*"), or "*" for all.
func ValidEventPattern(p string) bool {
	if p == "*" || slices.Contains(EventTypes, p) {
		return true
	}
	f, ok := strings.CutSuffix(p, ".*")
	return ok && slices.ContainsFunc(EventTypes, func(t string) bool { return EventFamily(t) == f })
}

// EventMatches reports whether an event of type t matches pattern p (see
// ValidEventPattern).
func EventMatches(p, t string) bool {
	if p == "*" || p == t {
		return true
	}
	f, ok := strings.CutSuffix(p, ".*")
	return ok && EventFamily(t) == f
}
