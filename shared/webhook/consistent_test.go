package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"bizdata/infra/streampoll"
	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/testdb"
	"bizdata/shared/webhook"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestLossyReadsAreConsistent: the reads whose lag would lose a delivery
// are consistent ones. DynamoDB Local is always consistent, so what is
// checked is what each call asks for, on a real client: the stream's
// fan-out lists the account's endpoints with a consistent Query of the
// base table (an endpoint created just before the event is never missed),
// a replay reads its endpoint consistently (a replay just after a delete
// queues nothing), and so does the dispatcher before its attempts (a
// disable or a rotation applies to the next one).
func TestLossyReadsAreConsistent(t *testing.T) {
	var rec testdb.Requests
	st, cfg := testdb.NewStreamStore(t, rec.Option())
	a, key := testdb.NewAccount(t, st, "Shop", "SHOPCR")
	in := newInbox(t)
	ctx, cancel := context.WithCancel(context.Background())
	ep, err := st.CreateEndpoint(ctx, a.ID, business.Endpoint{URL: in.URL, EnabledEvents: []string{"*"}}, business.NewEndpointSecret())
	if err != nil {
		t.Fatal(err)
	}
	svc := webhook.NewService(st, webhook.NewSender(true), []time.Duration{time.Hour}, testdb.Quiet())
	streams, err := app.NewStreams(ctx, cfg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		streampoll.Poll(ctx, st.Client(), streams, cfg.TableName, webhook.Streamed, svc.HandleStream, streampoll.MaximumRetryAttempts, testdb.Quiet())
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	srv := httptest.NewServer(api.NewServer(st, testdb.Quiet(), 0).Handler(api.Routes))
	t.Cleanup(srv.Close)
	call := func(path, body string) {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, res.StatusCode, b)
		}
	}
	queue := store.EndpointQueue(a.ID, ep.ID)
	endpointItem := func(r testdb.Request) bool {
		in, ok := r.Input.(*dynamodb.GetItemInput)
		return ok && attr(in.Key["PK"]) == "A#"+a.ID && attr(in.Key["SK"]) == "WHEP#"+ep.ID
	}
	// consistent checks the calls made since mark that match: at least one,
	// each consistent.
	consistent := func(what string, mark int, match func(testdb.Request) (bool, bool)) {
		t.Helper()
		n := 0
		for _, r := range rec.Since(mark) {
			if ok, isConsistent := match(r); ok {
				n++
				if !isConsistent {
					t.Errorf("%s: %s without ConsistentRead", what, r.Operation)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no such call made", what)
		}
	}

	mark := rec.Mark()
	call("/api/v1/customers/add", `{"name":"Ama"}`)
	waitFor(t, "the customer's event recorded for the endpoint", func() bool {
		p, err := st.ListDeliveries(ctx, queue, "", 10, "")
		return err == nil && len(p.Items) > 0
	})
	consistent("the fan-out's list of endpoints", mark, func(r testdb.Request) (bool, bool) {
		in, ok := r.Input.(*dynamodb.QueryInput)
		if !ok || attr(in.ExpressionAttributeValues[":prefix"]) != "WHEP#" {
			return false, false
		}
		return true, in.IndexName == nil && in.ConsistentRead != nil && *in.ConsistentRead
	})

	mark = rec.Mark()
	if err := svc.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if len(in.ids()) == 0 {
		t.Fatal("the endpoint got nothing, want the customer's event")
	}
	consistent("the dispatcher's read of the endpoint", mark, func(r testdb.Request) (bool, bool) {
		in, ok := r.Input.(*dynamodb.GetItemInput)
		return endpointItem(r), ok && in.ConsistentRead != nil && *in.ConsistentRead
	})

	mark = rec.Mark()
	call("/api/v1/webhook-endpoints/"+ep.ID+"/replay", `{"since":"`+time.Now().UTC().Add(-time.Hour).Format(business.TimeFormat)+`"}`)
	consistent("the replay's read of the endpoint", mark, func(r testdb.Request) (bool, bool) {
		in, ok := r.Input.(*dynamodb.GetItemInput)
		return endpointItem(r), ok && in.ConsistentRead != nil && *in.ConsistentRead
	})
}

func attr(v types.AttributeValue) string {
	if s, ok := v.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// loseAnswer is a DynamoDB client transport that lets the first request of
// each kind match names reach DynamoDB Local and then loses its answer, as
// a connection reset after the commit would: the SDK retries the request.
type loseAnswer struct {
	match func(target string, body []byte) string // the request's kind, "" for none
	mu    sync.Mutex
	lost  map[string]bool
}

func (l *loseAnswer) loses(kind string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if kind == "" || l.lost[kind] {
		return false
	}
	l.lost[kind] = true
	return true
}

func (l *loseAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !l.loses(l.match(req.Header.Get("X-Amz-Target"), body)) {
		return res, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return nil, errors.New("read tcp: connection reset by peer")
}

// TestSavedAttemptSurvivesTheSDKRetry: a delivery's last attempt fails, and
// the answer to its save (and, in the second case, to its claim too) is
// lost after the request committed. The SDK's retry of each finds the
// record under the same lease: the attempt is made, it is not reported as
// having outlived its lease, and the failed-deliveries metric is logged
// once.
func TestSavedAttemptSurvivesTheSDKRetry(t *testing.T) {
	for _, kinds := range [][]string{{"save"}, {"claim", "save"}} {
		t.Run(strings.Join(kinds, "+"), func(t *testing.T) { savedAttemptSurvives(t, kinds) })
	}
}

func savedAttemptSurvives(t *testing.T, kinds []string) {
	lose := &loseAnswer{lost: map[string]bool{}, match: func(target string, body []byte) string {
		kind := ""
		switch {
		case strings.HasSuffix(target, ".UpdateItem") && bytes.Contains(body, []byte(`SET lease_token = :t, lease_until = :u`)):
			kind = "claim"
		case strings.HasSuffix(target, ".PutItem") && bytes.Contains(body, []byte(`"ConditionExpression":"lease_token = :t"`)):
			kind = "save"
		}
		if !slices.Contains(kinds, kind) {
			return ""
		}
		return kind
	}}
	st, _ := testdb.NewStore(t, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: lose} })
	ctx := context.Background()
	a, _ := testdb.NewAccount(t, st, "Shop", "SHOPLA")
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	defer rc.Close()
	if err := st.SetWebhook(ctx, a.ID, business.Webhook{CallbackURL: rc.URL}); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	var mu sync.Mutex
	svc := webhook.NewService(st, webhook.NewSender(true), nil, slog.New(slog.NewJSONHandler(lockedWriter{&mu, &logs}, nil)))
	if _, err := svc.HandleStream(ctx, fixtureBatch(t, a.ID)); err != nil {
		t.Fatal(err)
	}
	if err := svc.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if len(lose.lost) != len(kinds) {
		t.Fatalf("answers lost: %v, want those of %v", lose.lost, kinds)
	}
	p, err := st.ListDeliveries(ctx, a.ID, "", 10, "")
	if err != nil || len(p.Items) != 1 || p.Items[0].State != business.DeliveryFailed || p.Items[0].Attempt != 1 {
		t.Fatalf("deliveries %+v (%v), want one failed after its one attempt", p.Items, err)
	}
	mu.Lock()
	defer mu.Unlock()
	metrics := 0
	for _, line := range strings.Split(logs.String(), "\n") {
		var m struct {
			Msg    string `json:"msg"`
			Failed int    `json:"DeliveriesFailed"`
		}
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		if m.Msg == "webhook attempt outlived its lease" || m.Msg == "webhook attempt not saved" {
			t.Errorf("logged %s", line)
		}
		metrics += m.Failed
	}
	if metrics != 1 {
		t.Fatalf("%d failed-deliveries metrics, want 1:\n%s", metrics, logs.String())
	}
}
