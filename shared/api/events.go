package api

import (
	"encoding/json"
	"errors"
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
	q := parseList(r, "type", "resource_id", "since")
	f := store.EventFilter{Type: q.str("type"), ResourceID: q.text("resource_id", maxResourceID)}
	if f.Type != "" && !business.ValidEventPattern(f.Type) {
		q.fe.Add("type", "must be an event type ("+strings.Join(business.EventTypes, ", ")+"), a family of them such as sale.*, or *")
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
