package business

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"bizdata/shared/money"
)

// Expense is money the business spent.
type Expense struct {
	ID            int64
	ExpenseType   string
	Description   string
	Amount        money.Amount
	PaymentMethod string
	Image         string
	CreatedBy     string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	Version       int64
}

// Validate trims and checks e. Returns EINVALID naming each bad field.
func (e *Expense) Validate() error {
	fe := FieldErrors{}
	for _, p := range []*string{&e.ExpenseType, &e.Description, &e.PaymentMethod, &e.Image, &e.CreatedBy} {
		*p = strings.TrimSpace(*p)
	}
	CheckText(fe, "expense_type", e.ExpenseType, true, 100)
	CheckText(fe, "expense_description", e.Description, false, 2000)
	CheckText(fe, "payment_method", e.PaymentMethod, true, 100)
	CheckText(fe, "created_by", e.CreatedBy, true, 200)
	if e.Image != "" {
		if msg := CheckURL(e.Image); msg != "" {
			fe.Add("expense_image", msg)
		}
	}
	return fe.Err()
}

// Category groups inventory items. Names are unique per account, ignoring case.
type Category struct {
	ID          int64
	Name        string
	Description string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	Version     int64
}

// Validate trims and checks c. Returns EINVALID naming each bad field.
func (c *Category) Validate() error {
	fe := FieldErrors{}
	c.Name, c.Description = strings.TrimSpace(c.Name), strings.TrimSpace(c.Description)
	CheckText(fe, "category_name", c.Name, true, 100)
	CheckText(fe, "description", c.Description, false, 2000)
	return fe.Err()
}

// NameKey is the case-insensitive form a category name is unique in.
func NameKey(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// Stock statuses, derived from quantity and minimum_qty_alert.
const (
	StockIn  = "in-stock"
	StockLow = "low-stock"
	StockOut = "out-of-stock"
)

// ItemImage is one picture of an item.
type ItemImage struct {
	ID  int64
	URL string
}

// Item is an inventory item. Its stock status is derived, never stored.
type Item struct {
	ID              int64
	ItemCode        string
	ItemName        string
	Images          []ItemImage
	CategoryID      int64
	Unit            string
	Description     string
	UnitCost        money.Amount
	ItemPrice       money.Amount
	PreviousPrice   money.Amount
	Quantity        money.Quantity
	MinimumQtyAlert money.Quantity
	Online          bool
	Barcode         string
	SKU             string
	WarehouseID     int64
	Location        string
	Slug            string
	CreatedAt       time.Time
	UpdatedAt       time.Time
	Version         int64
}

// Status derives the stock status: out-of-stock at 0, low-stock at or below
// the alert level, else in-stock.
func (it Item) Status() string {
	switch {
	case it.Quantity.IsZero():
		return StockOut
	case it.Quantity.Cmp(it.MinimumQtyAlert) <= 0:
		return StockLow
	default:
		return StockIn
	}
}

// MaxItemImages bounds an item's pictures.
const MaxItemImages = 20

// Validate trims and checks it. Returns EINVALID naming each bad field.
func (it *Item) Validate() error {
	fe := FieldErrors{}
	for _, p := range []*string{&it.ItemCode, &it.ItemName, &it.Unit, &it.Description, &it.Barcode, &it.SKU, &it.Location} {
		*p = strings.TrimSpace(*p)
	}
	if !codeRE.MatchString(it.ItemCode) {
		fe.Add("item_code", "must be 1 to 64 letters, digits, '-' or '_'")
	}
	CheckText(fe, "item_name", it.ItemName, true, 200)
	if it.CategoryID < 1 {
		fe.Add("category_id", "is required: the id of one of your categories")
	}
	CheckText(fe, "unit", it.Unit, false, 32)
	CheckText(fe, "description", it.Description, false, 2000)
	CheckText(fe, "barcode", it.Barcode, false, 64)
	CheckText(fe, "sku", it.SKU, false, 64)
	CheckText(fe, "item_location", it.Location, false, 200)
	if it.WarehouseID < 0 {
		fe.Add("warehouse_id", "must not be negative")
	}
	if len(it.Images) > MaxItemImages {
		fe.Add("item_images", fmt.Sprintf("must have at most %d images", MaxItemImages))
	}
	for i, img := range it.Images {
		if msg := CheckURL(img.URL); msg != "" {
			fe.Add(fmt.Sprintf("item_images[%d].image_url", i), msg)
		}
	}
	if Slugify(it.ItemName) == "" && it.ItemName != "" {
		fe.Add("item_name", "must contain at least one letter or digit")
	}
	return fe.Err()
}

// Slugify derives an item's slug from its name: lower-case letters and
// digits joined by single dashes.
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
		if b.Len() >= 80 {
			break
		}
	}
	return b.String()
}

// KeepPreviousPrice moves old's price to PreviousPrice when the edit
// changed the price (previous_price takes the old item_price).
func (it *Item) KeepPreviousPrice(old Item) {
	if it.ItemPrice.Cmp(old.ItemPrice) != 0 {
		it.PreviousPrice = old.ItemPrice
	}
}

// ValidItemCode reports whether code has an item code's form; no item can
// have any other.
func ValidItemCode(code string) bool { return codeRE.MatchString(code) }

// SuffixedSlug is the slug an item gets when another item holds the plain
// one: the plain slug and the item's code, lower-cased.
func SuffixedSlug(slug, code string) string { return slug + "-" + NameKey(code) }

// StockMoves returns, per item code, how much stock going from the old lines
// to the new ones takes (positive) or gives back (negative); codes whose
// quantity does not change are left out.
func StockMoves(old, new []SaleLine) map[string]money.Delta {
	moves := map[string]money.Delta{}
	for _, l := range new {
		if l.ItemCode != "" {
			moves[l.ItemCode] = moves[l.ItemCode].Add(l.Quantity.Delta())
		}
	}
	for _, l := range old {
		if l.ItemCode != "" {
			moves[l.ItemCode] = moves[l.ItemCode].Sub(l.Quantity.Delta())
		}
	}
	for code, d := range moves {
		if d.IsZero() {
			delete(moves, code)
		}
	}
	return moves
}

// Kinds of stock movement: why an item's quantity changed.
const (
	MoveInitial    = "initial"    // the item was created with stock (or entered the ledger with it)
	MoveSale       = "sale"       // a sale took it
	MoveSaleEdit   = "sale_edit"  // an edit of a sale's lines took or gave back
	MoveReturn     = "return"     // a refund's lines gave it back
	MoveVoid       = "void"       // a voided sale gave back what was not returned
	MoveAdjustment = "adjustment" // an adjustment, or an item edit that set the quantity
)

// AdjustmentReasons are the reasons a stock adjustment may give.
var AdjustmentReasons = []string{"received", "count", "damaged", "lost", "theft", "other"}

// ValidAdjustmentReason reports whether r is one of AdjustmentReasons.
func ValidAdjustmentReason(r string) bool { return oneOf(r, AdjustmentReasons) }

// Movement is one change of an item's quantity, written in the same
// transaction as the change: the item's ledger. ID is the item's version
// after the change, so a ledger reads in the order its changes were made.
type Movement struct {
	ID          int64
	ItemCode    string
	Kind        string
	Change      money.Delta // signed change of stock: positive adds
	After       money.Quantity
	Reason      string
	Note        string
	InvoiceCode string
	CreatedAt   time.Time
}
