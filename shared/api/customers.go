package api

import (
	"net/http"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/wire"
)

// customerRequest is the body of add and edit.
type customerRequest struct {
	Name    Opt[string] `json:"name"`
	Email   Opt[string] `json:"email"`
	Phone   Opt[string] `json:"phone"`
	Address Opt[string] `json:"address"`
}

// customerKind is how the API addresses and shows customers.
var customerKind = kind[int64, business.Customer]{
	noun: "Customer", nouns: "Customers", plural: "customers", one: "customers",
	key:     byID("Customer not found"),
	version: func(c business.Customer) int64 { return c.Version },
	json:    func(c business.Customer) any { return wire.NewCustomer(c) },
}

// apply copies the fields the request lists onto c (null clears a field),
// then validates c.
func (req customerRequest) apply(c *business.Customer) error {
	setText(&c.Name, req.Name)
	setText(&c.Email, req.Email)
	setText(&c.Phone, req.Phone)
	setText(&c.Address, req.Address)
	return c.Validate()
}

func listCustomers(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	q := parseList(r, "created_at")
	f := store.CustomerFilter{CreatedFrom: q.lowerBound("created_at")}
	return listRecords(w, r, acct, customerKind, q, f, s.store.ListCustomers)
}

func getCustomer(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	return getRecord(w, r, acct, customerKind, s.store.FindCustomerByID)
}

func addCustomer(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	return addRecord(s, w, r, acct, customerKind, applyToNew(decodeJSON[customerRequest]), s.store.CreateCustomer)
}

func editCustomer(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	return editRecord(w, r, acct, customerKind, decodeJSON[customerRequest], s.store.UpdateCustomer)
}
