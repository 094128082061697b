package main

// The invoice documents: the round trips of the invoice link and PDF routes
// (part of the round-trips step), and the invoices step: what the hosted
// page and the PDFs read and take against a get-sale, and the PDF's render
// alone.

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
	"bizdata/shared/business"
	"bizdata/shared/hosted"
	"bizdata/shared/invoice"
	"bizdata/shared/store"

	"github.com/aws/aws-lambda-go/events"
)

// Sales of the invoice documents, in the loaded account.
const (
	invoiceShort = 710001 // an unpaid sale of 1 line
	invoiceLong  = 710030 // an unpaid sale of invoiceLongLines lines (2 pages)
	invoiceFirst = 710100 // corrRuns unpaid sales of 1 line, from here: each gets its first link
	invoiceRuns  = 41     // measured requests of each invoices case (after 3 warm-ups)

	invoiceLongLines = 30
)

var (
	invoiceSalesOnce sync.Once
	invoiceSalesErr  error
)

// invoiceSaleBody is an unpaid sale of n lines with the texts a customer's
// invoice shows (note, terms, issuer, colour), each line a 120-character
// description of a shop's words (seeded, the same every run).
func invoiceSaleBody(code, n int) map[string]any {
	words := rand.New(rand.NewPCG(uint64(n), 42))
	lines := make([]any, n)
	for i := range lines {
		lines[i] = map[string]any{"item_name": fmt.Sprintf("Kente %d", i+1), "description": descriptionText(words, 120),
			"unit_price": "12.50", "quantity": "2", "tax": "1.00"}
	}
	tot := fmt.Sprintf("%d.00", 26*n)
	return map[string]any{"invoice_code": fmt.Sprint(code), "invoice_number": fmt.Sprintf("INV-%d", code), "customer_id": 1,
		"sub_total_amount": fmt.Sprintf("%d.00", 25*n), "total_amount": tot, "amount_paid": "0", "payment_type": "None",
		"invoice_type": "main", "due_date": invoiceDue(30), "issued_by": "Bench", "invoice_colour": "#1b5e20",
		"invoice_note": "Thank you for your custom.", "invoice_terms": "Payment within 30 days by Mobile Money or bank transfer.", "items": lines}
}

// invoiceDue is the date days from today (UTC), so that an unpaid sale due
// then has a notice to schedule whenever the bench runs.
func invoiceDue(days int) string {
	return time.Now().UTC().AddDate(0, 0, days).Format(business.DateFormat)
}

// addInvoiceSales adds the invoice documents' sales to the loaded account,
// once whichever step needs them first.
func (b *bench) addInvoiceSales() error {
	invoiceSalesOnce.Do(func() { invoiceSalesErr = b.postInvoiceSales() })
	return invoiceSalesErr
}

// postInvoiceSales is addInvoiceSales' work: the two sales whose documents
// are measured, and those that get their first link.
func (b *bench) postInvoiceSales() error {
	for _, s := range []struct{ code, lines int }{{invoiceShort, 1}, {invoiceLong, invoiceLongLines}} {
		if err := b.post("/api/v1/sales/add", invoiceSaleBody(s.code, s.lines)); err != nil {
			return err
		}
	}
	for i := range corrRuns {
		if err := b.post("/api/v1/sales/add", invoiceSaleBody(invoiceFirst+i, 1)); err != nil {
			return err
		}
	}
	return nil
}

// invoiceTrips measures the invoice link and PDF routes in a table of their
// own, on the invoice sales of the loaded account, and marks them covered.
func (b *bench) invoiceTrips(covered map[string]bool) error {
	if err := b.addInvoiceSales(); err != nil {
		return err
	}
	if err := b.warmKey(); err != nil {
		return err
	}
	link := func(code int) string { return fmt.Sprintf("/api/v1/sales/%d/link", code) }
	makeLink := func() error {
		_, err := b.invoke("create-invoice-link", "POST", link(invoiceShort), "", nil)
		return err
	}
	b.printf("### Invoice links and PDFs\n\nThe invoice link and PDF routes through the Lambda function with the API key cache warm, on unpaid sales of the loaded account (the PDF's of 1 line); each case made %d times, the typical run reported (a revoke's link made before each run, uncounted). Target: at most 2 sequential for the writes (the sale read, then the transaction of the sale and its link's lookup items); 1 for the PDF (the sale's Query and the account's GetItem in parallel). The hosted page and PDF, whose requests carry no key, are in the section Invoice page and PDF.\n\n", corrRuns)
	b.printf(tripsTableHead)
	cases := []struct {
		function, what, method string
		path                   func(i int) string
		before                 func() error
		max                    int
	}{
		{"create-invoice-link", "a sale's first link", "POST", func(i int) string { return link(invoiceFirst + i) }, b.warmKey, 2},
		{"create-invoice-link", "replacing the sale's link (the old one's lookup item deleted)", "POST", func(int) string { return link(invoiceShort) }, makeLink, 2},
		{"revoke-invoice-link", "the sale's link", "DELETE", func(int) string { return link(invoiceShort) }, makeLink, 2},
		{"get-sale-pdf", "a sale of 1 line", "GET", func(int) string { return fmt.Sprintf("/api/v1/sales/%d/pdf", invoiceShort) }, b.warmKey, 1},
	}
	for _, c := range cases {
		covered[c.function] = true
		typical, differed, err := b.typicalRunAfter(corrRuns, c.before, func(i int) error {
			_, err := b.invoke(c.function, c.method, c.path(i), "", nil)
			return err
		})
		if err != nil {
			return fmt.Errorf("%s (%s): %w", c.function, c.what, err)
		}
		b.printTripRow(c.function, c.what, c.method, typical, differed, fmt.Sprintf("<= %d", c.max), verdict(typical.depth <= c.max))
	}
	b.printf("\n")
	return nil
}

// docShop serves the invoice documents through Lambda functions of their
// own, on a store of the run's table whose client counts calls and items
// read.
type docShop struct {
	api      *api.Server
	pages    *hosted.Server
	spans    store.Calls
	reads    atomic.Int64
	adapters adapterCache
	key      string
}

// docRequest is one request of the invoices step, and what it answered.
type docRequest struct {
	function, path string
	withKey        bool
	status         int
}

// invoke serves one request through its function (API or hosted) and
// returns its body, the time it took and what it cost DynamoDB.
func (s *docShop) invoke(r docRequest) ([]byte, time.Duration, reqCost, error) {
	h, err := lambdas.HostedHandler(s.pages, r.function)
	if _, isHosted := hosted.RouteByFunction(r.function); !isHosted {
		h, err = lambdas.FunctionHandler(s.api, r.function)
	}
	if err != nil {
		return nil, 0, reqCost{}, err
	}
	ev := gatewayEvent("GET", r.path, "")
	if r.withKey {
		ev.Headers["authorization"] = "Bearer " + s.key
	}
	reads, mark := s.reads.Load(), s.spans.Mark()
	start := time.Now()
	res, err := s.adapters.get(r.function, h).ProxyWithContext(context.Background(), ev)
	d := time.Since(start)
	calls, depth := s.spans.Since(mark)
	cost := reqCost{reads: int(s.reads.Load() - reads), calls: calls, depth: depth}
	if err != nil {
		return nil, d, cost, err
	}
	if res.StatusCode != r.status {
		return nil, d, cost, fmt.Errorf("%s: %d, want %d", r.function, res.StatusCode, r.status)
	}
	body, err := responseBytes(res)
	return body, d, cost, err
}

// pdfPages counts the page objects of a PDF as fpdf writes them (a page
// tree's own dictionary is "/Type /Pages"): enough to label a row, where the
// tests parse the file.
func pdfPages(pdf []byte) int {
	return bytes.Count(pdf, []byte("/Type /Page")) - bytes.Count(pdf, []byte("/Type /Pages"))
}

// pagesText is "1 page" or "n pages" of a PDF.
func pagesText(pdf []byte) string {
	if n := pdfPages(pdf); n != 1 {
		return fmt.Sprintf("%d pages", n)
	}
	return "1 page"
}

// responseBytes is the body of res, decoded when the adapter sent it as
// base64 (a PDF).
func responseBytes(res events.APIGatewayV2HTTPResponse) ([]byte, error) {
	if res.IsBase64Encoded {
		return base64.StdEncoding.DecodeString(res.Body)
	}
	return []byte(res.Body), nil
}

// docRun is one case measured: each run's time and the get-sale's after it,
// what the last run cost and answered.
type docRun struct {
	times, gets []time.Duration
	cost        reqCost
	differed    int    // runs whose cost was not the last's
	body        []byte // the last run's answer
}

// measure makes request do warm+runs times, each followed by a get-sale.
func (s *docShop) measure(do func() ([]byte, time.Duration, reqCost, error), warm, runs int) (docRun, error) {
	var out docRun
	get := docRequest{"get-sale", "/api/v1/sales/100042", true, http.StatusOK}
	var costs []reqCost
	for i := 0; i < warm+runs; i++ {
		body, d, cost, err := do()
		if err != nil {
			return out, err
		}
		_, g, _, err := s.invoke(get)
		if err != nil {
			return out, err
		}
		if i < warm {
			continue
		}
		out.times, out.gets, out.body = append(out.times, d), append(out.gets, g), body
		costs = append(costs, cost)
	}
	out.cost = costs[len(costs)-1]
	for _, c := range costs {
		if c != out.cost {
			out.differed++
		}
	}
	return out, nil
}

// ratio formats p's percentile of the run's times against its get-sales'.
func (r docRun) ratio(p float64) string {
	return fmt.Sprintf("%.1f", float64(percentile(r.times, p))/float64(percentile(r.gets, p)))
}

// invoicePages reports what the hosted invoice page, its PDF and the API's
// PDF read and take, against a get-sale of the loaded account in the same
// run; what a token that opens nothing costs; and the PDF's render alone.
func (b *bench) invoicePages() error {
	if err := b.loaded(); err != nil {
		return err
	}
	if err := b.addInvoiceSales(); err != nil {
		return err
	}
	s := &docShop{key: b.key}
	st, err := app.NewStore(b.ctx, b.cfg, s.spans.Option(), countReads(&s.reads))
	if err != nil {
		return err
	}
	s.api, s.pages = api.NewServer(st, b.quiet, time.Hour), hosted.NewServer(st, b.quiet)
	tokens := map[int]string{}
	for _, code := range []int{invoiceShort, invoiceLong} {
		res, err := b.invoke("create-invoice-link", "POST", fmt.Sprintf("/api/v1/sales/%d/link", code), "", nil)
		if err != nil {
			return err
		}
		url := answerField([]byte(res.Body), "link", "url")
		if url == "" {
			return fmt.Errorf("create-invoice-link: no link.url in %s", res.Body)
		}
		tokens[code] = url[strings.LastIndex(url, "/")+1:]
	}
	unknown, _ := business.NewInvoiceToken()
	longPDF := "/invoices/" + tokens[invoiceLong] + "/pdf"
	cases := []struct {
		what string
		req  docRequest
	}{
		{"hosted page, sale of 1 line", docRequest{"invoice-page", "/invoices/" + tokens[invoiceShort], false, http.StatusOK}},
		{fmt.Sprintf("hosted page, sale of %d lines", invoiceLongLines), docRequest{"invoice-page", "/invoices/" + tokens[invoiceLong], false, http.StatusOK}},
		{"hosted PDF, sale of 1 line", docRequest{"invoice-pdf", "/invoices/" + tokens[invoiceShort] + "/pdf", false, http.StatusOK}},
		{fmt.Sprintf("hosted PDF, sale of %d lines", invoiceLongLines), docRequest{"invoice-pdf", longPDF, false, http.StatusOK}},
		{"API PDF, sale of 1 line", docRequest{"get-sale-pdf", fmt.Sprintf("/api/v1/sales/%d/pdf", invoiceShort), true, http.StatusOK}},
		{fmt.Sprintf("API PDF, sale of %d lines", invoiceLongLines), docRequest{"get-sale-pdf", fmt.Sprintf("/api/v1/sales/%d/pdf", invoiceLong), true, http.StatusOK}},
		{"hosted page, a random well-formed token (opens nothing: 404)", docRequest{"invoice-page", "/invoices/" + unknown, false, http.StatusNotFound}},
	}
	b.printf("## Invoice page and PDF\n\nWhat a customer opens, and the API's PDF, through each route's Lambda function (API Gateway v2 event -> httpadapter), on unpaid sales of the loaded account (note, terms, colour; each line's description 120 characters), links made by the API; each case made %d times after 3 warm-ups, each request followed by a get-sale (`/api/v1/sales/100042`) of the same account through its function on the same client, the ratios of the case's percentile to the get-sales'. Calls and items read are the last run's (items: a Query's scanned items, a GetItem's found item); a token is one consistent GetItem of its lookup item, then the sale's Query and the account's GetItem in parallel; a token that opens nothing stops after its one read. Bytes are the answer's body (the PDF's file).\n\n", invoiceRuns)
	b.printf("| function | case | calls | sequential round trips | items read | runs that cost otherwise | p50 ÷ get-sale | p95 ÷ get-sale | p50 | bytes |\n|---|---|---|---|---|---|---|---|---|---|\n")
	var long docRun
	for _, c := range cases {
		r, err := s.measure(func() ([]byte, time.Duration, reqCost, error) { return s.invoke(c.req) }, 3, invoiceRuns)
		if err != nil {
			return fmt.Errorf("%s: %w", c.what, err)
		}
		what := c.what
		if c.req.path == longPDF {
			long = r
		}
		if c.req.function != "invoice-page" && c.req.status == http.StatusOK {
			what += " (" + pagesText(r.body) + ")"
		}
		b.printf("| %s | %s | %d | %d | %d | %d | %s | %s | %.1f ms | %s |\n", c.req.function, what, r.cost.calls, r.cost.depth, r.cost.reads,
			r.differed, r.ratio(0.5), r.ratio(0.95), millis(median(r.times)), thousands(len(r.body)))
	}
	doc, err := st.FindInvoiceByToken(b.ctx, tokens[invoiceLong])
	if err != nil {
		return err
	}
	view := invoice.ViewOf(doc.Sale.Sale, doc.Account, doc.Timezones, st.Now())
	render, err := s.measure(func() ([]byte, time.Duration, reqCost, error) {
		start := time.Now()
		pdf, err := invoice.PDF(view)
		return pdf, time.Since(start), reqCost{}, err
	}, 3, invoiceRuns)
	if err != nil {
		return err
	}
	b.printf("| none | the %d-line sale's PDF rendered alone (invoice.PDF of the sale as read; %s) | 0 | 0 | 0 | 0 | %s | %s | %.1f ms | %s |\n\n",
		invoiceLongLines, pagesText(render.body), render.ratio(0.5), render.ratio(0.95), millis(median(render.times)), thousands(len(render.body)))
	b.printf("The render alone is %.0f%% of the %d-line hosted PDF's p50 (each against its own get-sales).\n\n", 100*float64(median(render.times))/float64(median(long.times))*float64(median(long.gets))/float64(median(render.gets)), invoiceLongLines)
	return nil
}
