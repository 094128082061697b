package webhook

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzVerify checks that the verifier never panics and never accepts a
// delivery whose signatures are present but not the body's own.
func FuzzVerify(f *testing.F) {
	const secret = "fuzz-secret"
	b := []byte(`{"status":200,"amount":"1.00"}`)
	f.Add(b, Sign(b, secret), "msg_1", "1700000000", SignStandard("msg_1", 1700000000, b, secret))
	f.Add(b, "", "", "", "")
	f.Add([]byte{}, "zz", "x", "-1", "v1,")
	f.Add(b, Sign(b, secret)+"00", "msg_1", "1700000000", "v1,AAAA v1,BBBB")
	now := time.Unix(1700000000, 0)
	v := Verifier{Secret: secret, Now: func() time.Time { return now }}
	f.Fuzz(func(t *testing.T, body []byte, sig, id, ts, std string) {
		h := http.Header{}
		for k, val := range map[string]string{HeaderSignature: sig, HeaderID: id, HeaderTimestamp: ts, HeaderStandardSignature: std} {
			if val != "" {
				h[http.CanonicalHeaderKey(k)] = []string{val}
			}
		}
		if v.Verify(h, body) != nil {
			return
		}
		if h.Get(HeaderSignature) != "" {
			if want := Sign(body, secret); !equalHex(strings.TrimSpace(h.Get(HeaderSignature)), want) {
				t.Fatalf("accepted signature %q for a body whose signature is %q", sig, want)
			}
		}
		if h.Get(HeaderStandardSignature) != "" {
			n, err := strconv.ParseInt(h.Get(HeaderTimestamp), 10, 64)
			if err != nil {
				t.Fatal("accepted a standard signature without a timestamp")
			}
			if d := now.Sub(time.Unix(n, 0)); d > DefaultTolerance || d < -DefaultTolerance {
				t.Fatal("accepted a stale timestamp")
			}
		}
	})
}

func equalHex(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i]|0x20, b[i]|0x20
		if x != y {
			return false
		}
	}
	return true
}
