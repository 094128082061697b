package dashboard

import (
	"net/http"
	"net/url"

	"bizdata/shared/business"
)

// The Developers page's payment webhook: its callback URL and secret, a
// test send, and its deliveries.

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
	if err := s.api.UpdateWebhookSettings(r.Context(), v.acct, body); err != nil {
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
	test, err := s.api.TestWebhook(r.Context(), v.acct)
	if err != nil {
		return err
	}
	return s.renderDevelopers(w, r, v, &test)
}

// redeliver queues a payment notification for another attempt.
func redeliver(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	if err := s.api.RedeliverWebhook(r.Context(), v.acct, r.PathValue("transaction_id")); err != nil {
		return err
	}
	return s.done(w, r, "/dashboard/developers", "Delivery queued for another attempt")
}
