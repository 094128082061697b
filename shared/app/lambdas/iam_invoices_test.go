package lambdas_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app/lambdas"
	"bizdata/shared/business"
	"bizdata/shared/hosted"
	"bizdata/shared/mail"
	"bizdata/shared/notices"
	"bizdata/shared/testdb"
	"bizdata/shared/testmail"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
)

// invoiceFunctions are the functions of the invoice the customer sees,
// whose flow is TestIAMInvoices.
var invoiceFunctions = []string{"create-invoice-link", "revoke-invoice-link", "get-sale-pdf", "invoice-page", "invoice-pdf", "send-notices"}

// TestIAMInvoices runs the paths of the invoice links, the public pages and
// the notices' schedule under their functions' identities: a link made,
// replaced and ended; the PDF; the public page and PDF by a token and an
// unknown one; and the send-notices runs that send a reminder (making the
// link of a sale that had none), fail to send one (its claim released),
// record an overdue notice, drop a paid sale's, find a notice already sent,
// and move one whose day has not begun where the account now is. Every
// action each function's policy grants is used, and every call is allowed.
func TestIAMInvoices(t *testing.T) {
	rec := &iamRecorder{used: map[string]map[string]bool{}, requests: map[string]map[string]ddbRequest{}}
	st, _ := testdb.NewStore(t, rec.option)
	ctx := context.Background()
	var shift atomic.Int64
	st.SetClock(func() time.Time { return time.Now().UTC().Add(time.Duration(shift.Load())) })
	a, key := testdb.NewAccount(t, st, "IAM Invoices", "IAMINV1")
	srv := api.NewServer(st, testdb.Quiet(), 0)
	call := func(function, method, path, body string) (int, string) {
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
		r.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		mine := slices.Contains(invoiceFunctions, function)
		if mine {
			unstamp(t, st, key) // so the call stamps its key's use, as TestIAMMatchesCode's do
			rec.as(function)
		}
		h.ServeHTTP(w, r)
		rec.as("")
		if mine && !stamped(t, st, key) {
			t.Fatalf("%s %s %s: the key's use was not stamped", function, method, path)
		}
		return w.Code, w.Body.String()
	}
	must := func(want int, function, method, path, body string) string {
		t.Helper()
		if got, resp := call(function, method, path, body); got != want {
			t.Fatalf("%s %s %s: %d, want %d: %s", function, method, path, got, want, resp)
		} else {
			return resp
		}
		return ""
	}
	page := func(function, token string) int {
		t.Helper()
		h, err := lambdas.HostedHandler(hosted.NewServer(st, testdb.Quiet()), function)
		if err != nil {
			t.Fatal(err)
		}
		path := "/invoices/" + token
		if function == "invoice-pdf" {
			path += "/pdf"
		}
		w := httptest.NewRecorder()
		rec.as(function)
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		rec.as("")
		return w.Code
	}

	day := func(n int) string { return time.Now().UTC().AddDate(0, 0, n).Format(business.DateFormat) }
	must(200, "add-customer", "POST", "/api/v1/customers/add", `{"name":"Ama","email":"ama@example.com"}`)
	sale := func(code, due, remind string) {
		t.Helper()
		must(200, "add-sale", "POST", "/api/v1/sales/add", fmt.Sprintf(`{"invoice_code":%q,"invoice_number":%[1]q,"customer_id":1,"sub_total_amount":"10.00","total_amount":"10.00","amount_paid":"0","invoice_type":"main","payment_type":"None","due_date":%q,"reminder_date":%q}`, code, due, remind))
	}
	sale("510001", day(0), day(1)) // reminded (its own link), then overdue
	sale("510002", day(0), day(1)) // reminded: the scheduler makes its link
	sale("510003", day(0), day(1)) // paid before its day: dropped
	sale("510004", day(5), day(3)) // its day has not begun once the account moved west

	// Links: made, replaced, the PDF, ended, ended again, made again.
	must(200, "create-invoice-link", "POST", "/api/v1/sales/510001/link", "")
	must(200, "create-invoice-link", "POST", "/api/v1/sales/510001/link", "{}")
	must(200, "get-sale-pdf", "GET", "/api/v1/sales/510001/pdf", "")
	must(200, "revoke-invoice-link", "DELETE", "/api/v1/sales/510001/link", "")
	must(404, "revoke-invoice-link", "DELETE", "/api/v1/sales/510001/link", "")
	var made struct {
		Data struct {
			Link struct{ URL string } `json:"link"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(must(200, "create-invoice-link", "POST", "/api/v1/sales/510001/link", "")), &made); err != nil {
		t.Fatal(err)
	}
	token := made.Data.Link.URL[strings.LastIndex(made.Data.Link.URL, "/")+1:]
	for _, c := range []struct {
		function, token string
		want            int
	}{
		{"invoice-page", token, 200}, {"invoice-pdf", token, 200},
		{"invoice-page", strings.Repeat("A", business.InvoiceTokenLength), 404},
		{"invoice-pdf", strings.Repeat("B", business.InvoiceTokenLength), 404},
	} {
		if got := page(c.function, c.token); got != c.want {
			t.Fatalf("%s: %d, want %d", c.function, got, c.want)
		}
	}
	must(200, "edit-sale", "PUT", "/api/v1/sales/edit/510003", `{"invoice_code":"510003","invoice_number":"510003","customer_id":1,"sub_total_amount":"10.00","total_amount":"10.00","amount_paid":"10.00","payment_type":"Cash"}`)

	inbox := testmail.Start(t)
	run := func(sender mail.Sender) (notices.Result, error) {
		t.Helper()
		runner := &notices.Runner{Store: st, Mail: sender, BaseURL: "https://invoices.example.com", Log: testdb.Quiet()}
		rec.as("send-notices")
		defer rec.as("")
		return runner.Run(ctx)
	}
	shift.Store(int64(24*time.Hour + time.Minute)) // day 1 has begun (UTC)
	// No mail server: each reminder's claim is released, and it is planned
	// again an hour on.
	if res, err := run(mail.NewSMTP("127.0.0.1:1", "invoices@example.com")); err == nil || res.Failed != 2 || res.Dropped != 1 {
		t.Fatalf("run without a mail server: %+v, %v; want 2 failed, 1 dropped", res, err)
	}
	working := mail.NewSMTP(inbox.SMTPAddr(), "invoices@example.com")
	shift.Store(int64(25*time.Hour + 2*time.Minute)) // refused ones are tried again an hour on
	if res, err := run(working); err != nil || res.Reminded != 2 {
		t.Fatalf("run: %+v, %v; want 2 reminded", res, err)
	}
	if res, err := run(working); err != nil || res.Overdue != 2 {
		t.Fatalf("run after the reminders: %+v, %v; want 2 overdue", res, err)
	}
	inbox.WaitFor(t, "ama@example.com", 2, 10*time.Second)
	// A notice already sent, in the schedule again (as when two runs race):
	// its marker says so, and it leaves the schedule unsent.
	rec.as("")
	at := business.NoticeInstant(day(1), nil)
	if _, err := st.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.Table()), Item: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "NOTICE#" + at.Format(business.DateFormat)},
		"SK": &types.AttributeValueMemberS{Value: at.Format(business.TimeFormat) + "#" + a.ID + "#510001#reminder#" + day(1)},
	}}); err != nil {
		t.Fatal(err)
	}
	if res, err := run(working); err != nil || res.Dropped != 1 {
		t.Fatalf("run over a notice already sent: %+v, %v; want 1 dropped", res, err)
	}
	// The account moves west: day 3 begins 11 hours after it does in UTC.
	// The clock goes to a minute past its UTC midnight (whatever the hour
	// now: later than every instant before, the new zone in effect).
	must(200, "update-settings", "PUT", "/api/v1/user/settings", `{"timezone":"Pacific/Pago_Pago"}`)
	midnight, _ := time.Parse(business.DateFormat, day(3))
	shift.Store(int64(time.Until(midnight.Add(time.Minute))))
	if res, err := run(working); err != nil || res.Deferred != 1 {
		t.Fatalf("run before day 2 begins where the account is: %+v, %v; want 1 deferred", res, err)
	}
	if got := len(inbox.Messages(t, "ama@example.com")); got != 2 {
		t.Fatalf("%d reminders sent, want 2", got)
	}

	granted := templatePolicies(t)
	statements := functionStatements(t)
	for _, function := range invoiceFunctions {
		used := slices.Sorted(maps.Keys(rec.used[function]))
		want := granted[function]
		sort.Strings(want)
		if d := cmp.Diff(want, used); d != "" {
			t.Errorf("%s: template.yaml's policy and the calls the code makes differ (-granted +used):\n%s", function, d)
		}
		for _, k := range slices.Sorted(maps.Keys(rec.requests[function])) {
			if ok, why := permitted(t, statements[logicalID(function)], rec.requests[function][k]); !ok {
				t.Errorf("%s: template.yaml refuses %s: %s", function, rec.requests[function][k], why)
			}
		}
	}
	storeCoverage.flowDone(t, "invoices")
}
