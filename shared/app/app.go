// Package app builds what every process of the product needs from its
// environment: its Config, the DynamoDB and DynamoDB Streams clients, the
// store, the logger, and the adapter through which a Lambda function serves
// API Gateway's events with an http.Handler. What each Lambda function runs
// is shared/app/lambdas's: apart from it, this package imports neither the
// dashboard nor the webhook service, so their tests may import it.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/store"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// Config is what a process reads from its environment.
type Config struct {
	// TableName is TABLE_NAME (default "bizdata").
	TableName string
	// Endpoint is DYNAMODB_ENDPOINT, set for DynamoDB Local; empty on AWS.
	Endpoint string
	// KeyCacheTTL is API_KEY_CACHE_TTL (a Go duration, default and at most
	// 5s: a rotated key stops working within it).
	KeyCacheTTL time.Duration
	// CursorSecret is CURSOR_SECRET, the key that signs list cursors. Required
	// on AWS; local runs default to a fixed development secret.
	CursorSecret string
}

// devCursorSecret signs cursors on DynamoDB Local when CURSOR_SECRET is unset.
const devCursorSecret = "local-development-cursor-secret"

// FromEnv reads Config from the environment.
func FromEnv() (Config, error) {
	c := Config{
		TableName:    os.Getenv("TABLE_NAME"),
		Endpoint:     os.Getenv("DYNAMODB_ENDPOINT"),
		KeyCacheTTL:  api.DefaultKeyCacheTTL,
		CursorSecret: os.Getenv("CURSOR_SECRET"),
	}
	if c.TableName == "" {
		c.TableName = "bizdata"
	}
	if v := os.Getenv("API_KEY_CACHE_TTL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > api.MaxKeyCacheTTL {
			return c, fmt.Errorf("API_KEY_CACHE_TTL=%q: want a duration from 0 to %s, such as 5s", v, api.MaxKeyCacheTTL)
		}
		c.KeyCacheTTL = d
	}
	if c.CursorSecret == "" {
		if c.Endpoint == "" {
			return c, errors.New("CURSOR_SECRET is not set")
		}
		c.CursorSecret = devCursorSecret
	}
	return c, nil
}

// NewDynamoDB returns a DynamoDB client. With an endpoint it talks to
// DynamoDB Local with fixed local credentials; otherwise it uses the
// standard AWS configuration chain.
func NewDynamoDB(ctx context.Context, endpoint string, optFns ...func(*dynamodb.Options)) (*dynamodb.Client, error) {
	cfg, err := awsConfig(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	optFns = append([]func(*dynamodb.Options){lambdaBudget}, optFns...)
	if endpoint != "" {
		optFns = append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
			o.BaseEndpoint = aws.String(endpoint)
			// DynamoDB Local's CRC32 header does not always match its body.
			o.DisableValidateResponseChecksum = true
		}}, optFns...)
	}
	return dynamodb.NewFromConfig(cfg, optFns...), nil
}

// The SDK's retries of one DynamoDB call (lambdaBudget).
const (
	DynamoDBMaxAttempts    = 3
	DynamoDBMaxBackoff     = 250 * time.Millisecond
	DynamoDBAttemptTimeout = 3 * time.Second
	// DynamoDBCallWorstCase is the longest one DynamoDB call can take with
	// its retries: every attempt timing out, with the longest backoff
	// between them (9.5 s).
	DynamoDBCallWorstCase = DynamoDBMaxAttempts*DynamoDBAttemptTimeout + (DynamoDBMaxAttempts-1)*DynamoDBMaxBackoff
)

// lambdaBudget fits the SDK's retries into a function's 10 s: three
// attempts at most, backoff under 250 ms, 3 s per attempt, and no client-side
// retry quota (under throttling the quota would fail calls that DynamoDB
// might serve). What still fails is answered 503 with Retry-After, and the
// client retries.
//
// The client talks to one host, DynamoDB's endpoint, so it keeps as many
// idle connections to it as it keeps in all (the SDK's default keeps 10 per
// host): a process serving many requests at once (the devserver) reuses its
// connections instead of closing all but 10 after each burst and dialling
// them again on the next.
func lambdaBudget(o *dynamodb.Options) {
	o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
		so.MaxAttempts = DynamoDBMaxAttempts
		so.MaxBackoff = DynamoDBMaxBackoff
		so.RateLimiter = ratelimit.None
	})
	AttemptTimeout(DynamoDBAttemptTimeout)(o)
}

// AttemptTimeout sets how long one attempt of a DynamoDB call may take
// (lambdaBudget's is DynamoDBAttemptTimeout), on a client that keeps as many
// idle connections to its one host as it keeps in all.
func AttemptTimeout(d time.Duration) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.HTTPClient = awshttp.NewBuildableClient().WithTimeout(d).
			WithTransportOptions(func(t *http.Transport) { t.MaxIdleConnsPerHost = t.MaxIdleConns })
	}
}

// NewStore builds the store Config describes.
func NewStore(ctx context.Context, c Config, optFns ...func(*dynamodb.Options)) (*store.Store, error) {
	db, err := NewDynamoDB(ctx, c.Endpoint, optFns...)
	if err != nil {
		return nil, err
	}
	st := store.New(db, c.TableName)
	st.SetCursorSecret([]byte(c.CursorSecret))
	// A change whose report figures cannot be applied is kept aside and
	// reports say they are incomplete: the log line is what an operator
	// (or an alarm on it) acts on.
	st.OnParkedFigures(func(account, id string, cause error) {
		Logger().Error("report figures set aside: they could not be applied", "account_id", account, "figures_id", id, "error", cause.Error())
	})
	return st, nil
}

// Logger is the JSON logger every process writes to stdout.
func Logger() *slog.Logger { return slog.New(slog.NewJSONHandler(os.Stdout, nil)) }

// LambdaHandler serves API Gateway HTTP API (payload v2) events with h. It
// converts events with httpadapter, with two differences, so that no input
// can make the function fail (API Gateway would answer its own 500):
//   - the path: an HTTP API hands rawPath over decoded ("%25" arrives as "%",
//     "%00" as NUL, "%3F" as "?"), and the adapter pastes it into a URL it
//     then parses, failing or misreading it; the path is escaped first, so the
//     route sees the path the client sent, decoded once, as the devserver does;
//   - the headers: the adapter splits every header on commas into several
//     values, so an Idempotency-Key or If-Match holding a comma would reach h
//     in pieces. Here each header reaches h as API Gateway sent it, one value
//     (repeated headers already joined by commas), as the devserver gives it.
//
// An event the adapter still cannot convert (a body marked base64 that is
// not) is answered 400 with the API's envelope.
func LambdaHandler(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	adapter := httpadapter.NewV2(h)
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		if ev.RawPath == "" { // the adapter would take this one, unescaped
			ev.RawPath = ev.RequestContext.HTTP.Path
		}
		ev.RawPath = (&url.URL{Path: ev.RawPath}).EscapedPath()
		w := core.NewProxyResponseWriterV2()
		req, err := adapter.EventToRequestWithContext(ctx, ev)
		if err != nil {
			api.Unreadable(ctx, w)
			return w.GetProxyResponse()
		}
		for k, v := range ev.Headers {
			req.Header[textproto.CanonicalMIMEHeaderKey(k)] = []string{v}
		}
		h.ServeHTTP(http.ResponseWriter(w), req)
		return w.GetProxyResponse()
	}
}

// NewStreams returns a DynamoDB Streams client configured like NewDynamoDB:
// DynamoDB Local's at endpoint (the devserver's stream poller), AWS's
// without one (the drain of the stream's failure queue).
func NewStreams(ctx context.Context, endpoint string) (*dynamodbstreams.Client, error) {
	cfg, err := awsConfig(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	return dynamodbstreams.NewFromConfig(cfg, func(o *dynamodbstreams.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}), nil
}

// awsConfig is AWS's standard configuration chain, or with a local
// endpoint (DynamoDB Local) a fixed region and placeholder credentials.
func awsConfig(ctx context.Context, endpoint string) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if endpoint != "" {
		opts = append(opts,
			config.WithRegion("us-east-1"),
			config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load aws config: %w", err)
	}
	return cfg, nil
}

// AWSConfig is AWS's standard configuration chain, for the clients of
// services that have no local stand-in in the table's place (SES).
func AWSConfig(ctx context.Context) (aws.Config, error) { return awsConfig(ctx, "") }
