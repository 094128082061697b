package api

import (
	"net/http"

	"bizdata/shared/business"
)

// handlerFunc serves one authenticated request. It writes the success
// response itself and returns any error for the one error writer.
type handlerFunc func(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error

// Route is one endpoint: the Lambda function (folder functions/<Function>)
// that serves it, its method and its ServeMux path pattern.
type Route struct {
	Function string
	Method   string
	Path     string
	auth     authStyle
	handle   handlerFunc
}

// Routes is the single list of the API's endpoints. template.yaml declares
// one function per entry (a test keeps the two equal), the devserver serves
// them all, and each functions/<name> serves its own.
var Routes = []Route{
	{"authenticate", http.MethodGet, "/api/v1/user/authenticate", authSales, getAuthenticate},

	{"list-sales", http.MethodGet, "/api/v1/sales", authSales, listSales},
	{"get-sale", http.MethodGet, "/api/v1/sales/{invoice_code}", authSales, getSale},
	{"add-sale", http.MethodPost, "/api/v1/sales/add", authSales, addSale},
	{"edit-sale", http.MethodPut, "/api/v1/sales/edit/{invoice_code}", authSales, editSale},
	{"refund-sale", http.MethodPost, "/api/v1/sales/{invoice_code}/refunds", authSales, refundSale},
	{"void-sale", http.MethodPost, "/api/v1/sales/{invoice_code}/void", authSales, voidSale},

	{"list-expenses", http.MethodGet, "/api/v1/expenses", authOther, listExpenses},
	{"get-expense", http.MethodGet, "/api/v1/expenses/{id}", authOther, getExpense},
	{"add-expense", http.MethodPost, "/api/v1/expenses/add", authOther, addExpense},
	{"edit-expense", http.MethodPut, "/api/v1/expenses/{id}", authOther, editExpense},

	{"list-items", http.MethodGet, "/api/v1/inventory/items", authOther, listItems},
	{"get-item", http.MethodGet, "/api/v1/inventory/items/{item_code}", authOther, getItem},
	{"add-item", http.MethodPost, "/api/v1/inventory/items/add", authOther, addItem},
	{"edit-item", http.MethodPut, "/api/v1/inventory/items/{item_code}", authOther, editItem},
	{"adjust-stock", http.MethodPost, "/api/v1/inventory/items/{item_code}/adjustments", authOther, adjustStock},
	{"list-movements", http.MethodGet, "/api/v1/inventory/items/{item_code}/movements", authOther, listMovements},

	{"list-categories", http.MethodGet, "/api/v1/inventory/categories", authOther, listCategories},
	{"add-category", http.MethodPost, "/api/v1/inventory/categories/add", authOther, addCategory},
	{"edit-category", http.MethodPut, "/api/v1/inventory/categories/{id}", authOther, editCategory},

	{"list-customers", http.MethodGet, "/api/v1/customers", authOther, listCustomers},
	{"get-customer", http.MethodGet, "/api/v1/customers/{id}", authOther, getCustomer},
	{"add-customer", http.MethodPost, "/api/v1/customers/add", authOther, addCustomer},
	{"edit-customer", http.MethodPut, "/api/v1/customers/{id}", authOther, editCustomer},

	{"list-events", http.MethodGet, "/api/v1/events", authOther, listEvents},
	{"get-event", http.MethodGet, "/api/v1/events/{id}", authOther, getEvent},

	{"list-webhook-endpoints", http.MethodGet, "/api/v1/webhook-endpoints", authOther, listEndpoints},
	{"add-webhook-endpoint", http.MethodPost, "/api/v1/webhook-endpoints", authOther, addEndpoint},
	{"get-webhook-endpoint", http.MethodGet, "/api/v1/webhook-endpoints/{id}", authOther, getEndpoint},
	{"edit-webhook-endpoint", http.MethodPut, "/api/v1/webhook-endpoints/{id}", authOther, editEndpoint},
	{"delete-webhook-endpoint", http.MethodDelete, "/api/v1/webhook-endpoints/{id}", authOther, deleteEndpoint},
	{"rotate-endpoint-secret", http.MethodPost, "/api/v1/webhook-endpoints/{id}/rotate-secret", authOther, rotateEndpointSecret},
	{"replay-webhook-endpoint", http.MethodPost, "/api/v1/webhook-endpoints/{id}/replay", authOther, replayEndpoint},
	{"list-endpoint-deliveries", http.MethodGet, "/api/v1/webhook-endpoints/{id}/deliveries", authOther, listEndpointDeliveries},

	{"get-webhook-settings", http.MethodGet, "/api/v1/user/webhook", authSales, getWebhook},
	{"update-webhook-settings", http.MethodPut, "/api/v1/user/webhook", authSales, updateWebhook},
	{"test-webhook", http.MethodPost, "/api/v1/user/webhook/test", authSales, testWebhook},
	{"list-webhook-deliveries", http.MethodGet, "/api/v1/user/webhook/deliveries", authSales, listDeliveries},
	{"redeliver-webhook", http.MethodPost, "/api/v1/user/webhook/deliveries/{transaction_id}/redeliver", authSales, redeliverWebhook},
	{"rotate-api-key", http.MethodPost, "/api/v1/user/api-key/rotate", authSales, rotateAPIKey},
	{"get-settings", http.MethodGet, "/api/v1/user/settings", authSales, getSettings},
	{"update-settings", http.MethodPut, "/api/v1/user/settings", authSales, updateSettings},

	{"report-summary", http.MethodGet, "/api/v1/reports/summary", authOther, reportSummary},
	{"report-receivables", http.MethodGet, "/api/v1/reports/receivables", authOther, reportReceivables},
	{"report-inventory", http.MethodGet, "/api/v1/reports/inventory", authOther, reportInventory},
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

// getAuthenticate answers the authenticated probe with the caller's account.
func getAuthenticate(_ *Server, w http.ResponseWriter, _ *http.Request, acct business.Account) error {
	return writeOK(w, "Authenticated", map[string]any{"account": map[string]any{
		"id":             acct.ID,
		"name":           acct.Name,
		"business_code":  acct.BusinessCode,
		"currency":       acct.Currency,
		"invoice_prefix": acct.InvoicePrefix,
		"timezone":       acct.Timezone,
	}})
}
