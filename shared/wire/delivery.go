package wire

import (
	"encoding/json"

	"bizdata/shared/business"
)

// DeliveryAttempt is one attempt of a delivery on the wire.
type DeliveryAttempt struct {
	At         string  `json:"at"`
	StatusCode *int    `json:"status_code"`
	LatencyMS  int64   `json:"latency_ms"`
	Error      *string `json:"error"`
}

// Delivery is a payment's webhook delivery as the API answers it (GET
// /user/webhook/deliveries) and the admin CLI prints it.
type Delivery struct {
	TransactionID string            `json:"transaction_id"`
	WebhookID     string            `json:"webhook_id"`
	InvoiceCode   *string           `json:"invoice_code"`
	Amount        string            `json:"amount"`
	State         string            `json:"state"`
	Attempts      []DeliveryAttempt `json:"attempts"`
	NextAttemptAt *string           `json:"next_attempt_at"`
	CreatedAt     string            `json:"created_at"`
}

// NewDelivery returns d on the wire, with the amount and invoice code its
// payload announces.
func NewDelivery(d business.Delivery) Delivery {
	var p struct {
		Amount      string `json:"amount"`
		InvoiceCode string `json:"invoice_code"`
	}
	_ = json.Unmarshal(d.Payload, &p)
	j := Delivery{TransactionID: d.TransactionID, WebhookID: d.WebhookID, InvoiceCode: Nullable(p.InvoiceCode), Amount: p.Amount,
		State: d.State, Attempts: make([]DeliveryAttempt, len(d.Attempts)), CreatedAt: d.CreatedAt.Format(business.TimeFormat)}
	for i, a := range d.Attempts {
		j.Attempts[i] = DeliveryAttempt{At: a.At.Format(business.TimeFormat), LatencyMS: a.LatencyMS, Error: Nullable(a.Error)}
		if a.Status != 0 {
			st := a.Status
			j.Attempts[i].StatusCode = &st
		}
	}
	if d.Waiting() {
		j.NextAttemptAt = Nullable(d.NextAt.UTC().Format(business.TimeFormat))
	}
	return j
}
