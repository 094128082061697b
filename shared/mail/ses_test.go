package mail_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"bizdata/shared/mail"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
)

// sendEmailRequest is the part of SES's SendEmail request (API v2, REST
// and JSON) the sender fills.
type sendEmailRequest struct {
	FromEmailAddress string
	Destination      struct{ ToAddresses []string }
	Content          struct {
		Simple struct {
			Subject struct{ Data, Charset string }
			Body    struct {
				Text struct{ Data, Charset string }
				HTML *struct{ Data, Charset string } `json:"Html"`
			}
		}
	}
}

// sesServer serves handler at a local URL, as SES's endpoint.
func sesServer(t *testing.T, handler http.HandlerFunc) string {
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv.URL
}

// sesAt returns an SES client of the SDK that sends its requests to
// handler, signed as on AWS, without retries.
func sesAt(t *testing.T, handler http.HandlerFunc) *sesv2.Client {
	return sesv2.New(sesv2.Options{
		Region:       "eu-west-1",
		BaseEndpoint: aws.String(sesServer(t, handler)),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		Retryer:      aws.NopRetryer{},
	})
}

// acceptSendEmail answers a SendEmail as SES does when it accepts the
// message, keeping the request in got.
func acceptSendEmail(t *testing.T, got *sendEmailRequest) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := json.NewDecoder(r.Body).Decode(got); err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"MessageId":"0100018c-example"}`)
	}
}

func TestSESSend(t *testing.T) {
	for name, m := range map[string]mail.Message{
		"Text": {To: "ana@example.com", Subject: "Υπενθύμιση: INV-0042", Text: "Υπόλοιπο: 120,50 €"},
		"HTML": {To: "Ana <ana@example.com>", Subject: "Τιμολόγιο", Text: "Υπόλοιπο", HTML: "<p>Υπόλοιπο</p>"},
	} {
		t.Run(name, func(t *testing.T) {
			var got sendEmailRequest
			accept := acceptSendEmail(t, &got)
			client := sesAt(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || r.URL.Path != "/v2/email/outbound-emails" {
					t.Errorf("%s %s", r.Method, r.URL.Path)
				}
				if auth := r.Header.Get("Authorization"); !strings.Contains(auth, "/eu-west-1/ses/aws4_request") {
					t.Errorf("Authorization %q: not signed for SES", auth)
				}
				accept(w, r)
			})
			if err := mail.NewSES(client, "invoices@shop.example").Send(context.Background(), m); err != nil {
				t.Fatal(err)
			}
			s := got.Content.Simple
			if got.FromEmailAddress != "invoices@shop.example" || len(got.Destination.ToAddresses) != 1 || got.Destination.ToAddresses[0] != m.To {
				t.Errorf("from %q to %q", got.FromEmailAddress, got.Destination.ToAddresses)
			}
			if s.Subject.Data != m.Subject || s.Body.Text.Data != m.Text || s.Subject.Charset != "UTF-8" || s.Body.Text.Charset != "UTF-8" {
				t.Errorf("subject %+v, text %+v", s.Subject, s.Body.Text)
			}
			if m.HTML == "" && s.Body.HTML != nil || m.HTML != "" && (s.Body.HTML == nil || s.Body.HTML.Data != m.HTML || s.Body.HTML.Charset != "UTF-8") {
				t.Errorf("HTML %+v, want %q", s.Body.HTML, m.HTML)
			}
		})
	}
}

// Whatever SES answers with an error, it did not take the message: its
// refusals and its faults (after the SDK's retries) are certainly not
// sent. No error repeats what SES said, which names addresses.
func TestSESErrors(t *testing.T) {
	for _, tc := range []struct {
		status  int
		code    string
		notSent bool
	}{
		{http.StatusBadRequest, "MessageRejected", true},
		{http.StatusTooManyRequests, "TooManyRequestsException", true},
		{http.StatusInternalServerError, "InternalFailure", true},
	} {
		t.Run(tc.code, func(t *testing.T) {
			client := sesAt(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("X-Amzn-ErrorType", tc.code)
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, `{"message":"Email address is not verified: ana@example.com"}`)
			})
			err := mail.NewSES(client, "invoices@shop.example").Send(context.Background(), mail.Message{To: "ana@example.com", Subject: "s", Text: "t"})
			if err == nil || errors.Is(err, mail.ErrNotSent) != tc.notSent || !strings.Contains(err.Error(), tc.code) {
				t.Fatalf("err %v, want %s (not sent: %v)", err, tc.code, tc.notSent)
			}
			if strings.Contains(err.Error(), "@") {
				t.Errorf("error %q names an address", err)
			}
		})
	}
}
