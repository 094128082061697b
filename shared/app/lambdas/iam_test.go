package lambdas_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app/lambdas"
	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/go-cmp/cmp"
)

// iamRecorder records, per function, the IAM actions its DynamoDB calls
// need: one per operation, and for a transaction one per kind of action in
// it (IAM has no TransactWriteItems action of its own).
type iamRecorder struct {
	mu      sync.Mutex
	current string
	used    map[string]map[string]bool
	// requests are what IAM judges of each call, per function, once each.
	requests map[string]map[string]ddbRequest
	// transactions counts each function's TransactWriteItems calls.
	transactions map[string]int
}

func (r *iamRecorder) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("RecordIAM",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				var actions []string
				if tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok {
					for _, it := range tx.TransactItems {
						switch {
						case it.Put != nil:
							actions = append(actions, "dynamodb:PutItem")
						case it.Update != nil:
							actions = append(actions, "dynamodb:UpdateItem")
						case it.Delete != nil:
							actions = append(actions, "dynamodb:DeleteItem")
						case it.ConditionCheck != nil:
							actions = append(actions, "dynamodb:ConditionCheckItem")
						}
					}
				} else {
					actions = append(actions, "dynamodb:"+middleware.GetOperationName(ctx))
				}
				r.mu.Lock()
				function := r.current
				if function != "" {
					if r.used[r.current] == nil {
						r.used[r.current] = map[string]bool{}
						r.requests[r.current] = map[string]ddbRequest{}
					}
					for _, a := range actions {
						r.used[r.current][a] = true
					}
					for _, req := range ddbRequests(middleware.GetOperationName(ctx), in.Parameters) {
						r.requests[r.current][req.String()] = req
					}
					if _, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok && r.transactions != nil {
						r.transactions[r.current]++
					}
				}
				r.mu.Unlock()
				if function != "" {
					storeCoverage.record(function) // coverage_test.go
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	})
}

func (r *iamRecorder) as(function string) {
	r.mu.Lock()
	r.current = function
	r.mu.Unlock()
}

// TestIAMMatchesCode runs every function's code paths (success, replays, the
// refusal that reads an Idempotency-Key, stock moves, renames, the stamp of
// each request's key, the key routes, test-mode records and their clearing)
// against DynamoDB Local and fails when a function calls a DynamoDB action
// its policy in template.yaml does not grant, or its policy grants one it
// never uses, or when a call, with its partition keys and the attributes it
// updates, would be refused by the conditions of the function's policies
// (the IAM model of policy_test.go).
func TestIAMMatchesCode(t *testing.T) {
	rec := &iamRecorder{used: map[string]map[string]bool{}, requests: map[string]map[string]ddbRequest{}, transactions: map[string]int{}}
	st, _ := testdb.NewStore(t, rec.option)
	ctx := context.Background()
	// The store's clock runs ahead by shift: the last clear of the test
	// data comes after the retired twins' grace (they leave the purging
	// list only once no cached test key can write to them).
	var shift atomic.Int64
	st.SetClock(func() time.Time { return time.Now().UTC().Add(time.Duration(shift.Load())) })
	a, key := testdb.NewAccount(t, st, "IAM Shop", "IAM1")
	srv := api.NewServer(st, testdb.Quiet(), 0)
	// callWith calls function with apiKey. The server has no key cache, so
	// every request reads its key from the table; but a key is stamped
	// (store.StampKeyUse, an UpdateItem of its KEY#<hash> item) only when
	// its last use is over store.LastUsedEvery old. The stamp is taken off
	// before each call, so every function makes it, and checked after.
	callWith := func(apiKey, function, method, path, body string, headers ...string) (int, string) {
		t.Helper()
		h, err := lambdas.FunctionHandler(srv, function)
		if err != nil {
			t.Fatal(err)
		}
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		r := httptest.NewRequest(method, path, rd)
		r.Header.Set("Authorization", "Bearer "+apiKey)
		r.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(headers); i += 2 {
			r.Header.Set(headers[i], headers[i+1])
		}
		w := httptest.NewRecorder()
		unstamp(t, st, apiKey)
		rec.as(function)
		h.ServeHTTP(w, r)
		rec.as("")
		if function != api.DefaultFunction && !stamped(t, st, apiKey) {
			t.Fatalf("%s %s %s: the key's use was not stamped", function, method, path)
		}
		return w.Code, w.Body.String()
	}
	call := func(function, method, path, body string, headers ...string) (int, string) {
		t.Helper()
		return callWith(key, function, method, path, body, headers...)
	}
	idem := func(k string) []string { return []string{"Idempotency-Key", k} }
	sale := `{"invoice_code":"111111","invoice_number":"100001","customer_id":1,"sub_total_amount":"10.00","total_amount":"10.00","amount_paid":"5.00","invoice_type":"main","payment_type":"Cash","due_date":"2026-12-31","items":[{"item_code":"RICE-1","item_name":"Rice","unit_price":"5.00","quantity":2}]}`
	steps := []struct {
		function, method, path, body string
		headers                      []string
		want                         int
	}{
		{"authenticate", "GET", "/api/v1/user/authenticate", "", nil, 200},
		{"add-customer", "POST", "/api/v1/customers/add", `{"name":"Ama"}`, idem("c1"), 200},
		{"add-customer", "POST", "/api/v1/customers/add", `{"name":"Ama"}`, idem("c1"), 200},
		{"add-customer", "POST", "/api/v1/customers/add", `{"name":""}`, idem("c1"), 409},
		{"add-customer", "POST", "/api/v1/customers/add", `{"name":"Esi"}`, nil, 200},
		{"edit-customer", "PUT", "/api/v1/customers/1", `{"phone":"1"}`, nil, 200},
		{"get-customer", "GET", "/api/v1/customers/1", "", nil, 200},
		{"list-customers", "GET", "/api/v1/customers", "", nil, 200},
		{"add-category", "POST", "/api/v1/inventory/categories/add", `{"category_name":"Grains"}`, idem("g1"), 200},
		{"add-category", "POST", "/api/v1/inventory/categories/add", `{"category_name":""}`, idem("g1"), 409},
		{"add-category", "POST", "/api/v1/inventory/categories/add", `{"category_name":"Oils"}`, nil, 200},
		{"edit-category", "PUT", "/api/v1/inventory/categories/1", `{"category_name":"Cereals"}`, nil, 200},
		{"list-categories", "GET", "/api/v1/inventory/categories", "", nil, 200},
		{"add-item", "POST", "/api/v1/inventory/items/add", `{"item_code":"RICE-1","item_name":"Rice","category_id":1,"item_price":5,"quantity":10}`, idem("i1"), 200},
		{"add-item", "POST", "/api/v1/inventory/items/add", `{"item_code":"BEANS-1","item_name":"Rice","category_id":1,"item_price":5,"quantity":5}`, nil, 200},
		{"add-item", "POST", "/api/v1/inventory/items/add", `{"item_name":""}`, idem("i1"), 409},
		{"edit-item", "PUT", "/api/v1/inventory/items/RICE-1", `{"item_name":"Brown rice","category_id":2,"item_price":6}`, nil, 200},
		{"get-item", "GET", "/api/v1/inventory/items/RICE-1", "", nil, 200},
		{"list-items", "GET", "/api/v1/inventory/items?category_id=2", "", nil, 200},
		{"add-expense", "POST", "/api/v1/expenses/add", `{"expense_type":"Rent","expense_amount":"10","payment_method":"Cash","created_by":"Ama"}`, idem("e1"), 200},
		{"add-expense", "POST", "/api/v1/expenses/add", `{}`, idem("e1"), 409},
		{"add-expense", "POST", "/api/v1/expenses/add", `{"expense_type":"Fuel","expense_amount":"10","payment_method":"Cash","created_by":"Ama"}`, nil, 200},
		{"edit-expense", "PUT", "/api/v1/expenses/1", `{"expense_type":"Rent","expense_amount":"12","payment_method":"Cash","created_by":"Ama"}`, nil, 200},
		{"get-expense", "GET", "/api/v1/expenses/1", "", nil, 200},
		{"list-expenses", "GET", "/api/v1/expenses", "", nil, 200},
		{"add-sale", "POST", "/api/v1/sales/add", sale, idem("s1"), 200},
		{"add-sale", "POST", "/api/v1/sales/add", sale, idem("s1"), 200},
		{"add-sale", "POST", "/api/v1/sales/add", `{}`, idem("s1"), 409},
		{"add-sale", "POST", "/api/v1/sales/add", strings.Replace(strings.Replace(sale, "111111", "222222", 1), "100001", "100002", 1), nil, 200},
		{"edit-sale", "PUT", "/api/v1/sales/edit/111111", `{"invoice_code":"111111","invoice_number":"100003","customer_id":1,"sub_total_amount":"10.00","total_amount":"10.00","amount_paid":"7.00","items":[{"item_code":"RICE-1","item_name":"Rice","unit_price":"5.00","quantity":1},{"item_code":"BEANS-1","item_name":"Beans","unit_price":"5.00","quantity":1}]}`, nil, 200},
		// Another customer: the sale reads it (here, none of the account's).
		{"edit-sale", "PUT", "/api/v1/sales/edit/111111", `{"invoice_code":"111111","invoice_number":"100003","customer_id":99,"sub_total_amount":"10.00","total_amount":"10.00","amount_paid":"7.00","items":[{"item_code":"RICE-1","item_name":"Rice","unit_price":"5.00","quantity":1},{"item_code":"BEANS-1","item_name":"Beans","unit_price":"5.00","quantity":1}]}`, nil, 400},
		// Paid in full, dated, without stocked lines: nothing to plan, so
		// only its customer is read (GetItem).
		{"add-sale", "POST", "/api/v1/sales/add", `{"invoice_code":"464646","invoice_number":"100010","customer_id":1,"sub_total_amount":"10.00","total_amount":"10.00","amount_paid":"10.00","invoice_type":"main","payment_type":"Cash","payment_date":"2026-11-01","due_date":"2026-12-31"}`, nil, 200},
		// A first payment without a date: dated by the account's timezone.
		{"add-sale", "POST", "/api/v1/sales/add", `{"invoice_code":"454545","invoice_number":"100009","customer_id":1,"sub_total_amount":"10.00","total_amount":"10.00","amount_paid":"0","invoice_type":"main","payment_type":"Cash","due_date":"2026-12-31"}`, nil, 200},
		{"edit-sale", "PUT", "/api/v1/sales/edit/454545", `{"invoice_code":"454545","invoice_number":"100009","customer_id":1,"sub_total_amount":"10.00","total_amount":"10.00","amount_paid":"3.00"}`, nil, 200},
		{"get-sale", "GET", "/api/v1/sales/111111", "", nil, 200},
		{"list-sales", "GET", "/api/v1/sales?payment_status=paid", "", nil, 200},
		{"refund-sale", "POST", "/api/v1/sales/111111/refunds", `{"amount":"2.00","lines":[{"sales_item_id":1,"quantity":"1"},{"sales_item_id":2,"quantity":"1"}]}`, idem("r1"), 200},
		{"refund-sale", "POST", "/api/v1/sales/111111/refunds", `{"amount":"2.00","lines":[{"sales_item_id":1,"quantity":"1"},{"sales_item_id":2,"quantity":"1"}]}`, idem("r1"), 200},
		{"refund-sale", "POST", "/api/v1/sales/111111/refunds", `{}`, idem("r1"), 409},
		{"refund-sale", "POST", "/api/v1/sales/222222/refunds", `{"amount":"5.00","lines":[{"sales_item_id":1,"quantity":"1"}]}`, nil, 200},
		{"void-sale", "POST", "/api/v1/sales/111111/void", "", nil, 409},
		{"void-sale", "POST", "/api/v1/sales/222222/void", "", nil, 200},
		{"add-sale", "POST", "/api/v1/sales/add", `{"invoice_code":"333333","customer_id":1,"sub_total_amount":"10.00","total_amount":"10.00","amount_paid":"0","invoice_type":"main","payment_type":"Cash","due_date":"2026-12-31","items":[{"item_code":"RICE-1","item_name":"Rice","unit_price":"5.00","quantity":1},{"item_code":"BEANS-1","item_name":"Beans","unit_price":"5.00","quantity":1}]}`, nil, 200},
		{"void-sale", "POST", "/api/v1/sales/333333/void", `{"reason":"wrong till"}`, idem("v1"), 200},
		{"void-sale", "POST", "/api/v1/sales/333333/void", `{"reason":"wrong till"}`, idem("v1"), 200},
		{"void-sale", "POST", "/api/v1/sales/333333/void", `{"reason":7}`, idem("v1"), 409},
		// Refused under a new key: whether the key's first request
		// committed meanwhile is read again.
		{"void-sale", "POST", "/api/v1/sales/333333/void", `{"reason":"again"}`, idem("v2"), 409},
		{"adjust-stock", "POST", "/api/v1/inventory/items/RICE-1/adjustments", `{"quantity":"-1","reason":"damaged"}`, idem("a1"), 200},
		{"adjust-stock", "POST", "/api/v1/inventory/items/RICE-1/adjustments", `{"quantity":"-1","reason":"damaged"}`, idem("a1"), 200},
		{"adjust-stock", "POST", "/api/v1/inventory/items/RICE-1/adjustments", `{}`, idem("a1"), 409},
		{"edit-item", "PUT", "/api/v1/inventory/items/BEANS-1", `{"quantity":"20"}`, nil, 200},
		{"list-movements", "GET", "/api/v1/inventory/items/RICE-1/movements?limit=2", "", nil, 200},
		{"list-events", "GET", "/api/v1/events?type=sale.*&limit=100", "", nil, 200},
		// One event of a resource's: its one body read by GetItem.
		{"list-events", "GET", "/api/v1/events?resource_type=sale&resource_id=333333&type=sale.voided", "", nil, 200},
		{"list-events", "GET", "/api/v1/events?since=" + url.QueryEscape(time.Now().UTC().Add(-time.Hour).Format("2006-01-02 15:04:05")), "", nil, 200},
		{"get-event", "GET", "/api/v1/events/evt_000000000000000000000001", "", nil, 404},
		{api.DefaultFunction, "GET", "/api/v1/nowhere", "", nil, 404},
		{"get-webhook-settings", "GET", "/api/v1/user/webhook", "", nil, 200},
		{"update-webhook-settings", "PUT", "/api/v1/user/webhook", `{"callback_url":"https://hooks.example.com/x","callback_secret":"iam-secret-0123456789"}`, nil, 200},
		{"update-webhook-settings", "PUT", "/api/v1/user/webhook", `{"callback_secret":null}`, nil, 200},
		{"test-webhook", "POST", "/api/v1/user/webhook/test", "", nil, 200},
		{"list-webhook-deliveries", "GET", "/api/v1/user/webhook/deliveries?state=failed", "", nil, 200},
		{"add-sale", "POST", "/api/v1/sales/add", `{"invoice_code":"444444","customer_id":3,"sub_total_amount":"3.00","total_amount":"3.00","amount_paid":"0","invoice_type":"main","payment_type":"None","due_date":"2026-01-31"}`, nil, 200},
		{"get-settings", "GET", "/api/v1/user/settings", "", nil, 200},
		{"update-settings", "PUT", "/api/v1/user/settings", `{"timezone":"Africa/Nairobi","business_name":"IAM Shop Ltd"}`, nil, 200},
		{"report-summary", "GET", "/api/v1/reports/summary?group_by=day", "", nil, 200}, // applies the figures waiting
		{"report-summary", "GET", "/api/v1/reports/summary?group_by=month", "", nil, 200},
		// A sale's figures wait: the receivables report applies them (the
		// customer's debt read and written) before it reads what is owed.
		{"add-sale", "POST", "/api/v1/sales/add", `{"invoice_code":"777777","customer_id":3,"sub_total_amount":"4.00","total_amount":"4.00","amount_paid":"0","invoice_type":"main","payment_type":"None","due_date":"2026-02-28"}`, nil, 200},
		{"report-receivables", "GET", "/api/v1/reports/receivables?as_of=2026-06-30", "", nil, 200},
		// A debtor renamed: the rename's figures item waits, and the report
		// applies it (the debt read with its customer and written with the
		// new name).
		{"edit-customer", "PUT", "/api/v1/customers/3", `{"name":"Esi Mensah"}`, nil, 200},
		{"report-receivables", "GET", "/api/v1/reports/receivables?as_of=2026-06-30", "", nil, 200},
		// Both items run low: the inventory report lists them from IX9
		// (read from the table below, once they lose their views).
		{"edit-item", "PUT", "/api/v1/inventory/items/RICE-1", `{"minimum_qty_alert":"1000"}`, nil, 200},
		{"edit-item", "PUT", "/api/v1/inventory/items/BEANS-1", `{"minimum_qty_alert":"1000"}`, nil, 200},
	}
	for _, s := range steps {
		if got, body := call(s.function, s.method, s.path, s.body, s.headers...); got != s.want {
			t.Fatalf("%s %s %s: %d, want %d: %s", s.function, s.method, s.path, got, s.want, body)
		}
	}
	// Adjustments of one item at once, each under a key of its own: a
	// transaction whose record moved under it reads whether its key was
	// taken meanwhile before it starts over. Rounds until one raced.
	adjust, err := lambdas.FunctionHandler(srv, "adjust-stock")
	if err != nil {
		t.Fatal(err)
	}
	before := rec.transactions["adjust-stock"]
	for round := 0; rec.transactions["adjust-stock"]-before <= round*6; round++ {
		if round == 20 {
			t.Fatal("20 rounds of 6 adjustments at once never raced")
		}
		rec.as("adjust-stock")
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := httptest.NewRequest("POST", "/api/v1/inventory/items/BEANS-1/adjustments", strings.NewReader(`{"quantity":"1","reason":"received"}`))
				r.Header.Set("Authorization", "Bearer "+key)
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Idempotency-Key", fmt.Sprintf("race-%d-%d", round, i))
				w := httptest.NewRecorder()
				adjust.ServeHTTP(w, r)
				if w.Code != 200 {
					t.Errorf("adjust-stock at once: %d %s", w.Code, w.Body)
				}
			}()
		}
		wg.Wait()
		rec.as("")
		if t.Failed() {
			t.FailNow()
		}
	}
	// Records as they were written before views: a list reads them from
	// the table, several in one call.
	// A sale's figures wait for the first report below (the inventory's),
	// which applies them with the customer's debt.
	if got, body := call("add-sale", "POST", "/api/v1/sales/add", `{"invoice_code":"787878","customer_id":1,"sub_total_amount":"2.00","total_amount":"2.00","amount_paid":"0","invoice_type":"main","payment_type":"None","due_date":"2026-03-31"}`); got != 200 {
		t.Fatalf("add-sale: %d %s", got, body)
	}
	if n := testdb.WithoutViews(t, st); n < 10 {
		t.Fatalf("only %d records rewritten; the lists need two of each kind", n)
	}
	for _, l := range []struct{ function, path string }{{"list-customers", "/api/v1/customers"}, {"list-categories", "/api/v1/inventory/categories"},
		{"list-items", "/api/v1/inventory/items"}, {"list-expenses", "/api/v1/expenses"}, {"list-sales", "/api/v1/sales"},
		{"report-inventory", "/api/v1/reports/inventory"}, {"report-receivables", "/api/v1/reports/receivables"}} {
		shows := `"created_at"`
		if strings.HasPrefix(l.function, "report-") {
			// A change waiting for the report to apply.
			if got, body := call("adjust-stock", "POST", "/api/v1/inventory/items/BEANS-1/adjustments", `{"quantity":"1","reason":"received"}`); got != 200 {
				t.Fatalf("adjust-stock before %s: %d %s", l.function, got, body)
			}
			shows = `"items_count":2` // both items
			if l.function == "report-receivables" {
				shows = `"name":"Esi Mensah"` // the debtors, by their customers read from the table
			}
		}
		if got, body := call(l.function, "GET", l.path, ""); got != 200 || !strings.Contains(body, shows) {
			t.Fatalf("%s over records without views: %d %s", l.function, got, body)
		}
		// A page of one such record reads it alone, by GetItem.
		if !strings.HasPrefix(l.function, "report-") {
			if got, body := call(l.function, "GET", l.path+"?limit=1", ""); got != 200 || !strings.Contains(body, shows) {
				t.Fatalf("%s over one record without a view: %d %s", l.function, got, body)
			}
		}
	}
	// One of the two low items written again, with its view: the inventory
	// report reads the other alone from the table, by GetItem.
	if got, body := call("edit-item", "PUT", "/api/v1/inventory/items/BEANS-1", `{"minimum_qty_alert":"999"}`); got != 200 {
		t.Fatalf("edit-item: %d %s", got, body)
	}
	if got, body := call("report-inventory", "GET", "/api/v1/reports/inventory", ""); got != 200 || !strings.Contains(body, `"RICE-1"`) {
		t.Fatalf("report-inventory over one alert without a view: %d %s", got, body)
	}

	// Webhook endpoints: created (their secret written blind), edited,
	// disabled by the dispatcher (which records an event) and enabled again
	// (their queue restarted), rotated, replayed (the event's delivery
	// created, the queue woken), listed and deleted.
	endpoint := func(body string) string {
		t.Helper()
		var out struct {
			Data struct {
				WebhookEndpoint struct {
					ID string `json:"id"`
				} `json:"webhook_endpoint"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(body), &out); err != nil || out.Data.WebhookEndpoint.ID == "" {
			t.Fatalf("no endpoint id in %s", body)
		}
		return out.Data.WebhookEndpoint.ID
	}
	code, body := call("add-webhook-endpoint", "POST", "/api/v1/webhook-endpoints", `{"url":"https://hooks.example.com/e","enabled_events":["*"]}`)
	if code != 200 {
		t.Fatalf("add-webhook-endpoint: %d %s", code, body)
	}
	ep := "/api/v1/webhook-endpoints/" + endpoint(body)
	rec.as("retry-webhooks") // the dispatcher disables an endpoint failing for days
	if _, err := st.DisableEndpoint(ctx, a.ID, endpoint(body), "failing", time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	rec.as("")
	// A test send (its delivery recorded, the receiver unreachable here),
	// redelivered below.
	code, body = call("test-webhook-endpoint", "POST", ep+"/test", "")
	var tested struct {
		Data struct {
			Delivery struct {
				EventID string `json:"event_id"`
			} `json:"delivery"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &tested); code != 200 || err != nil || tested.Data.Delivery.EventID == "" {
		t.Fatalf("test-webhook-endpoint: %d %s", code, body)
	}
	for _, s := range []struct {
		function, method, path, body string
		want                         int
	}{
		{"list-webhook-endpoints", "GET", "/api/v1/webhook-endpoints", "", 200},
		{"get-webhook-endpoint", "GET", ep, "", 200},
		{"edit-webhook-endpoint", "PUT", ep, `{"description":"Orders"}`, 200},
		{"edit-webhook-endpoint", "PUT", ep, `{"status":"enabled"}`, 200},
		{"rotate-endpoint-secret", "POST", ep + "/rotate-secret", "", 200},
		{"replay-webhook-endpoint", "POST", ep + "/replay", `{"since":"` + time.Now().UTC().Add(-time.Minute).Format(business.TimeFormat) + `"}`, 200},
		{"list-endpoint-deliveries", "GET", ep + "/deliveries", "", 200},
		{"redeliver-endpoint-delivery", "POST", ep + "/deliveries/" + tested.Data.Delivery.EventID + "/redeliver", "", 200},
		{"delete-webhook-endpoint", "DELETE", ep, "", 200},
	} {
		got, body := call(s.function, s.method, s.path, s.body)
		if got != s.want {
			t.Fatalf("%s %s %s: %d, want %d: %s", s.function, s.method, s.path, got, s.want, body)
		}
		if s.function == "replay-webhook-endpoint" && strings.Contains(body, `"queued":0`) {
			t.Fatalf("the replay queued nothing: %s", body)
		}
	}
	// A replay of events whose deliveries to the endpoint have ended starts
	// each again, a new round of the delivery it has.
	code, body = call("add-webhook-endpoint", "POST", "/api/v1/webhook-endpoints", `{"url":"https://hooks.example.com/r","enabled_events":["*"]}`)
	if code != 200 {
		t.Fatalf("add-webhook-endpoint: %d %s", code, body)
	}
	replayed := endpoint(body)
	replay := `{"since":"` + time.Now().UTC().Add(-10*time.Minute).Format(business.TimeFormat) + `"}`
	for i := range 2 {
		if code, body := call("replay-webhook-endpoint", "POST", "/api/v1/webhook-endpoints/"+replayed+"/replay", replay); code != 200 || strings.Contains(body, `"queued":0`) {
			t.Fatalf("replay %d: %d %s", i+1, code, body)
		}
		rec.as("")
		ended, err := st.ListDeliveries(ctx, store.EndpointQueue(a.ID, replayed), "", 100, "")
		if err != nil || len(ended.Items) == 0 {
			t.Fatalf("the replay made no delivery (%v)", err)
		}
		for _, d := range ended.Items {
			_, err := st.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(st.Table()),
				Key:                       map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A#" + d.AccountID + "#DELIVERY#" + d.TransactionID}, "SK": &types.AttributeValueMemberS{Value: "DELIVERY"}},
				UpdateExpression:          aws.String("SET #st = :failed REMOVE " + store.IndexDue.PK + ", " + store.IndexDue.SK),
				ConditionExpression:       aws.String("attribute_exists(PK)"),
				ExpressionAttributeNames:  map[string]string{"#st": "state"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":failed": &types.AttributeValueMemberS{Value: business.DeliveryFailed}},
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if code, body := call("delete-webhook-endpoint", "DELETE", "/api/v1/webhook-endpoints/"+replayed, ""); code != 200 {
		t.Fatalf("delete-webhook-endpoint: %d %s", code, body)
	}

	// The webhook functions: a payment delivered to a receiver that fails
	// (deliver-webhooks), then its retry (retry-webhooks).
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	defer rc.Close()
	if err := st.SetWebhook(ctx, a.ID, business.Webhook{CallbackURL: rc.URL, CallbackSecret: "iam-secret-123456"}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../../webhook/testdata/stream-batch.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev events.DynamoDBEvent
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(raw), "{{ACCOUNT}}", a.ID)), &ev); err != nil {
		t.Fatal(err)
	}
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Millisecond}, testdb.Quiet())
	svc.Probe = time.Millisecond // the receiver's failures open its circuit: probe again at once
	rec.as("deliver-webhooks")
	if _, err := svc.HandleStream(ctx, ev); err != nil {
		t.Fatal(err)
	}
	rec.as("retry-webhooks")
	sweeper := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Millisecond}, testdb.Quiet())
	sweeper.SweepDelay = -time.Minute // the sales above are old enough
	if n, err := sweeper.Sweep(ctx); err != nil || n == 0 {
		t.Fatalf("the sweep recorded %d deliveries for the sales above (%v)", n, err)
	}
	// Attempts until a delivery has failed its schedule (the first attempt,
	// then its one retry), a few accounts' share at a time.
	var page store.Page[business.Delivery]
	for i := 0; i < 50 && len(page.Items) == 0; i++ {
		time.Sleep(20 * time.Millisecond)
		if err := svc.DispatchOnce(ctx); err != nil {
			t.Fatal(err)
		}
		rec.as("") // the test's own look, not the function's
		if page, err = st.ListDeliveries(ctx, a.ID, business.DeliveryFailed, 10, ""); err != nil {
			t.Fatal(err)
		}
		rec.as("retry-webhooks")
	}
	rec.as("")
	if len(page.Items) == 0 {
		t.Fatal("no delivery failed its schedule")
	}
	// A burst of events that owes the account's endpoints more than
	// webhook.InlineFanout deliveries: recorded as one fan-out job
	// (deliver-webhooks), expanded by the dispatcher (retry-webhooks).
	for range 2 {
		if _, err := st.CreateEndpoint(ctx, a.ID, business.Endpoint{URL: rc.URL, EnabledEvents: []string{"*"}}, business.NewEndpointSecret()); err != nil {
			t.Fatal(err)
		}
	}
	var burst events.DynamoDBEvent
	for i := range webhook.InlineFanout/2 + 1 {
		r := ev.Records[3] // the fixture's event insert, under ids of its own
		r.Change.NewImage = maps.Clone(r.Change.NewImage)
		r.Change.NewImage["SK"] = events.NewStringAttribute(fmt.Sprintf("evt_019c1a2b3c4d01234567%04d", i))
		r.Change.SequenceNumber = fmt.Sprintf("9%04d", i)
		burst.Records = append(burst.Records, r)
	}
	rec.as("deliver-webhooks")
	if resp, err := svc.HandleStream(ctx, burst); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("burst: %v, failures %+v", err, resp.BatchItemFailures)
	}
	rec.as("retry-webhooks")
	if err := svc.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	rec.as("")
	if jobs, err := st.FanoutJobs(ctx, a.ID, 10); err != nil || len(jobs) != 0 {
		t.Fatalf("fan-out jobs left after a pass: %+v (%v)", jobs, err)
	}

	// The dispatcher's other paths: a delivery due as deliveries were
	// before each account had a due partition of its own (moved there, its
	// account woken first), parks refused for a queue that changed since it
	// was read, an account's circuit closed by a probe with nothing to send
	// and by a success, a failed attempt whose record could not be saved.
	failed := page.Items[0]
	got, err := st.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.Table()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A#" + a.ID + "#DELIVERY#" + failed.TransactionID}, "SK": &types.AttributeValueMemberS{Value: "DELIVERY"}}})
	if err != nil || got.Item == nil {
		t.Fatalf("the failed delivery's item: %v", err)
	}
	legacy := maps.Clone(got.Item)
	legacy["PK"] = &types.AttributeValueMemberS{Value: "A#" + a.ID + "#DELIVERY#tx_legacy"}
	legacy["transaction_id"] = &types.AttributeValueMemberS{Value: "tx_legacy"}
	legacy["state"] = &types.AttributeValueMemberS{Value: business.DeliveryPending}
	legacy[store.IndexDue.PK] = &types.AttributeValueMemberS{Value: "DUE"}
	legacy[store.IndexDue.SK] = &types.AttributeValueMemberS{Value: "000000000001#tx_legacy"}
	if _, err := st.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.Table()), Item: legacy}); err != nil {
		t.Fatal(err)
	}
	q, err := st.FindQueue(ctx, a.ID)
	if err != nil || q.AccountID == "" {
		t.Fatalf("the account's queue: %+v %v", q, err)
	}
	stale := q
	stale.Gen--
	rec.as("retry-webhooks")
	if err := svc.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Park(ctx, stale, time.Now().Add(time.Hour)); !errors.Is(err, store.ErrNotClaimed) {
		t.Fatalf("a park of a queue read before it changed: %v", err)
	}
	if err := st.ParkEndpointQueue(ctx, store.Queue{AccountID: store.EndpointQueue(a.ID, "we_gone"), Gen: 1}); !errors.Is(err, store.ErrNotClaimed) {
		t.Fatalf("a park of a queue gone: %v", err)
	}
	if err := st.CloseCircuit(ctx, a.ID, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	if err := st.AttemptSucceeded(ctx, a.ID, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	if len(failed.Attempts) == 0 {
		t.Fatal("the failed delivery has no attempt")
	}
	_ = st.FailUnsavable(ctx, failed, store.Lease{}, failed.Attempts[len(failed.Attempts)-1]) // no lease: refused
	rec.as("")
	if got, err := st.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.Table()), ConsistentRead: aws.Bool(true), Key: map[string]types.AttributeValue{
		"PK": legacy["PK"], "SK": legacy["SK"]}}); err != nil || got.Item[store.IndexDue.PK] != nil && got.Item[store.IndexDue.PK].(*types.AttributeValueMemberS).Value == "DUE" {
		t.Fatalf("the legacy delivery is still in the legacy due partition (%v)", err)
	}

	// The apply-report-figures function: the figures items of a new
	// expense and of sales of two customers (their debts read in one
	// call), as the stream carries them.
	if got, body := call("add-expense", "POST", "/api/v1/expenses/add", `{"expense_type":"Fuel","expense_amount":"4","payment_method":"Cash","created_by":"Ama"}`); got != 200 {
		t.Fatalf("add-expense: %d %s", got, body)
	}
	for _, c := range []struct{ code, customer string }{{"797979", "1"}, {"808080", "3"}} {
		if got, body := call("add-sale", "POST", "/api/v1/sales/add", `{"invoice_code":"`+c.code+`","customer_id":`+c.customer+`,"sub_total_amount":"2.00","total_amount":"2.00","amount_paid":"0","invoice_type":"main","payment_type":"None","due_date":"2026-03-31"}`); got != 200 {
			t.Fatalf("add-sale: %d %s", got, body)
		}
	}
	batch := figuresBatch(t, st, a.ID)
	rec.as("apply-report-figures")
	if resp, err := lambdas.ApplyReportFigures(st, testdb.Quiet())(ctx, batch); err != nil || len(resp.BatchItemFailures) > 0 {
		t.Fatalf("apply-report-figures: %+v %v", resp, err)
	}
	rec.as("")

	// API keys: a scoped live key and the first test key (which makes the
	// account's test twin) created, listed, a settings change mirrored to
	// the twin and every key item, the scoped key revoked.
	created := func(body string) (id, secret string) {
		t.Helper()
		var out struct {
			Data struct {
				APIKey struct {
					ID  string `json:"id"`
					Key string `json:"key"`
				} `json:"api_key"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(body), &out); err != nil || out.Data.APIKey.Key == "" {
			t.Fatalf("no key in %s", body)
		}
		return out.Data.APIKey.ID, out.Data.APIKey.Key
	}
	code, body = call("create-api-key", "POST", "/api/v1/api-keys", `{"name":"Till","scopes":["sales:write"]}`)
	if code != 200 {
		t.Fatalf("create-api-key: %d %s", code, body)
	}
	till, _ := created(body)
	code, body = call("create-api-key", "POST", "/api/v1/api-keys", `{"name":"Tests","scopes":["*"],"mode":"test"}`)
	if code != 200 {
		t.Fatalf("create-api-key (test): %d %s", code, body)
	}
	_, testKey := created(body)
	for _, s := range []struct {
		function, method, path, body string
		want                         int
	}{
		{"list-api-keys", "GET", "/api/v1/api-keys", "", 200},
		{"update-settings", "PUT", "/api/v1/user/settings", `{"business_name":"IAM Shop Group"}`, 200},
		{"revoke-api-key", "POST", "/api/v1/api-keys/" + till + "/revoke", "", 200},
		{"revoke-api-key", "POST", "/api/v1/api-keys/" + till + "/revoke", "", 404},
		// A live endpoint: its secret (SECRET#<live id>) must outlive
		// every clearing of the test data.
		{"add-webhook-endpoint", "POST", "/api/v1/webhook-endpoints", `{"url":"https://hooks.example.com/live","enabled_events":["*"]}`, 200},
	} {
		if got, body := call(s.function, s.method, s.path, s.body); got != s.want {
			t.Fatalf("%s %s %s: %d, want %d: %s", s.function, s.method, s.path, got, s.want, body)
		}
	}
	liveSecrets := partition(t, st, store.SecretKeyPrefix+a.ID)
	if len(liveSecrets) < 2 {
		t.Fatalf("the live account has %d secret items, want its callback secret and its endpoint's", len(liveSecrets))
	}

	// Test data: the twin gets records of each kind, an endpoint and a
	// callback secret (SECRET#<twin id> items), then clear-test-data gives
	// the test key a fresh twin and purges the retired one whole.
	testData := func(invoice string) {
		t.Helper()
		for _, s := range []struct {
			function, method, path, body string
		}{
			{"add-customer", "POST", "/api/v1/customers/add", `{"name":"Test Ama"}`},
			{"add-category", "POST", "/api/v1/inventory/categories/add", `{"category_name":"Test grains"}`},
			{"add-item", "POST", "/api/v1/inventory/items/add", `{"item_code":"RICE-1","item_name":"Rice","category_id":1,"item_price":5,"quantity":10}`},
			{"add-expense", "POST", "/api/v1/expenses/add", `{"expense_type":"Rent","expense_amount":"10","payment_method":"Cash","created_by":"Ama"}`},
			{"add-sale", "POST", "/api/v1/sales/add", strings.Replace(strings.Replace(sale, "111111", invoice, 1), "100001", invoice, 1)},
			{"add-webhook-endpoint", "POST", "/api/v1/webhook-endpoints", `{"url":"https://hooks.example.com/test","enabled_events":["*"]}`},
			{"update-webhook-settings", "PUT", "/api/v1/user/webhook", `{"callback_url":"https://hooks.example.com/t","callback_secret":"iam-test-secret-0123456789"}`},
		} {
			if got, body := callWith(testKey, s.function, s.method, s.path, s.body); got != 200 {
				t.Fatalf("test key: %s %s %s: %d %s", s.function, s.method, s.path, got, body)
			}
		}
	}
	twin := business.TwinID(a.ID, 1)
	testData("555555")
	if n := len(partition(t, st, store.SecretKeyPrefix+twin)); n != 2 {
		t.Fatalf("the test twin has %d secret items, want its callback secret and its endpoint's", n)
	}
	if got, body := callWith(testKey, "clear-test-data", "POST", "/api/v1/test-data/clear", ""); got != 200 || !strings.Contains(body, `"purge_complete":true`) {
		t.Fatalf("clear-test-data: %d %s", got, body)
	}
	if left := itemsOf(t, st, twin); len(left) > 0 {
		t.Fatalf("the retired twin %s keeps %d items: %v", twin, len(left), left)
	}
	// A purge whose budget runs short stops at a record and its unique
	// values (reading which of them an earlier call left), as a clear
	// request does once its 2000 deletes are spent: called again with a
	// budget of 1 until it is done.
	testData("666666")
	rec.as("")
	retired, err := st.ClearTestData(ctx, a.ID)
	if err != nil || retired != business.TwinID(a.ID, 2) {
		t.Fatalf("clear %q %v", retired, err)
	}
	rec.as("clear-test-data")
	for i := 0; ; i++ {
		done, _, err := st.PurgeAccount(ctx, retired, 1)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		if i == 500 {
			t.Fatalf("%s not purged after %d calls", retired, i)
		}
	}
	rec.as("")
	if left := itemsOf(t, st, retired); len(left) > 0 {
		t.Fatalf("the retired twin %s keeps %d items: %v", retired, len(left), left)
	}
	shift.Store(int64(10 * time.Minute)) // past the retired twins' grace (api: retiredGrace)
	if got, body := callWith(testKey, "clear-test-data", "POST", "/api/v1/test-data/clear", ""); got != 200 {
		t.Fatalf("clear-test-data: %d %s", got, body)
	}
	purging, err := st.Purging(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range purging {
		if r.ID == twin || r.ID == retired {
			t.Errorf("%s, purged 10 minutes ago, is still on the purging list", r.ID)
		}
		if left := itemsOf(t, st, r.ID); len(left) > 0 {
			t.Errorf("the retired twin %s keeps %d items: %v", r.ID, len(left), left)
		}
	}
	if d := cmp.Diff(liveSecrets, partition(t, st, store.SecretKeyPrefix+a.ID)); d != "" {
		t.Fatalf("clearing the test data changed the live account's secrets:\n%s", d)
	}
	// The twins' secrets went by clear-test-data's own deletes, which the
	// policy check below judges against its Deny on SECRET#*.
	for _, tw := range []string{twin, retired} {
		if !slices.ContainsFunc(slices.Collect(maps.Values(rec.requests["clear-test-data"])), func(r ddbRequest) bool {
			return r.Action == "dynamodb:BatchWriteItem" && slices.Contains(r.LeadingKeys, store.SecretKeyPrefix+tw)
		}) {
			t.Fatalf("clear-test-data deleted no secret of %s", tw)
		}
	}
	// Self-service on the deliveries the webhook functions made.
	if len(page.Items) == 0 {
		t.Fatal("no delivery failed its schedule, to redeliver")
	}
	tx := page.Items[0].TransactionID
	for _, s := range []struct {
		function, method, path string
		want                   int
	}{
		{"redeliver-webhook", "POST", "/api/v1/user/webhook/deliveries/" + tx + "/redeliver", 200},
		{"rotate-api-key", "POST", "/api/v1/user/api-key/rotate", 200},
	} {
		if got, body := call(s.function, s.method, s.path, ""); got != s.want {
			t.Fatalf("%s: %d %s", s.function, got, body)
		}
	}

	granted := templatePolicies(t)
	for function, actions := range granted {
		if isDashboardFunction(logicalID(function)) {
			continue // their flow: TestDashboardIAMMatchesCode
		}
		if function == drainFunction {
			continue // its flow: TestIAMDrainsStreamFailures
		}
		if slices.Contains(invoiceFunctions, function) {
			continue // their flow: TestIAMInvoices
		}
		used := []string{}
		for a := range rec.used[function] {
			used = append(used, a)
		}
		sort.Strings(used)
		if d := cmp.Diff(actions, used); d != "" {
			t.Errorf("%s: template.yaml's policy and the calls the code makes differ (-granted +used):\n%s", function, d)
		}
	}
	// Each call, as IAM judges it (its partition keys, the attributes an
	// update names), is allowed by the function's policies and denied by
	// none: the conditions on dynamodb:LeadingKeys and dynamodb:Attributes
	// hold for what the code really does.
	statements := functionStatements(t)
	for function, reqs := range rec.requests {
		keys := slices.Sorted(maps.Keys(reqs))
		for _, k := range keys {
			if ok, why := permitted(t, statements[logicalID(function)], reqs[k]); !ok {
				t.Errorf("%s: template.yaml refuses %s: %s", function, reqs[k], why)
			}
		}
	}
	storeCoverage.flowDone(t, "api")
}

// templatePolicies returns, per function folder, the DynamoDB actions its
// policies in template.yaml (inline, and the template's managed policies it
// refers to) allow, sorted.
func templatePolicies(t *testing.T) map[string][]string {
	statements := functionStatements(t)
	out := map[string][]string{}
	entries, _ := os.ReadDir("../../../functions")
	for _, e := range entries {
		stmts, ok := statements[logicalID(e.Name())]
		if !ok {
			continue
		}
		actions := []string{}
		for _, s := range stmts {
			if s.Effect != "Allow" {
				continue
			}
			for _, a := range s.Actions {
				if strings.HasPrefix(a, "dynamodb:") {
					actions = append(actions, a)
				}
			}
		}
		sort.Strings(actions)
		out[e.Name()] = slices.Compact(actions) // an action may be allowed by more statements than one
	}
	return out
}

// keyItem is the table key of the item of the API key apiKey. The store
// keeps it unexported; its shape is the one the template's stamp statement
// names (KEY#*).
func keyItem(apiKey string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "KEY#" + business.HashAPIKey(apiKey)},
		"SK": &types.AttributeValueMemberS{Value: "KEY"},
	}
}

// unstamp takes the last use off apiKey's item, when the item exists, so
// that the next request with it stamps it again.
func unstamp(t *testing.T, st *store.Store, apiKey string) {
	t.Helper()
	_, err := st.Client().UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(st.Table()), Key: keyItem(apiKey),
		UpdateExpression:    aws.String("REMOVE last_used_at"),
		ConditionExpression: aws.String("attribute_exists(PK)"), // never make a key item
	})
	var cf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &cf) {
		t.Fatal(err)
	}
}

// stamped reports whether apiKey's item holds a last use, or is gone (the
// call rotated the key).
func stamped(t *testing.T, st *store.Store, apiKey string) bool {
	t.Helper()
	out, err := st.Client().GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(st.Table()), Key: keyItem(apiKey), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	_, ok := out.Item["last_used_at"]
	return out.Item == nil || ok
}

// partition returns the sort keys of the items of the table partition pk.
func partition(t *testing.T, st *store.Store, pk string) []string {
	t.Helper()
	out, err := st.Client().Query(context.Background(), &dynamodb.QueryInput{
		TableName: aws.String(st.Table()), KeyConditionExpression: aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	sks := []string{}
	for _, it := range out.Items {
		sks = append(sks, it["SK"].(*types.AttributeValueMemberS).Value)
	}
	sort.Strings(sks)
	return sks
}

// itemsOf returns the table keys of every item of account: its partitions
// A#<account> and A#<account>#…, and its secrets, SECRET#<account>.
func itemsOf(t *testing.T, st *store.Store, account string) []string {
	t.Helper()
	var keys []string
	pages := dynamodb.NewScanPaginator(st.Client(), &dynamodb.ScanInput{TableName: aws.String(st.Table()), ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		out, err := pages.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Items {
			pk := it["PK"].(*types.AttributeValueMemberS).Value
			if pk == "A#"+account || strings.HasPrefix(pk, "A#"+account+"#") || pk == store.SecretKeyPrefix+account {
				keys = append(keys, pk+" "+it["SK"].(*types.AttributeValueMemberS).Value)
			}
		}
	}
	return keys
}

// figuresBatch is the stream batch that carries the account's figures
// items waiting to be applied (their attributes are all strings).
func figuresBatch(t *testing.T, st *store.Store, account string) events.DynamoDBEvent {
	t.Helper()
	items, err := st.WaitingFigures(context.Background(), account)
	if err != nil || len(items) == 0 {
		t.Fatalf("no figures item waits (%v)", err)
	}
	var ev events.DynamoDBEvent
	for i, it := range items {
		img := map[string]events.DynamoDBAttributeValue{}
		for k, v := range it {
			img[k] = events.NewStringAttribute(v.(*types.AttributeValueMemberS).Value)
		}
		ev.Records = append(ev.Records, events.DynamoDBEventRecord{EventName: "INSERT",
			Change: events.DynamoDBStreamRecord{SequenceNumber: fmt.Sprint(i + 1), NewImage: img}})
	}
	return ev
}
