package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// BenchmarkListSales serves GET /api/v1/sales (a page of 50) in process,
// against DynamoDB Local, with a warm key cache.
func BenchmarkListSales(b *testing.B) {
	e := newBenchEnv(b)
	for i := 0; i < 60; i++ {
		r := e.post("/api/v1/sales/add", saleBody(map[string]any{"invoice_code": fmt.Sprint(100000 + i), "invoice_number": fmt.Sprint(100000 + i)}))
		if r.code != 200 {
			b.Fatalf("%s", r.raw)
		}
	}
	e.serveN(b, "/api/v1/sales?limit=50")
}

// serveN serves a GET of path b.N times in process, with e's key.
func (e *env) serveN(b *testing.B, path string) {
	h := e.srv.Config.Handler
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+e.key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Body.String())
		}
	}
}

// newBenchEnv is newSaleEnv for benchmarks.
func newBenchEnv(b *testing.B) *env {
	e := newEnvTTL(b, time.Minute)
	if r := e.post("/api/v1/customers/add", map[string]any{"name": "Ama"}); r.code != 200 {
		b.Fatalf("%s", r.raw)
	}
	return e
}

// BenchmarkGetSale serves GET /api/v1/sales/{invoice_code} over loopback HTTP
// from 32 goroutines, as the bench's throughput row does, beside the same
// DynamoDB Query made bare. cpu-µs/op is this process's CPU time per request
// (DynamoDB Local's is the same Query on both paths), what the handler path
// adds to a read.
func BenchmarkGetSale(b *testing.B) {
	e := newBenchEnv(b)
	if r := e.post("/api/v1/sales/add", saleBody(map[string]any{"invoice_code": "100042", "invoice_number": "100042"})); r.code != 200 {
		b.Fatalf("%s", r.raw)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	url := e.srv.URL + "/api/v1/sales/100042"
	in := dynamodb.QueryInput{
		TableName:                 aws.String(e.store.Table()),
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "A#" + e.acct.ID + "#SALE#100042"}},
		ConsistentRead:            aws.Bool(false),
		ScanIndexForward:          aws.Bool(false),
	}
	paths := []struct {
		name string
		do   func() error
	}{
		{"http", func() error {
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("Authorization", "Bearer "+e.key)
			res, err := client.Do(req)
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				return fmt.Errorf("status %d", res.StatusCode)
			}
			return nil
		}},
		{"bare", func() error {
			q := in
			out, err := e.store.Client().Query(context.Background(), &q)
			if err == nil && len(out.Items) == 0 {
				err = fmt.Errorf("no items")
			}
			return err
		}},
	}
	for _, p := range paths {
		b.Run(p.name, func(b *testing.B) {
			b.SetParallelism(16) // 32 goroutines on 2 CPUs
			before := cpuTime()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := p.do(); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGetSaleHandler serves get-sale in process, without the network,
// so that -benchmem shows what the handler path allocates.
func BenchmarkGetSaleHandler(b *testing.B) {
	e := newBenchEnv(b)
	if r := e.post("/api/v1/sales/add", saleBody(map[string]any{"invoice_code": "100042", "invoice_number": "100042"})); r.code != 200 {
		b.Fatalf("%s", r.raw)
	}
	e.serveN(b, "/api/v1/sales/100042")
}
