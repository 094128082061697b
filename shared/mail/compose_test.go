package mail

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"testing"
	"time"
)

const greekSubject = "Υπενθύμιση: τιμολόγιο INV-0042 προς πληρωμή έως 30 Νοεμβρίου"

var (
	composeDate = time.Date(2026, 11, 28, 9, 30, 0, 0, time.FixedZone("", 2*3600))
	shop        = &mail.Address{Name: "Κατάστημα Demo", Address: "invoices@bizdata.localhost"}
)

// readComposed parses what compose built as a mail reader would, checking
// the headers every message has.
func readComposed(t *testing.T, m Message, id string) *mail.Message {
	t.Helper()
	raw := compose(shop, m, composeDate, id)
	if !bytes.Equal(raw, compose(shop, m, composeDate, id)) {
		t.Fatal("the same message composed twice differs")
	}
	head, body, _ := strings.Cut(string(raw), "\r\n\r\n")
	checkLines := func(part, text string, limit int) {
		for i, line := range strings.Split(text, "\r\n") {
			if len(line) > limit {
				t.Errorf("%s line %d is %d characters: %q", part, i+1, len(line), line)
			}
			if strings.ContainsAny(line, "\r\n") {
				t.Errorf("%s line %d holds a bare CR or LF", part, i+1)
			}
			for _, c := range []byte(line) {
				if c >= 0x80 {
					t.Fatalf("%s line %d holds a byte outside ASCII: %q", part, i+1, line)
				}
			}
		}
	}
	// Headers are folded within 78 characters, quoted-printable lines
	// within 76.
	checkLines("header", head, 78)
	checkLines("body", body, 76)
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	h := msg.Header
	if d, err := h.Date(); err != nil || !d.Equal(composeDate) {
		t.Errorf("Date %q (%v), want %v", h.Get("Date"), err, composeDate)
	}
	if got, want := h.Get("Message-ID"), "<"+id+"@bizdata.localhost>"; got != want {
		t.Errorf("Message-ID %q, want %q", got, want)
	}
	if from, err := h.AddressList("From"); err != nil || len(from) != 1 || *from[0] != *shop {
		t.Errorf("From %q: %v (%v)", h.Get("From"), from, err)
	}
	if to, err := h.AddressList("To"); err != nil || len(to) != 1 || to[0].Address != "ana@example.com" {
		t.Errorf("To %q: %v (%v)", h.Get("To"), to, err)
	}
	if got, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject")); err != nil || got != m.Subject {
		t.Errorf("Subject %q decodes to %q (%v), want %q", h.Get("Subject"), got, err, m.Subject)
	}
	if h.Get("MIME-Version") != "1.0" {
		t.Errorf("MIME-Version %q", h.Get("MIME-Version"))
	}
	return msg
}

func TestComposeText(t *testing.T) {
	m := Message{
		To:      "Ana <ana@example.com>",
		Subject: greekSubject,
		// A long line in Greek and a bare LF: quoted-printable must wrap
		// the first and turn the second into CRLF.
		Text: strings.Repeat("Το ποσό προς πληρωμή είναι 120,50 €. ", 6) + "\nΕυχαριστούμε.",
	}
	msg := readComposed(t, m, "0123abcd")
	if !strings.HasPrefix(msg.Header.Get("Subject"), "=?utf-8?q?") {
		t.Errorf("Subject %q is not Q-encoded", msg.Header.Get("Subject"))
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mediaType != "text/plain" || params["charset"] != "utf-8" {
		t.Errorf("Content-Type %q", msg.Header.Get("Content-Type"))
	}
	if got := msg.Header.Get("Content-Transfer-Encoding"); got != "quoted-printable" {
		t.Errorf("Content-Transfer-Encoding %q", got)
	}
	if got := readQuotedPrintable(t, msg.Body); got != strings.ReplaceAll(m.Text, "\n", "\r\n") {
		t.Errorf("body decodes to %q", got)
	}
}

func TestComposeAlternative(t *testing.T) {
	m := Message{
		To:      "ana@example.com",
		Subject: greekSubject,
		Text:    "Υπόλοιπο: 120,50 €",
		HTML:    `<p style="color:#1a73e8">Υπόλοιπο: <b>120,50 €</b></p>`,
	}
	msg := readComposed(t, m, "0123abcd")
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/alternative" || params["boundary"] != "=_0123abcd" {
		t.Fatalf("Content-Type %q (%v)", msg.Header.Get("Content-Type"), err)
	}
	parts := multipart.NewReader(msg.Body, params["boundary"])
	for _, want := range []struct{ kind, body string }{{"text/plain", m.Text}, {"text/html", m.HTML}} {
		// NextRawPart keeps the transfer encoding, to check it.
		p, err := parts.NextRawPart()
		if err != nil {
			t.Fatalf("%s part: %v", want.kind, err)
		}
		if got := p.Header.Get("Content-Type"); got != want.kind+"; charset=utf-8" {
			t.Errorf("part Content-Type %q, want %s", got, want.kind)
		}
		if got := p.Header.Get("Content-Transfer-Encoding"); got != "quoted-printable" {
			t.Errorf("%s part: Content-Transfer-Encoding %q", want.kind, got)
		}
		if got := readQuotedPrintable(t, p); got != want.body {
			t.Errorf("%s part decodes to %q, want %q", want.kind, got, want.body)
		}
	}
	if p, err := parts.NextRawPart(); err != io.EOF {
		t.Errorf("a third part (%v), err %v", p, err)
	}
}

func readQuotedPrintable(t *testing.T, r io.Reader) string {
	t.Helper()
	var b strings.Builder
	if _, err := io.Copy(&b, quotedprintable.NewReader(r)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRecipient(t *testing.T) {
	ok := Message{To: "Ana <ana@example.com>", Subject: "s", Text: "t"}
	if got, err := ok.recipient(); err != nil || got != "ana@example.com" {
		t.Fatalf("recipient %q, %v", got, err)
	}
	for name, m := range map[string]Message{
		"NoAddress":    {To: "ana", Subject: "s", Text: "t"},
		"TwoAddresses": {To: "ana@example.com, bo@example.com", Subject: "s", Text: "t"},
		"LineBreak":    {To: "ana@example.com\r\nBcc: eve@example.com", Subject: "s", Text: "t"},
		"NoSubject":    {To: "ana@example.com", Text: "t"},
		"NoText":       {To: "ana@example.com", Subject: "s"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := m.recipient()
			if !errors.Is(err, ErrNotSent) {
				t.Fatalf("err %v, want ErrNotSent", err)
			}
			if strings.Contains(err.Error(), "ana") {
				t.Errorf("error %q repeats the address", err)
			}
		})
	}
}
