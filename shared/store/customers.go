package store

import (
	"context"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/wire"
)

// recordKey is the table key of the account's record of kind (CUSTOMER,
// CATEGORY) with id: a partition of its own.
func recordKey(account, kind string, id int64) attrs {
	return key(acctPK(account)+"#"+kind+"#"+pad(id), kind)
}

func customerKey(account string, id int64) attrs { return recordKey(account, "CUSTOMER", id) }

func customerItem(account string, c business.Customer) attrs {
	it := customerKey(account, c.ID)
	it["type"] = str("customer")
	it["name"] = str(c.Name)
	setS(it, "email", c.Email)
	setS(it, "phone", c.Phone)
	setS(it, "address", c.Address)
	setStamps(it, c.ID, c.CreatedAt, c.UpdatedAt, c.Version)
	it[IndexCreated.PK] = str(acctPK(account) + "#CUSTOMER")
	it[IndexCreated.SK] = str(fmtTime(c.CreatedAt) + "#" + pad(c.ID))
	return pack(it)
}

func customerFrom(it attrs) business.Customer {
	it = unpack(it)
	return business.Customer{
		ID:        getInt(it, "id"),
		Name:      getS(it, "name"),
		Email:     getS(it, "email"),
		Phone:     getS(it, "phone"),
		Address:   getS(it, "address"),
		CreatedAt: getTime(it, "created_at"),
		UpdatedAt: getTime(it, "updated_at"),
		Version:   getInt(it, "version"),
	}
}

// createdWithEvent is what a create's build returns: the response body
// render makes, and actions with the event of the record's creation (of
// type kind, about res, carrying data).
func (s *Store) createdWithEvent(account string, now time.Time, render func() ([]byte, error), kind string, res business.EventResource, data any, actions ...txItem) ([]txItem, []byte, error) {
	body, err := render()
	if err != nil {
		return nil, nil, err
	}
	ev := newEvents(account, now)
	ev.add(kind, res, data)
	actions, err = s.withEvents(actions, ev)
	return actions, body, err
}

// CreateCustomer stores c under the account's next customer id and returns the
// response body render produced (or, for a repeated Idempotency-Key, the
// first one). c must be valid.
func (s *Store) CreateCustomer(ctx context.Context, account string, c business.Customer, idem *Idempotency, render Render[business.Customer]) ([]byte, error) {
	return s.create(ctx, createSpec{
		account: account, kind: "customer", idem: idem,
		build: func(id int64, now time.Time, _ []attrs) ([]txItem, []byte, error) {
			c.ID, c.CreatedAt, c.UpdatedAt, c.Version = id, now, now, 1
			return s.createdWithEvent(account, now, func() ([]byte, error) { return render(c) },
				business.EventCustomerCreated, customerResource(c), wire.CustomerData(c),
				txItem{action: put(s.table, customerItem(account, c), "attribute_not_exists(PK)"), onFail: errRetry})
		},
	})
}

// FindCustomerByID returns one customer. Returns ENOTFOUND when the account has no
// customer with that id.
func (s *Store) FindCustomerByID(ctx context.Context, account string, id int64) (business.Customer, error) {
	it, err := s.getOne(ctx, customerKey(account, id), "Customer not found", false)
	if err != nil {
		return business.Customer{}, err
	}
	return customerFrom(it), nil
}

// UpdateCustomer applies edit to the current customer and stores the result
// (see editRecord). Returns ENOTFOUND when the customer does not exist.
func (s *Store) UpdateCustomer(ctx context.Context, account string, id int64, edit func(*business.Customer) error) (business.Customer, error) {
	return editRecord(ctx, s, customerKey(account, id), "Customer not found", customerFrom, edit,
		func(old business.Customer, c *business.Customer) ([]txItem, error) {
			c.Version, c.UpdatedAt = old.Version+1, s.stamp()
			ev := newEvents(account, c.UpdatedAt)
			ev.add(business.EventCustomerUpdated, customerResource(*c), wire.CustomerData(*c))
			if c.Name != old.Name { // the customer's debt, if any, takes the new name
				ev.owe(business.ReceivableChange{Old: business.Owed{CustomerID: c.ID, CustomerName: old.Name}, New: business.Owed{CustomerID: c.ID, CustomerName: c.Name}})
			}
			return s.withEvents([]txItem{s.guardedPut(customerItem(account, *c), old.Version)}, ev)
		})
}

// CustomerFilter holds the list filters of GET /customers.
type CustomerFilter struct {
	CreatedFrom string
}

// ListCustomers returns a page of customers, newest first.
func (s *Store) ListCustomers(ctx context.Context, account string, f CustomerFilter, limit int, cursor string) (Page[business.Customer], error) {
	q := query{index: IndexCreated, pk: acctPK(account) + "#CUSTOMER", rng: Range{From: f.CreatedFrom}, limit: limit, cursor: cursor, views: true}
	return page(ctx, s, q, customerFrom)
}
