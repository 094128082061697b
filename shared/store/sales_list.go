package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// SaleFilter holds the list filters of GET /sales; zero values are unset.
type SaleFilter struct {
	InvoiceCode   string
	CustomerID    int64
	InvoiceType   string // stored vocabulary: main, pos, order
	PaymentDate   string
	PaymentStatus string
	CreatedFrom   string // inclusive lower bound on created_at
	DueTo         string // inclusive upper bound on due_date ("~"-terminated)
}

// ListSales returns a page of sales. The most selective filter picks the
// index the Query runs on, and its key condition carries the created_at
// bound too, so a single filter, and the combinations merchants ask most
// (customer and status; status and due date; customer and created_at), read
// only what they return; further filters are applied by DynamoDB as a filter
// expression, within the request's bound on work. Newest first, except when
// due_date is the only range filter and no customer is named: then by due
// date, latest first.
func (s *Store) ListSales(ctx context.Context, account string, f SaleFilter, limit int, cursor string) (Page[business.Sale], error) {
	base := acctPK(account) + "#SALE"
	q := query{limit: limit, cursor: cursor, names: map[string]string{}, values: attrs{}, views: true}
	var conds []string
	// Index entries carry the sale's view, so filters read its fields there
	// (see view.go).
	cond := func(expr, name string, v types.AttributeValue) {
		q.names["#v"], q.names["#"+name] = viewAttr, name
		q.values[":"+name] = v
		conds = append(conds, fmt.Sprintf(expr, "#v.#"+name, ":"+name))
	}
	created := Range{From: f.CreatedFrom}
	switch {
	case f.InvoiceCode != "":
		q.pk, q.rng = salePK(account, f.InvoiceCode), Range{From: "SALE", To: "SALE"}
		f.InvoiceCode = ""
	case f.CustomerID != 0 && f.PaymentStatus != "":
		q.index, q.pk, q.rng = IndexCustomerStatus, customerStatusPK(base, f.CustomerID, f.PaymentStatus), created
		f.CustomerID, f.PaymentStatus, f.CreatedFrom = 0, "", ""
	case f.CustomerID != 0:
		q.index, q.pk, q.rng = IndexPrimaryFilter, base+"#CUSTOMER#"+strconv.FormatInt(f.CustomerID, 10), created
		f.CustomerID, f.CreatedFrom = 0, ""
	case f.PaymentStatus != "" && f.DueTo != "" && f.CreatedFrom == "":
		q.index, q.pk, q.rng = IndexStatusDue, base+"#STATUS#"+f.PaymentStatus, Range{To: f.DueTo}
		f.PaymentStatus, f.DueTo = "", ""
	case f.PaymentStatus != "":
		q.index, q.pk, q.rng = IndexStatus, base+"#STATUS#"+f.PaymentStatus, created
		f.PaymentStatus, f.CreatedFrom = "", ""
	case f.InvoiceType != "":
		q.index, q.pk, q.rng = IndexType, base+"#TYPE#"+f.InvoiceType, created
		f.InvoiceType, f.CreatedFrom = "", ""
	case f.PaymentDate != "":
		q.index, q.pk, q.rng = IndexPaymentDate, base+"#PAYDATE#"+f.PaymentDate, created
		f.PaymentDate, f.CreatedFrom = "", ""
	case f.DueTo != "" && f.CreatedFrom == "":
		q.index, q.pk, q.rng = IndexUpperBound, base, Range{To: f.DueTo}
		f.DueTo = ""
	default:
		q.index, q.pk, q.rng = IndexCreated, base, created
		f.CreatedFrom = ""
	}
	if f.CustomerID != 0 {
		cond("%s = %s", "customer_id", nInt(f.CustomerID))
	}
	if f.PaymentStatus != "" {
		cond("%s = %s", "payment_status", str(f.PaymentStatus))
	}
	if f.InvoiceType != "" {
		cond("%s = %s", "invoice_type", str(f.InvoiceType))
	}
	if f.PaymentDate != "" {
		cond("%s = %s", "payment_date", str(f.PaymentDate))
	}
	if f.CreatedFrom != "" {
		cond("%s >= %s", "created_at", str(f.CreatedFrom))
	}
	if f.DueTo != "" {
		cond("%s <= %s", "due_date", str(f.DueTo))
	}
	q.filter = strings.Join(conds, " AND ")
	return page(ctx, s, q, saleSummaryFrom)
}
