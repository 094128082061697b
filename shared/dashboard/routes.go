package dashboard

import "net/http"

// Route is one page or form of the dashboard and the Lambda function
// (functions/<Function>) that serves it. Four functions share the routes, so
// each gets only the permissions its part needs: assets (no table), auth
// (owners, sessions, new accounts), pages (reads) and actions (changes).
type Route struct {
	Function string
	Method   string
	Path     string
	// public serves a route that needs no session (assets, sign-in, sign-up,
	// set-password).
	public func(s *Server, w http.ResponseWriter, r *http.Request)
	// page renders a signed-in GET.
	page pageFunc
	// action makes a signed-in POST's change. When the API refuses it, back
	// renders the page the form was on again, with the refusal and the
	// form's values.
	action pageFunc
	back   pageFunc
	// ownAccount marks a page that reads a live session's account itself,
	// beside its own reads, one round trip sooner than the chain would.
	ownAccount bool
}

// pageFunc serves one signed-in request.
type pageFunc func(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error

// The dashboard's functions.
const (
	FunctionAssets  = "dashboard-assets"
	FunctionAuth    = "dashboard-auth"
	FunctionPages   = "dashboard-pages"
	FunctionActions = "dashboard-actions"
)

func open(function, method, path string, h func(*Server, http.ResponseWriter, *http.Request)) Route {
	return Route{Function: function, Method: method, Path: path, public: h}
}

func get(path string, page pageFunc) Route {
	return Route{Function: FunctionPages, Method: http.MethodGet, Path: path, page: page}
}

func post(path string, action, back pageFunc) Route {
	return Route{Function: FunctionActions, Method: http.MethodPost, Path: path, action: action, back: back}
}

// Routes is the single list of the dashboard's pages and forms. The
// template routes each path to its function (a test keeps the two equal),
// and the devserver serves them all.
var Routes = []Route{
	open(FunctionAssets, http.MethodGet, "/dashboard/assets/{file}", serveAsset),

	open(FunctionAuth, http.MethodGet, "/dashboard/sign-in", signInPage),
	open(FunctionAuth, http.MethodPost, "/dashboard/sign-in", signIn),
	open(FunctionAuth, http.MethodGet, "/dashboard/sign-up", signUpPage),
	open(FunctionAuth, http.MethodPost, "/dashboard/sign-up", signUp),
	open(FunctionAuth, http.MethodGet, "/dashboard/set-password", setPasswordPage),
	open(FunctionAuth, http.MethodPost, "/dashboard/set-password", setPassword),

	{Function: FunctionPages, Method: http.MethodGet, Path: "/dashboard", page: overviewPage, ownAccount: true},
	get("/dashboard/sales", salesPage),
	get("/dashboard/sales/{invoice_code}", salePage),
	get("/dashboard/sales/{invoice_code}/pdf", salePDF),
	get("/dashboard/expenses", expensesPage),
	get("/dashboard/inventory", inventoryPage),
	get("/dashboard/inventory/{item_code}", itemPage),
	get("/dashboard/customers", customersPage),
	get("/dashboard/developers", developersPage),
	get("/dashboard/developers/endpoints/{id}", endpointPage),
	get("/dashboard/developers/events", eventsPage),
	get("/dashboard/settings", settingsPage),

	post("/dashboard/sign-out", signOut, overviewPage),
	post("/dashboard/mode", switchMode, overviewPage),
	post("/dashboard/sales/{invoice_code}/payments", recordPayment, salePage),
	post("/dashboard/sales/{invoice_code}/refunds", refundSale, salePage),
	post("/dashboard/sales/{invoice_code}/void", voidSale, salePage),
	post("/dashboard/sales/{invoice_code}/link", createLink, salePage),
	post("/dashboard/sales/{invoice_code}/link/revoke", revokeLink, salePage),
	post("/dashboard/expenses", addExpense, expensesPage),
	post("/dashboard/inventory/{item_code}/adjustments", adjustStock, itemPage),
	post("/dashboard/customers", addCustomer, customersPage),
	post("/dashboard/developers/keys", createKey, developersPage),
	post("/dashboard/developers/keys/{id}/revoke", revokeKey, developersPage),
	post("/dashboard/developers/webhook", updateWebhook, developersPage),
	post("/dashboard/developers/webhook/test", testWebhook, developersPage),
	post("/dashboard/developers/deliveries/{transaction_id}/redeliver", redeliver, developersPage),
	post("/dashboard/developers/endpoints", addEndpoint, developersPage),
	post("/dashboard/developers/endpoints/{id}", editEndpoint, endpointPage),
	post("/dashboard/developers/endpoints/{id}/test", testEndpoint, endpointPage),
	post("/dashboard/developers/endpoints/{id}/deliveries/{event_id}/redeliver", redeliverEndpointDelivery, endpointPage),
	post("/dashboard/developers/endpoints/{id}/rotate", rotateEndpointSecret, endpointPage),
	post("/dashboard/developers/endpoints/{id}/delete", deleteEndpoint, endpointPage),
	post("/dashboard/settings", updateSettings, settingsPage),
	post("/dashboard/settings/password", changePassword, settingsPage),
}

// RoutesOf returns the routes function serves.
func RoutesOf(function string) []Route {
	var out []Route
	for _, rt := range Routes {
		if rt.Function == function {
			out = append(out, rt)
		}
	}
	return out
}
