package app_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"bizdata/shared/app"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// TestDynamoDBConnectionsReused: a process making many DynamoDB calls at once
// keeps every connection of a burst for the next burst, instead of closing
// all but the SDK's default 10 idle ones and dialling them again. The calls
// reach DynamoDB Local through a proxy that counts the connections opened to
// it and holds each burst's requests until all of them have arrived, so each
// burst needs one connection per call.
func TestDynamoDBConnectionsReused(t *testing.T) {
	const calls = 24
	target, err := url.Parse(testdb.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	var opened atomic.Int64
	var mu sync.Mutex
	var arrived int
	release := make(chan struct{})
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			arrived++
			if arrived == calls {
				close(release)
			}
			wait := release
			mu.Unlock()
			<-wait
			proxy.ServeHTTP(w, r)
		}),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				opened.Add(1)
			}
		},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	db, err := app.NewDynamoDB(context.Background(), "http://"+ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	burst := func() {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, calls)
		for range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := db.ListTables(context.Background(), &dynamodb.ListTablesInput{})
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	burst()
	if n := opened.Load(); n != calls {
		t.Fatalf("the first burst of %d calls opened %d connections, want one each", calls, n)
	}
	mu.Lock()
	arrived, release = 0, make(chan struct{})
	mu.Unlock()
	burst()
	if n := opened.Load() - calls; n != 0 {
		t.Fatalf("the second burst of %d calls opened %d new connections, want 0: the first burst's were closed instead of kept idle", calls, n)
	}
}
