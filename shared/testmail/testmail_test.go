package testmail_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"runtime"
	"testing"
	"time"

	"bizdata/shared/mail"
	"bizdata/shared/testmail"
)

func TestInbox(t *testing.T) {
	inbox := testmail.Start(t)
	if testmail.Start(t) != inbox {
		t.Fatal("a second Start gave another Mailpit")
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	// Mailpit's search finds "ana…@" inside "x.ana…@" too: Messages must not.
	ana := "ana" + hex.EncodeToString(b) + "@example.test"
	other := "x." + ana
	sender := mail.NewSMTP(inbox.SMTPAddr(), "Demo Shop <invoices@bizdata.localhost>")
	subjects := []string{"Υπενθύμιση: τιμολόγιο INV-0042", "Δεύτερη υπενθύμιση: τιμολόγιο INV-0042"}
	for _, m := range []mail.Message{
		{To: ana, Subject: subjects[0], Text: "Υπόλοιπο: 120,50 €", HTML: "<p>Υπόλοιπο: <b>120,50 €</b></p>"},
		{To: other, Subject: "Άλλος πελάτης", Text: "t"},
		{To: ana, Subject: subjects[1], Text: "Υπόλοιπο: 20,50 €"},
	} {
		if err := sender.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	got := inbox.WaitFor(t, ana, 2, 10*time.Second)
	if len(got) != 2 {
		t.Fatalf("%d messages for the recipient, want 2", len(got))
	}
	for i, r := range got { // oldest first
		if r.Subject != subjects[i] || r.From != "invoices@bizdata.localhost" || len(r.To) != 1 || r.To[0] != ana || r.ID == "" {
			t.Errorf("message %d: %+v", i, r)
		}
	}
	if got[0].HTML != "<p>Υπόλοιπο: <b>120,50 €</b></p>" || got[1].HTML != "" {
		t.Errorf("HTML %q and %q", got[0].HTML, got[1].HTML)
	}
	if n := len(inbox.Messages(t, other)); n != 1 {
		t.Errorf("%d messages for the other recipient, want 1", n)
	}
}

// failRecorder is a testing.TB whose Fatalf ends the goroutine, as a
// test's does, and records that it failed.
type failRecorder struct {
	testing.TB
	failed bool
}

func (f *failRecorder) Helper() {}
func (f *failRecorder) Fatalf(string, ...any) {
	f.failed = true
	runtime.Goexit()
}

func TestWaitForFailsOnTimeout(t *testing.T) {
	inbox := testmail.Start(t)
	rec := &failRecorder{TB: t}
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		inbox.WaitFor(rec, "nobody-"+time.Now().Format("150405.000000")+"@example.test", 1, 300*time.Millisecond)
	}()
	<-done
	if took := time.Since(start); !rec.failed || took < 300*time.Millisecond {
		t.Fatalf("WaitFor returned after %s, failed: %v", took, rec.failed)
	}
}
