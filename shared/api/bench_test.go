package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
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
	h := e.srv.Config.Handler
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest("GET", "/api/v1/sales?limit=50", nil)
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
