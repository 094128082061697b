package api

import (
	"net/http"

	"bizdata/shared/business"
	"bizdata/shared/wire"
)

// handlerFunc serves one authenticated request. It writes the success
// response itself and returns any error for the one error writer.
type handlerFunc func(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error

// Route is one endpoint: the Lambda function (folder functions/<Function>)
// that serves it, its method, its ServeMux path pattern, the scope a key needs
// to call it and the mode of key it serves.
type Route struct {
	Function string
	Method   string
	Path     string
	// Scope is what the calling key must allow (business.APIKey.Allows):
	// one of business.Scopes, or scopeNone for a route any valid key may
	// call (it shows or changes only the key itself).
	Scope  string
	Mode   keyMode
	auth   authStyle
	handle handlerFunc
}

// scopeNone is the Scope of a route any valid key may call.
const scopeNone = "none"

// keyMode says which keys a route serves: any, live keys only, or test keys
// only.
type keyMode int

const (
	anyMode keyMode = iota
	liveOnly
	testOnly
)

// String is how the OpenAPI document names the mode (x-key-mode).
func (m keyMode) String() string {
	switch m {
	case liveOnly:
		return "live"
	case testOnly:
		return "test"
	}
	return "any"
}

// Routes is the single list of the API's endpoints. template.yaml declares
// one function per entry (a test keeps the two equal), the devserver serves
// them all, and each functions/<name> serves its own.
var Routes = []Route{
	{"authenticate", http.MethodGet, "/api/v1/user/authenticate", scopeNone, anyMode, authSales, getAuthenticate},

	{"list-sales", http.MethodGet, "/api/v1/sales", "sales:read", anyMode, authSales, listSales},
	{"get-sale", http.MethodGet, "/api/v1/sales/{invoice_code}", "sales:read", anyMode, authSales, getSale},
	{"add-sale", http.MethodPost, "/api/v1/sales/add", "sales:write", anyMode, authSales, addSale},
	{"edit-sale", http.MethodPut, "/api/v1/sales/edit/{invoice_code}", "sales:write", anyMode, authSales, editSale},
	{"refund-sale", http.MethodPost, "/api/v1/sales/{invoice_code}/refunds", "sales:write", anyMode, authSales, refundSale},
	{"void-sale", http.MethodPost, "/api/v1/sales/{invoice_code}/void", "sales:write", anyMode, authSales, voidSale},
	{"create-invoice-link", http.MethodPost, "/api/v1/sales/{invoice_code}/link", "sales:write", anyMode, authSales, createInvoiceLink},
	{"revoke-invoice-link", http.MethodDelete, "/api/v1/sales/{invoice_code}/link", "sales:write", anyMode, authSales, revokeInvoiceLink},
	{"get-sale-pdf", http.MethodGet, "/api/v1/sales/{invoice_code}/pdf", "sales:read", anyMode, authSales, getSalePDF},

	{"list-expenses", http.MethodGet, "/api/v1/expenses", "expenses:read", anyMode, authOther, listExpenses},
	{"get-expense", http.MethodGet, "/api/v1/expenses/{id}", "expenses:read", anyMode, authOther, getExpense},
	{"add-expense", http.MethodPost, "/api/v1/expenses/add", "expenses:write", anyMode, authOther, addExpense},
	{"edit-expense", http.MethodPut, "/api/v1/expenses/{id}", "expenses:write", anyMode, authOther, editExpense},

	{"list-items", http.MethodGet, "/api/v1/inventory/items", "inventory:read", anyMode, authOther, listItems},
	{"get-item", http.MethodGet, "/api/v1/inventory/items/{item_code}", "inventory:read", anyMode, authOther, getItem},
	{"add-item", http.MethodPost, "/api/v1/inventory/items/add", "inventory:write", anyMode, authOther, addItem},
	{"edit-item", http.MethodPut, "/api/v1/inventory/items/{item_code}", "inventory:write", anyMode, authOther, editItem},
	{"adjust-stock", http.MethodPost, "/api/v1/inventory/items/{item_code}/adjustments", "inventory:write", anyMode, authOther, adjustStock},
	{"list-movements", http.MethodGet, "/api/v1/inventory/items/{item_code}/movements", "inventory:read", anyMode, authOther, listMovements},

	{"list-categories", http.MethodGet, "/api/v1/inventory/categories", "inventory:read", anyMode, authOther, listCategories},
	{"add-category", http.MethodPost, "/api/v1/inventory/categories/add", "inventory:write", anyMode, authOther, addCategory},
	{"edit-category", http.MethodPut, "/api/v1/inventory/categories/{id}", "inventory:write", anyMode, authOther, editCategory},

	{"list-customers", http.MethodGet, "/api/v1/customers", "customers:read", anyMode, authOther, listCustomers},
	{"get-customer", http.MethodGet, "/api/v1/customers/{id}", "customers:read", anyMode, authOther, getCustomer},
	{"add-customer", http.MethodPost, "/api/v1/customers/add", "customers:write", anyMode, authOther, addCustomer},
	{"edit-customer", http.MethodPut, "/api/v1/customers/{id}", "customers:write", anyMode, authOther, editCustomer},

	{"list-events", http.MethodGet, "/api/v1/events", "events:read", anyMode, authOther, listEvents},
	{"get-event", http.MethodGet, "/api/v1/events/{id}", "events:read", anyMode, authOther, getEvent},

	{"list-webhook-endpoints", http.MethodGet, "/api/v1/webhook-endpoints", "webhooks:write", anyMode, authOther, listEndpoints},
	{"add-webhook-endpoint", http.MethodPost, "/api/v1/webhook-endpoints", "webhooks:write", anyMode, authOther, addEndpoint},
	{"get-webhook-endpoint", http.MethodGet, "/api/v1/webhook-endpoints/{id}", "webhooks:write", anyMode, authOther, getEndpoint},
	{"edit-webhook-endpoint", http.MethodPut, "/api/v1/webhook-endpoints/{id}", "webhooks:write", anyMode, authOther, editEndpoint},
	{"delete-webhook-endpoint", http.MethodDelete, "/api/v1/webhook-endpoints/{id}", "webhooks:write", anyMode, authOther, deleteEndpoint},
	{"rotate-endpoint-secret", http.MethodPost, "/api/v1/webhook-endpoints/{id}/rotate-secret", "webhooks:write", anyMode, authOther, rotateEndpointSecret},
	{"replay-webhook-endpoint", http.MethodPost, "/api/v1/webhook-endpoints/{id}/replay", "webhooks:write", anyMode, authOther, replayEndpoint},
	{"list-endpoint-deliveries", http.MethodGet, "/api/v1/webhook-endpoints/{id}/deliveries", "webhooks:write", anyMode, authOther, listEndpointDeliveries},
	{"redeliver-endpoint-delivery", http.MethodPost, "/api/v1/webhook-endpoints/{id}/deliveries/{event_id}/redeliver", "webhooks:write", anyMode, authOther, redeliverEndpointDelivery},
	{"test-webhook-endpoint", http.MethodPost, "/api/v1/webhook-endpoints/{id}/test", "webhooks:write", anyMode, authOther, testEndpoint},

	{"get-webhook-settings", http.MethodGet, "/api/v1/user/webhook", "webhooks:write", anyMode, authSales, getWebhook},
	{"update-webhook-settings", http.MethodPut, "/api/v1/user/webhook", "webhooks:write", anyMode, authSales, updateWebhook},
	{"test-webhook", http.MethodPost, "/api/v1/user/webhook/test", "webhooks:write", anyMode, authSales, testWebhook},
	{"list-webhook-deliveries", http.MethodGet, "/api/v1/user/webhook/deliveries", "webhooks:write", anyMode, authSales, listDeliveries},
	{"redeliver-webhook", http.MethodPost, "/api/v1/user/webhook/deliveries/{transaction_id}/redeliver", "webhooks:write", anyMode, authSales, redeliverWebhook},
	{"rotate-api-key", http.MethodPost, "/api/v1/user/api-key/rotate", scopeNone, anyMode, authSales, rotateAPIKey},
	{"get-settings", http.MethodGet, "/api/v1/user/settings", scopeNone, anyMode, authSales, getSettings},
	{"update-settings", http.MethodPut, "/api/v1/user/settings", business.ScopeAll, liveOnly, authSales, updateSettings},

	{"report-summary", http.MethodGet, "/api/v1/reports/summary", "reports:read", anyMode, authOther, reportSummary},
	{"report-receivables", http.MethodGet, "/api/v1/reports/receivables", "reports:read", anyMode, authOther, reportReceivables},
	{"report-inventory", http.MethodGet, "/api/v1/reports/inventory", "reports:read", anyMode, authOther, reportInventory},

	{"list-api-keys", http.MethodGet, "/api/v1/api-keys", business.ScopeKeyWrite, anyMode, authOther, listAPIKeys},
	{"create-api-key", http.MethodPost, "/api/v1/api-keys", business.ScopeKeyWrite, anyMode, authOther, createAPIKey},
	{"revoke-api-key", http.MethodPost, "/api/v1/api-keys/{id}/revoke", business.ScopeKeyWrite, anyMode, authOther, revokeAPIKey},
	{"clear-test-data", http.MethodPost, "/api/v1/test-data/clear", business.ScopeAll, testOnly, authOther, clearTestData},
}

// DefaultFunction is the function of the HTTP API's $default route: it
// answers what no route of Routes matches (404 Route not found, or 405 with
// Allow for a known path), in the API's envelope.
const DefaultFunction = "route-not-found"

// RouteByFunction returns the route served by the named function.
func RouteByFunction(name string) (Route, bool) {
	for _, r := range Routes {
		if r.Function == name {
			return r, true
		}
	}
	return Route{}, false
}

// getAuthenticate answers the authenticated probe with the caller's account
// (its live id in both modes), whether the key is live, and the key itself.
func getAuthenticate(_ *Server, w http.ResponseWriter, _ *http.Request, acct business.Account) error {
	return writeOK(w, "Authenticated", wire.NewAuthenticated(acct))
}
