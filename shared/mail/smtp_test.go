package mail_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"bizdata/shared/mail"
	"bizdata/shared/testmail"
)

// recipient returns an address no other test sends to.
func recipient() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "customer-" + hex.EncodeToString(b) + "@example.test"
}

func TestSMTPSend(t *testing.T) {
	t.Parallel()
	inbox := testmail.Start(t)
	sender := mail.NewSMTP(inbox.SMTPAddr(), "Demo Shop <invoices@bizdata.localhost>")
	for name, m := range map[string]mail.Message{
		"Text": {Subject: "Υπενθύμιση: τιμολόγιο INV-0042", Text: "Υπόλοιπο προς πληρωμή: 120,50 €\nΕυχαριστούμε."},
		"HTML": {Subject: "Τιμολόγιο INV-0043 · 80,00 €", Text: "Υπόλοιπο: 80,00 €", HTML: "<p>Υπόλοιπο: <b>80,00 €</b></p>"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m.To = "Άννα Παπαδοπούλου <" + recipient() + ">"
			to := m.To[strings.IndexByte(m.To, '<')+1 : len(m.To)-1]
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := sender.Send(ctx, m); err != nil {
				t.Fatal(err)
			}
			got := inbox.WaitFor(t, to, 1, 10*time.Second)
			if len(got) != 1 {
				t.Fatalf("%d messages, want 1", len(got))
			}
			r := got[0]
			if r.Subject != m.Subject || r.From != "invoices@bizdata.localhost" || len(r.To) != 1 || r.To[0] != to {
				t.Errorf("received subject %q from %q to %q", r.Subject, r.From, r.To)
			}
			// Lines arrive ending in CRLF, and SMTP ends the message with one.
			if got, want := strings.TrimSuffix(r.Text, "\r\n"), strings.ReplaceAll(m.Text, "\n", "\r\n"); got != want {
				t.Errorf("text %q, want %q", got, want)
			}
			if r.HTML != m.HTML {
				t.Errorf("HTML %q, want %q", r.HTML, m.HTML)
			}
			if !strings.HasSuffix(r.MessageID, "@bizdata.localhost") || time.Since(r.Date).Abs() > time.Minute {
				t.Errorf("Message-ID %q, Date %v", r.MessageID, r.Date)
			}
		})
	}
}

// A connection refused is certainly not a message sent, and the error
// names no address.
func TestSMTPRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	to := recipient()
	err = mail.NewSMTP(addr, "invoices@bizdata.localhost").Send(context.Background(), mail.Message{To: to, Subject: "s", Text: "t"})
	if !errors.Is(err, mail.ErrNotSent) {
		t.Fatalf("err %v, want ErrNotSent", err)
	}
	if strings.Contains(err.Error(), to) || strings.Contains(err.Error(), "invoices@") {
		t.Errorf("error %q names an address", err)
	}
}

// A server that never answers holds Send only until the context ends,
// whether by its deadline or by a cancel.
func TestSMTPSilentServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // silent until the test ends
		}
	}()
	sender := mail.NewSMTP(ln.Addr().String(), "invoices@bizdata.localhost")
	m := mail.Message{To: recipient(), Subject: "s", Text: "t"}
	deadline, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	cancelled, cancelNow := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancelNow)
	for name, ctx := range map[string]context.Context{"Deadline": deadline, "Cancel": cancelled} {
		start := time.Now()
		err := sender.Send(ctx, m)
		if took := time.Since(start); err == nil || took > 5*time.Second {
			t.Errorf("%s: Send returned %v after %s", name, err, took)
		}
	}
}
