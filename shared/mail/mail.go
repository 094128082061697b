// Package mail sends the product's email: through Amazon SES (API v2) on AWS,
// through plain SMTP to Mailpit offline. Which one a process uses is read
// from its environment by FromEnv. Nothing here logs, and no error it
// returns carries an address or a body: callers log errors, and an
// address or a reminder's text must never reach a log.
package mail

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
)

// Message is one email to one recipient. The sender's address is the
// Sender's, not the message's.
type Message struct {
	// To is the recipient: an address, optionally with a name
	// ("Ana <ana@example.com>").
	To string
	// Subject is the subject line, in any script.
	Subject string
	// Text is the plain-text body, always sent.
	Text string
	// HTML is an optional HTML body, sent as an alternative to Text.
	HTML string
}

// Sender sends messages.
type Sender interface {
	// Send sends m, within ctx's deadline. An error wrapping ErrNotSent
	// means the message was certainly not accepted (a retry cannot send it
	// twice); any other error leaves it unknown whether it was.
	Send(ctx context.Context, m Message) error
}

var (
	// ErrNotSent wraps the errors after which the message was certainly
	// not accepted for delivery: an invalid message, a refused connection,
	// a rejection by the server.
	ErrNotSent = errors.New("mail not sent")
	// ErrNotConfigured is what the Sender FromEnv returns without
	// SMTP_ADDR or MAIL_FROM answers every Send with (wrapping ErrNotSent).
	ErrNotConfigured = errors.New("email is not configured: set MAIL_FROM (SES) or SMTP_ADDR and MAIL_FROM (SMTP)")
)

// notSent marks err as certainly not sent.
func notSent(err error) error { return fmt.Errorf("%w: %w", ErrNotSent, err) }

// FromEnv returns the Sender the environment asks for: SMTP to SMTP_ADDR
// (host:port, Mailpit offline) when it is set, otherwise SES with awsCfg
// when MAIL_FROM is set; MAIL_FROM is the sender's address in both. With
// neither, the Sender fails every Send with ErrNotConfigured rather than
// dropping mail unseen. ctx is unused: building either client makes no call.
func FromEnv(ctx context.Context, awsCfg aws.Config) (Sender, error) {
	addr, from := os.Getenv("SMTP_ADDR"), os.Getenv("MAIL_FROM")
	if from != "" {
		if _, err := mail.ParseAddress(from); err != nil {
			return nil, fmt.Errorf("MAIL_FROM is not an email address: %w", err)
		}
	}
	switch {
	case addr != "" && from == "":
		return nil, errors.New("SMTP_ADDR is set but MAIL_FROM is not")
	case addr != "":
		return NewSMTP(addr, from), nil
	case from != "":
		return NewSES(sesv2.NewFromConfig(awsCfg), from), nil
	}
	return None(), nil
}

// None is the Sender of a deployment without one: every Send fails with
// ErrNotConfigured.
func None() Sender { return unconfigured{} }

// Configured reports whether s can send at all (FromEnv found a sender).
func Configured(s Sender) bool {
	_, none := s.(unconfigured)
	return !none
}

type unconfigured struct{}

func (unconfigured) Send(context.Context, Message) error { return notSent(ErrNotConfigured) }

// recipient checks m and returns its recipient's bare address.
func (m Message) recipient() (string, error) {
	if m.Subject == "" || m.Text == "" {
		return "", notSent(errors.New("a message needs a subject and a text"))
	}
	if strings.ContainsAny(m.To, "\r\n") {
		return "", notSent(errors.New("recipient holds a line break"))
	}
	to, err := mail.ParseAddress(m.To)
	if err != nil {
		// Only the failure's kind: ParseAddress's errors may quote the input.
		return "", notSent(errors.New("recipient: not one email address"))
	}
	return to.Address, nil
}
