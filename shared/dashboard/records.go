package dashboard

import "net/http"

func expensesPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "expensesPage", "", nil)
}

func addExpense(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "addExpense", "", nil)
}

func customersPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "customersPage", "", nil)
}

func addCustomer(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "addCustomer", "", nil)
}
