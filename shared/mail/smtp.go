package mail

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strings"
	"time"
)

// SMTPTimeout bounds a Send whose context has no deadline.
const SMTPTimeout = 30 * time.Second

type smtpSender struct {
	addr, from string
}

// NewSMTP returns a Sender that hands each message to the SMTP server at
// addr (host:port) from the address from, without authentication or TLS:
// it is meant for Mailpit on the same machine. Each Send is one connection.
func NewSMTP(addr, from string) Sender { return &smtpSender{addr: addr, from: from} }

// Send delivers m in one SMTP session, within ctx's deadline (SMTPTimeout
// without one). A failure before the server accepted the message's data,
// or any refusal by the server, wraps ErrNotSent.
func (s *smtpSender) Send(ctx context.Context, m Message) error {
	to, err := m.recipient()
	if err != nil {
		return err
	}
	from, err := mail.ParseAddress(s.from)
	if err != nil {
		return notSent(fmt.Errorf("sender address: %w", err))
	}
	msg := compose(from, m, time.Now(), newID())

	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return notSent(err)
	}
	defer conn.Close()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(SMTPTimeout)
	}
	_ = conn.SetDeadline(deadline)
	// A cancelled context ends the session at once, as its deadline would.
	defer context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })()

	host, _, _ := net.SplitHostPort(s.addr)
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		return notSent(smtpError("greeting", err))
	}
	defer c.Close()
	if err := c.Mail(from.Address); err != nil {
		return notSent(smtpError("MAIL FROM", err))
	}
	if err := c.Rcpt(to); err != nil {
		return notSent(smtpError("RCPT TO", err))
	}
	w, err := c.Data()
	if err != nil {
		return notSent(smtpError("DATA", err))
	}
	if _, err := w.Write(msg); err != nil {
		// The final dot is written by Close: the server holds no message yet.
		return notSent(smtpError("DATA", err))
	}
	if err := w.Close(); err != nil {
		var reply *textproto.Error
		if errors.As(err, &reply) {
			return notSent(smtpError("end of DATA", err))
		}
		// The data went out but its answer did not come back.
		return smtpError("end of DATA", err)
	}
	_ = c.Quit() // the message is accepted; the goodbye changes nothing
	return nil
}

// smtpError names the step that failed. A server's reply is reduced to its
// code: its text may repeat the addresses.
func smtpError(step string, err error) error {
	var reply *textproto.Error
	if errors.As(err, &reply) {
		return fmt.Errorf("smtp %s: server answered %d", step, reply.Code)
	}
	return fmt.Errorf("smtp %s: %w", step, err)
}

// newID returns 32 random hex digits, unique to one message.
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// compose returns m from from as an RFC 5322 message with CRLF line ends,
// dated date. Its Message-ID and multipart boundary are made from id, so
// that the same inputs give the same bytes. m must have passed recipient.
func compose(from *mail.Address, m Message, date time.Time, id string) []byte {
	to, _ := mail.ParseAddress(m.To)
	domain := from.Address[strings.LastIndexByte(from.Address, '@')+1:]
	var b bytes.Buffer
	header := func(name, value string) { b.WriteString(fold(name+": "+value) + "\r\n") }
	header("Date", date.Format(time.RFC1123Z))
	header("Message-ID", "<"+id+"@"+domain+">")
	header("From", from.String()) // String encodes a name in any script
	header("To", to.String())
	header("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	header("MIME-Version", "1.0")
	if m.HTML == "" {
		header("Content-Type", "text/plain; charset=utf-8")
		header("Content-Transfer-Encoding", "quoted-printable")
		b.WriteString("\r\n")
		writeQuotedPrintable(&b, m.Text)
		return b.Bytes()
	}
	parts := multipart.NewWriter(&b)
	// "=_" cannot occur in quoted-printable text, so no body can hold the
	// boundary.
	_ = parts.SetBoundary("=_" + id)
	header("Content-Type", mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": parts.Boundary()}))
	b.WriteString("\r\n")
	for _, p := range []struct{ kind, body string }{{"text/plain", m.Text}, {"text/html", m.HTML}} {
		w, _ := parts.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {p.kind + "; charset=utf-8"},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		writeQuotedPrintable(w, p.body)
	}
	_ = parts.Close()
	return b.Bytes()
}

// fold breaks a header line before spaces so that its lines keep within 78
// characters where its words allow (an encoded word is at most 75); a
// reader joins them again by removing the line breaks.
func fold(line string) string {
	var b strings.Builder
	width := 0
	for i, word := range strings.Split(line, " ") {
		if i > 0 {
			if width+1+len(word) > 78 {
				b.WriteString("\r\n")
				width = 0
			}
			b.WriteByte(' ')
			width++
		}
		b.WriteString(word)
		width += len(word)
	}
	return b.String()
}

// writeQuotedPrintable writes s quoted-printable: lines within 76
// characters whatever the script, and CRLF line ends however s ends its
// lines.
func writeQuotedPrintable(w io.Writer, s string) {
	qp := quotedprintable.NewWriter(w)
	_, _ = qp.Write([]byte(s))
	_ = qp.Close()
}
