package webhook

import (
	"context"
	"net"
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
