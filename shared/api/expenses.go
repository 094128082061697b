package api

import (
	"net/http"

	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/store"
)

type expenseJSON struct {
	ID            int64        `json:"id"`
	ExpenseType   string       `json:"expense_type"`
	Description   string       `json:"expense_description,omitempty"`
	Amount        money.Amount `json:"expense_amount"`
	PaymentMethod string       `json:"payment_method"`
	Image         *string      `json:"expense_image"`
	CreatedBy     string       `json:"created_by"`
	CreatedAt     string       `json:"created_at"`
	UpdatedAt     string       `json:"updated_at"`
}

func toExpenseJSON(e business.Expense) expenseJSON {
	return expenseJSON{
		ID: e.ID, ExpenseType: e.ExpenseType, Description: e.Description, Amount: e.Amount,
		PaymentMethod: e.PaymentMethod, Image: nullable(e.Image), CreatedBy: e.CreatedBy,
		CreatedAt: e.CreatedAt.Format(business.TimeFormat), UpdatedAt: e.UpdatedAt.Format(business.TimeFormat),
	}
}

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
	present(fe, map[string]bool{"expense_type": has(req.ExpenseType), "expense_amount": has(req.Amount),
		"payment_method": has(req.PaymentMethod), "created_by": has(req.CreatedBy)})
	return req, fe.Err()
}

func (req expenseRequest) apply(e *business.Expense) {
	setText(&e.ExpenseType, req.ExpenseType)
	setText(&e.Description, req.Description)
	setText(&e.PaymentMethod, req.PaymentMethod)
	setText(&e.Image, req.Image)
	setText(&e.CreatedBy, req.CreatedBy)
	e.Amount = req.Amount.Value(e.Amount)
}

func listExpenses(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	q := parseList(r, "expense_type", "created_at", "updated_at")
	f := store.ExpenseFilter{ExpenseType: q.text("expense_type", 100), CreatedFrom: q.lowerBound("created_at"), UpdatedTo: q.upperBound("updated_at")}
	if err := q.err(); err != nil {
		return err
	}
	page, err := s.store.ListExpenses(r.Context(), acct.ID, f, q.limit, q.cursor)
	if err != nil {
		return err
	}
	return writePage(w, "Expenses", "expenses", page, toExpenseJSON)
}

func getExpense(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	id, err := pathID(r, "Expense not found")
	if err != nil {
		return err
	}
	e, err := s.store.FindExpenseByID(r.Context(), acct.ID, id)
	if err != nil {
		return err
	}
	setETag(w, e.Version)
	return writeOK(w, "Expense found", map[string]any{"expense": toExpenseJSON(e)})
}

func addExpense(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	body, idem, err := readCreate(r)
	if err != nil {
		return err
	}
	e, err := toExpense(body)
	if err != nil {
		return s.refuse(w, r, acct, idem, err)
	}
	resp, err := s.store.CreateExpense(r.Context(), acct.ID, e, idem, func(e business.Expense) ([]byte, error) {
		j := toExpenseJSON(e)
		return successBody(http.StatusOK, "Expense added successfully", map[string]any{"expense": j, "expenses": j})
	})
	return writeCreated(w, resp, err)
}

// toExpense reads and validates an add-expense body.
func toExpense(body []byte) (business.Expense, error) {
	var e business.Expense
	req, err := decodeExpense(body)
	if err != nil {
		return e, err
	}
	req.apply(&e)
	return e, e.Validate()
}

func editExpense(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	id, err := pathID(r, "Expense not found")
	if err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	req, err := decodeExpense(body)
	if err != nil {
		return err
	}
	ifMatch := ifMatchHeader(r)
	e, err := s.store.UpdateExpense(r.Context(), acct.ID, id, func(e *business.Expense) error {
		if err := checkIfMatch(ifMatch, e.Version); err != nil {
			return err
		}
		req.apply(e)
		return e.Validate()
	})
	if err != nil {
		return err
	}
	setETag(w, e.Version)
	return writeOK(w, "Expense updated successfully", map[string]any{"expenses": toExpenseJSON(e)})
}
