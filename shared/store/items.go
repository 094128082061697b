package store

import (
	"context"
	"strconv"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/wire"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Inventory items: codes unique per account, slugs derived from names.

func itemKey(account, code string) attrs { return key(acctPK(account)+"#ITEM#"+code, "ITEM") }

func invItem(account string, x business.Item) attrs {
	it := itemKey(account, x.ItemCode)
	it["type"] = str("item")
	it["item_code"] = str(x.ItemCode)
	it["item_name"] = str(x.ItemName)
	imgs := make([]types.AttributeValue, len(x.Images))
	for i, img := range x.Images {
		imgs[i] = &types.AttributeValueMemberM{Value: attrs{"id": nInt(img.ID), "image_url": str(img.URL)}}
	}
	it["item_images"] = &types.AttributeValueMemberL{Value: imgs}
	it["category_id"] = nInt(x.CategoryID)
	setS(it, "unit", x.Unit)
	setS(it, "description", x.Description)
	it["unit_cost"] = num(x.UnitCost.String())
	it["item_price"] = num(x.ItemPrice.String())
	it["previous_price"] = num(x.PreviousPrice.String())
	it["quantity"] = num(x.Quantity.String())
	it["minimum_qty_alert"] = num(x.MinimumQtyAlert.String())
	it["online"] = &types.AttributeValueMemberBOOL{Value: x.Online}
	setS(it, "barcode", x.Barcode)
	setS(it, "sku", x.SKU)
	it["warehouse_id"] = nInt(x.WarehouseID)
	setS(it, "item_location", x.Location)
	it["item_slug"] = str(x.Slug)
	setStamps(it, x.ID, x.CreatedAt, x.UpdatedAt, x.Version)
	listKeys(it, acctPK(account)+"#ITEM", "#CATEGORY#"+strconv.FormatInt(x.CategoryID, 10), x.ID, x.CreatedAt, x.UpdatedAt)
	it = pack(it)
	// Written whole, so counted in the inventory's worth as it now is
	// (the write records the change), listed in IX9 while low or out.
	markWorthCounted(it)
	setAlertKeys(it, account, x)
	return it
}

func quantityAt(it attrs, k string) money.Quantity {
	q, _ := money.ParseQuantity(getN(it, k))
	return q
}

func invItemFrom(it attrs) business.Item {
	it = unpack(it)
	x := business.Item{
		ID: getInt(it, "id"), ItemCode: getS(it, "item_code"), ItemName: getS(it, "item_name"),
		CategoryID: getInt(it, "category_id"), Unit: getS(it, "unit"), Description: getS(it, "description"),
		UnitCost: amountAt(it, "unit_cost"), ItemPrice: amountAt(it, "item_price"), PreviousPrice: amountAt(it, "previous_price"),
		Quantity: quantityAt(it, "quantity"), MinimumQtyAlert: quantityAt(it, "minimum_qty_alert"),
		Barcode: getS(it, "barcode"), SKU: getS(it, "sku"), WarehouseID: getInt(it, "warehouse_id"),
		Location: getS(it, "item_location"), Slug: getS(it, "item_slug"),
		CreatedAt: getTime(it, "created_at"), UpdatedAt: getTime(it, "updated_at"), Version: getInt(it, "version"),
	}
	if b, ok := it["online"].(*types.AttributeValueMemberBOOL); ok {
		x.Online = b.Value
	}
	if l, ok := it["item_images"].(*types.AttributeValueMemberL); ok {
		for _, v := range l.Value {
			if m, ok := v.(*types.AttributeValueMemberM); ok {
				x.Images = append(x.Images, business.ItemImage{ID: getInt(m.Value, "id"), URL: getS(m.Value, "image_url")})
			}
		}
	}
	return x
}

// categoryExists is the check that an item's category exists as the
// transaction commits; EINVALID naming category_id when it does not.
func (s *Store) categoryExists(account string, id int64) txItem {
	return txItem{action: types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: aws.String(s.table), Key: categoryKey(account, id), ConditionExpression: aws.String("attribute_exists(PK)"),
	}}, onFail: business.MissingCategory(id)}
}

// NewItem is an item to create, validated, and whether its code was
// generated (a collision on a generated code draws another; on a client's
// code it is ECONFLICT).
type NewItem struct {
	Item          business.Item
	CodeGenerated bool
}

// CreateItem stores a valid item. Its category must exist (EINVALID); its
// code is unique (ECONFLICT when a client's code is taken; a generated one is
// drawn again); its slug is derived from the name, and suffixed with the
// item code when another item has it (see pickSlug). All of it is decided by
// the write's conditions, so the common case is one call; an attempt that
// failed (a slug or generated code another item holds) makes the next one
// read the slugs' guards to pick.
func (s *Store) CreateItem(ctx context.Context, account string, n NewItem, idem *Idempotency, render Render[business.Item]) ([]byte, error) {
	x, codeGenerated := n.Item, n.CodeGenerated
	slug := business.Slugify(x.ItemName)
	attempts := 0
	return s.create(ctx, createSpec{
		account: account, kind: "item", idem: idem,
		build: func(id int64, now time.Time, _ []attrs) ([]txItem, []byte, error) {
			if codeGenerated { // drawn afresh on every attempt, so a collision retries
				x.ItemCode = business.NewItemCode()
			}
			x.Slug = slug
			if attempts++; attempts > 1 {
				var err error
				if x.Slug, err = s.pickSlug(ctx, account, slug, x.ItemCode, ""); err != nil {
					return nil, nil, err
				}
			}
			x.ID, x.CreatedAt, x.UpdatedAt, x.Version = id, now, now, 1
			body, err := render(x)
			if err != nil {
				return nil, nil, err
			}
			codeTaken := business.Taken("item_code", x.ItemCode)
			if codeGenerated {
				codeTaken = errRetry
			}
			// A missing category is the answer before a taken code.
			actions := []txItem{
				s.categoryExists(account, x.CategoryID),
				{action: put(s.table, invItem(account, x), "attribute_not_exists(PK)"), onFail: codeTaken},
				s.guardPut(account, "item_slug", x.Slug, x.ItemCode, errRetry),
			}
			if m, ok := business.InitialMovement(x); ok {
				actions = append(actions, txItem{action: put(s.table, movementItem(account, m), "attribute_not_exists(PK)"), onFail: codeTaken})
			}
			ev := newEvents(account, now)
			ev.add(business.EventItemCreated, itemResource(x), wire.ItemData(x))
			ev.worth(business.StockChange{New: business.WorthOf(x)})
			actions, err = s.withEvents(actions, ev)
			return actions, body, err
		},
	})
}

// pickSlug reads the guards of an item's two candidate slugs (the plain
// one and the one suffixed with its code) and picks its slug as
// business.PickSlug does: a guard owned by self (the item's own code)
// counts as free.
func (s *Store) pickSlug(ctx context.Context, account, slug, code, self string) (string, error) {
	g, err := s.batchGet(ctx, []attrs{uniqueKey(account, "item_slug", slug), uniqueKey(account, "item_slug", business.SuffixedSlug(slug, code))})
	if err != nil {
		return "", err
	}
	free := func(g attrs) bool { return g == nil || (self != "" && getS(g, "owner") == self) }
	return business.PickSlug(slug, code, free(g[0]), free(g[1])), nil
}

// FindItemByCode returns one item by code. Returns ENOTFOUND when missing.
func (s *Store) FindItemByCode(ctx context.Context, account, code string) (business.Item, error) {
	it, err := s.getOne(ctx, itemKey(account, code), "Item not found", false)
	if err != nil {
		return business.Item{}, err
	}
	return invItemFrom(it), nil
}

// UpdateItem applies edit to the current item and stores it (see
// editRecord). A new price moves the old one to previous_price; a new name
// re-derives the slug; a new category must exist. A new quantity is recorded
// in the ledger as an adjustment (reason count) of the difference from the
// quantity read; when stock moved between that read and the write (a sale,
// an adjustment), the edit is not made again over it (see
// business.CheckStockCount). Returns ENOTFOUND when missing.
func (s *Store) UpdateItem(ctx context.Context, account, code string, edit func(*business.Item) error) (business.Item, error) {
	var first *money.Quantity // the quantity the first attempt read
	marked := false           // whether the item read is counted in the inventory's worth
	from := func(it attrs) business.Item {
		marked = worthCounted(it)
		return invItemFrom(it)
	}
	return editRecord(ctx, s, itemKey(account, code), "Item not found", from,
		func(x *business.Item) error {
			read := x.Quantity
			if first == nil {
				first = &read
			}
			if err := edit(x); err != nil {
				return err
			}
			return business.CheckStockCount(*first, read, x.Quantity)
		},
		func(old business.Item, x *business.Item) ([]txItem, error) {
			x.KeepPreviousPrice(old)
			x.Version, x.UpdatedAt = old.Version+1, s.stamp()
			var actions []txItem
			if m, ok := business.CountMovement(old, *x); ok {
				actions = append(actions, txItem{action: put(s.table, movementItem(account, m), "attribute_not_exists(PK)"), onFail: errRetry})
			}
			if x.CategoryID != old.CategoryID {
				actions = append(actions, s.categoryExists(account, x.CategoryID))
			}
			if slug := business.Slugify(x.ItemName); business.Slugify(old.ItemName) != slug {
				var err error
				if x.Slug, err = s.pickSlug(ctx, account, slug, x.ItemCode, x.ItemCode); err != nil {
					return nil, err
				}
				if x.Slug != old.Slug { // a guard it already holds is kept as it is
					actions = append(actions, s.guardPut(account, "item_slug", x.Slug, x.ItemCode, errRetry), s.guardDelete(account, "item_slug", old.Slug))
				}
			}
			ev := newEvents(account, x.UpdatedAt)
			if x.Quantity.Cmp(old.Quantity) != 0 { // a count: an adjustment in the ledger
				ev.item(business.EventStockAdjusted, *x, old.Quantity)
			} else {
				ev.item(business.EventItemUpdated, *x, old.Quantity)
			}
			was := business.StockWorth{} // an item not counted yet is counted whole
			if marked {
				was = business.WorthOf(old)
			}
			ev.worth(business.StockChange{Old: was, New: business.WorthOf(*x)})
			return s.withEvents(append(actions, stillUnworthed(s.guardedPut(invItem(account, *x), old.Version), !marked)), ev)
		})
}

// ItemMove is an item after a change of its stock, with the movement that
// records it.
type ItemMove struct {
	Item     business.Item
	Movement business.Movement
}

// AdjustStock changes an item's stock by change (signed: positive adds), for
// reason (one of business.AdjustmentReasons) with an optional note, and
// records the movement, in one transaction. Stock stays within its range
// (see business.CheckStockAdjustment). Returns ENOTFOUND when the item is
// missing.
func (s *Store) AdjustStock(ctx context.Context, account, code string, change money.Delta, reason, note string, idem *Idempotency, render Render[ItemMove]) ([]byte, error) {
	return s.changeOnce(ctx, account, idem, func(now time.Time) ([]txItem, []byte, error) {
		it, err := s.getOne(ctx, itemKey(account, code), "Item not found", true)
		if err != nil {
			return nil, nil, err
		}
		if err := business.CheckStockAdjustment(invItemFrom(it), change); err != nil {
			return nil, nil, err
		}
		ev := newEvents(account, now)
		actions, moved, err := s.stockActions(account, map[string]money.Delta{code: change.Neg()}, map[string]attrs{code: it}, now,
			business.StockCause{Kind: business.MoveAdjustment, Reason: reason, Note: note}, ev)
		if err != nil {
			return nil, nil, err
		}
		if actions, err = s.withEvents(actions, ev); err != nil {
			return nil, nil, err
		}
		body, err := render(ItemMove{Item: moved[code].Item, Movement: moved[code].Movement})
		return actions, body, err
	})
}

// ItemFilter holds the list filters of GET /inventory/items.
type ItemFilter struct {
	CategoryID  int64
	CreatedFrom string
	UpdatedTo   string
}

// ListItems returns a page of items, newest first.
func (s *Store) ListItems(ctx context.Context, account string, f ItemFilter, limit int, cursor string) (Page[business.Item], error) {
	base := acctPK(account) + "#ITEM"
	eq := ""
	if f.CategoryID != 0 {
		eq = base + "#CATEGORY#" + strconv.FormatInt(f.CategoryID, 10)
	}
	return page(ctx, s, boundedQuery(base, eq, f.CreatedFrom, f.UpdatedTo, limit, cursor), invItemFrom)
}
