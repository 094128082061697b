package lambdas

import (
	"context"
	"log/slog"
	"sync"

	"bizdata/shared/app"
	"bizdata/shared/store"
	"bizdata/shared/streamimage"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// IsFiguresInsert reports whether a stream record is the insertion of a
// change's report figures: exactly what the apply-report-figures function's
// filter lets through (and the devserver's poller too).
func IsFiguresInsert(r events.DynamoDBEventRecord) bool {
	return streamimage.InsertedType(r) == store.FiguresType
}

// applyAccounts is how many accounts' figures one batch applies at once.
const applyAccounts = 8

// ApplyReportFigures returns the apply-report-figures function's handler:
// it applies each figures item of a batch to its account's report days
// (store.ApplyFigures; an item applied already, by a report that could not
// wait, is skipped). The items of an account that is gone (a test twin
// retired by a clear, whose figures the stream still carries for a while;
// the account is read consistently, so a miss is final) are logged and
// passed over: reported, they would hold every later record of the shard,
// every merchant's, until their retries ran out, and the purge deletes
// them with the rest of the twin. An account whose items could not be
// applied for a passing cause has them reported by sequence number, so the
// batch is handed again from the first of them (its other items, applied
// already, are skipped then).
func ApplyReportFigures(st *store.Store, log *slog.Logger) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		var resp events.DynamoDBEventResponse
		var order []string
		byAccount := map[string][]map[string]types.AttributeValue{}
		seqs := map[string][]string{}
		for _, r := range ev.Records {
			if !IsFiguresInsert(r) {
				continue
			}
			img := streamimage.Item(r.Change.NewImage)
			acct, _ := store.FiguresAccount(img)
			if _, seen := byAccount[acct]; !seen {
				order = append(order, acct)
			}
			byAccount[acct] = append(byAccount[acct], img)
			seqs[acct] = append(seqs[acct], r.Change.SequenceNumber)
		}
		// Accounts apply side by side (each its own sums: they never
		// contend), at most applyAccounts at a time; one account's items
		// apply in order, a few transactions of up to 40.
		failed := make([]bool, len(order))
		var wg sync.WaitGroup
		sem := make(chan struct{}, applyAccounts)
		for i, acct := range order {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				_, err := st.ApplyFigures(ctx, acct, byAccount[acct])
				if err != nil && webhook.Unprocessable(err) {
					log.WarnContext(ctx, "report figures not applied: the record cannot be processed; passed over", "account_id", acct, "items", len(byAccount[acct]), "error", err.Error())
					return
				}
				if err != nil {
					log.ErrorContext(ctx, "report figures not applied; the batch is handed again", "account_id", acct, "error", err.Error())
					failed[i] = true
				}
			})
		}
		wg.Wait()
		for i, acct := range order {
			if failed[i] {
				for _, s := range seqs[acct] {
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: s})
				}
			}
		}
		return resp, nil
	}
}

// RunApplyReportFigures starts the function fed by the table's stream
// (filtered to figures inserts). Like RunFunction, it returns only when the
// function cannot start.
func RunApplyReportFigures() error {
	st, _, err := storeFromEnv("apply-report-figures")
	if err != nil {
		return err
	}
	lambda.StartWithOptions(ApplyReportFigures(st, app.Logger()), lambda.WithEnableSIGTERM())
	return nil
}
