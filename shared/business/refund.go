package business

import (
	"fmt"
	"time"

	"bizdata/shared/money"
)

// Corrections of a sale as read: a refund (money back, with goods returned
// or not) and a void. Each rule returns the change to write, or the error
// to answer; the store reads the sale, asks, and commits the change
// guarded by the version it read.

// ErrVoid answers any change of a voided sale.
var ErrVoid = Errorf(ECONFLICT, "Sale is void")

// CheckNotVoid returns ErrVoid when s is void: a void sale never changes again.
func (s *Sale) CheckNotVoid() error {
	if s.Void() {
		return ErrVoid
	}
	return nil
}

// NewRefund is a refund as the client asks for it, its fields checked for
// form; what it may be depends on the sale (see RefundSale).
type NewRefund struct {
	Amount   money.Amount
	Reason   string
	Method   string // "" for the sale's payment_type
	IssuedBy string
	Lines    []RefundLine // LineID and Quantity
}

// SaleRefund is what a refund changes: the sale as it becomes, the
// refund's record, and the stock its lines give back (per item code,
// negative).
type SaleRefund struct {
	Sale   Sale
	Refund Refund
	Moves  map[string]money.Delta
}

// RefundSale decides refund in of sale, made at now. The refund may not
// take the sale's refunds above its amount paid, nor a line's returns above
// its quantity (EINVALID naming the field, lines[i].… as the request has
// them); a void sale answers ErrVoid. The sale's Version is left as read.
func RefundSale(sale Sale, in NewRefund, now time.Time) (SaleRefund, error) {
	if err := sale.CheckNotVoid(); err != nil {
		return SaleRefund{}, err
	}
	if sale.AmountPaid.IsZero() {
		return SaleRefund{}, FieldErrors{"amount": "nothing can be refunded: nothing has been paid on this sale"}.Err()
	}
	fe := FieldErrors{}
	if in.Amount.Cmp(sale.Held()) > 0 {
		fe.Add("amount", fmt.Sprintf("must be at most %s, the most that can still be refunded (paid %s, refunded %s)", sale.Held(), sale.AmountPaid, sale.AmountRefunded))
	}
	next := sale
	next.Lines = append([]SaleLine(nil), sale.Lines...)
	lines := returnLines(next.Lines, in.Lines, fe)
	if err := fe.Err(); err != nil {
		return SaleRefund{}, err
	}
	next.AmountRefunded = sale.AmountRefunded.Add(in.Amount)
	next.Refunds = sale.Refunds + 1
	next.UpdatedAt = now
	method := in.Method
	if method == "" {
		method = sale.PaymentType
	}
	r := Refund{
		Seq: next.Refunds, RefundID: NewRefundID(), InvoiceCode: sale.InvoiceCode, InvoiceNumber: sale.InvoiceNumber,
		CustomerName: sale.CustomerName, Amount: in.Amount, Reason: in.Reason, Method: method, IssuedBy: in.IssuedBy,
		Lines: lines, PaymentStatus: next.PaymentStatus, RefundedAt: now,
	}
	return SaleRefund{Sale: next, Refund: r, Moves: givenBack(lines)}, nil
}

// returnLines counts the goods asked back against the sale's lines (a copy,
// changed in place): a line's returns, those of this refund's earlier
// entries included, stay within its quantity. It returns the refund's lines
// with their item codes; what it refuses is added to fe, named as the
// request's lines[i].
func returnLines(saleLines []SaleLine, asked []RefundLine, fe FieldErrors) []RefundLine {
	lines := make([]RefundLine, 0, len(asked))
	for i, l := range asked {
		if l.LineID < 1 || l.LineID > len(saleLines) {
			fe.Add(fmt.Sprintf("lines[%d].sales_item_id", i), fmt.Sprintf("no line with id %d in this sale (its lines are 1 to %d)", l.LineID, len(saleLines)))
			continue
		}
		line := &saleLines[l.LineID-1]
		left, _ := line.Quantity.Sub(line.Returned)
		if l.Quantity.Cmp(left) > 0 {
			fe.Add(fmt.Sprintf("lines[%d].quantity", i), fmt.Sprintf("must be at most %s: line %d sold %s, and %s of it is returned already or by this refund's earlier lines", left, l.LineID, line.Quantity, line.Returned))
			continue
		}
		line.Returned = line.Returned.Add(l.Quantity)
		lines = append(lines, RefundLine{LineID: l.LineID, ItemCode: line.ItemCode, Quantity: l.Quantity})
	}
	return lines
}

// givenBack is the stock returned lines give back, per item code: lines
// without an item code move no stock.
func givenBack(lines []RefundLine) map[string]money.Delta {
	moves := map[string]money.Delta{}
	for _, l := range lines {
		if l.ItemCode != "" {
			moves[l.ItemCode] = moves[l.ItemCode].Sub(l.Quantity.Delta())
		}
	}
	return moves
}

// SaleVoid is what a void changes: the sale as it becomes (final, status
// void) and the stock it gives back (per item code, negative).
type SaleVoid struct {
	Sale  Sale
	Moves map[string]money.Delta
}

// VoidSale decides a void of sale for reason, made at now: every line's
// quantity not returned already goes back to stock. Only a sale that holds
// none of the customer's money may be voided: ECONFLICT says how much to
// refund first; a void sale answers ErrVoid. The sale's Version is left as
// read.
func VoidSale(sale Sale, reason string, now time.Time) (SaleVoid, error) {
	if err := sale.CheckNotVoid(); err != nil {
		return SaleVoid{}, err
	}
	if held := sale.Held(); !held.IsZero() {
		return SaleVoid{}, Errorf(ECONFLICT, "Refund %s first: the sale holds %s of the customer's money (paid %s, refunded %s), and only a sale that holds none can be voided",
			held, held, sale.AmountPaid, sale.AmountRefunded)
	}
	moves := map[string]money.Delta{}
	for _, l := range sale.Lines {
		if left, _ := l.Quantity.Sub(l.Returned); l.ItemCode != "" && !left.IsZero() {
			moves[l.ItemCode] = moves[l.ItemCode].Sub(left.Delta())
		}
	}
	next := sale
	next.PaymentStatus, next.VoidReason, next.VoidedAt, next.UpdatedAt = StatusVoid, reason, now, now
	return SaleVoid{Sale: next, Moves: moves}, nil
}

// CheckGiveBack refuses a correction that gives back more distinct items
// than one change can move (most): only a sale written before that bound
// was lowered names more. ECONFLICT says how to give them back instead.
func CheckGiveBack(moves map[string]money.Delta, most int) error {
	if len(moves) <= most {
		return nil
	}
	return Errorf(ECONFLICT, "this would give back %d distinct inventory items, more than the %d one change can move: return the goods in refunds of at most %d items each, or adjust the stock of the items",
		len(moves), most, most)
}
