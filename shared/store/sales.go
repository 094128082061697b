package store

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/money"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// SaleRecord is a sale with its payments and refunds, oldest first:
// everything a sale's response shows, read with one Query (more only for a
// sale whose payments pass 1 MB; see findSale).
type SaleRecord struct {
	Sale     business.Sale
	Payments []business.Payment
	Refunds  []business.Refund
	// Notices are the notices sent for the sale (see SentNotice).
	Notices []SentNotice
	// uncounted says the sale item was written before reports: its count
	// and total are not in the figures yet (see countedAttr).
	uncounted bool
	// owedCounted says what the sale owes is in the kept receivables (see
	// owedCountedAttr).
	owedCounted bool
}

func salePK(account, code string) string { return acctPK(account) + "#SALE#" + code }

func invoiceNumberGuard(account, number string) attrs {
	return key(acctPK(account)+"#UNIQUE#invoice_number#"+number, "UNIQUE")
}

func saleKeyed(account string, sale business.Sale, it attrs) {
	created := fmtTime(sale.CreatedAt) + "#" + pad(sale.ID)
	base := acctPK(account) + "#SALE"
	it[IndexCreated.PK], it[IndexCreated.SK] = str(base), str(created)
	it[IndexPrimaryFilter.PK], it[IndexPrimaryFilter.SK] = str(base+"#CUSTOMER#"+strconv.FormatInt(sale.CustomerID, 10)), str(created)
	it[IndexType.PK], it[IndexType.SK] = str(base+"#TYPE#"+sale.InvoiceType), str(created)
	it[IndexStatus.PK], it[IndexStatus.SK] = str(base+"#STATUS#"+sale.PaymentStatus), str(created)
	if sale.PaymentDate != "" {
		it[IndexPaymentDate.PK], it[IndexPaymentDate.SK] = str(base+"#PAYDATE#"+sale.PaymentDate), str(created)
	}
	it[IndexUpperBound.PK], it[IndexUpperBound.SK] = str(base), str(sale.DueDate+"#"+pad(sale.ID))
	it[IndexCustomerStatus.PK], it[IndexCustomerStatus.SK] = str(customerStatusPK(base, sale.CustomerID, sale.PaymentStatus)), str(created)
	it[IndexStatusDue.PK], it[IndexStatusDue.SK] = str(base+"#STATUS#"+sale.PaymentStatus), str(sale.DueDate+"#"+pad(sale.ID))
}

func customerStatusPK(base string, customer int64, status string) string {
	return base + "#CUSTOMER#" + strconv.FormatInt(customer, 10) + "#STATUS#" + status
}

func saleItem(account string, sale business.Sale) attrs {
	it := key(salePK(account, sale.InvoiceCode), "SALE")
	it["type"] = str("sale")
	it["invoice_code"] = str(sale.InvoiceCode)
	it["invoice_number"] = str(sale.InvoiceNumber)
	it["customer_id"] = nInt(sale.CustomerID)
	setS(it, "customer_name", sale.CustomerName)
	it["sub_total_amount"] = num(sale.SubTotal.String())
	it["total_amount"] = num(sale.Total.String())
	it["amount_paid"] = num(sale.AmountPaid.String())
	if sale.Discount != nil {
		it["discount"] = num(sale.Discount.String())
	}
	it["invoice_type"] = str(sale.InvoiceType)
	setS(it, "invoice_colour", sale.InvoiceColour)
	setS(it, "invoice_note", sale.InvoiceNote)
	setS(it, "invoice_terms", sale.InvoiceTerms)
	setS(it, "payment_internal_note", sale.PaymentInternalNote)
	setS(it, "payment_date", sale.PaymentDate)
	it["payment_type"] = str(sale.PaymentType)
	it["payment_status"] = str(sale.PaymentStatus)
	setS(it, "issued_by", sale.IssuedBy)
	it["due_date"] = str(sale.DueDate)
	setS(it, "reminder_date", sale.ReminderDate)
	setS(it, "reminder_message", sale.ReminderMessage)
	setStamps(it, sale.ID, sale.CreatedAt, sale.UpdatedAt, sale.Version)
	it["payments"] = nInt(int64(sale.Payments))
	it["amount_refunded"] = num(sale.AmountRefunded.String())
	it["refunds"] = nInt(int64(sale.Refunds))
	setS(it, "void_reason", sale.VoidReason)
	if !sale.VoidedAt.IsZero() {
		it["voided_at"] = str(fmtTime(sale.VoidedAt))
	}
	if l := sale.Link; l != nil {
		it["link"] = &types.AttributeValueMemberM{Value: attrs{
			"hash": str(l.Hash), "sealed": str(l.Sealed), "created_at": str(fmtTime(l.CreatedAt)),
		}}
	}
	if len(sale.Scheduled) > 0 {
		sched := make([]types.AttributeValue, len(sale.Scheduled))
		for i, sk := range sale.Scheduled {
			sched[i] = str(sk)
		}
		it["scheduled"] = &types.AttributeValueMemberL{Value: sched}
	}
	lines := make([]types.AttributeValue, len(sale.Lines))
	for i, l := range sale.Lines {
		m := attrs{
			"item_name":  str(l.ItemName),
			"unit_price": num(l.UnitPrice.String()),
			"quantity":   num(l.Quantity.String()),
			"tax":        num(l.Tax.String()),
		}
		setS(m, "item_code", l.ItemCode)
		setS(m, "description", l.Description)
		if !l.Returned.IsZero() {
			m["returned"] = num(l.Returned.String())
		}
		lines[i] = &types.AttributeValueMemberM{Value: m}
	}
	it["lines"] = &types.AttributeValueMemberL{Value: lines}
	saleKeyed(account, sale, it)
	markCounted(it)
	markOwedCounted(it)
	return pack(it)
}

// amountAt reads a stored amount; stored values were valid when written.
func amountAt(it attrs, k string) money.Amount {
	a, err := money.ParseAmount(getN(it, k))
	if err != nil {
		return money.Zero
	}
	return a
}

// saleFrom reads a sale item with its lines.
func saleFrom(it attrs) business.Sale {
	sale := saleSummaryFrom(it)
	sale.Lines = linesFrom(it)
	return sale
}

// saleSummaryFrom reads a sale item without its lines, as lists show it.
func saleSummaryFrom(it attrs) business.Sale {
	it = unpack(it)
	sale := business.Sale{
		ID:                  getInt(it, "id"),
		InvoiceCode:         getS(it, "invoice_code"),
		InvoiceNumber:       getS(it, "invoice_number"),
		CustomerID:          getInt(it, "customer_id"),
		CustomerName:        getS(it, "customer_name"),
		SubTotal:            amountAt(it, "sub_total_amount"),
		Total:               amountAt(it, "total_amount"),
		AmountPaid:          amountAt(it, "amount_paid"),
		InvoiceType:         getS(it, "invoice_type"),
		InvoiceColour:       getS(it, "invoice_colour"),
		InvoiceNote:         getS(it, "invoice_note"),
		InvoiceTerms:        getS(it, "invoice_terms"),
		PaymentInternalNote: getS(it, "payment_internal_note"),
		PaymentDate:         getS(it, "payment_date"),
		PaymentType:         getS(it, "payment_type"),
		PaymentStatus:       getS(it, "payment_status"),
		IssuedBy:            getS(it, "issued_by"),
		DueDate:             getS(it, "due_date"),
		ReminderDate:        getS(it, "reminder_date"),
		ReminderMessage:     getS(it, "reminder_message"),
		CreatedAt:           getTime(it, "created_at"),
		UpdatedAt:           getTime(it, "updated_at"),
		Version:             getInt(it, "version"),
		Payments:            int(getInt(it, "payments")),
		AmountRefunded:      amountAt(it, "amount_refunded"),
		Refunds:             int(getInt(it, "refunds")),
		VoidReason:          getS(it, "void_reason"),
	}
	if _, ok := it["voided_at"]; ok {
		sale.VoidedAt = getTime(it, "voided_at")
	}
	if _, ok := it["discount"]; ok {
		d := amountAt(it, "discount")
		sale.Discount = &d
	}
	if l, ok := it["link"].(*types.AttributeValueMemberM); ok {
		sale.Link = &business.InvoiceLink{Hash: getS(l.Value, "hash"), Sealed: getS(l.Value, "sealed"), CreatedAt: getTime(l.Value, "created_at")}
	}
	if l, ok := it["scheduled"].(*types.AttributeValueMemberL); ok {
		for _, v := range l.Value {
			if sk, ok := v.(*types.AttributeValueMemberS); ok {
				sale.Scheduled = append(sale.Scheduled, sk.Value)
			}
		}
	}
	return sale
}

func linesFrom(it attrs) []business.SaleLine {
	var lines []business.SaleLine
	if l, ok := it["lines"].(*types.AttributeValueMemberL); ok {
		for _, v := range l.Value {
			m, _ := v.(*types.AttributeValueMemberM)
			if m == nil {
				continue
			}
			q, _ := money.ParseQuantity(getN(m.Value, "quantity"))
			lines = append(lines, business.SaleLine{
				ItemCode:    getS(m.Value, "item_code"),
				ItemName:    getS(m.Value, "item_name"),
				Description: getS(m.Value, "description"),
				UnitPrice:   amountAt(m.Value, "unit_price"),
				Quantity:    q,
				Tax:         amountAt(m.Value, "tax"),
				Returned:    quantityAt(m.Value, "returned"),
			})
		}
	}
	return lines
}

// saleEntry starts the item of a payment or a refund (kind), number seq of
// its sale, in the sale's partition: with the account and the transaction
// id its webhook names, and an entry in the due index by the hour at.
func saleEntry(account, kind string, seq int, id, code, number, customer string, at time.Time) attrs {
	it := key(salePK(account, code), fmt.Sprintf("%s#%04d", entryPrefixes[kind], seq))
	it["type"] = str(kind)
	it["account_id"] = str(account)
	it["seq"] = nInt(int64(seq))
	it["transaction_id"] = str(id)
	it["invoice_code"] = str(code)
	it["invoice_number"] = str(number)
	setS(it, "customer_name", customer)
	it[IndexDue.PK], it[IndexDue.SK] = str(paidPartition(account, at)), str(paidSK(account, at, id))
	markCounted(it)
	return it
}

// entryPrefixes are the sort key prefixes of a sale's entries by kind.
var entryPrefixes = map[string]string{"payment": "PAY", "refund": "REFUND"}

func paymentItem(account string, p business.Payment) attrs {
	it := saleEntry(account, "payment", p.Seq, p.TransactionID, p.InvoiceCode, p.InvoiceNumber, p.CustomerName, p.PaymentAt)
	it["amount_paid"] = num(p.Amount.String())
	it["payment_method"] = str(p.Method)
	setS(it, "internal_payment_note", p.InternalNote)
	setS(it, "issued_by", p.IssuedBy)
	it["payment_status"] = str(p.PaymentStatus)
	it["payment_at"] = str(fmtTime(p.PaymentAt))
	return it
}

// PaymentFrom reads a payment item, as stored or as a stream image carries it.
func PaymentFrom(it map[string]types.AttributeValue) business.Payment {
	return business.Payment{
		Seq:           int(getInt(it, "seq")),
		TransactionID: getS(it, "transaction_id"),
		InvoiceCode:   getS(it, "invoice_code"),
		InvoiceNumber: getS(it, "invoice_number"),
		CustomerName:  getS(it, "customer_name"),
		Amount:        amountAt(it, "amount_paid"),
		Method:        getS(it, "payment_method"),
		InternalNote:  getS(it, "internal_payment_note"),
		IssuedBy:      getS(it, "issued_by"),
		PaymentStatus: getS(it, "payment_status"),
		PaymentAt:     getTime(it, "payment_at"),
	}
}

// NewSale is a sale to create, validated, with flags saying which of its
// unique values were generated (a collision on those picks another value; on
// a client's value it is ECONFLICT).
type NewSale struct {
	Sale            business.Sale
	CodeGenerated   bool
	NumberGenerated bool
}

// CreateSale stores a new sale, its invoice number's uniqueness guard and,
// when amount_paid is above 0, its first payment, in one transaction. The
// customer must exist (EINVALID otherwise). Returns ECONFLICT when the
// invoice code or number is taken, and the response render produced.
func (s *Store) CreateSale(ctx context.Context, account string, ns NewSale, idem *Idempotency, render Render[SaleRecord]) ([]byte, error) {
	sale := ns.Sale
	moves := business.StockMoves(nil, sale.Lines)
	if err := business.CheckStockedItems(moves, MaxStockedItemsPerSale); err != nil {
		return nil, err
	}
	codes, keys := stockKeys(account, moves)
	reads := append([]attrs{customerKey(account, sale.CustomerID)}, keys...)
	defaultDate := sale.NeedsPaymentDate()
	readZones := defaultDate || sale.Owes()
	if readZones {
		// The default payment_date and the notices' days are the
		// business's dates: the account's timezone history, read (after
		// now is stamped) alongside the rest.
		reads = append(reads, accountKey(account))
	}
	return s.create(ctx, createSpec{
		account: account, kind: "sale", idem: idem,
		reads: reads,
		build: func(id int64, now time.Time, reads []attrs) ([]txItem, []byte, error) {
			var hist business.TimezoneHistory
			if readZones {
				hist, reads = timezonesFrom(reads[len(reads)-1]), reads[:len(reads)-1]
			}
			if defaultDate { // each attempt dates the payment at its own now
				sale.PaymentDate = ""
			}
			// Generated values are drawn first: the movements name the code.
			if ns.CodeGenerated {
				sale.InvoiceCode = business.NewInvoiceCode()
			}
			if ns.NumberGenerated {
				prefix, _, _ := strings.Cut(sale.InvoiceNumber, "-")
				sale.InvoiceNumber, _ = business.NormalizeInvoiceNumber(prefix, business.NewInvoiceCode())
			}
			ev := newEvents(account, now)
			stock, _, err := s.stockActions(account, moves, byCode(codes, reads[1:]), now, business.StockCause{Kind: business.MoveSale, InvoiceCode: sale.InvoiceCode}, ev)
			if err != nil {
				return nil, nil, err
			}
			if reads[0] == nil {
				return nil, nil, business.MissingCustomer(sale.CustomerID)
			}
			sale.CustomerName = customerFrom(reads[0]).Name
			sale.ID, sale.CreatedAt, sale.UpdatedAt, sale.Version = id, now, now, 1
			sale.DefaultPaymentDate(now, hist)
			notices := s.planNotices(account, nil, &sale, hist, now)
			rec := SaleRecord{}
			if p := business.NewPayment(sale, money.Zero, now); p != nil {
				sale.Payments = 1
				p.Seq = 1
				rec.Payments = []business.Payment{*p}
			}
			rec.Sale = sale
			body, err := render(rec)
			if err != nil {
				return nil, nil, err
			}
			// A generated value that collides is drawn again; a client's is a 409.
			codeTaken, numberTaken := business.Taken("invoice_code", sale.InvoiceCode), business.Taken("invoice_number", sale.InvoiceNumber)
			if ns.CodeGenerated {
				codeTaken = errRetry
			}
			if ns.NumberGenerated {
				numberTaken = errRetry
			}
			guard := invoiceNumberGuard(account, sale.InvoiceNumber)
			guard["type"], guard["invoice_code"] = str("unique"), str(sale.InvoiceCode)
			actions := []txItem{
				{action: put(s.table, saleItem(account, sale), "attribute_not_exists(PK)"), onFail: codeTaken},
				{action: put(s.table, guard, "attribute_not_exists(PK)"), onFail: numberTaken},
			}
			for _, p := range rec.Payments {
				actions = append(actions, txItem{action: put(s.table, paymentItem(account, p), "attribute_not_exists(PK)"), onFail: errRetry})
			}
			actions = append(actions, notices...)
			var first *business.Payment
			if len(rec.Payments) > 0 {
				ev.sale(business.EventPaymentReceived, rec)
				first = &rec.Payments[0]
			}
			ev.sale(business.EventSaleCreated, rec)
			ev.count(business.SaleCreatedFigures(sale, first))
			ev.owe(business.ReceivableChange{New: business.OwedBy(sale)})
			actions, err = s.withEvents(append(actions, stock...), ev)
			return actions, body, err
		},
	})
}

// MaxStockedItemsPerSale bounds the distinct inventory items one sale moves,
// so that a sale's transaction stays within DynamoDB's 100 actions: each
// item takes up to four (its quantity, its movement, its event and, when its
// stock runs low or out, that event), beside at most six for the sale (the
// sale, its invoice number's guards, its payment, the idempotency record,
// its event and its payment's), its report figures and its next notice in
// the schedule: 8 + 4 x 23 = 100.
const MaxStockedItemsPerSale = 23

// stockKeys returns the item codes moves names, in a fixed order, and their
// keys.
func stockKeys(account string, moves map[string]money.Delta) ([]string, []attrs) {
	codes := make([]string, 0, len(moves))
	for c := range moves {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	keys := make([]attrs, len(codes))
	for i, c := range codes {
		keys[i] = itemKey(account, c)
	}
	return codes, keys
}

func byCode(codes []string, found []attrs) map[string]attrs {
	m := make(map[string]attrs, len(codes))
	for i, c := range codes {
		m[c] = found[i]
	}
	return m
}

// FindSaleByCode returns a sale and its payments, with one Query unless they
// pass 1 MB (see findSale). Returns ENOTFOUND
// when the account has no sale with that invoice code.
func (s *Store) FindSaleByCode(ctx context.Context, account, code string) (SaleRecord, error) {
	return s.findSale(ctx, account, code, false)
}

// findSale reads the sale's partition newest first: the sale item (SK
// "SALE") sorts after its payments ("PAY#0001"…), so it heads the first page
// whatever their size, and a missing sale is known after one call. A sale
// whose payments pass the 1 MB a Query page holds is read on, page after
// page, until every payment is in; a sale with few payments is one Query.
// Refunds (REFUND#0001…) sort between the sale and its payments. Payments
// and refunds are only ever added, and numbered by the sale, so the record is
// the sale as its item was read, with the payments and refunds it counts.
func (s *Store) findSale(ctx context.Context, account, code string, consistent bool) (SaleRecord, error) {
	paginator := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: attrs{":pk": str(salePK(account, code))},
		ConsistentRead:            aws.Bool(consistent),
		ScanIndexForward:          aws.Bool(false),
	})
	var rec SaleRecord
	found := false
	for paginator.HasMorePages() {
		out, err := paginator.NextPage(ctx)
		if err != nil {
			return SaleRecord{}, fmt.Errorf("query sale: %w", err)
		}
		for _, it := range out.Items {
			switch getS(it, "type") {
			case "sale":
				rec.Sale, rec.uncounted, rec.owedCounted, found = saleFrom(it), !counted(it), owedCounted(it), true
			case "payment":
				rec.Payments = append(rec.Payments, PaymentFrom(it))
			case "refund":
				rec.Refunds = append(rec.Refunds, RefundFrom(it))
			case "notice":
				rec.Notices = append(rec.Notices, sentNoticeFrom(it))
			}
		}
		if !found {
			break
		}
	}
	if !found {
		return SaleRecord{}, business.Errorf(business.ENOTFOUND, "Sale not found")
	}
	// A Query is not isolated from a transaction in flight, and pages read
	// after the first may hold payments or refunds added since the sale item
	// was read: the record keeps those the sale counts. (A sale written
	// before payments were counted has none counted, and keeps them all.)
	if rec.Sale.Payments > 0 {
		rec.Payments = slices.DeleteFunc(rec.Payments, func(p business.Payment) bool { return p.Seq > rec.Sale.Payments })
	}
	rec.Refunds = slices.DeleteFunc(rec.Refunds, func(r business.Refund) bool { return r.Seq > rec.Sale.Refunds })
	slices.Reverse(rec.Payments) // oldest first
	slices.Reverse(rec.Refunds)
	return rec, nil
}

// UpdateSale applies edit to the current sale and stores the result with, for
// an increase of amount_paid, one payment record for the difference, in one
// transaction. When another writer changed the sale in between it starts
// over, so concurrent edits never lose one another's effect and the payments
// always add up to amount_paid. edit gets the current record and a copy of
// the sale to change; it returns EINVALID or EPRECONDITION to stop. Returns
// ENOTFOUND for a missing sale and ECONFLICT for a taken invoice number.
func (s *Store) UpdateSale(ctx context.Context, account, code string, edit func(cur SaleRecord, next *business.Sale) error) (SaleRecord, error) {
	var rec SaleRecord
	err := retrying(ctx, func() error {
		cur, err := s.findSale(ctx, account, code, true)
		if err != nil {
			return err
		}
		if err := cur.Sale.CheckNotVoid(); err != nil {
			return err
		}
		next := cur.Sale
		if err := edit(cur, &next); err != nil {
			return err
		}
		if next.CustomerID != cur.Sale.CustomerID {
			c, err := s.FindCustomerByID(ctx, account, next.CustomerID)
			if business.ErrorCode(err) == business.ENOTFOUND {
				return business.MissingCustomer(next.CustomerID)
			} else if err != nil {
				return err
			}
			next.CustomerName = c.Name
		}
		now := s.stamp()
		next.Version, next.UpdatedAt = cur.Sale.Version+1, now
		var notices []txItem
		if replan := noticesMove(cur.Sale, next); next.NeedsPaymentDate() || replan {
			// The business's dates of now: the history read after now is
			// stamped holds every zone in effect at now.
			hist, err := s.timezoneHistory(ctx, account)
			if err != nil {
				return err
			}
			next.DefaultPaymentDate(now, hist)
			if replan {
				notices = s.planNotices(account, &cur, &next, hist, now)
			}
		}
		if err := business.CheckSaleEditStock(cur.Sale.Lines, next.Lines, MaxStockedItemsPerSale); err != nil {
			return err
		}
		rec = SaleRecord{Payments: cur.Payments, Refunds: cur.Refunds}
		ev := newEvents(account, now)
		var actions []txItem
		if moves := business.StockMoves(cur.Sale.Lines, next.Lines); len(moves) > 0 {
			codes, keys := stockKeys(account, moves)
			found, err := s.batchGet(ctx, keys)
			if err != nil {
				return err
			}
			stock, _, err := s.stockActions(account, moves, byCode(codes, found), now, business.StockCause{Kind: business.MoveSaleEdit, InvoiceCode: code}, ev)
			if err != nil {
				return err
			}
			actions = append(actions, stock...)
		}
		var paid *business.Payment
		if next.AmountPaid.Cmp(cur.Sale.AmountPaid) > 0 {
			next.Payments = cur.Sale.Payments + 1
			p := business.NewPayment(next, cur.Sale.AmountPaid, now)
			paid = p
			rec.Payments = append(rec.Payments, *p)
			actions = append(actions, txItem{action: put(s.table, paymentItem(account, *p), "attribute_not_exists(PK)"), onFail: errRetry})
		}
		actions = append(append(actions, s.saleRewrite(account, cur, next)), notices...)
		if next.InvoiceNumber != cur.Sale.InvoiceNumber {
			guard := invoiceNumberGuard(account, next.InvoiceNumber)
			guard["type"], guard["invoice_code"] = str("unique"), str(next.InvoiceCode)
			actions = append(actions,
				txItem{action: put(s.table, guard, "attribute_not_exists(PK)"), onFail: business.Taken("invoice_number", next.InvoiceNumber)},
				txItem{action: types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: invoiceNumberGuard(account, cur.Sale.InvoiceNumber)}}})
		}
		rec.Sale = next
		if len(rec.Payments) > len(cur.Payments) {
			ev.sale(business.EventPaymentReceived, rec)
		}
		ev.sale(business.EventSaleUpdated, rec)
		if cur.uncounted { // its count and total go in now, with what changed
			ev.count(business.SaleCreatedFigures(next, paid))
		} else {
			ev.count(business.SaleEditedFigures(cur.Sale, next, paid))
		}
		ev.owe(business.ReceivableChange{Old: owedBefore(cur), New: business.OwedBy(next)})
		actions, err = s.withEvents(actions, ev)
		if err != nil {
			return err
		}
		return s.transact(ctx, actions)
	})
	return rec, err
}
