package dashboard

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/wire"
)

// The Developers section's webhook endpoints: adding one, its page with
// its deliveries, and the changes made there.

// developerTicked reports whether an endpoint's edit form ticks value for
// name: as the refused form sent it (the edit form always sends its url),
// else as the endpoint has it now.
func developerTicked(form url.Values, name, value string, current []string) bool {
	if form.Has("url") {
		return slices.Contains(form[name], value)
	}
	return slices.Contains(current, value)
}

// addEndpoint adds a webhook endpoint and shows its signing secret, once.
func addEndpoint(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	body := map[string]any{"url": r.PostForm.Get("url"), "enabled_events": nonNil(r.PostForm["events"])}
	if d := r.PostForm.Get("description"); d != "" {
		body["description"] = d
	}
	// No Idempotency-Key, as for keys: the answer holds the signing secret.
	e, err := s.api.AddWebhookEndpoint(r.Context(), v.acct, body)
	if err != nil {
		return err
	}
	v.notice = "Webhook endpoint added"
	v.shown = &shownSecret{Label: "The signing secret of " + e.URL + ". Copy it to your receiver now: it is not shown again.", Value: e.Secret}
	return developersPage(s, w, r, v)
}

// endpointData is what an endpoint's page shows.
type endpointData struct {
	Endpoint   wire.Endpoint
	Events     []eventChoice // the edit form's choices
	Deliveries []wire.EndpointDelivery
	Query      url.Values
	Next       string
}

// endpointPage shows one webhook endpoint and its deliveries, each with
// its attempts, paged with the API's cursor.
func endpointPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	id := r.PathValue("id")
	d := endpointData{Query: url.Values{}, Events: eventChoices()}
	var err error
	if d.Endpoint, err = s.api.GetWebhookEndpoint(r.Context(), v.acct, id); err != nil {
		return err
	}
	if c := r.URL.Query().Get("cursor"); c != "" && r.Method == http.MethodGet {
		d.Query.Set("cursor", c)
	}
	deliveries, err := s.api.ListEndpointDeliveries(r.Context(), v.acct, id, deliveriesQuery(d.Query))
	if err != nil {
		return err
	}
	d.Deliveries, d.Next = deliveries.Items, deliveries.Next
	return s.render(w, r, v, "endpoint", "Webhook endpoint", "developers", d)
}

// eventChoice is one event pattern an endpoint's form offers: its value,
// the id of its checkbox, and its label.
type eventChoice struct{ Value, ID, Label string }

// eventChoices are every pattern an endpoint may subscribe to
// (business.EventPatterns): all events, then each family, then each type,
// so an endpoint's subscription is shown, and saved again, as it is.
func eventChoices() []eventChoice {
	out := []eventChoice{{Value: "*", ID: "event-all", Label: "All events (*)"}}
	var types []eventChoice
	for _, p := range business.EventPatterns() {
		switch family, ok := strings.CutSuffix(p, ".*"); {
		case p == "*":
		case ok:
			out = append(out, eventChoice{Value: p, ID: "event-" + family + "-all", Label: "Every " + strings.ReplaceAll(family, "_", " ") + " event (" + p + ")"})
		default:
			types = append(types, eventChoice{Value: p, ID: "event-" + p, Label: p})
		}
	}
	return append(out, types...)
}

// endpointPath is the dashboard page of endpoint id.
func endpointPath(id string) string { return "/dashboard/developers/endpoints/" + url.PathEscape(id) }

// editEndpoint changes an endpoint's URL, description, events and status
// (enabled or disabled) as its page's form sends them.
func editEndpoint(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	id := r.PathValue("id")
	body := map[string]any{"url": r.PostForm.Get("url"), "enabled_events": nonNil(r.PostForm["events"]),
		"description": r.PostForm.Get("description")}
	// The status is sent only when the form changes it: a page drawn before
	// the dispatcher disabled the endpoint does not enable it again.
	if st := r.PostForm.Get("status"); st != "" && st != r.PostForm.Get("status_was") {
		body["status"] = st
	}
	if err := s.api.EditWebhookEndpoint(r.Context(), v.acct, id, body); err != nil {
		return err
	}
	return s.done(w, r, endpointPath(id), "Webhook endpoint saved")
}

// testEndpoint sends the endpoint a test event; the API records it among
// the endpoint's deliveries with its attempt, which the page then lists.
func testEndpoint(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	id := r.PathValue("id")
	d, err := s.api.TestWebhookEndpoint(r.Context(), v.acct, id)
	if err != nil {
		return err
	}
	if len(d.Attempts) == 0 {
		return business.Errorf(business.EINTERNAL, "test-webhook-endpoint answered a delivery without its attempt")
	}
	a := d.Attempts[len(d.Attempts)-1]
	verdict, answer := "not delivered", "no answer"
	if d.State == business.DeliveryDelivered {
		verdict = "delivered"
	}
	if a.StatusCode != nil {
		answer = "status code " + strconv.Itoa(*a.StatusCode)
	}
	notice := "Test event " + d.EventID + " " + verdict + ": " + answer
	if a.Error != nil {
		notice += " (" + business.Clip(*a.Error, 100) + ")" // takeNotice drops a notice over 200 bytes
	}
	return s.done(w, r, endpointPath(id), notice)
}

// redeliverEndpointDelivery queues one of the endpoint's deliveries for
// another round of attempts.
func redeliverEndpointDelivery(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	id := r.PathValue("id")
	if err := s.api.RedeliverEndpointDelivery(r.Context(), v.acct, id, r.PathValue("event_id")); err != nil {
		return err
	}
	return s.done(w, r, endpointPath(id), "Delivery queued for another attempt")
}

// rotateEndpointSecret gives an endpoint a new signing secret and shows it,
// once; the old one keeps signing beside it for the hours the form chose
// (the API's default overlap when it sent none), and the page says until
// when.
func rotateEndpointSecret(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	var body any // none: the API's default overlap
	if h := strings.TrimSpace(r.PostForm.Get("overlap_hours")); h != "" {
		n, err := strconv.Atoi(h)
		if err != nil {
			return business.Invalid("overlap_hours", "must be a whole number of hours from 0 to 24")
		}
		body = map[string]any{"overlap_hours": n} // the API checks its range
	}
	rotated, err := s.api.RotateEndpointSecret(r.Context(), v.acct, r.PathValue("id"), body)
	if err != nil {
		return err
	}
	label := "The endpoint's new signing secret. Copy it to your receiver now: it is not shown again."
	if rotated.PreviousSecretExpiresAt != nil {
		label += " The old secret keeps signing beside it until " + formatWhen(*rotated.PreviousSecretExpiresAt, v.acct.Timezone) + ": every delivery until then carries both signatures."
	} else {
		label += " The old secret stopped signing at once."
	}
	v.notice = "Signing secret rotated"
	v.shown = &shownSecret{Label: label, Value: rotated.Secret}
	return endpointPage(s, w, r, v)
}

// deleteEndpoint deletes an endpoint once its box is ticked.
func deleteEndpoint(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	if err := confirmed(r, "delete this endpoint"); err != nil {
		return err
	}
	if err := s.api.DeleteWebhookEndpoint(r.Context(), v.acct, r.PathValue("id")); err != nil {
		return err
	}
	return s.done(w, r, "/dashboard/developers", "Webhook endpoint deleted")
}
