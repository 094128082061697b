package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"testing"

	"bizdata/shared/api"
	"bizdata/shared/testdb"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

var fuzzMethods = []string{"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"}

// FuzzHTTP feeds method, path, query string, a header and body bytes to the
// live handler on DynamoDB Local. Whatever comes in: never a 5xx other than
// 503 with Retry-After, always the JSON envelope with status equal to the
// HTTP status, and a refused request changes nothing (the account's records
// are compared before and after). Its seeds run in every `make test`; run it
// for longer with
//
//	go test ./shared/api -run '^$' -fuzz FuzzHTTP -fuzztime 10m -parallel 1
func FuzzHTTP(f *testing.F) {
	e := newEnvTTL(f, 0)
	h := api.NewServer(e.store, testdb.Quiet(), 0).Handler(api.Routes)
	seed := func(method, path string, body any) {
		f.Helper()
		raw, _ := json.Marshal(body)
		if body == nil {
			raw = nil
		}
		u, _ := url.Parse(path)
		r := httptest.NewRequest(method, u.RequestURI(), bytes.NewReader(raw))
		r.Header.Set("Authorization", "Bearer "+e.key)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			f.Fatalf("seeding %s %s: %d %s", method, path, w.Code, w.Body)
		}
	}
	seed("POST", "/api/v1/customers/add", map[string]any{"name": "Ama"})
	seed("POST", "/api/v1/inventory/categories/add", map[string]any{"category_name": "Grains"})
	seed("POST", "/api/v1/inventory/items/add", map[string]any{"item_code": "RICE-1", "item_name": "Rice", "category_id": 1, "item_price": 5, "quantity": 3})
	seed("POST", "/api/v1/sales/add", saleBody(map[string]any{"invoice_code": "111111", "invoice_number": "100001",
		"discount": nil, "items": []any{map[string]any{"item_code": "RICE-1", "item_name": "Rice", "unit_price": "12.50", "quantity": 2, "tax": "2.50"}}}))
	seed("POST", "/api/v1/expenses/add", map[string]any{"expense_type": "Rent", "expense_amount": "10", "payment_method": "Cash", "created_by": "Ama"})

	type input struct {
		method      uint8
		path, query string
		hname, hval string
		body        []byte
		auth        uint8
	}
	for _, in := range []input{
		{0, "/api/v1/sales", "customer_id=1&payment_status=partial&limit=1", "", "", nil, 0},
		{0, "/api/v1/sales", "customer_id=1;payment_status=paid", "", "", nil, 0},
		{0, "/api/v1/sales", "payment_status=pa%zzid", "", "", nil, 0},
		{0, "/api/v1/sales", "cursor=eyJQSyI6IngifQ.AAAA", "", "", nil, 0},
		{0, "/api/v1/sales/111111", "", "", "", nil, 1},
		{0, "/api/v1/inventory/items/" + string(bytes.Repeat([]byte("x"), 3000)), "", "", "", nil, 0},
		{0, "/api/v1/expenses", "expense_type=" + string(bytes.Repeat([]byte("%C3%A9"), 1500)), "", "", nil, 0},
		{1, "/api/v1/customers/add", "", "Idempotency-Key", "a,b", []byte(`{"name":"Kofi"}`), 0},
		{1, "/api/v1/inventory/categories/add", "", "Idempotency-Key", "k1", []byte(`{"category_name":"Grains"}`), 0},
		{1, "/api/v1/sales/add", "", "Content-Type", "text/plain", []byte(`{}`), 0},
		{1, "/api/v1/expenses/add", "", "", "", []byte(`{"expense_type":"Rent","expense_amount":"1e3"}`), 0},
		{2, "/api/v1/sales/edit/111111", "", "If-Match", `"v1", "v9"`, []byte(`{"invoice_code":"111111","invoice_number":"100001","customer_id":1,"sub_total_amount":"25.00","total_amount":"27.50","amount_paid":"27.50","customer_id":2}`), 0},
		{2, "/api/v1/inventory/items/RICE-1", "", "", "", []byte(`{"quantity":"999999999.999"}`), 0},
		{2, "/api/v1/customers/1", "", "", "", []byte(`[]`), 2},
		{3, "/api/v1/customers/1", "", "", "", nil, 0},
		{0, "/api/v1/nowhere", "", "", "", nil, 0},
	} {
		f.Add(in.method, in.path, in.query, in.hname, in.hval, in.body, in.auth)
	}

	f.Fuzz(func(t *testing.T, method uint8, path, query, hname, hval string, body []byte, auth uint8) {
		r := &http.Request{
			Method: fuzzMethods[int(method)%len(fuzzMethods)],
			URL:    &url.URL{Path: path, RawQuery: query},
			Header: http.Header{}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
		}
		r.RequestURI = r.URL.RequestURI()
		r = r.WithContext(context.Background())
		switch auth % 3 {
		case 0:
			r.Header.Set("Authorization", "Bearer "+e.key)
		case 1:
			r.Header.Set("Authorization", "Bearer bk_live_unknown")
		}
		r.Header.Set("Content-Type", "application/json")
		if hname != "" && httpHeaderName(hname) {
			r.Header.Set(hname, hval)
		}
		before := tableDigest(t, e)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		res := w.Result()
		if res.StatusCode >= 500 && (res.StatusCode != 503 || res.Header.Get("Retry-After") == "") {
			t.Fatalf("%s %s?%s: %d %s", r.Method, path, query, res.StatusCode, w.Body)
		}
		if res.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s %s: Content-Type %q", r.Method, path, res.Header.Get("Content-Type"))
		}
		var env struct {
			Status int    `json:"status"`
			Error  string `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || env.Status != res.StatusCode {
			t.Fatalf("%s %s: %d with body %s", r.Method, path, res.StatusCode, w.Body)
		}
		if res.StatusCode >= 400 {
			if env.Error == "" {
				t.Fatalf("%s %s: %d without an error text", r.Method, path, res.StatusCode)
			}
			if after := tableDigest(t, e); after != before {
				t.Fatalf("%s %s: refused with %d but changed the table", r.Method, path, res.StatusCode)
			}
		}
	})
}

// httpHeaderName reports whether s can be sent as a header name.
func httpHeaderName(s string) bool {
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || c == ':' {
			return false
		}
	}
	return true
}

// tableDigest is a digest of every item of the table but the id counters (a
// refused create may draw an id: ids may have gaps, no record changes).
func tableDigest(t testing.TB, e *env) string {
	t.Helper()
	var lines []string
	in := &dynamodb.ScanInput{TableName: aws.String(e.store.Table()), ConsistentRead: aws.Bool(true)}
	for {
		out, err := e.store.Client().Scan(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Items {
			if typ, ok := it["type"].(*types.AttributeValueMemberS); ok && typ.Value == "counter" {
				continue
			}
			b, _ := json.Marshal(it)
			lines = append(lines, string(b))
		}
		if out.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	sort.Strings(lines)
	sum := sha256.New()
	for _, l := range lines {
		sum.Write([]byte(l))
	}
	return fmt.Sprintf("%d:%x", len(lines), sum.Sum(nil))
}
