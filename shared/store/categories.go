package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/wire"
)

// Inventory categories: names unique per account, ignoring case.

func categoryKey(account string, id int64) attrs { return recordKey(account, "CATEGORY", id) }

func categoryItem(account string, c business.Category) attrs {
	it := categoryKey(account, c.ID)
	it["type"] = str("category")
	it["category_name"] = str(c.Name)
	setS(it, "description", c.Description)
	setStamps(it, c.ID, c.CreatedAt, c.UpdatedAt, c.Version)
	listKeys(it, acctPK(account)+"#CATEGORY", "#NAME#"+business.NameKey(c.Name), c.ID, c.CreatedAt, c.UpdatedAt)
	return pack(it)
}

func categoryFrom(it attrs) business.Category {
	it = unpack(it)
	return business.Category{
		ID: getInt(it, "id"), Name: getS(it, "category_name"), Description: getS(it, "description"),
		CreatedAt: getTime(it, "created_at"), UpdatedAt: getTime(it, "updated_at"), Version: getInt(it, "version"),
	}
}

func nameTaken(name string) error {
	return &business.Error{Code: business.ECONFLICT, Message: fmt.Sprintf("category_name %q is already used by another category", name),
		Fields: map[string]string{"category_name": "is already used (names are compared ignoring case)"}}
}

// CreateCategory stores a valid category; its name is claimed in the same
// transaction. Returns ECONFLICT when the name is taken (ignoring case).
func (s *Store) CreateCategory(ctx context.Context, account string, c business.Category, idem *Idempotency, render Render[business.Category]) ([]byte, error) {
	return s.create(ctx, createSpec{
		account: account, kind: "category", idem: idem,
		build: func(id int64, now time.Time, _ []attrs) ([]txItem, []byte, error) {
			c.ID, c.CreatedAt, c.UpdatedAt, c.Version = id, now, now, 1
			return s.createdWithEvent(account, now, func() ([]byte, error) { return render(c) },
				business.EventCategoryCreated, categoryResource(c), wire.CategoryData(c),
				txItem{action: put(s.table, categoryItem(account, c), "attribute_not_exists(PK)"), onFail: errRetry},
				s.guardPut(account, "category_name", business.NameKey(c.Name), strconv.FormatInt(id, 10), nameTaken(c.Name)))
		},
	})
}

// UpdateCategory applies edit to the current category and stores it (see
// editRecord); a new name is claimed and the old one released in the same
// transaction. Returns ENOTFOUND when missing and ECONFLICT when the new name
// is taken.
func (s *Store) UpdateCategory(ctx context.Context, account string, id int64, edit func(*business.Category) error) (business.Category, error) {
	return editRecord(ctx, s, categoryKey(account, id), "Category not found", categoryFrom, edit,
		func(old business.Category, c *business.Category) ([]txItem, error) {
			c.Version, c.UpdatedAt = old.Version+1, s.stamp()
			actions := []txItem{s.guardedPut(categoryItem(account, *c), old.Version)}
			if business.NameKey(c.Name) != business.NameKey(old.Name) {
				actions = append(actions,
					s.guardPut(account, "category_name", business.NameKey(c.Name), strconv.FormatInt(id, 10), nameTaken(c.Name)),
					s.guardDelete(account, "category_name", business.NameKey(old.Name)))
			}
			ev := newEvents(account, c.UpdatedAt)
			ev.add(business.EventCategoryUpdated, categoryResource(*c), wire.CategoryData(*c))
			return s.withEvents(actions, ev)
		})
}

// CategoryFilter holds the list filters of GET /inventory/categories.
type CategoryFilter struct {
	Name        string // exact, ignoring case
	CreatedFrom string
	UpdatedTo   string
}

// ListCategories returns a page of categories, newest first.
func (s *Store) ListCategories(ctx context.Context, account string, f CategoryFilter, limit int, cursor string) (Page[business.Category], error) {
	base := acctPK(account) + "#CATEGORY"
	eq := ""
	if f.Name != "" {
		eq = base + "#NAME#" + business.NameKey(f.Name)
	}
	return page(ctx, s, boundedQuery(base, eq, f.CreatedFrom, f.UpdatedTo, limit, cursor), categoryFrom)
}
