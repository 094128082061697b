package api

import (
	"errors"
	"testing"

	"bizdata/shared/business"
)

// FuzzDecodeObject checks that no body panics the strict decoder and that
// every refusal is a 400-class business error with a message.
func FuzzDecodeObject(f *testing.F) {
	for _, s := range []string{`{"name":"x"}`, `{}`, `[]`, `null`, `{"name":1}`, `{"name":"x"}{}`, `{"items":[{"item_name":"a","unit_price":"1.00","quantity":"1"}]}`,
		`{"customer_id":"12","amount_paid":10.5}`, `{"a":`, "\xff", `{"discount":null,"items":null}`, `{"items":[1,{"x":1}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, dst := range []any{&customerRequest{}, &expenseRequest{}, &itemRequest{}} {
			wantClearInvalid(t, decodeObject(body, dst, ""))
		}
		_, _, err := decodeSale(body, true)
		wantClearInvalid(t, err)
		_, _, err = decodeSale(body, false)
		wantClearInvalid(t, err)
	})
}

func wantClearInvalid(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var e *business.Error
	if !errors.As(err, &e) || e.Code != business.EINVALID || e.Message == "" {
		t.Fatalf("decode error %#v is not a clear EINVALID", err)
	}
}
