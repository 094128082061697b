package store

import (
	"context"
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
	it := saleEntry(account, "refund", r.Seq, r.RefundID, r.InvoiceCode, r.InvoiceNumber, r.CustomerName, r.RefundedAt)
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

// NewRefund is a refund as the client asks for it (see
// business.NewRefund).
type NewRefund = business.NewRefund

// RefundSale records a refund of the sale with invoice code code, as
// business.RefundSale decides it: the amount back to the customer and, per
// line, the goods returned, those with an item code going back to stock. A
// missing sale answers ENOTFOUND. Concurrent refunds of one sale take turns
// on its version, so their sum never passes what was paid.
func (s *Store) RefundSale(ctx context.Context, account, code string, in NewRefund, idem *Idempotency, render Render[SaleRecord]) ([]byte, error) {
	return s.changeOnce(ctx, account, idem, func(now time.Time) ([]txItem, []byte, error) {
		cur, err := s.findSale(ctx, account, code, true)
		if err != nil {
			return nil, nil, err
		}
		refund, err := business.RefundSale(cur.Sale, in, now)
		if err != nil {
			return nil, nil, err
		}
		r := refund.Refund
		var figures []business.FigureChange
		if cur.uncounted { // its count and total go in now
			figures = business.SaleCreatedFigures(cur.Sale, nil)
		}
		rec := SaleRecord{Sale: refund.Sale, Payments: cur.Payments, Refunds: append(cur.Refunds, r)}
		return s.correctSale(ctx, account, cur, rec, correction{
			moves: refund.Moves, cause: business.StockCause{Kind: business.MoveReturn, InvoiceCode: code, Reason: in.Reason},
			event: business.EventPaymentRefunded, figures: append(figures, business.RefundFigures(r)...), render: render,
			writes: []txItem{{action: put(s.table, refundItem(account, r), "attribute_not_exists(PK)"), onFail: errRetry}},
		}, now)
	})
}

// VoidSale voids the sale with invoice code code, as business.VoidSale
// decides it: every line's quantity not returned already goes back to
// stock, and the sale is final (payment_status void). A missing sale
// answers ENOTFOUND.
func (s *Store) VoidSale(ctx context.Context, account, code, reason string, idem *Idempotency, render Render[SaleRecord]) ([]byte, error) {
	return s.changeOnce(ctx, account, idem, func(now time.Time) ([]txItem, []byte, error) {
		cur, err := s.findSale(ctx, account, code, true)
		if err != nil {
			return nil, nil, err
		}
		void, err := business.VoidSale(cur.Sale, reason, now)
		if err != nil {
			return nil, nil, err
		}
		var figures []business.FigureChange
		if !cur.uncounted { // one never counted has nothing to take out
			figures = business.VoidFigures(cur.Sale)
		}
		rec := SaleRecord{Sale: void.Sale, Payments: cur.Payments, Refunds: cur.Refunds}
		return s.correctSale(ctx, account, cur, rec, correction{
			moves: void.Moves, cause: business.StockCause{Kind: business.MoveVoid, InvoiceCode: code, Reason: reason},
			event: business.EventSaleVoided, figures: figures, render: render,
		}, now)
	})
}

// correction is what a refund or a void writes beside the sale: the stock
// it gives back and why, its event, what it moves in the report figures,
// its response and its own records.
type correction struct {
	moves   map[string]money.Delta
	cause   business.StockCause
	event   string
	figures []business.FigureChange
	render  Render[SaleRecord]
	writes  []txItem
}

// correctSale returns the transaction and the response of a correction of
// the sale read as cur, which leaves it as rec: the sale written at its
// next version, guarded by the one read, the stock given back with its
// movements, the correction's records and events.
func (s *Store) correctSale(ctx context.Context, account string, cur, rec SaleRecord, c correction, now time.Time) ([]txItem, []byte, error) {
	rec.Sale.Version = cur.Sale.Version + 1
	ev := newEvents(account, now)
	stock, err := s.giveBack(ctx, account, c.moves, now, c.cause, ev)
	if err != nil {
		return nil, nil, err
	}
	body, err := c.render(rec)
	if err != nil {
		return nil, nil, err
	}
	ev.sale(c.event, rec)
	ev.count(c.figures)
	// A void takes out what the sale owed; a refund moves nothing owed, but
	// counts a sale written before receivables were kept.
	ev.owe(business.ReceivableChange{Old: owedBefore(cur), New: business.OwedBy(rec.Sale)})
	actions := append(append([]txItem{s.saleRewrite(account, cur, rec.Sale)}, c.writes...), stock...)
	actions, err = s.withEvents(actions, ev)
	return actions, body, err
}

// giveBack reads the items moves names and returns the actions that move
// their stock, with their movements.
func (s *Store) giveBack(ctx context.Context, account string, moves map[string]money.Delta, now time.Time, cause business.StockCause, ev *events) ([]txItem, error) {
	if len(moves) == 0 {
		return nil, nil
	}
	if err := business.CheckGiveBack(moves, MaxStockedItemsPerSale); err != nil {
		return nil, err
	}
	codes, keys := stockKeys(account, moves)
	found, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	actions, _, err := s.stockActions(account, moves, byCode(codes, found), now, cause, ev)
	return actions, err
}

// saleRewrite puts the sale read as cur as next, provided it is still at
// the version read and counted as read.
func (s *Store) saleRewrite(account string, cur SaleRecord, next business.Sale) txItem {
	p := &types.Put{TableName: aws.String(s.table), Item: saleItem(account, next)}
	versionGuard(p, cur.Sale.Version)
	return stillOwedUncounted(stillUncounted(txItem{action: types.TransactWriteItem{Put: p}, onFail: errRetry}, cur.uncounted), !cur.owedCounted)
}
