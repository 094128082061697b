package lambdas_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
	"bizdata/shared/business"
)

// A function that cannot start says why and returns, so that its main (and
// only its main) ends the process.
func TestStartupFailuresReturn(t *testing.T) {
	t.Setenv("DYNAMODB_ENDPOINT", "")
	t.Setenv("CURSOR_SECRET", "")
	t.Setenv("API_KEY_CACHE_TTL", "")
	for name, run := range map[string]func() error{
		"add-customer":     func() error { return lambdas.RunFunction("add-customer") },
		"deliver-webhooks": lambdas.RunDeliverWebhooks,
		"retry-webhooks":   lambdas.RunRetryWebhooks,
	} {
		if err := run(); err == nil || !strings.Contains(err.Error(), name+": CURSOR_SECRET is not set") {
			t.Errorf("%s without CURSOR_SECRET: %v, want an error naming the function and the variable", name, err)
		}
	}
	t.Setenv("DYNAMODB_ENDPOINT", "http://127.0.0.1:1")
	if err := lambdas.RunFunction("no-such-function"); err == nil || !strings.Contains(err.Error(), `"no-such-function"`) {
		t.Errorf("unknown function: %v, want an error naming it", err)
	}
}

// WEBHOOK_ENDPOINT_DISABLE_AFTER sets how long an endpoint's attempts may all
// fail before it is disabled: business.EndpointDisableAfter when unset, and
// a positive Go duration or nothing.
func TestEndpointDisableAfterEnv(t *testing.T) {
	c := app.Config{TableName: "t", Endpoint: "http://127.0.0.1:1", CursorSecret: "x"}
	t.Setenv("WEBHOOK_ENDPOINT_DISABLE_AFTER", "")
	svc, err := lambdas.NewWebhookService(context.Background(), c)
	if err != nil || svc.DisableAfter != business.EndpointDisableAfter {
		t.Fatalf("default %v (%v), want %v", svc.DisableAfter, err, business.EndpointDisableAfter)
	}
	t.Setenv("WEBHOOK_ENDPOINT_DISABLE_AFTER", "90s")
	if svc, err := lambdas.NewWebhookService(context.Background(), c); err != nil || svc.DisableAfter != 90*time.Second {
		t.Fatalf("90s: %v (%v)", svc.DisableAfter, err)
	}
	for _, v := range []string{"0s", "-1h", "5 days", "x"} {
		t.Setenv("WEBHOOK_ENDPOINT_DISABLE_AFTER", v)
		if _, err := lambdas.NewWebhookService(context.Background(), c); err == nil {
			t.Errorf("WEBHOOK_ENDPOINT_DISABLE_AFTER=%s accepted", v)
		}
	}
}
