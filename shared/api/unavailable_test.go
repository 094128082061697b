package api_test

import (
	"context"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// failCalls makes every DynamoDB call of operation op ("" for all) fail with
// the error fail returns, before it leaves the client.
func failCalls(op string, fail func() error) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("InjectError",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					if op == "" || middleware.GetOperationName(ctx) == op {
						return middleware.InitializeOutput{}, middleware.Metadata{}, fail()
					}
					return next.HandleInitialize(ctx, in)
				}), middleware.Before)
		})
	}
}

// TestDynamoDBFaultsAre503: throttling, DynamoDB's own faults and
// transaction conflicts that outlast the retries answer 503 with
// Retry-After, never 500.
func TestDynamoDBFaultsAre503(t *testing.T) {
	base, _ := testdb.NewStore(t)
	_, key := testdb.NewAccount(t, base, "Faulty", "FAULT1")
	cfg := testdb.Config(t)
	cfg.TableName = base.Table()
	cases := []struct {
		name, op, method, path string
		fail                   func() error
	}{
		{"ProvisionedThroughputExceeded", "", "GET", "/api/v1/customers", apiErr("ProvisionedThroughputExceededException")},
		{"RequestLimitExceeded", "", "GET", "/api/v1/sales/123456", apiErr("RequestLimitExceeded")},
		{"ThrottlingException", "Query", "GET", "/api/v1/expenses", apiErr("ThrottlingException")},
		{"InternalServerError", "GetItem", "GET", "/api/v1/customers/1", apiErr("InternalServerError")},
		{"TransactionConflict", "TransactWriteItems", "POST", "/api/v1/inventory/categories/add", func() error {
			return &types.TransactionCanceledException{Message: aws.String("conflict"),
				CancellationReasons: []types.CancellationReason{{Code: aws.String("TransactionConflict")}}}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, err := app.NewStore(context.Background(), cfg, failCalls(c.op, c.fail))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(api.NewServer(st, testdb.Quiet(), 0).Handler(api.Routes))
			defer srv.Close()
			e := &env{t: t, srv: srv, key: key}
			var body any
			if c.method == "POST" { // a category and its name's guard: a transaction
				body = map[string]any{"category_name": "Grains"}
			}
			r := e.req(c.method, c.path, key, body)
			if r.code != 503 || r.header.Get("Retry-After") == "" {
				t.Fatalf("%d Retry-After %q: %s", r.code, r.header.Get("Retry-After"), r.raw)
			}
		})
	}
}

func apiErr(code string) func() error {
	return func() error { return &smithy.GenericAPIError{Code: code, Message: "injected"} }
}

// TestDynamoDBStoppedMidTest: DynamoDB answers, then stops answering (its
// connections are cut and refused): 503 with Retry-After, then, once it is
// back, 200 again.
func TestDynamoDBStoppedMidTest(t *testing.T) {
	cfg := testdb.Config(t)
	target := strings.TrimPrefix(cfg.Endpoint, "http://")
	p := startProxy(t, target)
	cfg.Endpoint = "http://" + p.addr
	st, err := app.NewStore(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.EnsureTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		direct, _ := testdb.NewStore(t)
		_, _ = direct.Client().DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(cfg.TableName)})
	})
	_, key := testdb.NewAccount(t, st, "Outage", "OUT1")
	srv := httptest.NewServer(api.NewServer(st, testdb.Quiet(), 0).Handler(api.Routes))
	defer srv.Close()
	e := &env{t: t, srv: srv, key: key}
	want(t, e.post("/api/v1/customers/add", map[string]any{"name": "Ama"}), 200, "")
	p.stop()
	for _, r := range []resp{e.get("/api/v1/customers/1"), e.post("/api/v1/customers/add", map[string]any{"name": "Kofi"})} {
		if r.code != 503 || r.header.Get("Retry-After") == "" {
			t.Fatalf("with DynamoDB stopped: %d %s", r.code, r.raw)
		}
	}
	p.start(t)
	want(t, e.get("/api/v1/customers/1"), 200, "Customer found")
}

// proxy forwards TCP connections to DynamoDB Local and can be stopped and
// started again on the same address.
type proxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: ln.Addr().String(), target: target}
	p.serve(ln)
	t.Cleanup(p.stop)
	return p
}

func (p *proxy) start(t *testing.T) {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.serve(ln)
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
}

func (p *proxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
