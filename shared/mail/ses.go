package mail

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"
)

type sesSender struct {
	client *sesv2.Client
	from   string
}

// NewSES returns a Sender that sends through Amazon SES's SendEmail (API
// v2) from the address from, which must be an identity verified in SES.
func NewSES(client *sesv2.Client, from string) Sender { return &sesSender{client: client, from: from} }

// Send sends m as SES's simple content: the subject, the text and the
// optional HTML, all UTF-8. An error SES answered (a rejected message, an
// unverified identity, a quota, throttling or its own fault, after the
// SDK's retries) wraps ErrNotSent: SES answered without taking the
// message. Only a call that got no answer (a timeout, a broken connection)
// may have sent it.
func (s *sesSender) Send(ctx context.Context, m Message) error {
	if _, err := m.recipient(); err != nil {
		return err
	}
	body := &types.Body{Text: utf8(m.Text)}
	if m.HTML != "" {
		body.Html = utf8(m.HTML)
	}
	_, err := s.client.SendEmail(ctx, &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(s.from),
		Destination:      &types.Destination{ToAddresses: []string{m.To}},
		Content:          &types.EmailContent{Simple: &types.Message{Subject: utf8(m.Subject), Body: body}},
	})
	if err == nil {
		return nil
	}
	// SES's messages name the addresses it refused: only the code is kept.
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return notSent(fmt.Errorf("ses SendEmail: %s", apiErr.ErrorCode()))
	}
	return fmt.Errorf("ses SendEmail: %w", err)
}

func utf8(s string) *types.Content {
	return &types.Content{Data: aws.String(s), Charset: aws.String("UTF-8")}
}
