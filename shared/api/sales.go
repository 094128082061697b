package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/store"
	"bizdata/shared/wire"
)

// saleRequest is the body of add and edit.
type saleRequest struct {
	InvoiceCode         Opt[Code]              `json:"invoice_code"`
	InvoiceNumber       Opt[Code]              `json:"invoice_number"`
	CustomerID          Opt[Int]               `json:"customer_id"`
	SubTotal            Opt[money.Amount]      `json:"sub_total_amount"`
	Total               Opt[money.Amount]      `json:"total_amount"`
	AmountPaid          Opt[money.Amount]      `json:"amount_paid"`
	Discount            Opt[money.Amount]      `json:"discount"`
	InvoiceType         Opt[string]            `json:"invoice_type"`
	InvoiceColour       Opt[string]            `json:"invoice_colour"`
	InvoiceNote         Opt[string]            `json:"invoice_note"`
	InvoiceTerms        Opt[string]            `json:"invoice_terms"`
	PaymentType         Opt[string]            `json:"payment_type"`
	PaymentInternalNote Opt[string]            `json:"payment_internal_note"`
	PaymentDate         Opt[string]            `json:"payment_date"`
	PaymentStatus       Opt[string]            `json:"payment_status"`
	IssuedBy            Opt[string]            `json:"issued_by"`
	DueDate             Opt[string]            `json:"due_date"`
	ReminderDate        Opt[string]            `json:"reminder_date"`
	ReminderMessage     Opt[string]            `json:"reminder_message"`
	Items               Opt[[]json.RawMessage] `json:"items"`
}

type lineRequest struct {
	ItemCode    Opt[string]         `json:"item_code"`
	ItemName    Opt[string]         `json:"item_name"`
	Description Opt[string]         `json:"description"`
	UnitPrice   Opt[money.Amount]   `json:"unit_price"`
	Quantity    Opt[money.Quantity] `json:"quantity"`
	Tax         Opt[money.Amount]   `json:"tax"`
}

// requireFields records in fe each required field the request lacks: fields
// maps a field's name to whether the request has it with a non-null value.
func requireFields(fe business.FieldErrors, fields map[string]bool) {
	for name, ok := range fields {
		if !ok {
			fe.Add(name, "is required")
		}
	}
}

// hasValue reports whether the request has the field with a non-null value.
func hasValue[T any](o Opt[T]) bool { return o.Set && !o.Null }

// decodeSale reads a sale request. add selects the add rules (edit requires
// the description's six edit fields instead).
func decodeSale(body []byte, add bool) (saleRequest, []business.SaleLine, error) {
	var req saleRequest
	if err := decodeObject(body, &req, ""); err != nil {
		return req, nil, err
	}
	fe := business.FieldErrors{}
	if add {
		requireFields(fe, map[string]bool{
			"customer_id": hasValue(req.CustomerID), "sub_total_amount": hasValue(req.SubTotal), "total_amount": hasValue(req.Total),
			"amount_paid": hasValue(req.AmountPaid), "invoice_type": hasValue(req.InvoiceType), "payment_type": hasValue(req.PaymentType),
			"due_date": hasValue(req.DueDate),
		})
	} else {
		requireFields(fe, map[string]bool{
			"invoice_code": hasValue(req.InvoiceCode), "invoice_number": hasValue(req.InvoiceNumber), "customer_id": hasValue(req.CustomerID),
			"sub_total_amount": hasValue(req.SubTotal), "total_amount": hasValue(req.Total), "amount_paid": hasValue(req.AmountPaid),
		})
		for name, o := range map[string]Opt[string]{"invoice_type": req.InvoiceType, "payment_type": req.PaymentType, "due_date": req.DueDate} {
			if o.Null {
				fe.Add(name, "must not be null")
			}
		}
	}
	var lines []business.SaleLine
	if req.Items.Set && !req.Items.Null {
		if len(req.Items.V) > business.MaxSaleLines {
			fe.Add("items", fmt.Sprintf("must have at most %d lines", business.MaxSaleLines))
		}
		for i, raw := range req.Items.V {
			if i >= business.MaxSaleLines {
				break
			}
			var lr lineRequest
			p := fmt.Sprintf("items[%d].", i)
			if err := decodeObject(raw, &lr, p); err != nil {
				for k, v := range err.(*business.Error).Fields {
					fe.Add(k, v)
				}
				continue
			}
			requireFields(fe, map[string]bool{p + "item_name": hasValue(lr.ItemName), p + "unit_price": hasValue(lr.UnitPrice), p + "quantity": hasValue(lr.Quantity)})
			lines = append(lines, business.SaleLine{
				ItemCode: strings.TrimSpace(lr.ItemCode.Value("")), ItemName: strings.TrimSpace(lr.ItemName.Value("")),
				Description: strings.TrimSpace(lr.Description.Value("")), UnitPrice: lr.UnitPrice.Value(money.Zero),
				Quantity: lr.Quantity.Value(money.Quantity{}), Tax: lr.Tax.Value(money.Zero),
			})
		}
	}
	return req, lines, fe.Err()
}

// apply copies the fields the request lists onto s: absent keeps, null clears.
func (req saleRequest) apply(s *business.Sale, lines []business.SaleLine, prefix string) error {
	fe := business.FieldErrors{}
	if hasValue(req.InvoiceNumber) {
		num, ok := business.NormalizeInvoiceNumber(prefix, string(req.InvoiceNumber.V))
		if !ok {
			fe.Add("invoice_number", fmt.Sprintf("must be 6 digits (the first not 0), optionally as %s-123456", prefix))
		}
		s.InvoiceNumber = num
	}
	if hasValue(req.CustomerID) {
		s.CustomerID = int64(req.CustomerID.V)
	}
	if hasValue(req.SubTotal) {
		s.SubTotal = req.SubTotal.V
	}
	if hasValue(req.Total) {
		s.Total = req.Total.V
	}
	if hasValue(req.AmountPaid) {
		s.AmountPaid = req.AmountPaid.V
	}
	if req.Discount.Set {
		s.Discount = nil
		if !req.Discount.Null {
			d := req.Discount.V
			s.Discount = &d
		}
	}
	for _, f := range []struct {
		dst *string
		o   Opt[string]
	}{
		{&s.InvoiceType, req.InvoiceType}, {&s.InvoiceColour, req.InvoiceColour}, {&s.InvoiceNote, req.InvoiceNote},
		{&s.InvoiceTerms, req.InvoiceTerms}, {&s.PaymentType, req.PaymentType}, {&s.PaymentInternalNote, req.PaymentInternalNote},
		{&s.PaymentDate, req.PaymentDate}, {&s.IssuedBy, req.IssuedBy}, {&s.DueDate, req.DueDate},
		{&s.ReminderDate, req.ReminderDate}, {&s.ReminderMessage, req.ReminderMessage},
	} {
		setText(f.dst, f.o)
	}
	if req.Items.Set {
		s.Lines = lines
	}
	return fe.Err()
}

func addSale(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	body, idem, err := readCreate(r)
	if err != nil {
		return err
	}
	ns, err := toNewSale(body, acct.InvoicePrefix)
	if err != nil {
		return s.refuseUnlessReplayed(w, r, acct, idem, err)
	}
	resp, err := s.store.CreateSale(r.Context(), acct.ID, ns, idem, func(rec store.SaleRecord) ([]byte, error) {
		return successBody(http.StatusOK, "Sale added successfully", saleData(rec))
	})
	return writeCreated(w, resp, err)
}

// toNewSale reads and validates an add-sale body. Omitted codes are
// generated; the store draws new ones on a collision.
func toNewSale(body []byte, prefix string) (store.NewSale, error) {
	ns := store.NewSale{}
	req, lines, err := decodeSale(body, true)
	if err != nil {
		return ns, err
	}
	sale := &ns.Sale
	if err := req.apply(sale, lines, prefix); err != nil {
		return ns, err
	}
	if !hasValue(req.InvoiceCode) {
		sale.InvoiceCode, ns.CodeGenerated = business.NewInvoiceCode(), true
	} else {
		sale.InvoiceCode = string(req.InvoiceCode.V)
	}
	if !hasValue(req.InvoiceNumber) {
		sale.InvoiceNumber, _ = business.NormalizeInvoiceNumber(prefix, business.NewInvoiceCode())
		ns.NumberGenerated = true
	}
	return ns, sale.Validate(strings.TrimSpace(req.PaymentStatus.Value("")))
}

func getSale(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	code, err := pathCode(r, "invoice_code", business.ValidInvoiceCode, "Sale not found")
	if err != nil {
		return err
	}
	rec, err := s.store.FindSaleByCode(r.Context(), acct.ID, code)
	if err != nil {
		return err
	}
	setETag(w, rec.Sale.Version)
	return writeOK(w, "Sale found", saleData(rec))
}

func editSale(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	code, err := pathCode(r, "invoice_code", business.ValidInvoiceCode, "Sale not found")
	if err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	req, lines, err := decodeSale(body, false)
	if err != nil {
		return err
	}
	if string(req.InvoiceCode.V) != code {
		return business.FieldErrors{"invoice_code": fmt.Sprintf("must equal the invoice code in the path (%s); an invoice code cannot be changed", code)}.Err()
	}
	ifMatch := ifMatchHeader(r)
	rec, err := s.store.UpdateSale(r.Context(), acct.ID, code, func(cur store.SaleRecord, next *business.Sale) error {
		if err := checkIfMatch(ifMatch, cur.Sale.Version); err != nil {
			return err
		}
		if err := req.apply(next, lines, acct.InvoicePrefix); err != nil {
			return err
		}
		if err := business.CheckEdit(&cur.Sale, next); err != nil {
			return err
		}
		return next.Validate(strings.TrimSpace(req.PaymentStatus.Value("")))
	})
	if err != nil {
		return err
	}
	setETag(w, rec.Sale.Version)
	return writeOK(w, "Sale updated successfully", saleData(rec))
}

func listSales(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	q := parseList(r, "invoice_code", "customer_id", "invoice_type", "payment_date", "payment_status", "created_at", "due_date")
	f := store.SaleFilter{
		InvoiceCode:   q.str("invoice_code"),
		CustomerID:    q.id("customer_id"),
		PaymentDate:   q.date("payment_date"),
		PaymentStatus: q.oneOf("payment_status", business.StatusPaid, business.StatusPartial, business.StatusDraft, business.StatusVoid),
		CreatedFrom:   q.lowerBound("created_at"),
		DueTo:         q.upperBound("due_date"),
	}
	if t := q.oneOf("invoice_type", "pos", "invoice", "storefront", "main", "order"); t != "" {
		f.InvoiceType = business.InvoiceTypeFilter[t]
	}
	if f.InvoiceCode != "" && (len(f.InvoiceCode) != 6 || strings.Trim(f.InvoiceCode, "0123456789") != "") {
		q.fe.Add("invoice_code", "must be 6 digits")
	}
	if err := q.err(); err != nil {
		return err
	}
	page, err := s.store.ListSales(r.Context(), acct.ID, f, q.limit, q.cursor)
	if err != nil {
		return err
	}
	return writePage(w, "Sales", "sales", page, wire.NewSale)
}

// saleData is the data of every single-sale response (see wire.SaleRecord).
func saleData(rec store.SaleRecord) wire.SaleRecord {
	return wire.SaleData(rec.Sale, rec.Payments, rec.Refunds)
}
