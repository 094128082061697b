package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/events"
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
				if r.current != "" {
					if r.used[r.current] == nil {
						r.used[r.current] = map[string]bool{}
					}
					for _, a := range actions {
						r.used[r.current][a] = true
					}
				}
				r.mu.Unlock()
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
// refusal that reads an Idempotency-Key, stock moves, renames) against
// DynamoDB Local and fails when a function calls a DynamoDB action its
// policy in template.yaml does not grant, or its policy grants one it never
// uses.
func TestIAMMatchesCode(t *testing.T) {
	rec := &iamRecorder{used: map[string]map[string]bool{}}
	st, _ := testdb.NewStore(t, rec.option)
	ctx := context.Background()
	a, key := testdb.NewAccount(t, st, "IAM Shop", "IAM1")
	srv := api.NewServer(st, testdb.Quiet(), 0)
	call := func(function, method, path, body string, headers ...string) (int, string) {
		t.Helper()
		h, err := app.FunctionHandler(srv, function)
		if err != nil {
			t.Fatal(err)
		}
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		r := httptest.NewRequest(method, path, rd)
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(headers); i += 2 {
			r.Header.Set(headers[i], headers[i+1])
		}
		w := httptest.NewRecorder()
		rec.as(function)
		h.ServeHTTP(w, r)
		rec.as("")
		return w.Code, w.Body.String()
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
		{"adjust-stock", "POST", "/api/v1/inventory/items/RICE-1/adjustments", `{"quantity":"-1","reason":"damaged"}`, idem("a1"), 200},
		{"adjust-stock", "POST", "/api/v1/inventory/items/RICE-1/adjustments", `{"quantity":"-1","reason":"damaged"}`, idem("a1"), 200},
		{"adjust-stock", "POST", "/api/v1/inventory/items/RICE-1/adjustments", `{}`, idem("a1"), 409},
		{"edit-item", "PUT", "/api/v1/inventory/items/BEANS-1", `{"quantity":"20"}`, nil, 200},
		{"list-movements", "GET", "/api/v1/inventory/items/RICE-1/movements?limit=2", "", nil, 200},
		{"list-events", "GET", "/api/v1/events?type=sale.*", "", nil, 200},
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
	}
	for _, s := range steps {
		if got, body := call(s.function, s.method, s.path, s.body, s.headers...); got != s.want {
			t.Fatalf("%s %s %s: %d, want %d: %s", s.function, s.method, s.path, got, s.want, body)
		}
	}
	// Records as they were written before views: a list reads them from
	// the table, several in one call.
	if n := testdb.WithoutViews(t, st); n < 10 {
		t.Fatalf("only %d records rewritten; the lists need two of each kind", n)
	}
	for _, l := range []struct{ function, path string }{{"list-customers", "/api/v1/customers"}, {"list-categories", "/api/v1/inventory/categories"},
		{"list-items", "/api/v1/inventory/items"}, {"list-expenses", "/api/v1/expenses"}, {"list-sales", "/api/v1/sales"},
		{"report-inventory", "/api/v1/reports/inventory"}, {"report-receivables", "/api/v1/reports/receivables"}} {
		shows := `"created_at"`
		if strings.HasPrefix(l.function, "report-") {
			shows = `"items_count":2` // both items
			if l.function == "report-receivables" {
				shows = `"name":"Esi"` // the debtors, by their customers read from the table
			}
		}
		if got, body := call(l.function, "GET", l.path, ""); got != 200 || !strings.Contains(body, shows) {
			t.Fatalf("%s over records without views: %d %s", l.function, got, body)
		}
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
	if _, err := st.DisableEndpoint(ctx, a.ID, endpoint(body), "failing", time.Now().UTC()); err != nil {
		t.Fatal(err)
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

	// The webhook functions: a payment delivered to a receiver that fails
	// (deliver-webhooks), then its retry (retry-webhooks).
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	defer rc.Close()
	if err := st.SetWebhook(ctx, a.ID, business.Webhook{CallbackURL: rc.URL, CallbackSecret: "iam-secret-123456"}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../webhook/testdata/stream-batch.json")
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
		if page, err = st.ListDeliveries(ctx, a.ID, business.DeliveryFailed, 10, ""); err != nil {
			t.Fatal(err)
		}
	}
	rec.as("")

	// The apply-report-figures function: the figures item of a new
	// expense, as the stream carries it.
	if got, body := call("add-expense", "POST", "/api/v1/expenses/add", `{"expense_type":"Fuel","expense_amount":"4","payment_method":"Cash","created_by":"Ama"}`); got != 200 {
		t.Fatalf("add-expense: %d %s", got, body)
	}
	batch := figuresBatch(t, st, a.ID)
	rec.as("apply-report-figures")
	if resp, err := app.ApplyReportFigures(st, testdb.Quiet())(ctx, batch); err != nil || len(resp.BatchItemFailures) > 0 {
		t.Fatalf("apply-report-figures: %+v %v", resp, err)
	}
	rec.as("")
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
		used := []string{}
		for a := range rec.used[function] {
			used = append(used, a)
		}
		sort.Strings(used)
		if d := cmp.Diff(actions, used); d != "" {
			t.Errorf("%s: template.yaml's policy and the calls the code makes differ (-granted +used):\n%s", function, d)
		}
	}
}

// templatePolicies returns, per function folder, the DynamoDB actions its
// policy in template.yaml grants, sorted.
func templatePolicies(t *testing.T) map[string][]string {
	tpl := loadTemplate(t)
	out := map[string][]string{}
	entries, _ := os.ReadDir("../../functions")
	for _, e := range entries {
		r, ok := tpl.Resources[logicalID(e.Name())]
		if !ok {
			continue
		}
		actions := []string{}
		policies, _ := r.Properties["Policies"].([]any)
		for _, p := range policies {
			doc, ok := p.(map[string]any)
			if !ok {
				continue
			}
			stmts, _ := doc["Statement"].([]any)
			for _, s := range stmts {
				s := s.(map[string]any)
				if s["Effect"] != "Allow" {
					continue
				}
				acts, _ := s["Action"].([]any)
				for _, a := range acts {
					if as := a.(string); strings.HasPrefix(as, "dynamodb:") {
						actions = append(actions, as)
					}
				}
			}
		}
		sort.Strings(actions)
		out[e.Name()] = actions
	}
	return out
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
