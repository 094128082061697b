package dashboard

import (
	"net/http"
	"net/url"
	"slices"

	"bizdata/shared/business"
	"bizdata/shared/wire"
)

// The Developers pages: the API keys (this file), the payment webhook and
// its deliveries (developers_webhook.go), the webhook endpoints
// (developers_endpoints.go) and the events feed (developers_events.go).
// Every read and change is the API's own handler, run as the owner in the
// dashboard's current mode, so a test session sees and makes test keys
// only.

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

// developerText is *p, or "" for a null field (an endpoint's description).
func developerText(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// developerFormHas reports whether the refused form ticked value for name,
// to tick a checkbox again.
func developerFormHas(form url.Values, name, value string) bool {
	return slices.Contains(form[name], value)
}

// developersData is what the Developers page shows.
type developersData struct {
	Mode       string // "live" or "test": the mode new keys get
	Keys       []wire.APIKey
	Scopes     []string
	Webhook    wire.WebhookSettings
	Test       *wire.WebhookTest
	Deliveries []wire.Delivery
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
func (s *Server) renderDevelopers(w http.ResponseWriter, r *http.Request, v *visit, test *wire.WebhookTest) error {
	ctx := r.Context()
	d := developersData{Mode: keyMode(v), Scopes: business.Scopes, Events: eventChoices(), Test: test, Query: url.Values{}}
	var err error
	if d.Keys, err = s.api.ListAPIKeys(ctx, v.acct); err != nil {
		return err
	}
	if d.Webhook, err = s.api.GetWebhookSettings(ctx, v.acct); err != nil {
		return err
	}
	if c := r.URL.Query().Get("cursor"); c != "" && r.Method == http.MethodGet {
		d.Query.Set("cursor", c)
	}
	deliveries, err := s.api.ListWebhookDeliveries(ctx, v.acct, deliveriesQuery(d.Query))
	if err != nil {
		return err
	}
	d.Deliveries, d.Next = deliveries.Items, deliveries.Next
	if d.Endpoints, err = s.api.ListWebhookEndpoints(ctx, v.acct); err != nil {
		return err
	}
	return s.render(w, r, v, "developers", "Developers", "developers", d)
}

// keyMode is the mode of the keys the visit sees and makes: "live" or
// "test".
func keyMode(v *visit) string {
	if v.acct.Livemode() {
		return "live"
	}
	return "test"
}

// createKey makes an API key of the dashboard's mode and shows its secret,
// once, on the page drawn directly (a redirect would have to carry it).
func createKey(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	mode := keyMode(v)
	body := map[string]any{"name": r.PostForm.Get("name"), "scopes": nonNil(r.PostForm["scopes"]), "mode": mode}
	// No Idempotency-Key: the API replays no create that shows a secret (a
	// replay would have to keep the secret), so a double submit makes two
	// keys; the page shows the second, and the list both.
	key, err := s.api.CreateAPIKey(r.Context(), v.acct, body)
	if err != nil {
		return err
	}
	v.shown = &shownSecret{Label: "Your new " + mode + " API key \"" + key.Name + "\". Copy it now: it is not shown again.", Value: key.Key}
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
	if err := s.api.RevokeAPIKey(r.Context(), v.acct, r.PathValue("id")); err != nil {
		return err
	}
	return s.done(w, r, "/dashboard/developers", "API key revoked: it stops working within 5 seconds")
}
