package dashboard

import (
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/wire"
)

// The Developers pages: the API keys, the payment webhook and its
// deliveries, the webhook endpoints and the events feed. Every read and
// change is the API's own handler, run as the owner in the dashboard's
// current mode, so a test session sees and makes test keys only.

// init adds the Developers and Settings templates' helpers, prefixed
// "dev" so no other page's helper clashes with them.
func init() {
	funcs["devHas"] = developerFormHas
	funcs["devTicked"] = developerTicked
	funcs["devText"] = developerText
	funcs["devShort"] = developerShort
}

// developerShort is the end of a long id (a delivery's transaction or
// event id), enough to tell one row's button from another's by its
// accessible name without spelling the whole id out.
func developerShort(id string) string {
	const keep = 6
	r := []rune(id)
	if len(r) <= keep+4 {
		return id
	}
	return "…" + string(r[len(r)-keep:])
}

// deliveriesPerPage is how many deliveries, each with its attempts, a page
// lists; the API's cursor pages on.
const deliveriesPerPage = "20"

// deliveriesQuery is what a deliveries list asks the API: the page's query
// (its cursor), at deliveriesPerPage.
func deliveriesQuery(page url.Values) url.Values {
	q := url.Values{"limit": {deliveriesPerPage}}
	if c := page.Get("cursor"); c != "" {
		q.Set("cursor", c)
	}
	return q
}

// developerText is *p, or "" for a null field (an endpoint's description).
func developerText(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// developerTicked reports whether an endpoint's edit form ticks value for
// name: as the refused form sent it (the edit form always sends its url),
// else as the endpoint has it now.
func developerTicked(form url.Values, name, value string, current []string) bool {
	if form.Has("url") {
		return slices.Contains(form[name], value)
	}
	return slices.Contains(current, value)
}

// developerFormHas reports whether the refused form ticked value for name,
// to tick a checkbox again.
func developerFormHas(form url.Values, name, value string) bool {
	return slices.Contains(form[name], value)
}

// webhookTest is the outcome of one "Send a test" attempt, as test-webhook
// answers it.
type webhookTest struct {
	WebhookID  string  `json:"webhook_id"`
	Delivered  bool    `json:"delivered"`
	StatusCode *int    `json:"status_code"`
	LatencyMS  int64   `json:"latency_ms"`
	Error      *string `json:"error"`
}

// webhookSettings is the payment webhook as get-webhook-settings answers
// it: never its secret, only whether one is set.
type webhookSettings struct {
	CallbackURL string  `json:"callback_url"` // "" when none is set
	Signed      bool    `json:"signed"`
	UpdatedAt   *string `json:"updated_at"`
}

// developersData is what the Developers page shows.
type developersData struct {
	Mode       string // "live" or "test": the mode new keys get
	Keys       []wire.APIKey
	Scopes     []string
	Webhook    webhookSettings
	Test       *webhookTest
	Deliveries []api.DeliveryJSON
	Query      url.Values // the page's query, for the deliveries pager
	Next       string     // the deliveries' next cursor
	Endpoints  []wire.Endpoint
	Events     []eventChoice // the add-endpoint form's choices
}

// developersPage shows the API keys of the current mode, the payment
// webhook with its deliveries, and the webhook endpoints.
func developersPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.renderDevelopers(w, r, v, nil)
}

// renderDevelopers draws the Developers page, with the outcome of a test
// send when there was one.
func (s *Server) renderDevelopers(w http.ResponseWriter, r *http.Request, v *visit, test *webhookTest) error {
	d := developersData{Mode: "test", Scopes: business.Scopes, Events: eventChoices(), Test: test, Query: url.Values{}}
	if v.acct.Livemode() {
		d.Mode = "live"
	}
	var keys struct {
		Keys []wire.APIKey `json:"api_keys"`
	}
	if err := s.callInto(r, v, "list-api-keys", nil, nil, &keys); err != nil {
		return err
	}
	d.Keys = keys.Keys
	var hook struct {
		Webhook webhookSettings `json:"webhook"`
	}
	if err := s.callInto(r, v, "get-webhook-settings", nil, nil, &hook); err != nil {
		return err
	}
	d.Webhook = hook.Webhook
	if c := r.URL.Query().Get("cursor"); c != "" && r.Method == http.MethodGet {
		d.Query.Set("cursor", c)
	}
	var deliveries struct {
		Deliveries []api.DeliveryJSON `json:"deliveries"`
		Next       *string            `json:"next_cursor"`
	}
	if err := s.callInto(r, v, "list-webhook-deliveries", nil, deliveriesQuery(d.Query), &deliveries); err != nil {
		return err
	}
	d.Deliveries = deliveries.Deliveries
	if deliveries.Next != nil {
		d.Next = *deliveries.Next
	}
	var endpoints struct {
		Endpoints []wire.Endpoint `json:"webhook_endpoints"`
	}
	if err := s.callInto(r, v, "list-webhook-endpoints", nil, nil, &endpoints); err != nil {
		return err
	}
	d.Endpoints = endpoints.Endpoints
	return s.render(w, r, v, "developers", "Developers", "developers", d)
}

// callInto runs a read of the API and decodes its data into dst.
func (s *Server) callInto(r *http.Request, v *visit, function string, params map[string]string, query url.Values, dst any) error {
	data, err := s.api.Call(r.Context(), v.acct, function, params, query, nil, "")
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, dst); err != nil {
		return business.Errorf(business.EINTERNAL, "decode %s: %v", function, err)
	}
	return nil
}

// createKey makes an API key of the dashboard's mode and shows its secret,
// once, on the page drawn directly (a redirect would have to carry it).
func createKey(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	mode := "test"
	if v.acct.Livemode() {
		mode = "live"
	}
	body := map[string]any{"name": r.PostForm.Get("name"), "scopes": nonNil(r.PostForm["scopes"]), "mode": mode}
	// No Idempotency-Key: the API replays no create that shows a secret (a
	// replay would have to keep the secret), so a double submit makes two
	// keys; the page shows the second, and the list both.
	data, err := s.api.Call(r.Context(), v.acct, "create-api-key", nil, nil, body, "")
	if err != nil {
		return err
	}
	var out struct {
		Key struct {
			Name string `json:"name"`
			Key  string `json:"key"`
		} `json:"api_key"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return business.Errorf(business.EINTERNAL, "decode create-api-key: %v", err)
	}
	v.shown = &shownSecret{Label: "Your new " + mode + " API key \"" + out.Key.Name + "\". Copy it now: it is not shown again.", Value: out.Key.Key}
	v.notice = "API key created"
	return developersPage(s, w, r, v)
}

// nonNil is list, or an empty list for none, so the API names a missing
// list as empty rather than absent.
func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// confirmed refuses an irreversible action whose confirm box was not
// ticked.
func confirmed(r *http.Request, what string) error {
	if r.PostForm.Get("confirm") != "yes" {
		return business.Invalid("confirm", "tick the box to confirm that you want to "+what)
	}
	return nil
}

// revokeKey revokes a key once its box is ticked; the API refuses the
// last live key that manages keys (409), and the page says so.
func revokeKey(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	if err := confirmed(r, "revoke this key"); err != nil {
		return err
	}
	if _, err := s.api.Call(r.Context(), v.acct, "revoke-api-key", map[string]string{"id": r.PathValue("id")}, nil, nil, ""); err != nil {
		return err
	}
	return s.done(w, r, "/dashboard/developers", "API key revoked: it stops working within 5 seconds")
}

// updateWebhook saves the payment webhook: the callback URL (empty clears
// it) and, as chosen, the secret kept, typed, generated (shown once) or
// removed.
func updateWebhook(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	body := map[string]any{"callback_url": nil}
	if u := r.PostForm.Get("callback_url"); u != "" {
		body["callback_url"] = u
	}
	var generated string
	switch r.PostForm.Get("secret_action") {
	case "set":
		body["callback_secret"] = r.PostForm.Get("callback_secret")
	case "generate":
		generated = business.NewEndpointSecret() // the Standard Webhooks form, as an endpoint's
		body["callback_secret"] = generated
	case "remove":
		body["callback_secret"] = nil
	}
	if _, err := s.api.Call(r.Context(), v.acct, "update-webhook-settings", nil, nil, body, ""); err != nil {
		return err
	}
	if generated == "" {
		notice := "Webhook settings saved"
		if r.PostForm.Get("secret_action") == "set" {
			notice += ": the old secret no longer signs; notifications sent from now on carry the new one's signature only"
		}
		return s.done(w, r, "/dashboard/developers", notice)
	}
	v.notice = "Webhook settings saved"
	v.shown = &shownSecret{Label: "Your payment webhook's new signing secret. Copy it to your receiver now: it is not shown again. The old secret no longer signs: notifications sent from now on carry this one's signature only.", Value: generated}
	return developersPage(s, w, r, v)
}

// testWebhook sends a test notification to the callback URL and shows how
// the attempt went.
func testWebhook(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	data, err := s.api.Call(r.Context(), v.acct, "test-webhook", nil, nil, nil, "")
	if err != nil {
		return err
	}
	var out struct {
		Delivery webhookTest `json:"delivery"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return business.Errorf(business.EINTERNAL, "decode test-webhook: %v", err)
	}
	return s.renderDevelopers(w, r, v, &out.Delivery)
}

// redeliver queues a payment notification for another attempt.
func redeliver(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	params := map[string]string{"transaction_id": r.PathValue("transaction_id")}
	if _, err := s.api.Call(r.Context(), v.acct, "redeliver-webhook", params, nil, nil, ""); err != nil {
		return err
	}
	return s.done(w, r, "/dashboard/developers", "Delivery queued for another attempt")
}

// addEndpoint adds a webhook endpoint and shows its signing secret, once.
func addEndpoint(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	body := map[string]any{"url": r.PostForm.Get("url"), "enabled_events": nonNil(r.PostForm["events"])}
	if d := r.PostForm.Get("description"); d != "" {
		body["description"] = d
	}
	// No Idempotency-Key, as for keys: the answer holds the signing secret.
	data, err := s.api.Call(r.Context(), v.acct, "add-webhook-endpoint", nil, nil, body, "")
	if err != nil {
		return err
	}
	var out struct {
		Endpoint struct {
			URL    string `json:"url"`
			Secret string `json:"secret"`
		} `json:"webhook_endpoint"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return business.Errorf(business.EINTERNAL, "decode add-webhook-endpoint: %v", err)
	}
	v.notice = "Webhook endpoint added"
	v.shown = &shownSecret{Label: "The signing secret of " + out.Endpoint.URL + ". Copy it to your receiver now: it is not shown again.", Value: out.Endpoint.Secret}
	return developersPage(s, w, r, v)
}

// endpointData is what an endpoint's page shows.
type endpointData struct {
	Endpoint   wire.Endpoint
	Events     []eventChoice // the edit form's choices
	Deliveries []api.EndpointDeliveryJSON
	Query      url.Values
	Next       string
}

// endpointPage shows one webhook endpoint and its deliveries, each with
// its attempts, paged with the API's cursor.
func endpointPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	params := map[string]string{"id": r.PathValue("id")}
	d := endpointData{Query: url.Values{}, Events: eventChoices()}
	var got struct {
		Endpoint wire.Endpoint `json:"webhook_endpoint"`
	}
	if err := s.callInto(r, v, "get-webhook-endpoint", params, nil, &got); err != nil {
		return err
	}
	d.Endpoint = got.Endpoint
	if c := r.URL.Query().Get("cursor"); c != "" && r.Method == http.MethodGet {
		d.Query.Set("cursor", c)
	}
	var deliveries struct {
		Deliveries []api.EndpointDeliveryJSON `json:"deliveries"`
		Next       *string                    `json:"next_cursor"`
	}
	if err := s.callInto(r, v, "list-endpoint-deliveries", params, deliveriesQuery(d.Query), &deliveries); err != nil {
		return err
	}
	d.Deliveries = deliveries.Deliveries
	if deliveries.Next != nil {
		d.Next = *deliveries.Next
	}
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
	if _, err := s.api.Call(r.Context(), v.acct, "edit-webhook-endpoint", map[string]string{"id": id}, nil, body, ""); err != nil {
		return err
	}
	return s.done(w, r, endpointPath(id), "Webhook endpoint saved")
}

// testEndpoint sends the endpoint a test event; the API records it among
// the endpoint's deliveries with its attempt, which the page then lists.
func testEndpoint(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	id := r.PathValue("id")
	data, err := s.api.Call(r.Context(), v.acct, "test-webhook-endpoint", map[string]string{"id": id}, nil, nil, "")
	if err != nil {
		return err
	}
	var out struct {
		Delivery api.EndpointDeliveryJSON `json:"delivery"`
	}
	if err := json.Unmarshal(data, &out); err != nil || len(out.Delivery.Attempts) == 0 {
		return business.Errorf(business.EINTERNAL, "decode test-webhook-endpoint: %v", err)
	}
	a := out.Delivery.Attempts[len(out.Delivery.Attempts)-1]
	verdict, answer := "not delivered", "no answer"
	if out.Delivery.State == business.DeliveryDelivered {
		verdict = "delivered"
	}
	if a.StatusCode != nil {
		answer = "status code " + strconv.Itoa(*a.StatusCode)
	}
	notice := "Test event " + out.Delivery.EventID + " " + verdict + ": " + answer
	if a.Error != nil {
		notice += " (" + business.Clip(*a.Error, 100) + ")" // takeNotice drops a notice over 200 bytes
	}
	return s.done(w, r, endpointPath(id), notice)
}

// redeliverEndpointDelivery queues one of the endpoint's deliveries for
// another round of attempts.
func redeliverEndpointDelivery(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	id := r.PathValue("id")
	params := map[string]string{"id": id, "event_id": r.PathValue("event_id")}
	if _, err := s.api.Call(r.Context(), v.acct, "redeliver-endpoint-delivery", params, nil, nil, ""); err != nil {
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
	data, err := s.api.Call(r.Context(), v.acct, "rotate-endpoint-secret", map[string]string{"id": r.PathValue("id")}, nil, body, "")
	if err != nil {
		return err
	}
	var out struct {
		Endpoint struct {
			Secret  string  `json:"secret"`
			Expires *string `json:"previous_secret_expires_at"`
		} `json:"webhook_endpoint"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return business.Errorf(business.EINTERNAL, "decode rotate-endpoint-secret: %v", err)
	}
	label := "The endpoint's new signing secret. Copy it to your receiver now: it is not shown again."
	if out.Endpoint.Expires != nil {
		label += " The old secret keeps signing beside it until " + formatWhen(*out.Endpoint.Expires, v.acct.Timezone) + ": every delivery until then carries both signatures."
	} else {
		label += " The old secret stopped signing at once."
	}
	v.notice = "Signing secret rotated"
	v.shown = &shownSecret{Label: label, Value: out.Endpoint.Secret}
	return endpointPage(s, w, r, v)
}

// deleteEndpoint deletes an endpoint once its box is ticked.
func deleteEndpoint(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	if err := confirmed(r, "delete this endpoint"); err != nil {
		return err
	}
	if _, err := s.api.Call(r.Context(), v.acct, "delete-webhook-endpoint", map[string]string{"id": r.PathValue("id")}, nil, nil, ""); err != nil {
		return err
	}
	return s.done(w, r, "/dashboard/developers", "Webhook endpoint deleted")
}

// eventRow is one event of the feed and the dashboard page of its record,
// when there is one.
type eventRow struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	CreatedAt string `json:"created_at"`
	Resource  struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	} `json:"resource"`
	Link template.URL `json:"-"`
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
	var out struct {
		Events []eventRow `json:"events"`
		Next   *string    `json:"next_cursor"`
	}
	if err := s.callInto(r, v, "list-events", nil, d.Query, &out); err != nil {
		return err
	}
	for i, e := range out.Events {
		if base, ok := recordPages[e.Resource.Type]; ok && e.Resource.ID != "" {
			out.Events[i].Link = template.URL(base + url.PathEscape(e.Resource.ID))
		}
	}
	d.Events = out.Events
	if out.Next != nil {
		d.Next = *out.Next
	}
	return s.render(w, r, v, "events", "Events", "developers", d)
}
