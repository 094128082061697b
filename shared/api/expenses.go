package api

import (
	"net/http"

	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/store"
	"bizdata/shared/wire"
)

// expenseRequest is the body of add and edit; both require the same fields.
type expenseRequest struct {
	ExpenseType   Opt[string]       `json:"expense_type"`
	Description   Opt[string]       `json:"expense_description"`
	Amount        Opt[money.Amount] `json:"expense_amount"`
	PaymentMethod Opt[string]       `json:"payment_method"`
	Image         Opt[string]       `json:"expense_image"`
	CreatedBy     Opt[string]       `json:"created_by"`
}

func decodeExpense(body []byte) (expenseRequest, error) {
	var req expenseRequest
	if err := decodeObject(body, &req, ""); err != nil {
		return req, err
	}
	fe := business.FieldErrors{}
	requireFields(fe, map[string]bool{"expense_type": hasValue(req.ExpenseType), "expense_amount": hasValue(req.Amount),
		"payment_method": hasValue(req.PaymentMethod), "created_by": hasValue(req.CreatedBy)})
	return req, fe.Err()
}

// expenseKind is how the API addresses and shows expenses: a get answers
// under "expense", an add under both keys.
var expenseKind = kind[int64, business.Expense]{
	noun: "Expense", nouns: "Expenses", plural: "expenses", one: "expense",
	key:     byID("Expense not found"),
	version: func(e business.Expense) int64 { return e.Version },
	json:    func(e business.Expense) any { return wire.NewExpense(e) },
}

func (req expenseRequest) apply(e *business.Expense) error {
	setText(&e.ExpenseType, req.ExpenseType)
	setText(&e.Description, req.Description)
	setText(&e.PaymentMethod, req.PaymentMethod)
	setText(&e.Image, req.Image)
	setText(&e.CreatedBy, req.CreatedBy)
	e.Amount = req.Amount.Value(e.Amount)
	return e.Validate()
}

func listExpenses(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	q := parseList(r, "expense_type", "created_at", "updated_at")
	f := store.ExpenseFilter{ExpenseType: q.text("expense_type", 100), CreatedFrom: q.lowerBound("created_at"), UpdatedTo: q.upperBound("updated_at")}
	return listRecords(w, r, acct, expenseKind, q, f, s.store.ListExpenses)
}

func getExpense(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	return getRecord(w, r, acct, expenseKind, s.store.FindExpenseByID)
}

func addExpense(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	return addRecord(s, w, r, acct, expenseKind, applyToNew(decodeExpense), s.store.CreateExpense)
}

func editExpense(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	return editRecord(w, r, acct, expenseKind, decodeExpense, s.store.UpdateExpense)
}
