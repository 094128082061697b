package webhook

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The vectors were computed with openssl:
//
//	openssl dgst -sha256 -hmac whsec-test-secret testdata/payment.json
//	(printf 'msg_txn_1.1700000000.'; cat testdata/payment.json) | openssl dgst -sha256 -hmac whsec-test-secret -binary | base64
const (
	vectorSecret = "whsec-test-secret"
	vectorHex    = "1d36bd0e5794050d6ddad75e5c7a3b49727aef839bb9b601b112d29646920077"
	vectorStd    = "v1,srBsXaE4ZwTw/kh1mq8nJhktulGVwrf/QzZR0vy2tSk="
)

func body(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/payment.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSignVectors(t *testing.T) {
	b := body(t)
	if got := Sign(b, vectorSecret); got != vectorHex {
		t.Errorf("Sign = %s, want %s", got, vectorHex)
	}
	if got := SignStandard("msg_txn_1", 1700000000, b, vectorSecret); got != vectorStd {
		t.Errorf("SignStandard = %s, want %s", got, vectorStd)
	}
}

func TestVerifier(t *testing.T) {
	b := body(t)
	now := time.Unix(1700000000, 0)
	v := Verifier{Secret: vectorSecret, Now: func() time.Time { return now }}
	lenient := Verifier{Secret: vectorSecret, Now: v.Now, Lenient: true}
	headers := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	good := []string{HeaderSignature, vectorHex, HeaderID, "msg_txn_1", HeaderTimestamp, "1700000000", HeaderStandardSignature, vectorStd}
	tampered := []byte(strings.Replace(string(b), "50.00", "500.00", 1))
	cases := []struct {
		name string
		h    http.Header
		body []byte
		v    Verifier
		want error
	}{
		{"Good", headers(good...), b, v, nil},
		{"UppercaseHex", headers(append([]string{HeaderSignature, strings.ToUpper(vectorHex)}, good[2:]...)...), b, v, nil},
		{"TamperedBody", headers(good...), tampered, v, ErrBadSignature},
		{"WrongSecret", headers(good...), b, Verifier{Secret: "other-secret", Now: v.Now}, ErrBadSignature},
		{"GarbageSignature", headers(append([]string{HeaderSignature, "zz"}, good[2:]...)...), b, v, ErrBadSignature},
		// With a secret, stripping headers is refused, not waved through.
		{"StrippedAll", headers(), b, v, ErrUnsigned},
		{"HexOnly", headers(HeaderSignature, vectorHex), b, v, ErrUnsigned},
		{"StrippedTimestamp", headers(HeaderSignature, vectorHex, HeaderID, "msg_txn_1", HeaderStandardSignature, vectorStd), b, v, ErrUnsigned},
		// A webhook endpoint's delivery: the Standard Webhooks headers only.
		{"StandardOnly", headers(good[2:]...), b, v, nil},
		{"StandardOnlyTampered", headers(good[2:]...), tampered, v, ErrBadSignature},
		{"NoSecretProcessesAll", headers(), b, Verifier{}, nil},
		{"LenientMissingProcessed", headers(), b, lenient, nil},
		{"LenientHexOnly", headers(HeaderSignature, vectorHex), b, lenient, nil},
		{"LenientStdWrongID", headers(HeaderID, "msg_other", HeaderTimestamp, "1700000000", HeaderStandardSignature, vectorStd), b, lenient, ErrBadSignature},
		{"Stale", headers(good...), b, Verifier{Secret: vectorSecret, Now: func() time.Time { return now.Add(6 * time.Minute) }}, ErrStale},
		{"Future", headers(good...), b, Verifier{Secret: vectorSecret, Now: func() time.Time { return now.Add(-6 * time.Minute) }}, ErrStale},
		{"StdWrongID", headers(HeaderSignature, vectorHex, HeaderID, "msg_other", HeaderTimestamp, "1700000000", HeaderStandardSignature, vectorStd), b, v, ErrBadSignature},
		{"StdRotation", headers(HeaderSignature, vectorHex, HeaderID, "msg_txn_1", HeaderTimestamp, "1700000000", HeaderStandardSignature, "v1,AAAA "+vectorStd), b, v, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.v.Verify(c.h, c.body); err != c.want {
				t.Fatalf("Verify = %v, want %v", err, c.want)
			}
		})
	}
}

func TestVerifierHandler(t *testing.T) {
	b := body(t)
	ts := time.Now().Unix()
	h := Verifier{Secret: vectorSecret}.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	send := func(body []byte, sig string) int {
		req := httptest.NewRequest("POST", "/", strings.NewReader(string(body)))
		if sig != "" {
			req.Header.Set(HeaderSignature, sig)
		}
		req.Header.Set(HeaderID, "msg_txn_1")
		req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
		req.Header.Set(HeaderStandardSignature, SignStandard("msg_txn_1", ts, b, vectorSecret))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if c := send(b, vectorHex); c != 200 {
		t.Errorf("good delivery: %d", c)
	}
	if c := send([]byte(strings.Replace(string(b), "txn_1", "txn_2", 1)), vectorHex); c != 401 {
		t.Errorf("tampered delivery: %d, want 401", c)
	}
}
