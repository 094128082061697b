package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
)

// The events feed: every change the account's records went through in the
// last 30 days, newest first, or, with since, oldest first from an event on
// (catching up after downtime).

// maxResourceID bounds resource_id: no record's id or code is longer.
const maxResourceID = 64

func listEvents(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	q := parseList(r, "type", "resource_type", "resource_id", "since")
	f := store.EventFilter{Type: q.str("type"), ResourceType: q.oneOf("resource_type", business.ResourceTypes...),
		ResourceID: q.text("resource_id", maxResourceID)}
	if f.Type != "" && !business.ValidEventPattern(f.Type) {
		q.fe.Add("type", "must be an event type ("+strings.Join(business.EventTypes, ", ")+"), a family of them such as sale.*, or *")
	}
	// Ids are unique within a kind of record (customer 1, expense 1): the
	// kind comes with the id, named or implied by the type.
	implied := business.EventResourceType(f.Type)
	switch {
	case f.ResourceType != "" && implied != "" && f.ResourceType != implied:
		q.fe.Add("resource_type", fmt.Sprintf("is %s, but events of type %s describe a %s", f.ResourceType, f.Type, implied))
	case f.ResourceID != "" && f.ResourceType == "":
		if f.ResourceType = implied; implied == "" && q.values.Get("resource_type") == "" {
			q.fe.Add("resource_type", "is required with resource_id (ids are unique within a kind of record): one of "+strings.Join(business.ResourceTypes, ", ")+", or a type such as sale.* that implies it")
		}
	case f.ResourceType != "" && f.ResourceID == "":
		q.fe.Add("resource_id", "is required with resource_type")
	}
	if v := q.str("since"); v != "" {
		after, err := eventsAfter(v, time.Now())
		if err != nil {
			q.fe.Add("since", err.Error())
		}
		f.After = after
	}
	if err := q.err(); err != nil {
		return err
	}
	page, err := s.store.ListEvents(r.Context(), acct.ID, f, q.limit, q.cursor)
	if err != nil {
		return err
	}
	return writePage(w, "Events", "events", page, func(b json.RawMessage) json.RawMessage { return b })
}

// eventsAfter reads since, an event id or a date and time, as the event id
// the events wanted come after: for a time, every event made at or after
// it. Neither may be older than the events kept.
func eventsAfter(since string, now time.Time) (string, error) {
	oldest := now.Add(-business.EventRetention)
	if business.ValidEventID(since) {
		if business.EventTime(since).Before(oldest.Add(-time.Minute)) {
			return "", errSinceTooOld
		}
		return since, nil
	}
	t, ok := parseDateTime(since)
	if !ok {
		return "", errSince
	}
	if t.Before(oldest.Add(-time.Minute)) {
		return "", errSinceTooOld
	}
	// The smallest id of that millisecond less its last digit: every id of
	// the millisecond sorts after it.
	at := business.EventIDAt(t)
	return at[:len(at)-1], nil
}

var (
	errSince       = errors.New("must be an event id (evt_…) or a date and time YYYY-MM-DD HH:MM:SS (UTC)")
	errSinceTooOld = errors.New("is older than the 30 days events are kept; list from the oldest event without since, or re-list the records themselves")
)

func getEvent(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	id := r.PathValue("id")
	if !business.ValidEventID(id) {
		return business.Errorf(business.ENOTFOUND, "Event not found")
	}
	ev, err := s.store.FindEvent(r.Context(), acct.ID, id)
	if err != nil {
		return err
	}
	return writeOK(w, "Event found", map[string]any{"event": ev})
}
