package dashboard

import (
	"html/template"
	"net/http"
	"net/url"

	"bizdata/shared/business"
)

// The Developers section's events feed.

// eventRow is one event of the feed and the dashboard page of its record,
// when there is one.
type eventRow struct {
	business.Event
	Link template.URL
}

// eventsData is what the events page shows.
type eventsData struct {
	Events []eventRow
	Types  []string // the type filter's choices
	Type   string
	Query  url.Values
	Next   string
}

// recordPages are the dashboard's pages of one record, by the kind of
// record an event names.
var recordPages = map[string]string{
	business.ResourceSale:     "/dashboard/sales/",
	business.ResourceItem:     "/dashboard/inventory/",
	business.ResourceEndpoint: "/dashboard/developers/endpoints/",
}

// eventsPage shows the events feed, newest first, filtered by type and
// paged with the API's cursor, each event linking its record's page.
func eventsPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	d := eventsData{Types: business.EventPatterns(), Query: url.Values{}}
	for _, k := range []string{"type", "cursor"} {
		if val := r.URL.Query().Get(k); val != "" {
			d.Query.Set(k, val)
		}
	}
	d.Type = d.Query.Get("type")
	page, err := s.api.ListEvents(r.Context(), v.acct, d.Query)
	if err != nil {
		return err
	}
	for _, e := range page.Items {
		row := eventRow{Event: e}
		if base, ok := recordPages[e.Resource.Type]; ok && e.Resource.ID != "" {
			row.Link = template.URL(base + url.PathEscape(e.Resource.ID))
		}
		d.Events = append(d.Events, row)
	}
	d.Next = page.Next
	return s.render(w, r, v, "events", "Events", "developers", d)
}
