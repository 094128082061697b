// Command devserver runs the whole API in one process against DynamoDB Local:
// every route of the route table on one http.Server, the table created when
// missing, and a demo account whose live and test API keys are printed at
// every start.
//
// It also plays Lambda's part for webhooks: it polls the table's stream and
// feeds payment, refund and event inserts to the deliver-webhooks handler,
// and runs the retry-webhooks handler every second.
//
// Environment: PORT (default 3000), DYNAMODB_ENDPOINT (default
// http://localhost:8000), TABLE_NAME (default bizdata), DATA_DIR (default
// .data, where the demo account's keys are kept), API_KEY_CACHE_TTL,
// WEBHOOK_ALLOW_PRIVATE (default 1 here), WEBHOOK_RETRY_SCHEDULE,
// WEBHOOK_ENDPOINT_DISABLE_AFTER.
package main

import (
	"bytes"
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
	"strings"
	"sync"
	"syscall"
	"time"

	"bizdata/infra/streampoll"
	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
	"bizdata/shared/business"
	"bizdata/shared/dashboard"
	"bizdata/shared/hosted"
	"bizdata/shared/store"
	"bizdata/shared/webhook"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "devserver:", err)
		os.Exit(1)
	}
}

// demoAccount is what .data/demo-account.json keeps between starts: the demo
// account and two "*" keys of it, a live one and a test one (which acts on
// the account's test data).
type demoAccount struct {
	AccountID  string `json:"account_id"`
	APIKey     string `json:"api_key"`
	TestAPIKey string `json:"test_api_key"`
	// The demo owner's dashboard sign-in.
	OwnerEmail    string `json:"owner_email"`
	OwnerPassword string `json:"owner_password"`
	Table         string `json:"table"`
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
	svc, err := lambdas.NewWebhookService(ctx, cfg)
	if err != nil {
		return err
	}
	streams, err := app.NewStreams(ctx, cfg.Endpoint)
	if err != nil {
		return err
	}
	bg, stopBackground := context.WithCancel(ctx)
	defer stopBackground()
	go streampoll.PollMapping(bg, st.Client(), streams, cfg.TableName, streampoll.DeliverWebhooks, webhook.Streamed, svc.HandleStream, log)
	// The apply-report-figures function: its own reader of the stream.
	go streampoll.PollMapping(bg, st.Client(), streams, cfg.TableName, streampoll.ApplyReportFigures, lambdas.IsFiguresInsert, lambdas.ApplyReportFigures(st, log), log)
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
	apiServer := api.NewServer(st, log, cfg.KeyCacheTTL).AllowPrivateWebhooks(os.Getenv("WEBHOOK_ALLOW_PRIVATE") == "1")
	board := dashboard.New(st, apiServer, log, dashboard.Config{PlainHTTP: true, SignUp: os.Getenv("DASHBOARD_SIGNUP") != "off"})
	srv := &http.Server{
		Handler: withDashboard(board.Handler(dashboard.Routes),
			withHosted(hosted.NewServer(st, log), demo.keepRotatedKey(apiServer.Handler(api.Routes)))),
		ReadHeaderTimeout: timeouts.readHeader,
		ReadTimeout:       timeouts.read,
		WriteTimeout:      timeouts.write,
		IdleTimeout:       timeouts.idle,
	}
	fmt.Fprintf(out, "\nBusiness data API on http://%s  (table %s on %s)\nDemo account %s\nAPI key: %s\nTest API key: %s  (acts on the demo account's test data)\n",
		ln.Addr(), cfg.TableName, cfg.Endpoint, demo.AccountID, demo.APIKey, demo.TestAPIKey)
	if err := startNotices(bg, st, log, "http://"+ln.Addr().String()); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nDashboard on http://%s/dashboard\nSign in as %s with the password %s\n\n", ln.Addr(), demo.OwnerEmail, demo.OwnerPassword)
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

// demoCode is the demo account's business code.
const demoCode = "DEMO01"

// The names of the keys the devserver makes for the demo account: a new one
// replaces the earlier one of its name, so restarts never pile keys up
// toward business.MaxAPIKeys.
const (
	liveKeyName = "make dev"
	testKeyName = "make dev (test)"
)

// ensureDemoAccount returns the demo account kept under DATA_DIR. When both
// saved keys work, that is all. A key that does not (rotated by the admin
// CLI, or over the API while the devserver was not watching; revoked; the
// file is missing, older than test keys, or names another table) is
// replaced by a new "*" key of its mode, and the file is written again: the
// keys printed at every start always work. Without a working saved key the
// account is the table's demo account, or a new one when the table has
// none.
func ensureDemoAccount(ctx context.Context, st *store.Store, table string) (*demoFile, error) {
	dir := os.Getenv("DATA_DIR")
	if dir == "" {
		dir = ".data"
	}
	f := &demoFile{path: filepath.Join(dir, "demo-account.json")}
	d := &f.demoAccount
	if b, err := os.ReadFile(f.path); err != nil || json.Unmarshal(b, d) != nil || d.Table != table {
		*d = demoAccount{Table: table}
	}
	saved := *d
	liveOK, err := keyWorks(ctx, st, d.AccountID, d.APIKey, true)
	if err != nil {
		return nil, err
	}
	testOK, err := keyWorks(ctx, st, d.AccountID, d.TestAPIKey, false)
	if err != nil {
		return nil, err
	}
	if !liveOK && !testOK {
		a, err := st.FindAccountByCode(ctx, demoCode)
		switch {
		case err == nil:
			d.AccountID = a.ID
		case business.ErrorCode(err) == business.ENOTFOUND:
			if a, err = business.NewAccount("Demo Shop", demoCode, "GHS", "INV"); err != nil {
				return nil, err
			}
			if a, d.APIKey, err = st.CreateAccount(ctx, a); err != nil {
				return nil, err
			}
			d.AccountID, liveOK = a.ID, true
		default:
			return nil, err
		}
	}
	if !liveOK {
		if d.APIKey, err = replaceKey(ctx, st, d.AccountID, liveKeyName, true); err != nil {
			return nil, err
		}
	}
	if !testOK {
		if d.TestAPIKey, err = replaceKey(ctx, st, d.AccountID, testKeyName, false); err != nil {
			return nil, err
		}
	}
	if err := ensureDemoOwner(ctx, st, d); err != nil {
		return nil, err
	}
	if *d == saved {
		return f, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return f, f.save()
}

// keyWorks reports whether key is a key of account of the given mode.
func keyWorks(ctx context.Context, st *store.Store, account, key string, live bool) (bool, error) {
	if account == "" || key == "" {
		return false, nil
	}
	a, err := st.FindAccountByKeyHash(ctx, business.HashAPIKey(key))
	if business.ErrorCode(err) == business.EUNAUTHORIZED {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return a.Key.Live == live && business.LiveID(a.ID) == account, nil
}

// replaceKey makes account a new "*" key named name of the given mode and
// returns its secret, revoking the earlier keys of that name and mode first.
// One that is the account's last live key able to manage keys is revoked
// only once the new key exists.
func replaceKey(ctx context.Context, st *store.Store, account, name string, live bool) (string, error) {
	ks, err := st.ListKeys(ctx, account)
	if err != nil {
		return "", err
	}
	var last []string
	for _, k := range ks {
		if k.Name != name || k.Live != live {
			continue
		}
		_, err := st.RevokeKey(ctx, account, nil, k.ID)
		switch {
		case err == nil, business.ErrorCode(err) == business.ENOTFOUND: // revoked (by us, or meanwhile)
		case business.ErrorCode(err) == business.ECONFLICT:
			last = append(last, k.ID)
		default:
			return "", err
		}
	}
	mode := "test"
	if live {
		mode = "live"
	}
	spec, err := business.NewKeySpec(name, []string{business.ScopeAll}, mode)
	if err != nil {
		return "", err
	}
	_, secret, err := st.CreateKey(ctx, account, nil, spec)
	if err != nil {
		return "", err
	}
	for _, id := range last {
		if _, err := st.RevokeKey(ctx, account, nil, id); err != nil && business.ErrorCode(err) != business.ENOTFOUND {
			return "", err
		}
	}
	return secret, nil
}

// demoFile is the demo account and the file that keeps it.
type demoFile struct {
	demoAccount
	path string
	mu   sync.Mutex
}

// save writes the file whole or not at all (a new file renamed over the old).
func (f *demoFile) save() error {
	b, _ := json.MarshalIndent(f.demoAccount, "", "  ")
	tmp := f.path + ".new"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, f.path)
}

// keepRotatedKey wraps the API so that when the demo account rotates one of
// its saved keys (live or test) over the API, the new key (from the answer
// the client gets) is saved in its place: the key the client now holds is
// the one the next start prints.
func (f *demoFile) keepRotatedKey(h http.Handler) http.Handler {
	rotate, _ := api.RouteByFunction("rotate-api-key")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != rotate.Method || r.URL.Path != rotate.Path {
			h.ServeHTTP(w, r)
			return
		}
		token, _ := api.BearerToken(r.Header.Get("Authorization"))
		f.mu.Lock()
		var saved *string
		switch token {
		case f.APIKey:
			saved = &f.APIKey
		case f.TestAPIKey:
			saved = &f.TestAPIKey
		}
		f.mu.Unlock()
		if saved == nil || token == "" {
			h.ServeHTTP(w, r)
			return
		}
		rec := &teeWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		var answer struct {
			Data struct {
				APIKey string `json:"api_key"`
			} `json:"data"`
		}
		if rec.status != http.StatusOK || json.Unmarshal(rec.body.Bytes(), &answer) != nil || answer.Data.APIKey == "" {
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		*saved = answer.Data.APIKey
		if err := f.save(); err != nil {
			fmt.Fprintf(os.Stderr, "devserver: the demo account's new key could not be saved to %s: %v\n", f.path, err)
		}
	})
}

// teeWriter passes a response through and keeps a copy of its status and body.
type teeWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *teeWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }

func (w *teeWriter) Write(b []byte) (int, error) {
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

// demoOwner is the demo account's dashboard sign-in.
const demoOwner = "owner@demo-shop.example"

// ensureDemoOwner makes sure the demo owner signs in with the saved
// password: made (with a new random password) when missing, and set back to
// the saved one when it was changed, so the sign-in printed at every start
// always works.
func ensureDemoOwner(ctx context.Context, st *store.Store, d *demoAccount) error {
	d.OwnerEmail = demoOwner
	if len(d.OwnerPassword) < business.MinPasswordLength {
		t, _ := business.NewToken()
		d.OwnerPassword = "demo-" + t[:15]
	}
	o, err := st.FindOwner(ctx, demoOwner)
	switch {
	case business.ErrorCode(err) == business.ENOTFOUND:
		return st.CreateOwner(ctx, d.AccountID, business.Owner{Email: demoOwner, PasswordHash: business.HashPassword(d.OwnerPassword)})
	case err != nil:
		return err
	case o.Account != d.AccountID:
		return fmt.Errorf("%s signs in to account %s, not the demo account %s", demoOwner, o.Account, d.AccountID)
	case !business.VerifyPassword(o.PasswordHash, d.OwnerPassword):
		return st.SetPassword(ctx, demoOwner, business.HashPassword(d.OwnerPassword), "")
	}
	return nil
}

// withDashboard sends /dashboard and everything under it to board, and
// every other request to the API, as the HTTP API's routes do on AWS.
// withHosted serves the public invoice routes as their functions do, and
// everything else (another path under /invoices/ too) as the API does, as
// the HTTP API's routes and its $default route split them.
func withHosted(srv *hosted.Server, apiHandler http.Handler) http.Handler {
	public := srv.Handler(hosted.Routes)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := public.Handler(r); pattern != "" && r.Method == http.MethodGet {
			public.ServeHTTP(w, r)
			return
		}
		apiHandler.ServeHTTP(w, r)
	})
}

// startNotices plays the send-notices function's schedule: a notices run
// every NoticeEvery. Reminders go to SMTP_ADDR (Mailpit, which make dev
// starts); links point at PUBLIC_BASE_URL, by default this server.
func startNotices(ctx context.Context, st *store.Store, log *slog.Logger, self string) error {
	if os.Getenv("PUBLIC_BASE_URL") == "" {
		os.Setenv("PUBLIC_BASE_URL", self)
	}
	runner, err := lambdas.NoticeRunner(ctx, st, log)
	if err != nil {
		return err
	}
	go func() {
		t := time.NewTicker(noticeEvery)
		defer t.Stop()
		for {
			if _, err := runner.Run(ctx); err != nil && ctx.Err() == nil {
				log.Error("notices run failed", "error", err.Error())
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return nil
}

// noticeEvery is how often the devserver runs the notices (the deployed
// schedule runs every 5 minutes).
var noticeEvery = 10 * time.Second

func withDashboard(board, apiHandler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/dashboard" || strings.HasPrefix(r.URL.Path, "/dashboard/") {
			board.ServeHTTP(w, r)
			return
		}
		apiHandler.ServeHTTP(w, r)
	})
}
