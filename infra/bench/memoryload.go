package main

// The memory step's records, and the work of deliver-webhooks and
// retry-webhooks.

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/webhook"

	"github.com/aws/aws-lambda-go/events"
)

// memoryRecords makes sure the records the requests name exist and every
// list has at least 200: the load step's records, or a load of 200 of each,
// customers and categories topped up to 200, and 200 delivered webhooks
// (txn_mem_000...) to redeliver, whose median PutItem time it returns;
// webhooks go to url.
func (b *bench) memoryRecords(url string) (time.Duration, error) {
	if code, _, err := b.request("GET", "/api/v1/sales/100042", nil); code == http.StatusNotFound {
		if err := b.load(200, 200, 200); err != nil {
			return 0, err
		}
	} else if err != nil {
		return 0, err
	}
	for _, l := range []struct{ path, key, field string }{{"/api/v1/customers", "customers", "name"}, {"/api/v1/inventory/categories", "categories", "category_name"}} {
		_, out, err := b.request("GET", l.path+"?limit=200", nil)
		if err != nil {
			return 0, err
		}
		have, _ := out["data"].(map[string]any)[l.key].([]any)
		if err := parallel(200-len(have), func(i int) error {
			_, _, err := b.request("POST", l.path+"/add", map[string]any{l.field: fmt.Sprintf("Memory %d", i)})
			return err
		}); err != nil {
			return 0, err
		}
	}
	now := time.Now().UTC()
	var puts []time.Duration
	for i := range 200 {
		tx := fmt.Sprintf("txn_mem_%03d", i)
		start := time.Now()
		if _, err := b.store.CreateDelivery(b.ctx, business.Delivery{AccountID: b.acct.ID, TransactionID: tx, WebhookID: "msg_" + tx,
			Payload: []byte(`{"amount":"1.00"}`), State: business.DeliveryDelivered, NextAt: now, CreatedAt: now}); err != nil {
			return 0, err
		}
		puts = append(puts, time.Since(start))
	}
	return median(puts), b.store.SetWebhook(b.ctx, b.acct.ID, business.Webhook{CallbackURL: url})
}

// paidSaleRecords adds n paid sales and returns their payment records as a stream
// batch carries them.
func (b *bench) paidSaleRecords(n int) (events.DynamoDBEvent, error) {
	var ev events.DynamoDBEvent
	from := time.Now()
	var codes sync.Map
	if err := parallel(n, func(int) error {
		_, out, err := b.request("POST", "/api/v1/sales/add", map[string]any{"customer_id": 1, "sub_total_amount": "20.00", "total_amount": "20.00",
			"amount_paid": "20.00", "payment_type": "Cash", "invoice_type": "pos", "due_date": "2026-12-31"})
		if err == nil {
			codes.Store(fmt.Sprint(out["data"].(map[string]any)["sales"].(map[string]any)["invoice_code"]), true)
		}
		return err
	}); err != nil {
		return ev, err
	}
	written, err := b.store.PaymentsWritten(b.ctx, from.Add(-time.Second), time.Now().Add(time.Second))
	if err != nil {
		return ev, err
	}
	for _, it := range written {
		img := streamImage(it)
		if _, ok := codes.Load(img["invoice_code"].String()); ok {
			ev.Records = append(ev.Records, events.DynamoDBEventRecord{EventName: "INSERT", EventSource: "aws:dynamodb",
				Change: events.DynamoDBStreamRecord{SequenceNumber: strconv.Itoa(len(ev.Records) + 1), NewImage: img, StreamViewType: "NEW_IMAGE"}})
		}
	}
	if len(ev.Records) != n {
		return ev, fmt.Errorf("found %d of the %d payments just made", len(ev.Records), n)
	}
	return ev, nil
}

// streamBatch is a deliver-webhooks event of n fresh payment inserts, which
// it must record without a failure.
func (b *bench) streamBatch(n int) fnEvent {
	return fnEvent{
		event: func() (any, error) { return b.paidSaleRecords(n) },
		check: func(answer []byte) error {
			var res events.DynamoDBEventResponse
			if err := json.Unmarshal(answer, &res); err != nil || len(res.BatchItemFailures) > 0 {
				return fmt.Errorf("stream batch answered %.300s", answer)
			}
			return nil
		},
	}
}

// dispatchLoad is retry-webhooks' work, on a table of its own (so that its
// sweep finds nothing of the other steps') in a DynamoDB Local of its own
// (see below): merchants whose webhooks go to the bench's receiver, and a
// real payment record to copy into theirs.
type dispatchLoad struct {
	b        *bench
	st       *store.Store
	accounts []string
	payment  events.DynamoDBEventRecord
	received *atomic.Int64
	url      string // the receiver's
	endpoint string // its DynamoDB Local's
	seq      int
	// What the runs measured: the deliveries sent by the runs that had some
	// due, the CPU time of one, and the cost of a run at 128 MB.
	sent        int64
	perDelivery time.Duration
	cost128     float64
}

func (b *bench) dispatchLoad(url string, received *atomic.Int64) (*dispatchLoad, func(), error) {
	// A DynamoDB Local of its own: after the load the run's one answers a
	// write in tens of milliseconds, one write at a time, so the 48 claims
	// a busy run starts at once each waited over 5 s, past its window, and
	// it sent nothing. On DynamoDB a claim takes milliseconds, side by side
	// with the others.
	st, cfg, cleanup, err := b.ownTable(b.ctx, "-dispatch")
	if err != nil {
		return nil, nil, err
	}
	l := &dispatchLoad{b: b, st: st, received: received, url: url, endpoint: cfg.Endpoint}
	// The table's first sweep looks 25 hours back, hundreds of queries that
	// would fill the runs' windows; a deployed table's was made long ago.
	if _, err := l.webhookService().Sweep(b.ctx); err != nil {
		cleanup()
		return nil, nil, err
	}
	for i := range hookMerchants {
		a, _, err := createAccount(b.ctx, st, fmt.Sprintf("Merchant %d", i), fmt.Sprintf("MEM%03d", i))
		if err == nil {
			err = st.SetWebhook(b.ctx, a.ID, business.Webhook{CallbackURL: url})
		}
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		l.accounts = append(l.accounts, a.ID)
	}
	ev, err := b.paidSaleRecords(1)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	l.payment = ev.Records[0]
	return l, cleanup, nil
}

func (l *dispatchLoad) webhookService() *webhook.Service {
	return webhook.NewService(l.st, webhook.NewSender(true), business.DefaultRetrySchedule, l.b.quiet)
}

// scheduledRun is a scheduled event, sent once perAccount deliveries of each merchant
// are recorded (by deliver-webhooks' handler, in this process). A run must
// send some when some are due (on a slow DynamoDB Local not always all of
// them within its window), and none when none are.
func (l *dispatchLoad) scheduledRun(perAccount int) fnEvent {
	var before int64
	return fnEvent{
		event: func() (any, error) {
			var ev events.DynamoDBEvent
			for _, a := range l.accounts {
				for range perAccount {
					l.seq++
					r := l.payment
					r.Change.NewImage = maps.Clone(r.Change.NewImage)
					r.Change.NewImage["account_id"] = events.NewStringAttribute(a)
					r.Change.NewImage["transaction_id"] = events.NewStringAttribute(fmt.Sprintf("txn_dispatch_%d", l.seq))
					ev.Records = append(ev.Records, r)
				}
			}
			if res, err := l.webhookService().HandleStream(l.b.ctx, ev); err != nil || len(res.BatchItemFailures) > 0 {
				return nil, fmt.Errorf("recording deliveries: %v %v", err, res.BatchItemFailures)
			}
			before = l.received.Load()
			return events.EventBridgeEvent{Version: "0", DetailType: "Scheduled Event", Source: "aws.events", Time: time.Now().UTC(), Detail: json.RawMessage("{}")}, nil
		},
		check: func(answer []byte) error {
			got := l.received.Load() - before
			if string(answer) != "null" || (perAccount > 0) != (got > 0) {
				return fmt.Errorf("run with %d due per merchant sent %d and answered %.300s", perAccount, got, answer)
			}
			if perAccount > 0 {
				l.sent += got
			}
			return nil
		},
	}
}
