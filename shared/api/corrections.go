package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/store"
	"bizdata/shared/wire"
)

// Corrections: refunds and voids of sales, and the stock ledger (its
// adjustments and its list).

// Text limits of corrections' free text.
const (
	maxReason = 500
	maxNote   = 1000
	maxBy     = 255
)

type refundRequest struct {
	Amount       Opt[money.Amount]      `json:"amount"`
	Reason       Opt[string]            `json:"reason"`
	RefundMethod Opt[string]            `json:"refund_method"`
	IssuedBy     Opt[string]            `json:"issued_by"`
	Lines        Opt[[]json.RawMessage] `json:"lines"`
}

type refundLineRequest struct {
	SalesItemID Opt[Int]            `json:"sales_item_id"`
	Quantity    Opt[money.Quantity] `json:"quantity"`
}

// toNewRefund reads and checks a refund body for form; the sale decides the
// rest (store.RefundSale).
func toNewRefund(body []byte) (store.NewRefund, error) {
	var n store.NewRefund
	var req refundRequest
	if err := decodeObject(body, &req, ""); err != nil {
		return n, err
	}
	fe := business.FieldErrors{}
	requireFields(fe, map[string]bool{"amount": hasValue(req.Amount)})
	if hasValue(req.Amount) && req.Amount.V.IsZero() {
		fe.Add("amount", "must be greater than 0")
	}
	n.Amount = req.Amount.V
	n.Reason = strings.TrimSpace(req.Reason.Value(""))
	business.CheckText(fe, "reason", n.Reason, false, maxReason)
	n.IssuedBy = strings.TrimSpace(req.IssuedBy.Value(""))
	business.CheckText(fe, "issued_by", n.IssuedBy, false, maxBy)
	if hasValue(req.RefundMethod) {
		n.Method = strings.TrimSpace(req.RefundMethod.V)
		if methods := business.PaymentTypes[1:]; !slices.Contains(methods, n.Method) { // not "None": money goes back somehow
			fe.Add("refund_method", "must be one of: "+strings.Join(methods, ", "))
		}
	}
	if hasValue(req.Lines) {
		if len(req.Lines.V) > business.MaxSaleLines {
			fe.Add("lines", fmt.Sprintf("must have at most %d entries", business.MaxSaleLines))
		}
		for i, raw := range req.Lines.V {
			if i >= business.MaxSaleLines {
				break
			}
			p := fmt.Sprintf("lines[%d].", i)
			var lr refundLineRequest
			if err := decodeObject(raw, &lr, p); err != nil {
				for k, v := range err.(*business.Error).Fields {
					fe.Add(k, v)
				}
				continue
			}
			requireFields(fe, map[string]bool{p + "sales_item_id": hasValue(lr.SalesItemID), p + "quantity": hasValue(lr.Quantity)})
			if hasValue(lr.Quantity) && lr.Quantity.V.IsZero() {
				fe.Add(p+"quantity", "must be greater than 0")
			}
			if hasValue(lr.SalesItemID) && int64(lr.SalesItemID.V) > business.MaxSaleLines {
				fe.Add(p+"sales_item_id", fmt.Sprintf("no line with id %d in this sale", lr.SalesItemID.V))
			}
			n.Lines = append(n.Lines, business.RefundLine{LineID: int(lr.SalesItemID.V), Quantity: lr.Quantity.V})
		}
	}
	return n, fe.Err()
}

func refundSale(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	code, err := pathCode(r, "invoice_code", business.ValidInvoiceCode, "Sale not found")
	if err != nil {
		return err
	}
	body, idem, err := readCreate(r)
	if err != nil {
		return err
	}
	n, err := toNewRefund(body)
	if err != nil {
		return s.refuseUnlessReplayed(w, r, acct, idem, err)
	}
	resp, err := s.store.RefundSale(r.Context(), acct.ID, code, n, idem, func(rec store.SaleRecord) ([]byte, error) {
		return successBody(http.StatusOK, "Refund recorded", saleData(rec))
	})
	return writeCreated(w, resp, err)
}

type voidRequest struct {
	Reason Opt[string] `json:"reason"`
}

func voidSale(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	code, err := pathCode(r, "invoice_code", business.ValidInvoiceCode, "Sale not found")
	if err != nil {
		return err
	}
	var body []byte
	var idem *store.Idempotency
	if r.Header.Get("Content-Type") == "" {
		// A void needs no body: `curl -X POST …/void` is enough.
		body, idem, err = readCreate(withEmptyJSON(r))
	} else {
		body, idem, err = readCreate(r)
	}
	if err != nil {
		return err
	}
	var req voidRequest
	if len(strings.TrimSpace(string(body))) > 0 {
		err = decodeObject(body, &req, "")
	}
	reason := strings.TrimSpace(req.Reason.Value(""))
	if err == nil {
		fe := business.FieldErrors{}
		business.CheckText(fe, "reason", reason, false, maxReason)
		err = fe.Err()
	}
	if err != nil {
		return s.refuseUnlessReplayed(w, r, acct, idem, err)
	}
	resp, err := s.store.VoidSale(r.Context(), acct.ID, code, reason, idem, func(rec store.SaleRecord) ([]byte, error) {
		return successBody(http.StatusOK, "Sale voided", saleData(rec))
	})
	return writeCreated(w, resp, err)
}

// withEmptyJSON returns r marked as carrying JSON, for a route whose body is
// optional.
func withEmptyJSON(r *http.Request) *http.Request {
	c := r.Clone(r.Context())
	c.Header.Set("Content-Type", "application/json")
	return c
}

type adjustmentRequest struct {
	Quantity Opt[money.Delta] `json:"quantity"`
	Reason   Opt[string]      `json:"reason"`
	Note     Opt[string]      `json:"note"`
}

func adjustStock(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	code, err := pathCode(r, "item_code", business.ValidItemCode, "Item not found")
	if err != nil {
		return err
	}
	body, idem, err := readCreate(r)
	if err != nil {
		return err
	}
	var req adjustmentRequest
	if err := decodeObject(body, &req, ""); err != nil {
		return s.refuseUnlessReplayed(w, r, acct, idem, err)
	}
	fe := business.FieldErrors{}
	requireFields(fe, map[string]bool{"quantity": hasValue(req.Quantity), "reason": hasValue(req.Reason)})
	if hasValue(req.Quantity) && req.Quantity.V.IsZero() {
		fe.Add("quantity", "must not be 0: send the change of stock, such as \"-2\" or \"10\"")
	}
	reason := strings.TrimSpace(req.Reason.Value(""))
	if hasValue(req.Reason) && !business.ValidAdjustmentReason(reason) {
		fe.Add("reason", "must be one of: "+strings.Join(business.AdjustmentReasons, ", "))
	}
	note := strings.TrimSpace(req.Note.Value(""))
	business.CheckText(fe, "note", note, false, maxNote)
	if err := fe.Err(); err != nil {
		return s.refuseUnlessReplayed(w, r, acct, idem, err)
	}
	resp, err := s.store.AdjustStock(r.Context(), acct.ID, code, req.Quantity.V, reason, note, idem, func(m store.ItemMove) ([]byte, error) {
		return successBody(http.StatusOK, "Stock adjusted", map[string]any{"items": wire.NewItem(m.Item), "movement": wire.NewMovement(m.Movement)})
	})
	return writeCreated(w, resp, err)
}

func listMovements(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	code, err := pathCode(r, "item_code", business.ValidItemCode, "Item not found")
	if err != nil {
		return err
	}
	q := parseList(r)
	if err := q.err(); err != nil {
		return err
	}
	page, err := s.store.ListMovements(r.Context(), acct.ID, code, q.limit, q.cursor)
	if err != nil {
		return err
	}
	return writePage(w, "Movements", "movements", page, wire.NewMovement)
}
