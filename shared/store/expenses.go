package store

import (
	"context"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/wire"
)

func expenseKey(account string, id int64) attrs {
	return key(acctPK(account)+"#EXPENSE#"+pad(id), "EXPENSE")
}

func expenseItem(account string, e business.Expense) attrs {
	it := expenseKey(account, e.ID)
	it["type"] = str("expense")
	it["expense_type"] = str(e.ExpenseType)
	setS(it, "expense_description", e.Description)
	it["expense_amount"] = num(e.Amount.String())
	it["payment_method"] = str(e.PaymentMethod)
	setS(it, "expense_image", e.Image)
	it["created_by"] = str(e.CreatedBy)
	setStamps(it, e.ID, e.CreatedAt, e.UpdatedAt, e.Version)
	listKeys(it, acctPK(account)+"#EXPENSE", "#TYPE#"+business.NameKey(e.ExpenseType), e.ID, e.CreatedAt, e.UpdatedAt)
	markCounted(it)
	return pack(it)
}

func expenseFrom(it attrs) business.Expense {
	it = unpack(it)
	return business.Expense{
		ID: getInt(it, "id"), ExpenseType: getS(it, "expense_type"), Description: getS(it, "expense_description"),
		Amount: amountAt(it, "expense_amount"), PaymentMethod: getS(it, "payment_method"), Image: getS(it, "expense_image"),
		CreatedBy: getS(it, "created_by"), CreatedAt: getTime(it, "created_at"), UpdatedAt: getTime(it, "updated_at"),
		Version: getInt(it, "version"),
	}
}

// CreateExpense stores a valid expense under the account's next expense id
// and returns the response body render produced.
func (s *Store) CreateExpense(ctx context.Context, account string, e business.Expense, idem *Idempotency, render Render[business.Expense]) ([]byte, error) {
	return s.create(ctx, createSpec{
		account: account, kind: "expense", idem: idem,
		build: func(id int64, now time.Time, _ []attrs) ([]txItem, []byte, error) {
			e.ID, e.CreatedAt, e.UpdatedAt, e.Version = id, now, now, 1
			body, err := render(e)
			if err != nil {
				return nil, nil, err
			}
			ev := newEvents(account, now)
			ev.add(business.EventExpenseCreated, expenseResource(e), wire.ExpenseData(e))
			ev.count(business.ExpenseCreatedFigures(e))
			actions, err := s.withEvents([]txItem{{action: put(s.table, expenseItem(account, e), "attribute_not_exists(PK)"), onFail: errRetry}}, ev)
			return actions, body, err
		},
	})
}

// FindExpenseByID returns one expense. Returns ENOTFOUND when it does not exist.
func (s *Store) FindExpenseByID(ctx context.Context, account string, id int64) (business.Expense, error) {
	it, err := s.getOne(ctx, expenseKey(account, id), "Expense not found", false)
	if err != nil {
		return business.Expense{}, err
	}
	return expenseFrom(it), nil
}

// UpdateExpense applies edit to the current expense and stores it (see
// editRecord). Returns ENOTFOUND when missing.
func (s *Store) UpdateExpense(ctx context.Context, account string, id int64, edit func(*business.Expense) error) (business.Expense, error) {
	uncounted := false // written before reports: its amount goes in now
	from := func(it attrs) business.Expense { uncounted = !counted(it); return expenseFrom(it) }
	return editRecord(ctx, s, expenseKey(account, id), "Expense not found", from, edit,
		func(old business.Expense, e *business.Expense) ([]txItem, error) {
			e.Version, e.UpdatedAt = old.Version+1, s.stamp()
			ev := newEvents(account, e.UpdatedAt)
			ev.add(business.EventExpenseUpdated, expenseResource(*e), wire.ExpenseData(*e))
			if uncounted {
				ev.count(business.ExpenseCreatedFigures(*e))
			} else {
				ev.count(business.ExpenseEditedFigures(old, *e))
			}
			return s.withEvents([]txItem{stillUncounted(s.guardedPut(expenseItem(account, *e), old.Version), uncounted)}, ev)
		})
}

// ExpenseFilter holds the list filters of GET /expenses.
type ExpenseFilter struct {
	ExpenseType string
	CreatedFrom string
	UpdatedTo   string // inclusive upper bound ("~"-terminated)
}

// ListExpenses returns a page of expenses, newest first (by last update when
// updated_at is the only filter), each filter served by its own index.
func (s *Store) ListExpenses(ctx context.Context, account string, f ExpenseFilter, limit int, cursor string) (Page[business.Expense], error) {
	base := acctPK(account) + "#EXPENSE"
	eq := ""
	if f.ExpenseType != "" {
		eq = base + "#TYPE#" + business.NameKey(f.ExpenseType)
	}
	return page(ctx, s, boundedQuery(base, eq, f.CreatedFrom, f.UpdatedTo, limit, cursor), expenseFrom)
}

// boundedQuery is the query of a list with an optional equality filter
// (eqPK, a partition of IndexPrimaryFilter), a created_at lower bound and an
// updated_at upper bound. The created_at bound is always a key condition;
// the updated_at bound is one too when it is the only filter (on the updated
// index), else a filter expression.
func boundedQuery(base, eqPK, createdFrom, updatedTo string, limit int, cursor string) query {
	q := query{index: IndexCreated, pk: base, rng: Range{From: createdFrom}, limit: limit, cursor: cursor, views: true}
	if eqPK != "" {
		q.index, q.pk = IndexPrimaryFilter, eqPK
	}
	switch {
	case updatedTo == "":
	case eqPK == "" && createdFrom == "":
		q.index, q.rng = IndexUpperBound, Range{To: updatedTo}
	default:
		q.filter = "#v.#updated <= :updated"
		q.names = map[string]string{"#v": viewAttr, "#updated": "updated_at"}
		q.values = attrs{":updated": str(updatedTo)}
	}
	return q
}
