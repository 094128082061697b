package streampoll

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
	"bizdata/shared/store"
	"bizdata/shared/testdb"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// waitingFigures reads the account's figures items still to be applied.
func waitingFigures(t *testing.T, st *store.Store, account string) []map[string]types.AttributeValue {
	t.Helper()
	items, err := st.WaitingFigures(context.Background(), account)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// TestReportFiguresFromTheStream: the apply-report-figures handler, fed by
// the table's stream as Lambda feeds it (its first batches failing, handed
// again), applies every change's figures without any report asking; then,
// with a report, the consumer and a stale copy of the waiting items all
// applying the same changes at once, each change is counted exactly once.
func TestReportFiguresFromTheStream(t *testing.T) {
	st, cfg := testdb.NewStreamStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, key := testdb.NewAccount(t, st, "Shop", "SHOPFIG")
	post := shopAPI(t, st, a.ID, key, "http://127.0.0.1:9/")
	post("/api/v1/customers/add", `{"name":"Ama"}`)
	for i := 0; i < 10; i++ {
		post("/api/v1/expenses/add", `{"expense_type":"Fuel","expense_amount":"1.00","payment_method":"Cash","created_by":"Ama"}`)
	}
	for _, code := range []string{"610001", "610002", "610003"} {
		post("/api/v1/sales/add", `{"invoice_code":"`+code+`","customer_id":1,"sub_total_amount":"5.00","total_amount":"5.00","amount_paid":"5.00","invoice_type":"pos","payment_type":"Cash","due_date":"2026-12-01"}`)
	}
	apply := lambdas.ApplyReportFigures(st, testdb.Quiet())
	var calls atomic.Int64
	flaky := func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		if calls.Add(1) <= 2 {
			var resp events.DynamoDBEventResponse
			for _, r := range ev.Records {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
			}
			return resp, nil
		}
		return apply(ctx, ev)
	}
	streams, err := app.NewStreams(ctx, cfg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	go Poll(ctx, st.Client(), streams, cfg.TableName, lambdas.IsFiguresInsert, flaky, MaximumRetryAttempts, testdb.Quiet())
	for deadline := time.Now().Add(30 * time.Second); len(waitingFigures(t, st, a.ID)) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d figures items still wait after %d handler calls", len(waitingFigures(t, st, a.ID)), calls.Load())
		}
	}
	today := time.Now().UTC().Format("2006-01-02")
	check := func(wantExpenses int64) {
		t.Helper()
		days, read, err := st.ReportDays(ctx, a.ID, today, today)
		if err != nil {
			t.Fatal(err)
		}
		f := days[today]
		if f.SalesCount != 3 || f.Invoiced != 1500 || f.Collected != 1500 || f.ByMethod["Cash"] != 1500 || f.Expenses != wantExpenses || f.ByType["Fuel"] != wantExpenses {
			t.Fatalf("today's figures %+v, want 3 sales of 15.00 collected in cash and %d cents of fuel", f, wantExpenses)
		}
		if read > 2 {
			t.Fatalf("the report read %d items", read)
		}
	}
	check(1000)

	// Five more changes, applied by everyone at once.
	for i := 0; i < 5; i++ {
		post("/api/v1/expenses/add", `{"expense_type":"Fuel","expense_amount":"1.00","payment_method":"Cash","created_by":"Ama"}`)
	}
	stale := waitingFigures(t, st, a.ID)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, _, err := st.ReportDays(ctx, a.ID, today, today); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := st.ApplyFigures(ctx, a.ID, stale); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	check(1500)
	if n := len(waitingFigures(t, st, a.ID)); n != 0 {
		t.Fatalf("%d figures items wait after the report", n)
	}
}
