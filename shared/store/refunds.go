package store

import (
	"context"
	"fmt"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/money"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Corrections of a sale: refunds (money back, with goods returned or not)
// and voids. Each is one transaction: the sale's new state guarded by the
// version read, the refund record, the stock given back with its ledger
// movements, and the Idempotency-Key's record.

// refundItem is a refund as stored in its sale's partition (SK REFUND#0001…,
// between the sale and its payments). Like a payment it carries the
// account, a transaction_id (the refund id) and an entry in the due index
// by the hour it was written, so its webhook is recorded from the stream,
// or by the sweep when the stream's batch was skipped.
func refundItem(account string, r business.Refund) attrs {
	it := key(salePK(account, r.InvoiceCode), fmt.Sprintf("REFUND#%04d", r.Seq))
	it["type"] = str("refund")
	it["account_id"] = str(account)
	it["seq"] = nInt(int64(r.Seq))
	it["transaction_id"] = str(r.RefundID)
	it["invoice_code"] = str(r.InvoiceCode)
	it["invoice_number"] = str(r.InvoiceNumber)
	setS(it, "customer_name", r.CustomerName)
	it["amount"] = num(r.Amount.String())
	setS(it, "reason", r.Reason)
	it["refund_method"] = str(r.Method)
	setS(it, "issued_by", r.IssuedBy)
	lines := make([]types.AttributeValue, len(r.Lines))
	for i, l := range r.Lines {
		m := attrs{"sales_item_id": nInt(int64(l.LineID)), "quantity": num(l.Quantity.String())}
		setS(m, "item_code", l.ItemCode)
		lines[i] = &types.AttributeValueMemberM{Value: m}
	}
	it["lines"] = &types.AttributeValueMemberL{Value: lines}
	it["payment_status"] = str(r.PaymentStatus)
	it["refunded_at"] = str(fmtTime(r.RefundedAt))
	it[IndexDue.PK] = str(paidPartition(account, r.RefundedAt))
	it[IndexDue.SK] = str(paidSK(account, r.RefundedAt, r.RefundID))
	markCounted(it)
	return it
}

// RefundFrom reads a refund item, as stored or as a stream image carries it.
func RefundFrom(it map[string]types.AttributeValue) business.Refund {
	r := business.Refund{
		Seq: int(getInt(it, "seq")), RefundID: getS(it, "transaction_id"), InvoiceCode: getS(it, "invoice_code"),
		InvoiceNumber: getS(it, "invoice_number"), CustomerName: getS(it, "customer_name"), Amount: amountAt(it, "amount"),
		Reason: getS(it, "reason"), Method: getS(it, "refund_method"), IssuedBy: getS(it, "issued_by"),
		PaymentStatus: getS(it, "payment_status"), RefundedAt: getTime(it, "refunded_at"),
	}
	if l, ok := it["lines"].(*types.AttributeValueMemberL); ok {
		for _, v := range l.Value {
			if m, ok := v.(*types.AttributeValueMemberM); ok {
				r.Lines = append(r.Lines, business.RefundLine{LineID: int(getInt(m.Value, "sales_item_id")),
					ItemCode: getS(m.Value, "item_code"), Quantity: quantityAt(m.Value, "quantity")})
			}
		}
	}
	return r
}

// NewRefund is a refund as the client asks for it, its fields checked for
// form; what it may be depends on the sale (see RefundSale).
type NewRefund struct {
	Amount   money.Amount
	Reason   string
	Method   string // "" for the sale's payment_type
	IssuedBy string
	Lines    []business.RefundLine // LineID and Quantity
}

// RefundSale records a refund of the sale with invoice code code: the
// amount back to the customer and, per line, the goods returned, those with
// an item code going back to stock. The refund may not take the sale's
// refunds above its amount paid, nor a line's returns above its quantity
// (EINVALID naming the field); a void sale answers ECONFLICT; a missing one
// ENOTFOUND. Concurrent refunds of one sale take turns on its version, so
// their sum never passes what was paid.
func (s *Store) RefundSale(ctx context.Context, account, code string, in NewRefund, idem *Idempotency, render Render[SaleRecord]) ([]byte, error) {
	return s.once(ctx, account, idem, func(now time.Time) ([]txItem, []byte, error) {
		cur, err := s.findSale(ctx, account, code, true)
		if err != nil {
			return nil, nil, err
		}
		sale := cur.Sale
		if sale.Void() {
			return nil, nil, errVoid
		}
		if sale.AmountPaid.IsZero() {
			return nil, nil, business.FieldErrors{"amount": "nothing can be refunded: nothing has been paid on this sale"}.Err()
		}
		fe := business.FieldErrors{}
		if in.Amount.Cmp(sale.Held()) > 0 {
			fe.Add("amount", fmt.Sprintf("must be at most %s, the most that can still be refunded (paid %s, refunded %s)", sale.Held(), sale.AmountPaid, sale.AmountRefunded))
		}
		next := sale
		next.Lines = append([]business.SaleLine(nil), sale.Lines...)
		moves := map[string]money.Delta{}
		lines := make([]business.RefundLine, 0, len(in.Lines))
		for i, l := range in.Lines {
			if l.LineID < 1 || l.LineID > len(next.Lines) {
				fe.Add(fmt.Sprintf("lines[%d].sales_item_id", i), fmt.Sprintf("no line with id %d in this sale (its lines are 1 to %d)", l.LineID, len(next.Lines)))
				continue
			}
			line := &next.Lines[l.LineID-1]
			left, _ := line.Quantity.Sub(line.Returned)
			if l.Quantity.Cmp(left) > 0 {
				fe.Add(fmt.Sprintf("lines[%d].quantity", i), fmt.Sprintf("must be at most %s: line %d sold %s, and %s of it is returned already or by this refund's earlier lines", left, l.LineID, line.Quantity, line.Returned))
				continue
			}
			line.Returned = line.Returned.Add(l.Quantity)
			lines = append(lines, business.RefundLine{LineID: l.LineID, ItemCode: line.ItemCode, Quantity: l.Quantity})
			if line.ItemCode != "" {
				moves[line.ItemCode] = moves[line.ItemCode].Sub(l.Quantity.Delta())
			}
		}
		if err := fe.Err(); err != nil {
			return nil, nil, err
		}
		ev := newEvents(account, now)
		stock, err := s.giveBack(ctx, account, moves, now, stockCause{kind: business.MoveReturn, invoiceCode: code, reason: in.Reason}, ev)
		if err != nil {
			return nil, nil, err
		}
		next.AmountRefunded = sale.AmountRefunded.Add(in.Amount)
		next.Refunds = sale.Refunds + 1
		next.Version, next.UpdatedAt = sale.Version+1, now
		method := in.Method
		if method == "" {
			method = sale.PaymentType
		}
		r := business.Refund{
			Seq: next.Refunds, RefundID: business.NewRefundID(), InvoiceCode: sale.InvoiceCode, InvoiceNumber: sale.InvoiceNumber,
			CustomerName: sale.CustomerName, Amount: in.Amount, Reason: in.Reason, Method: method, IssuedBy: in.IssuedBy,
			Lines: lines, PaymentStatus: next.PaymentStatus, RefundedAt: now,
		}
		rec := SaleRecord{Sale: next, Payments: cur.Payments, Refunds: append(cur.Refunds, r)}
		body, err := render(rec)
		if err != nil {
			return nil, nil, err
		}
		ev.sale(business.EventPaymentRefunded, rec)
		if cur.uncounted {
			ev.count(business.SaleCreatedFigures(sale, nil))
		}
		ev.count(business.RefundFigures(r))
		// A refund moves nothing owed, but counts a sale written before
		// receivables were kept.
		ev.owe(business.ReceivableChange{Old: owedBefore(cur), New: business.OwedBy(next)})
		actions := append([]txItem{stillOwedUncounted(stillUncounted(s.saleWrite(account, next, sale.Version), cur.uncounted), !cur.owedCounted),
			{action: put(s.table, refundItem(account, r), "attribute_not_exists(PK)"), onFail: errRetry}}, stock...)
		actions, err = s.withEvents(actions, ev)
		return actions, body, err
	})
}

// VoidSale voids the sale with invoice code code: it gives back to stock
// every line's quantity not returned already and makes the sale final
// (payment_status void). Only a sale that holds none of the customer's
// money may be voided: ECONFLICT says how much to refund first; a void sale
// answers ECONFLICT; a missing one ENOTFOUND.
func (s *Store) VoidSale(ctx context.Context, account, code, reason string, idem *Idempotency, render Render[SaleRecord]) ([]byte, error) {
	return s.once(ctx, account, idem, func(now time.Time) ([]txItem, []byte, error) {
		cur, err := s.findSale(ctx, account, code, true)
		if err != nil {
			return nil, nil, err
		}
		sale := cur.Sale
		if sale.Void() {
			return nil, nil, errVoid
		}
		if held := sale.Held(); !held.IsZero() {
			return nil, nil, business.Errorf(business.ECONFLICT, "Refund %s first: the sale holds %s of the customer's money (paid %s, refunded %s), and only a sale that holds none can be voided",
				held, held, sale.AmountPaid, sale.AmountRefunded)
		}
		moves := map[string]money.Delta{}
		for _, l := range sale.Lines {
			if left, _ := l.Quantity.Sub(l.Returned); l.ItemCode != "" && !left.IsZero() {
				moves[l.ItemCode] = moves[l.ItemCode].Sub(left.Delta())
			}
		}
		ev := newEvents(account, now)
		stock, err := s.giveBack(ctx, account, moves, now, stockCause{kind: business.MoveVoid, invoiceCode: code, reason: reason}, ev)
		if err != nil {
			return nil, nil, err
		}
		next := sale
		next.PaymentStatus, next.VoidReason, next.VoidedAt = business.StatusVoid, reason, now
		next.Version, next.UpdatedAt = sale.Version+1, now
		rec := SaleRecord{Sale: next, Payments: cur.Payments, Refunds: cur.Refunds}
		body, err := render(rec)
		if err != nil {
			return nil, nil, err
		}
		ev.sale(business.EventSaleVoided, rec)
		if !cur.uncounted { // one never counted has nothing to take out
			ev.count(business.VoidFigures(sale))
		}
		ev.owe(business.ReceivableChange{Old: owedBefore(cur), New: business.OwedBy(next)})
		actions, err := s.withEvents(append([]txItem{stillOwedUncounted(stillUncounted(s.saleWrite(account, next, sale.Version), cur.uncounted), !cur.owedCounted)}, stock...), ev)
		return actions, body, err
	})
}

// giveBack reads the items moves names and returns the actions that move
// their stock, with their movements.
func (s *Store) giveBack(ctx context.Context, account string, moves map[string]money.Delta, now time.Time, cause stockCause, ev *events) ([]txItem, error) {
	if len(moves) == 0 {
		return nil, nil
	}
	codes, keys, err := stockKeys(account, moves)
	if err != nil {
		// Only a sale written before the bound was lowered (up to 90 items)
		// names more than one transaction can give back.
		return nil, business.Errorf(business.ECONFLICT, "this would give back %d distinct inventory items, more than the %d one change can move: return the goods in refunds of at most %d items each, or adjust the stock of the items",
			len(moves), MaxStockedItemsPerSale, MaxStockedItemsPerSale)
	}
	found, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	actions, _, err := s.stockActions(account, moves, byCode(codes, found), now, cause, ev)
	return actions, err
}

// saleWrite puts the sale as next, provided it is still at version read.
func (s *Store) saleWrite(account string, next business.Sale, read int64) txItem {
	p := &types.Put{TableName: aws.String(s.table), Item: saleItem(account, next)}
	versionGuard(p, read)
	return txItem{action: types.TransactWriteItem{Put: p}, onFail: errRetry}
}

// once runs a change that is not a creation under an Idempotency-Key, as
// create does a creation: attempt reads what it needs and returns the
// transaction and the response; the key's record is read alongside (so a
// replay costs no more round trips than the change), and a key already
// recorded answers with its first response, whatever the record's state
// now (a retried void of a voided sale gets its first answer). The key is
// claimed by the transaction's own condition. Attempts start over when the
// records changed in between.
func (s *Store) once(ctx context.Context, account string, idem *Idempotency, attempt func(now time.Time) ([]txItem, []byte, error)) ([]byte, error) {
	var body []byte
	err := retrying(ctx, func() error {
		now := s.stamp()
		var (
			rec    attrs
			recErr error
			read   = make(chan struct{})
		)
		go func() {
			defer close(read)
			if idem != nil {
				rec, recErr = s.getItem(ctx, idemKey(account, idem), true)
			}
		}()
		actions, resp, err := attempt(now)
		if <-read; recErr != nil {
			return recErr
		}
		if idem != nil && !liveIdem(rec, now) && isConditionOutcome(err) {
			// The first request with this key may have committed between the
			// two reads: the record as it is now decides.
			if first, ok, rerr := s.recorded(ctx, account, idem, now); ok || rerr != nil {
				body = first
				return rerr
			}
		}
		if liveIdem(rec, now) {
			body, err = replayFrom(rec, idem)
			return err
		}
		if err != nil {
			return err
		}
		if idem != nil {
			put, err := s.idemPut(account, idem, resp, now)
			if err != nil {
				return err
			}
			actions = append(actions, txItem{action: put, onFail: errRetry})
		}
		err = s.transact(ctx, actions)
		if err != nil && idem != nil && isConditionOutcome(err) {
			if first, ok, rerr := s.recorded(ctx, account, idem, now); ok || rerr != nil {
				body = first
				return rerr
			}
		}
		if err != nil {
			return err
		}
		body = resp
		return nil
	})
	return body, err
}
