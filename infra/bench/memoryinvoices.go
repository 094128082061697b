package main

// The memory step's plans of the invoice functions: the link routes, the
// API's PDF, the hosted page and PDF (no key), and the scheduled
// send-notices with a Mailpit of its own.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/notices"

	"github.com/aws/aws-lambda-go/events"
)

// Sales of the invoice plans, in the memory step's shop.
const (
	memDocShort   = 720001 // 1 line: the PDFs' and the hosted page's ordinary requests
	memDocLong    = 720030 // invoiceLongLines lines
	memRelinked   = 720100 // its link replaced
	memFirstLink  = 720110 // from here, sales that get their first link
	memRevoked    = 720200 // from here, sales whose link is revoked
	memNoticeDays = 30     // a reminded sale's due date, days after today

	memNoticeSales = 730001 // from here, send-notices' sales, in an account of its own
	// memNoticeMost is the largest run's reminders: 5 for each of a run's
	// workers. A run's most (notices.MaxPerRun) holds no more at once, and
	// on a busy DynamoDB Local outlasts the function's timeout.
	memNoticeMost = 5 * notices.Workers
)

var (
	memDocsOnce  sync.Once
	memDocTokens map[string]string // the hosted routes' tokens: "short", "long", "big"
	memDocsErr   error
)

// invoicePlan is the plan of one of the invoice functions over the shop s;
// ok is false for any other.
func (b *bench) invoicePlan(name string, s *memShop, deadline time.Duration) (fnPlan, bool, error) {
	sale := func(code, lines int) error {
		_, err := s.request(s.key, "POST", "/api/v1/sales/add", invoiceSaleBody(code, lines))
		return err
	}
	link := func(code string) string { return "/api/v1/sales/" + code + "/link" }
	keyed := func(method, path string, want int) gatewayRequest {
		return gatewayRequest{method: method, path: path, key: func() string { return s.key }, want: want}
	}
	tooLarge := func(r gatewayRequest, want int) gatewayRequest {
		r.body, r.want = overLimit(), want
		return r
	}
	switch name {
	case "create-invoice-link": // by turns a sale's first link and the replacement of one
		if err := sale(memRelinked, 1); err != nil {
			return fnPlan{}, true, err
		}
		if _, err := s.request(s.key, "POST", link(fmt.Sprint(memRelinked)), nil); err != nil {
			return fnPlan{}, true, err
		}
		first := make([]gatewayRequest, 3)
		for i := range first {
			if err := sale(memFirstLink+i, 1); err != nil {
				return fnPlan{}, true, err
			}
			first[i] = keyed("POST", link(fmt.Sprint(memFirstLink+i)), 200)
		}
		replace := keyed("POST", link(fmt.Sprint(memRelinked)), 200)
		return b.gatewayPlan(name, deadline, first[0], []gatewayRequest{first[1], replace, first[2], replace}, tooLarge(replace, 413)), true, nil
	case "revoke-invoice-link": // each of a sale of its own with a link: a sale without one is 404
		var revokes []gatewayRequest
		for i := range 6 {
			code := fmt.Sprint(memRevoked + i)
			if err := sale(memRevoked+i, 1); err != nil {
				return fnPlan{}, true, err
			}
			if _, err := s.request(s.key, "POST", link(code), nil); err != nil {
				return fnPlan{}, true, err
			}
			revokes = append(revokes, keyed("DELETE", link(code), 200))
		}
		return b.gatewayPlan(name, deadline, revokes[0], revokes[1:5], tooLarge(revokes[5], 413)), true, nil
	case "get-sale-pdf", "invoice-page", "invoice-pdf":
	default:
		return fnPlan{}, false, nil
	}
	memDocsOnce.Do(func() { memDocTokens, memDocsErr = memDocs(s, sale, link) })
	if memDocsErr != nil {
		return fnPlan{}, true, memDocsErr
	}
	// By turns the 1-line and the 30-line sale, the largest the shop's
	// 100-line sale; a GET never reads a body.
	doc := func(which string) gatewayRequest {
		code := map[string]string{"short": fmt.Sprint(memDocShort), "long": fmt.Sprint(memDocLong), "big": s.bigSale}[which]
		switch name {
		case "get-sale-pdf":
			return keyed("GET", "/api/v1/sales/"+code+"/pdf", 200)
		case "invoice-pdf":
			return gatewayRequest{method: "GET", path: "/invoices/" + memDocTokens[which] + "/pdf", want: 200}
		}
		return gatewayRequest{method: "GET", path: "/invoices/" + memDocTokens[which], want: 200}
	}
	ordinary := []gatewayRequest{doc("short"), doc("long"), doc("short"), doc("long")}
	return b.gatewayPlan(name, deadline, doc("short"), ordinary, doc("big"), tooLarge(doc("short"), 200)), true, nil
}

// memDocs adds the documents' sales to the shop and returns the hosted
// routes' tokens of their links and of the 100-line sale's.
func memDocs(s *memShop, sale func(code, lines int) error, link func(code string) string) (map[string]string, error) {
	if err := sale(memDocShort, 1); err != nil {
		return nil, err
	}
	if err := sale(memDocLong, invoiceLongLines); err != nil {
		return nil, err
	}
	tokens := map[string]string{}
	for which, code := range map[string]string{"short": fmt.Sprint(memDocShort), "long": fmt.Sprint(memDocLong), "big": s.bigSale} {
		out, err := s.request(s.key, "POST", link(code), nil)
		if err != nil {
			return nil, err
		}
		url, _ := out["link"].(map[string]any)["url"].(string)
		if url == "" {
			return nil, fmt.Errorf("create-invoice-link: no link.url in %v", out)
		}
		tokens[which] = url[strings.LastIndex(url, "/")+1:]
	}
	return tokens, nil
}

// noticesPlan is send-notices' plan: scheduled runs in the run's table, each
// after sales of an account of the step's own whose notices are due at once
// (a reminder_date of today in the account's zone, for customers with an
// email address; or a due_date of yesterday, whose overdue notice falls
// today), sending to a Mailpit of its own over SMTP. Cold: 1 reminder;
// ordinary: 5 reminders and 5 overdue notices; the largest memNoticeMost
// reminders.
func (b *bench) noticesPlan() (fnPlan, error) {
	web, err := freePort()
	if err != nil {
		return fnPlan{}, err
	}
	smtp, err := freePort()
	if err != nil {
		return fnPlan{}, err
	}
	stop, err := startScript("infra/mailpit/start.sh", strconv.Itoa(web), strconv.Itoa(smtp))
	if err != nil {
		return fnPlan{}, fmt.Errorf("start Mailpit: %w", err)
	}
	shop := &noticeShop{b: b, inbox: fmt.Sprintf("http://127.0.0.1:%d", web)}
	if err := shop.open(); err != nil {
		stop()
		return fnPlan{}, err
	}
	p := fnPlan{cold: shop.run(1, 0), deadline: time.Minute, stop: stop, // the template's Timeout
		env: []string{"PUBLIC_BASE_URL=https://invoices.bench.example.com", fmt.Sprintf("SMTP_ADDR=127.0.0.1:%d", smtp), "MAIL_FROM=billing@bench.example.com"}}
	for range 4 {
		p.sequence = append(p.sequence, asOrdinary(shop.run(5, 5)))
	}
	p.sequence = append(p.sequence, shop.run(memNoticeMost, 0))
	return p, nil
}

// noticeShop is send-notices' account, and the Mailpit its reminders go to.
type noticeShop struct {
	b          *bench
	shop       *memShop // its account and key, and a handler to add its sales
	account    business.Account
	inbox      string // Mailpit's web API
	sales      int
	sentBefore int
}

// open makes the account and its customers, each with an email address.
func (n *noticeShop) open() error {
	var err error
	n.shop = &memShop{h: n.b.allRoutes()}
	n.account, n.shop.key, err = createAccount(n.b.ctx, n.b.store, "Notices Shop", fmt.Sprintf("NOTICE%d", time.Now().UnixNano()%1e6))
	if err != nil {
		return err
	}
	for i := range 3 {
		if _, err := n.shop.request(n.shop.key, "POST", "/api/v1/customers/add", map[string]any{"name": fmt.Sprintf("Customer %d", i),
			"email": fmt.Sprintf("customer%d@shop.bench.example.com", i)}); err != nil {
			return err
		}
	}
	return nil
}

// run is a scheduled event, sent once the account has reminders more sales
// whose reminder is due and overdue more whose overdue notice is due. Its
// answer must be a success that sent one email for each reminder and left
// none of the account's notices due.
func (n *noticeShop) run(reminders, overdue int) fnEvent {
	return fnEvent{
		event: func() (any, error) {
			zone := time.UTC // a new account's, until its owner sets one
			if n.account.Timezone != "" {
				var err error
				if zone, err = business.LoadTimezone(n.account.Timezone); err != nil {
					return nil, err
				}
			}
			today := time.Now().In(zone)
			first := n.sales
			n.sales += reminders + overdue
			err := parallel(reminders+overdue, func(i int) error {
				body := invoiceSaleBody(memNoticeSales+first+i, 1)
				body["customer_id"] = (first+i)%3 + 1
				if i < reminders {
					body["reminder_date"], body["due_date"] = today.Format(business.DateFormat), today.AddDate(0, 0, memNoticeDays).Format(business.DateFormat)
				} else {
					body["due_date"] = today.AddDate(0, 0, -1).Format(business.DateFormat)
				}
				_, err := n.shop.request(n.shop.key, "POST", "/api/v1/sales/add", body)
				return err
			})
			if err == nil {
				n.sentBefore, err = n.received()
			}
			if err != nil {
				return nil, fmt.Errorf("notices due: %w", err)
			}
			return events.EventBridgeEvent{Version: "0", DetailType: "Scheduled Event", Source: "aws.events", Time: time.Now().UTC(), Detail: json.RawMessage("{}")}, nil
		},
		check: func(answer []byte) error {
			sent, err := n.received()
			if err != nil {
				return err
			}
			left, err := n.b.store.DueNotices(n.b.ctx, time.Now(), notices.MaxPerRun*2)
			if err != nil {
				return err
			}
			mine := 0
			for _, d := range left {
				if d.Account == n.account.ID {
					mine++
				}
			}
			if string(answer) != "null" || sent-n.sentBefore != reminders || mine != 0 {
				return fmt.Errorf("run with %d reminders and %d overdue notices due sent %d emails, left %d due and answered %.300s",
					reminders, overdue, sent-n.sentBefore, mine, answer)
			}
			return nil
		},
	}
}

// received is how many messages Mailpit holds.
func (n *noticeShop) received() (int, error) {
	res, err := http.Get(n.inbox + "/api/v1/messages?limit=1")
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	var m struct {
		Total int `json:"total"`
	}
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil || res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("the messages in Mailpit: %d %v", res.StatusCode, err)
	}
	return m.Total, nil
}
