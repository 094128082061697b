package lambdas_test

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"bizdata/shared/api"
	"bizdata/shared/app/lambdas"
	"bizdata/shared/business"
	"bizdata/shared/dashboard"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestIAMSetsFiguresAside runs the path that sets aside a figures item that
// cannot be applied (store.park) under each function that applies figures:
// apply-report-figures (from the stream), report-summary,
// report-receivables and report-inventory (the items still waiting). Each
// sets one aside, and every call it makes, with its partition keys, is
// allowed by its policies in template.yaml: DynamoDB Local enforces no IAM,
// so a write the policy refuses shows only here.
func TestIAMSetsFiguresAside(t *testing.T) {
	rec := &iamRecorder{used: map[string]map[string]bool{}, requests: map[string]map[string]ddbRequest{}}
	st, _ := testdb.NewStore(t, rec.option)
	ctx := context.Background()
	a, key := testdb.NewAccount(t, st, "IAM Park", "IAMPARK1")
	unreadable := func(id string) {
		t.Helper()
		rec.as("")
		_, err := st.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.Table()), Item: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "A#" + a.ID + "#REPORT#PEND1"}, "SK": &types.AttributeValueMemberS{Value: "PEND#" + id},
			"type": &types.AttributeValueMemberS{Value: "figures"}, "account_id": &types.AttributeValueMemberS{Value: a.ID},
			"changes": &types.AttributeValueMemberS{Value: "not json"}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	setAside := func(function, id string) {
		t.Helper()
		rec.as("")
		if !slices.Contains(partition(t, st, "A#"+a.ID+"#REPORT"), "PARKED#"+id) {
			t.Fatalf("%s did not set %s aside", function, id)
		}
	}

	// A change whose figures apply waits beside each unreadable one: the
	// batch that fails together is applied again one item at a time.
	addExpense, err := lambdas.FunctionHandler(api.NewServer(st, testdb.Quiet(), 0), "add-expense")
	if err != nil {
		t.Fatal(err)
	}
	applicable := func() {
		t.Helper()
		rec.as("")
		r := httptest.NewRequest("POST", "/api/v1/expenses/add", strings.NewReader(`{"expense_type":"Rent","expense_amount":"10","payment_method":"Cash","created_by":"Ama"}`))
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		addExpense.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("add-expense: %d %s", w.Code, w.Body)
		}
	}

	applicable()
	unreadable("evt_1")
	batch := figuresBatch(t, st, a.ID)
	rec.as("apply-report-figures")
	if resp, err := lambdas.ApplyReportFigures(st, testdb.Quiet())(ctx, batch); err != nil || len(resp.BatchItemFailures) > 0 {
		t.Fatalf("apply-report-figures: %+v %v", resp, err)
	}
	setAside("apply-report-figures", "evt_1")

	applicable()
	unreadable("evt_2")
	srv := api.NewServer(st, testdb.Quiet(), 0)
	h, err := lambdas.FunctionHandler(srv, "report-summary")
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/api/v1/reports/summary", nil)
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	rec.as("report-summary")
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"complete":false`) {
		t.Fatalf("report-summary: %d %s", w.Code, w.Body)
	}
	setAside("report-summary", "evt_2")

	applicable()
	unreadable("evt_4")
	h, err = lambdas.FunctionHandler(srv, "report-receivables")
	if err != nil {
		t.Fatal(err)
	}
	r = httptest.NewRequest("GET", "/api/v1/reports/receivables", nil)
	r.Header.Set("Authorization", "Bearer "+key)
	w = httptest.NewRecorder()
	rec.as("report-receivables")
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("report-receivables: %d %s", w.Code, w.Body)
	}
	setAside("report-receivables", "evt_4")

	applicable()
	unreadable("evt_5")
	h, err = lambdas.FunctionHandler(srv, "report-inventory")
	if err != nil {
		t.Fatal(err)
	}
	r = httptest.NewRequest("GET", "/api/v1/reports/inventory", nil)
	r.Header.Set("Authorization", "Bearer "+key)
	w = httptest.NewRecorder()
	rec.as("report-inventory")
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("report-inventory: %d %s", w.Code, w.Body)
	}
	setAside("report-inventory", "evt_5")

	const email, password = "park@example.com", "correct horse battery"
	if err := st.CreateOwner(ctx, a.ID, business.Owner{Email: email, PasswordHash: business.HashPassword(password)}); err != nil {
		t.Fatal(err)
	}
	board := dashboard.New(st, srv, testdb.Quiet(), dashboard.Config{})
	f := newDashFlow(t, rec, board, srv.Handler(api.Routes))
	b := f.browser()
	if got := b.signIn(email, password); got != http.StatusOK {
		t.Fatalf("sign-in: %d", got)
	}
	// The overview shows the figures as last applied: it applies nothing,
	// so it sets nothing aside.
	unreadable("evt_3")
	if got, _ := b.get("/dashboard"); got != http.StatusOK {
		t.Fatalf("the overview: %d", got)
	}
	rec.as("")
	if p := partition(t, st, "A#"+a.ID+"#REPORT"); slices.Contains(p, "PARKED#evt_3") {
		t.Fatalf("%s set evt_3 aside: the overview applies no waiting figures", dashboard.FunctionPages)
	}

	statements := functionStatements(t)
	for _, function := range []string{"apply-report-figures", "report-summary", "report-receivables", "report-inventory"} {
		reqs := rec.requests[function]
		if !slices.ContainsFunc(slices.Collect(maps.Values(reqs)), func(r ddbRequest) bool {
			return r.Action != "dynamodb:GetItem" && slices.Contains(r.LeadingKeys, "A#"+a.ID+"#REPORT")
		}) {
			t.Errorf("%s wrote nothing in the report partition", function)
		}
		for _, k := range slices.Sorted(maps.Keys(reqs)) {
			if ok, why := permitted(t, statements[logicalID(function)], reqs[k]); !ok {
				t.Errorf("%s: template.yaml refuses %s: %s", function, reqs[k], why)
			}
		}
	}
	storeCoverage.flowDone(t, "figures set aside")
}
