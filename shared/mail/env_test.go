package mail_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"bizdata/shared/mail"
	"bizdata/shared/testmail"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

func TestFromEnv(t *testing.T) {
	var sesGot sendEmailRequest
	awsCfg := aws.Config{
		Region:       "eu-west-1",
		BaseEndpoint: aws.String(sesServer(t, acceptSendEmail(t, &sesGot))),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		Retryer:      func() aws.Retryer { return aws.NopRetryer{} },
	}
	ctx := context.Background()
	fromEnv := func(t *testing.T, smtpAddr, from string) (mail.Sender, error) {
		t.Setenv("SMTP_ADDR", smtpAddr)
		t.Setenv("MAIL_FROM", from)
		return mail.FromEnv(ctx, awsCfg)
	}

	t.Run("SMTP", func(t *testing.T) {
		inbox := testmail.Start(t)
		sender, err := fromEnv(t, inbox.SMTPAddr(), "invoices@bizdata.localhost")
		if err != nil {
			t.Fatal(err)
		}
		to := recipient()
		if err := sender.Send(ctx, mail.Message{To: to, Subject: "Καλημέρα", Text: "t"}); err != nil {
			t.Fatal(err)
		}
		if got := inbox.WaitFor(t, to, 1, 10*time.Second); got[0].From != "invoices@bizdata.localhost" {
			t.Errorf("from %q", got[0].From)
		}
	})
	t.Run("SES", func(t *testing.T) {
		sender, err := fromEnv(t, "", "invoices@shop.example")
		if err != nil {
			t.Fatal(err)
		}
		if err := sender.Send(ctx, mail.Message{To: "ana@example.com", Subject: "s", Text: "t"}); err != nil || sesGot.FromEmailAddress != "invoices@shop.example" {
			t.Fatalf("SES got from %q, err %v", sesGot.FromEmailAddress, err)
		}
	})
	t.Run("NotConfigured", func(t *testing.T) {
		sender, err := fromEnv(t, "", "")
		if err != nil {
			t.Fatal(err)
		}
		err = sender.Send(ctx, mail.Message{To: "ana@example.com", Subject: "s", Text: "t"})
		if !errors.Is(err, mail.ErrNotConfigured) || !errors.Is(err, mail.ErrNotSent) {
			t.Fatalf("err %v, want ErrNotConfigured", err)
		}
	})
	for name, env := range map[string][2]string{
		"SMTPWithoutFrom":  {"127.0.0.1:1025", ""},
		"FromNotAnAddress": {"", "invoices"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := fromEnv(t, env[0], env[1]); err == nil {
				t.Fatal("no error")
			}
		})
	}
}
