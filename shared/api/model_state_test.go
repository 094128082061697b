package api_test

// The model's state: each business's books (a live one and a test twin's),
// their records, and the Idempotency-Keys they used.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"bizdata/shared/money"
	"bizdata/shared/store"

	"github.com/shopspring/decimal"
	"pgregory.net/rapid"
)

// model is the in-memory state the API must agree with.
type model struct {
	t     *rapid.T
	c     caller
	st    *store.Store // what the stream's consumer of report figures calls
	bizs  []*mBiz      // the businesses: each a live book and a test twin's
	accts []*mAccount  // every book: each business's live one, then its test twin's
	keys  map[string]*mKey
	clk   *fakeClock
	end   time.Time // the clock never passes it in a sequence
	day   time.Time // the local date the clock starts on (midnight UTC of it)
	pub   caller    // the public routes: the hosted invoice page and its PDF
	mail  *mMail    // the notices' runner and the inbox it sends to
	dead  []string  // invoice link tokens that open nothing any more
}

type mAccount struct {
	key        string // the key the current step sends with (see drawAccount)
	live       bool   // a live book, or a test twin's
	biz        *mBiz
	full       *mKey // the book's "*" key: what the audit reads with
	hook       mHook // the webhook settings
	customers  map[int64]*mCustomer
	categories map[int64]*mCategory
	items      map[string]*mItem
	sales      map[string]*mSale
	numbers    map[string]bool // invoice numbers in use
	expenses   map[int64]*mExpense
	idem       map[string]*mIdem // route + " " + key
	lastID     map[string]int64
	id         string          // the account's id
	name, code string          // business name and code, as settings show them
	clk        *fakeClock      // the store's clock
	tz         []mSpan         // timezone history, oldest first: UTC from the start, then each change
	facts      []mFact         // the books, in the order the changes were made
	reminded   map[string]bool // "<invoice code>#<date>" of each reminder emailed
}

type mCustomer struct {
	id                          int64
	name, email, phone, created string
}

type mCategory struct {
	id            int64
	name, created string
}

type mItem struct {
	code, name     string
	id, category   int64
	qty            decimal.Decimal
	price          string
	cost, minAlert decimal.Decimal // unit_cost and minimum_qty_alert
	created        string
	moves          []mMove // its ledger, oldest first
}

// mMove is one movement of an item's ledger: change is signed (positive adds
// to stock); invoice, reason and note are "" for null.
type mMove struct {
	kind, invoice, reason, note string
	change                      decimal.Decimal
}

func (mv mMove) String() string {
	return fmt.Sprintf("{%s %s invoice %q reason %q note %q}", mv.kind, mv.change, mv.invoice, mv.reason, shortened(mv.note))
}

type mSale struct {
	code, number, invoiceType, status, dueDate, created string
	payType                                             string // payment_type: a new payment's method
	payDate                                             string // payment_date: the local date of the first payment ("" before)
	customer, id                                        int64
	sub, total, paid, refunded                          money.Amount
	payments, refunds                                   int
	lines                                               []mLine // every line: its sales_item_id is its position from 1
	sent                                                []any   // the lines as sent, for edits of them
	void                                                bool
	voidData                                            string // the void's answer (data): the sale never changes again
	link                                                string // the token of its invoice link ("" for none)
	reminder                                            string // reminder_date ("" for none)
	// sure is whether the sale's reminder must go once its date begins:
	// set when it was made with a reminder date not yet past, for a
	// customer with an email, and cleared by whatever may move or drop it
	// (see sureReminder).
	sure bool
}

type mLine struct {
	itemCode string // "" for a line of no inventory item
	qty      money.Quantity
	returned decimal.Decimal
}

type mExpense struct {
	id                   int64
	typ, created, amount string
}

type mIdem struct {
	path string
	body []byte
	resp []byte
	// redo checks the answer to the same request sent to another sale or
	// item (target) of a correction route; nil for creates.
	redo func(target string, r reply)
}

// modelAccounts numbers the accounts the sequences make: business codes are
// unique per table, and every sequence of a run shares one.
var modelAccounts atomic.Int64

// newBook is an empty book of account id.
func newBook(id, name, code string, clk *fakeClock, tz []mSpan, live bool) *mAccount {
	return &mAccount{customers: map[int64]*mCustomer{}, categories: map[int64]*mCategory{},
		items: map[string]*mItem{}, sales: map[string]*mSale{}, numbers: map[string]bool{},
		expenses: map[int64]*mExpense{}, idem: map[string]*mIdem{}, lastID: map[string]int64{}, reminded: map[string]bool{},
		id: id, name: name, code: code, clk: clk, tz: slices.Clone(tz), live: live}
}

func decimalOf(q money.Quantity) decimal.Decimal { return decimal.RequireFromString(q.String()) }

func (s *mSale) held() money.Amount { return s.paid.Sub(s.refunded) }

func (s *mSale) hasReturns() bool {
	return slices.ContainsFunc(s.lines, func(l mLine) bool { return !l.returned.IsZero() })
}

// clone copies what corrections change: sales, items, invoice numbers, ids.
func (a *mAccount) clone() *mAccount {
	c := *a
	c.sales = make(map[string]*mSale, len(a.sales))
	for k, s := range a.sales {
		x := *s
		x.lines = slices.Clone(s.lines)
		c.sales[k] = &x
	}
	c.items = make(map[string]*mItem, len(a.items))
	for k, it := range a.items {
		x := *it
		x.moves = slices.Clone(it.moves)
		c.items[k] = &x
	}
	c.numbers, c.lastID = maps.Clone(a.numbers), maps.Clone(a.lastID)
	// Clipped, so that what one clone books never shows in another's.
	c.facts, c.tz = slices.Clip(a.facts), slices.Clip(a.tz)
	return &c
}

func decEq(v any, d decimal.Decimal) bool {
	s, _ := v.(string)
	got, err := decimal.NewFromString(s)
	return err == nil && got.Equal(d)
}

func strOrEmpty(v any) string { s, _ := v.(string); return s }

// canonical is v as JSON with sorted keys: equal values, equal text.
func canonical(v any) string { b, _ := json.Marshal(v); return string(b) }
