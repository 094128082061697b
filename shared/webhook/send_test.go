package webhook

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"bizdata/shared/business"
)

// TestSendErrorHidesURL checks that a failed attempt's log text does not
// carry the callback URL, whose query may hold a token.
func TestSendErrorHidesURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: the dial is refused
	a, ok := NewSender(true).Send(context.Background(), business.Delivery{WebhookID: "msg_x", Payload: []byte(`{}`)},
		"http://"+addr+"/hook?token=s3cr3t", "", time.Now())
	if ok || a.Error == "" || strings.Contains(a.Error, "s3cr3t") || strings.Contains(a.Error, "/hook") {
		t.Fatalf("attempt %+v", a)
	}
}

// TestSendWithin: an attempt bounded by a limit shorter than Timeout gives
// up on a receiver that does not answer after that limit and says so.
func TestSendWithin(t *testing.T) {
	release := make(chan struct{})
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer rc.Close()
	defer close(release)
	a, ok := NewSender(true).SendWithin(context.Background(), business.Delivery{WebhookID: "msg_x", Payload: []byte(`{}`)},
		rc.URL, "", time.Now(), 300*time.Millisecond)
	if ok || a.Error != "timed out after 300ms" || a.Status != 0 {
		t.Fatalf("attempt %+v", a)
	}
}
