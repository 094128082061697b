package business

import (
	"fmt"
	"time"

	"bizdata/shared/money"
)

// Stock rules: how a change of an item's quantity is decided, and the
// movement each records in the item's ledger. The store reads the items,
// asks, and writes each quantity guarded by the version it read.

// StockCause says why stock moves: the movement's kind, and what the ledger
// records with it.
type StockCause struct {
	Kind        string
	InvoiceCode string
	Reason      string
	Note        string
}

// StockMove is one item's change of stock as decided on the item as read:
// the item as it becomes, with its movement, and Refusal, the answer when
// the stock turns out as read and cannot take the change.
type StockMove struct {
	Item     Item
	Movement Movement
	Refusal  error
}

// MoveStock decides a move of item code's stock by d (positive takes,
// negative gives back) for cause, at now. read is the item as read, nil
// when there is none (EINVALID naming items). The move is decided on the
// quantity read, which may change before the write: so it is returned even
// when the stock read cannot take it (it would go below zero or, given
// back, above MaxQuantity), and the write's condition decides; Refusal is
// the answer when that condition fails on the stock as read. A give-back
// that no stock could take is refused at once.
func MoveStock(code string, read *Item, d money.Delta, cause StockCause, now time.Time) (StockMove, error) {
	if read == nil {
		return StockMove{}, MissingItem(code)
	}
	x := *read
	refusal := error(&Error{Code: EINVALID, Message: fmt.Sprintf("insufficient stock of item %s", code),
		Fields: map[string]string{"items": fmt.Sprintf("insufficient stock of item %s (%s in stock)", code, x.Quantity)}})
	if d.IsNegative() {
		refusal = FieldErrors{"items": fmt.Sprintf("item_code %s: giving back %s would take its stock above %s", code, d.Abs(), money.MaxQuantity())}.Err()
	}
	if _, ok := d.Headroom(); !ok {
		return StockMove{}, refusal
	}
	after, _ := x.Quantity.Less(d)
	x.Quantity, x.UpdatedAt, x.Version = after, now, x.Version+1
	m := Movement{ID: x.Version, ItemCode: code, Kind: cause.Kind, Change: d.Neg(), After: after,
		Reason: cause.Reason, Note: cause.Note, InvoiceCode: cause.InvoiceCode, CreatedAt: now}
	return StockMove{Item: x, Movement: m, Refusal: refusal}, nil
}

// CheckStockAdjustment refuses an adjustment by change (positive adds) that
// would take x's stock below zero or above MaxQuantity: EINVALID naming
// quantity.
func CheckStockAdjustment(x Item, change money.Delta) error {
	if _, ok := x.Quantity.Less(change.Neg()); ok {
		return nil
	}
	msg := fmt.Sprintf("would take the stock below zero: %s in stock", x.Quantity)
	if !change.IsNegative() {
		msg = fmt.Sprintf("would take the stock above %s: %s in stock", money.MaxQuantity(), x.Quantity)
	}
	return FieldErrors{"quantity": msg}.Err()
}

// CheckStockCount refuses an item edit that sets the quantity to set when
// the stock moved from first (read when the edit began) to read (now)
// meanwhile: a count is never made again over a sale or an adjustment,
// which it would silently undo. ECONFLICT naming quantity.
func CheckStockCount(first, read, set money.Quantity) error {
	if set.Cmp(read) == 0 || read.Cmp(first) == 0 {
		return nil
	}
	return &Error{Code: ECONFLICT,
		Message: fmt.Sprintf("the item's stock changed while this edit was made (%s when read, %s now); read the item again and send the quantity you mean, or use its adjustments", first, read),
		Fields:  map[string]string{"quantity": fmt.Sprintf("stock moved to %s while this edit was made; nothing was changed", read)}}
}

// CountMovement is the movement of an item edit that sets the quantity
// (from old to next, stamped already): an adjustment of the difference,
// for reason count. false when the quantity is unchanged.
func CountMovement(old, next Item) (Movement, bool) {
	if next.Quantity.Cmp(old.Quantity) == 0 {
		return Movement{}, false
	}
	change := next.Quantity.Delta().Sub(old.Quantity.Delta())
	return Movement{ID: next.Version, ItemCode: next.ItemCode, Kind: MoveAdjustment, Change: change, After: next.Quantity,
		Reason: "count", CreatedAt: next.UpdatedAt}, true
}

// InitialMovement opens the ledger of a new item x with the stock it starts
// with; false when it starts with none.
func InitialMovement(x Item) (Movement, bool) {
	if x.Quantity.IsZero() {
		return Movement{}, false
	}
	return Movement{ID: x.Version, ItemCode: x.ItemCode, Kind: MoveInitial, Change: x.Quantity.Delta(), After: x.Quantity, CreatedAt: x.CreatedAt}, true
}

// OpeningBalance is the movement that opens the ledger of an item written
// before the ledger: an initial of the stock x had before its first
// movement (numbered first; its movements add up to sum), so that its
// movements add up to its quantity. false when they do already; an error
// when they add up to more than any stock it had before them.
func OpeningBalance(x Item, sum money.Delta, first int64, now time.Time) (Movement, bool, error) {
	opening := x.Quantity.Delta().Sub(sum)
	if opening.IsZero() {
		return Movement{}, false, nil
	}
	before, ok := money.Quantity{}.Less(opening.Neg())
	if !ok || first <= 1 {
		return Movement{}, false, fmt.Errorf("item %s: its movements add up to %s, beyond its stock of %s; its ledger cannot be opened", x.ItemCode, sum, x.Quantity)
	}
	return Movement{ID: first - 1, ItemCode: x.ItemCode, Kind: MoveInitial, Change: opening, After: before,
		Reason: "opening balance", CreatedAt: now}, true, nil
}

// CheckStockedItems refuses a sale whose lines name more distinct inventory
// items than one change can move (most): EINVALID naming items.
func CheckStockedItems(moves map[string]money.Delta, most int) error {
	if len(moves) <= most {
		return nil
	}
	return FieldErrors{"items": fmt.Sprintf("may name at most %d distinct inventory items by item_code", most)}.Err()
}

// CheckSaleEditStock applies CheckStockedItems to an edit of a sale's lines
// from old to next: the sale as edited must stay within what one change
// can move (a void), though a sale stored before the bound was lowered
// keeps the items it has (a payment is still recorded), and the stock the
// edit moves must be movable in one change too.
func CheckSaleEditStock(old, next []SaleLine, most int) error {
	if n := StockMoves(nil, next); len(n) > len(StockMoves(nil, old)) {
		if err := CheckStockedItems(n, most); err != nil {
			return err
		}
	}
	return CheckStockedItems(StockMoves(old, next), most)
}

// PickSlug chooses an item's slug from whether its two candidates are free
// (no other item holds them): the plain slug, else the slug suffixed with
// the item code, else (an item was named like that suffix) the suffixed
// slug with a random tail, drawn afresh on every call so that a retry never
// repeats a collision.
func PickSlug(slug, code string, plainFree, suffixedFree bool) string {
	switch {
	case plainFree:
		return slug
	case suffixedFree:
		return SuffixedSlug(slug, code)
	default:
		return SuffixedSlug(slug, code) + "-" + NewInvoiceCode()
	}
}
