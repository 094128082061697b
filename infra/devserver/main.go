// Command devserver runs the whole API in one process against DynamoDB Local:
// every route of the route table on one http.Server, the table created when
// missing, and a demo account whose API key is printed at every start.
//
// It also plays Lambda's part for webhooks: it polls the table's stream and
// feeds payment inserts to the deliver-webhooks handler, and runs the
// retry-webhooks handler every second.
//
// Environment: PORT (default 3000), DYNAMODB_ENDPOINT (default
// http://localhost:8000), TABLE_NAME (default bizdata), DATA_DIR (default
// .data, where the demo account's key is kept), API_KEY_CACHE_TTL,
// WEBHOOK_ALLOW_PRIVATE (default 1 here), WEBHOOK_RETRY_SCHEDULE.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"bizdata/infra/streampoll"
	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "devserver:", err)
		os.Exit(1)
	}
}

// demoAccount is what .data/demo-account.json keeps between starts.
type demoAccount struct {
	AccountID string `json:"account_id"`
	APIKey    string `json:"api_key"`
	Table     string `json:"table"`
}

// run serves until ctx ends. When ready is not nil it receives the address the
// server listens on once it accepts connections.
// timeouts bound how long one client can hold a connection: a request's
// headers and body must arrive within 10 s and 30 s (API Gateway gives up on
// an integration after 30 s too), an answer is written within 35 s, and an
// idle keep-alive connection is closed after 2 minutes. A half-sent body no
// longer holds a connection for good.
var timeouts = struct{ readHeader, read, write, idle time.Duration }{
	readHeader: 10 * time.Second, read: 30 * time.Second, write: 35 * time.Second, idle: 2 * time.Minute,
}

func run(ctx context.Context, out io.Writer, ready chan<- string) error {
	if os.Getenv("DYNAMODB_ENDPOINT") == "" {
		os.Setenv("DYNAMODB_ENDPOINT", "http://localhost:8000")
	}
	cfg, err := app.FromEnv()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(out, nil))
	st, err := app.NewStore(ctx, cfg)
	if err != nil {
		return err
	}
	if err := st.EnsureTable(ctx); err != nil {
		return err
	}
	demo, err := ensureDemoAccount(ctx, st, cfg.TableName)
	if err != nil {
		return err
	}
	if os.Getenv("WEBHOOK_ALLOW_PRIVATE") == "" {
		os.Setenv("WEBHOOK_ALLOW_PRIVATE", "1") // local receivers live on loopback
	}
	svc, err := app.NewWebhookService(ctx, cfg)
	if err != nil {
		return err
	}
	streams, err := app.NewStreams(ctx, cfg.Endpoint)
	if err != nil {
		return err
	}
	bg, stopBackground := context.WithCancel(ctx)
	defer stopBackground()
	go streampoll.Poll(bg, st.Client(), streams, cfg.TableName, svc.HandleStream, log)
	// The retry-webhooks function's dispatcher, running for good.
	go svc.Dispatch(bg, time.Now().AddDate(100, 0, 0), 200*time.Millisecond)

	port := os.Getenv("PORT")
	if port == "" {
		port = "3000"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           api.NewServer(st, log, cfg.KeyCacheTTL).AllowPrivateWebhooks(os.Getenv("WEBHOOK_ALLOW_PRIVATE") == "1").Handler(api.Routes),
		ReadHeaderTimeout: timeouts.readHeader,
		ReadTimeout:       timeouts.read,
		WriteTimeout:      timeouts.write,
		IdleTimeout:       timeouts.idle,
	}
	fmt.Fprintf(out, "\nBusiness data API on http://%s  (table %s on %s)\nDemo account %s\nAPI key: %s\n\n",
		ln.Addr(), cfg.TableName, cfg.Endpoint, demo.AccountID, demo.APIKey)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if ready != nil {
		ready <- ln.Addr().String()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ensureDemoAccount returns the demo account kept under DATA_DIR, creating it
// (and its key) when the file is missing or names an account the table lacks.
func ensureDemoAccount(ctx context.Context, st *store.Store, table string) (demoAccount, error) {
	dir := os.Getenv("DATA_DIR")
	if dir == "" {
		dir = ".data"
	}
	path := filepath.Join(dir, "demo-account.json")
	var d demoAccount
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &d) == nil && d.Table == table {
		if _, _, err := st.FindAccount(ctx, d.AccountID); err == nil {
			return d, nil
		} else if business.ErrorCode(err) != business.ENOTFOUND {
			return d, err
		}
	}
	a, err := business.NewAccount("Demo Shop", "DEMO01", "GHS", "INV")
	if err != nil {
		return d, err
	}
	a, key, err := st.CreateAccount(ctx, a)
	if err != nil {
		return d, err
	}
	d = demoAccount{AccountID: a.ID, APIKey: key, Table: table}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return d, err
	}
	b, _ := json.MarshalIndent(d, "", "  ")
	return d, os.WriteFile(path, b, 0o600)
}
