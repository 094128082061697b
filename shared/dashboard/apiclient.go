package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/wire"
)

// apiClient is how the pages call the API: one method per route they use,
// named as the route's handler, each running that handler in process
// (api.Server.Call) as the owner of acct and returning its data in the
// shape the handler renders (shared/wire). A refusal is the handler's own
// *business.Error, with the message and fields a person can act on.
type apiClient struct{ srv *api.Server }

// apiRequest is what a call sends beside its route: the path's values, the
// query, the JSON body (nil: none) and the Idempotency-Key of a create sent
// once per form drawn ("": none).
type apiRequest struct {
	params map[string]string
	query  url.Values
	body   any
	idem   string
}

// listPage is one page of a list: its records and the cursor of the next
// page ("" on the last).
type listPage[T any] struct {
	Items []T
	Next  string
}

// run calls function's handler with req, returning its data.
func (c apiClient) run(ctx context.Context, acct business.Account, function string, req apiRequest) (json.RawMessage, error) {
	return c.srv.Call(ctx, acct, function, req.params, req.query, req.body, req.idem)
}

// change calls a route whose answer the page does not read.
func (c apiClient) change(ctx context.Context, acct business.Account, function string, req apiRequest) error {
	_, err := c.run(ctx, acct, function, req)
	return err
}

// fetchMember calls function and decodes the member key of its data.
func fetchMember[T any](ctx context.Context, c apiClient, acct business.Account, function string, req apiRequest, key string) (T, error) {
	var out T
	data, err := c.run(ctx, acct, function, req)
	if err != nil {
		return out, err
	}
	members, err := dataMembers(data)
	if err != nil {
		return out, err
	}
	return out, decodeData(members[key], &out)
}

// fetchPage calls a list route and decodes its records (under key) and
// its next_cursor.
func fetchPage[T any](ctx context.Context, c apiClient, acct business.Account, function string, req apiRequest, key string) (listPage[T], error) {
	var page listPage[T]
	data, err := c.run(ctx, acct, function, req)
	if err != nil {
		return page, err
	}
	members, err := dataMembers(data)
	if err != nil {
		return page, err
	}
	var next *string
	if err := decodeData(members["next_cursor"], &next); err != nil {
		return page, err
	}
	if next != nil {
		page.Next = *next
	}
	return page, decodeData(members[key], &page.Items)
}

// dataMembers splits an answer's data into its members.
func dataMembers(data json.RawMessage) (map[string]json.RawMessage, error) {
	var members map[string]json.RawMessage
	return members, decodeData(data, &members)
}

// decodeData decodes part of an answer's data into dst (an absent member
// leaves it as it is). The data is the API's own output, so a failure is a
// fault of ours (500).
func decodeData(data json.RawMessage, dst any) error {
	if data == nil {
		return nil
	}
	if err := json.Unmarshal(data, dst); err != nil {
		return business.Errorf(business.EINTERNAL, "decode API data: %v", err)
	}
	return nil
}

// Sales.

func (c apiClient) ListSales(ctx context.Context, acct business.Account, q url.Values) (listPage[wire.Sale], error) {
	return fetchPage[wire.Sale](ctx, c, acct, "list-sales", apiRequest{query: q}, "sales")
}

// GetSale returns the sale and its ETag, for an edit made only if the sale
// has not changed since (If-Match).
func (c apiClient) GetSale(ctx context.Context, acct business.Account, code string) (wire.SaleRecord, string, error) {
	var rec wire.SaleRecord
	data, hdr, err := c.srv.CallWith(ctx, acct, "get-sale", map[string]string{"invoice_code": code}, nil, nil, nil)
	if err != nil {
		return rec, "", err
	}
	return rec, hdr.Get("ETag"), decodeData(data, &rec)
}

// EditSale changes the sale only while it is still at the ETag ifMatch
// (412 otherwise).
func (c apiClient) EditSale(ctx context.Context, acct business.Account, code string, body any, ifMatch string) error {
	_, _, err := c.srv.CallWith(ctx, acct, "edit-sale", map[string]string{"invoice_code": code}, nil, body, http.Header{"If-Match": {ifMatch}})
	return err
}

func (c apiClient) RefundSale(ctx context.Context, acct business.Account, code string, body any, idem string) error {
	return c.change(ctx, acct, "refund-sale", apiRequest{params: map[string]string{"invoice_code": code}, body: body, idem: idem})
}

func (c apiClient) VoidSale(ctx context.Context, acct business.Account, code string, body any, idem string) error {
	return c.change(ctx, acct, "void-sale", apiRequest{params: map[string]string{"invoice_code": code}, body: body, idem: idem})
}

// CreateInvoiceLink returns the sale's new invoice link (its URL, shown
// once), which ends any link the sale had.
func (c apiClient) CreateInvoiceLink(ctx context.Context, acct business.Account, code string) (wire.InvoiceLink, error) {
	return fetchMember[wire.InvoiceLink](ctx, c, acct, "create-invoice-link", apiRequest{params: map[string]string{"invoice_code": code}}, "link")
}

func (c apiClient) RevokeInvoiceLink(ctx context.Context, acct business.Account, code string) error {
	return c.change(ctx, acct, "revoke-invoice-link", apiRequest{params: map[string]string{"invoice_code": code}})
}

// Customers and expenses.

func (c apiClient) GetCustomer(ctx context.Context, acct business.Account, id string) (wire.Customer, error) {
	return fetchMember[wire.Customer](ctx, c, acct, "get-customer", apiRequest{params: map[string]string{"id": id}}, "customers")
}

func (c apiClient) ListCustomers(ctx context.Context, acct business.Account, q url.Values) (listPage[wire.Customer], error) {
	return fetchPage[wire.Customer](ctx, c, acct, "list-customers", apiRequest{query: q}, "customers")
}

func (c apiClient) AddCustomer(ctx context.Context, acct business.Account, body any, idem string) (wire.Customer, error) {
	return fetchMember[wire.Customer](ctx, c, acct, "add-customer", apiRequest{body: body, idem: idem}, "customers")
}

func (c apiClient) ListExpenses(ctx context.Context, acct business.Account, q url.Values) (listPage[wire.Expense], error) {
	return fetchPage[wire.Expense](ctx, c, acct, "list-expenses", apiRequest{query: q}, "expenses")
}

func (c apiClient) AddExpense(ctx context.Context, acct business.Account, body any, idem string) (wire.Expense, error) {
	return fetchMember[wire.Expense](ctx, c, acct, "add-expense", apiRequest{body: body, idem: idem}, "expense")
}

// Inventory.

func (c apiClient) ListCategories(ctx context.Context, acct business.Account, q url.Values) (listPage[wire.Category], error) {
	return fetchPage[wire.Category](ctx, c, acct, "list-categories", apiRequest{query: q}, "categories")
}

func (c apiClient) ListItems(ctx context.Context, acct business.Account, q url.Values) (listPage[wire.Item], error) {
	return fetchPage[wire.Item](ctx, c, acct, "list-items", apiRequest{query: q}, "items")
}

func (c apiClient) GetItem(ctx context.Context, acct business.Account, code string) (wire.Item, error) {
	return fetchMember[wire.Item](ctx, c, acct, "get-item", apiRequest{params: map[string]string{"item_code": code}}, "items")
}

func (c apiClient) ListMovements(ctx context.Context, acct business.Account, code string, q url.Values) (listPage[wire.Movement], error) {
	return fetchPage[wire.Movement](ctx, c, acct, "list-movements", apiRequest{params: map[string]string{"item_code": code}, query: q}, "movements")
}

// AdjustStock returns the item with its stock as adjusted.
func (c apiClient) AdjustStock(ctx context.Context, acct business.Account, code string, body any, idem string) (wire.Item, error) {
	return fetchMember[wire.Item](ctx, c, acct, "adjust-stock", apiRequest{params: map[string]string{"item_code": code}, body: body,
		idem: idem}, "items")
}

// Settings.

func (c apiClient) GetSettings(ctx context.Context, acct business.Account) (wire.Settings, error) {
	return fetchMember[wire.Settings](ctx, c, acct, "get-settings", apiRequest{}, "settings")
}

func (c apiClient) UpdateSettings(ctx context.Context, acct business.Account, body any) error {
	return c.change(ctx, acct, "update-settings", apiRequest{body: body})
}

// API keys.

func (c apiClient) ListAPIKeys(ctx context.Context, acct business.Account) ([]wire.APIKey, error) {
	return fetchMember[[]wire.APIKey](ctx, c, acct, "list-api-keys", apiRequest{}, "api_keys")
}

func (c apiClient) CreateAPIKey(ctx context.Context, acct business.Account, body any) (wire.CreatedAPIKey, error) {
	return fetchMember[wire.CreatedAPIKey](ctx, c, acct, "create-api-key", apiRequest{body: body}, "api_key")
}

func (c apiClient) RevokeAPIKey(ctx context.Context, acct business.Account, id string) error {
	return c.change(ctx, acct, "revoke-api-key", apiRequest{params: map[string]string{"id": id}})
}

// The payment webhook.

func (c apiClient) GetWebhookSettings(ctx context.Context, acct business.Account) (wire.WebhookSettings, error) {
	return fetchMember[wire.WebhookSettings](ctx, c, acct, "get-webhook-settings", apiRequest{}, "webhook")
}

func (c apiClient) UpdateWebhookSettings(ctx context.Context, acct business.Account, body any) error {
	return c.change(ctx, acct, "update-webhook-settings", apiRequest{body: body})
}

func (c apiClient) TestWebhook(ctx context.Context, acct business.Account) (wire.WebhookTest, error) {
	return fetchMember[wire.WebhookTest](ctx, c, acct, "test-webhook", apiRequest{}, "delivery")
}

func (c apiClient) ListWebhookDeliveries(ctx context.Context, acct business.Account, q url.Values) (listPage[wire.Delivery], error) {
	return fetchPage[wire.Delivery](ctx, c, acct, "list-webhook-deliveries", apiRequest{query: q}, "deliveries")
}

func (c apiClient) RedeliverWebhook(ctx context.Context, acct business.Account, transactionID string) error {
	return c.change(ctx, acct, "redeliver-webhook", apiRequest{params: map[string]string{"transaction_id": transactionID}})
}

// Webhook endpoints.

func (c apiClient) ListWebhookEndpoints(ctx context.Context, acct business.Account) ([]wire.Endpoint, error) {
	return fetchMember[[]wire.Endpoint](ctx, c, acct, "list-webhook-endpoints", apiRequest{}, "webhook_endpoints")
}

// AddWebhookEndpoint returns the endpoint with its signing secret.
func (c apiClient) AddWebhookEndpoint(ctx context.Context, acct business.Account, body any) (wire.EndpointWithSecret, error) {
	return fetchMember[wire.EndpointWithSecret](ctx, c, acct, "add-webhook-endpoint", apiRequest{body: body}, "webhook_endpoint")
}

func (c apiClient) GetWebhookEndpoint(ctx context.Context, acct business.Account, id string) (wire.Endpoint, error) {
	return fetchMember[wire.Endpoint](ctx, c, acct, "get-webhook-endpoint", apiRequest{params: map[string]string{"id": id}}, "webhook_endpoint")
}

func (c apiClient) EditWebhookEndpoint(ctx context.Context, acct business.Account, id string, body any) error {
	return c.change(ctx, acct, "edit-webhook-endpoint", apiRequest{params: map[string]string{"id": id}, body: body})
}

// RotateEndpointSecret returns the new secret; body nil takes the API's
// default overlap.
func (c apiClient) RotateEndpointSecret(ctx context.Context, acct business.Account, id string, body any) (wire.RotatedSecret, error) {
	return fetchMember[wire.RotatedSecret](ctx, c, acct, "rotate-endpoint-secret", apiRequest{params: map[string]string{"id": id}, body: body}, "webhook_endpoint")
}

func (c apiClient) DeleteWebhookEndpoint(ctx context.Context, acct business.Account, id string) error {
	return c.change(ctx, acct, "delete-webhook-endpoint", apiRequest{params: map[string]string{"id": id}})
}

// TestWebhookEndpoint returns the test event's delivery, with its attempt.
func (c apiClient) TestWebhookEndpoint(ctx context.Context, acct business.Account, id string) (wire.EndpointDelivery, error) {
	return fetchMember[wire.EndpointDelivery](ctx, c, acct, "test-webhook-endpoint", apiRequest{params: map[string]string{"id": id}}, "delivery")
}

func (c apiClient) ListEndpointDeliveries(ctx context.Context, acct business.Account, id string, q url.Values) (listPage[wire.EndpointDelivery], error) {
	return fetchPage[wire.EndpointDelivery](ctx, c, acct, "list-endpoint-deliveries", apiRequest{params: map[string]string{"id": id}, query: q}, "deliveries")
}

func (c apiClient) RedeliverEndpointDelivery(ctx context.Context, acct business.Account, id, eventID string) error {
	return c.change(ctx, acct, "redeliver-endpoint-delivery", apiRequest{params: map[string]string{"id": id, "event_id": eventID}})
}

// Events.

func (c apiClient) ListEvents(ctx context.Context, acct business.Account, q url.Values) (listPage[business.Event], error) {
	return fetchPage[business.Event](ctx, c, acct, "list-events", apiRequest{query: q}, "events")
}
