package business

import "fmt"

// The answers of a record that names another the account does not have, or
// a unique value another record has.

// MissingCustomer is the answer of a sale naming no customer of the
// account: EINVALID naming customer_id.
func MissingCustomer(id int64) error {
	return FieldErrors{"customer_id": fmt.Sprintf("no customer with id %d in this account", id)}.Err()
}

// MissingCategory is the answer of an item naming no category of the
// account: EINVALID naming category_id.
func MissingCategory(id int64) error {
	return FieldErrors{"category_id": fmt.Sprintf("no category with id %d in this account", id)}.Err()
}

// MissingItem is the answer of a change of stock naming no inventory item
// of the account: EINVALID naming items.
func MissingItem(code string) error {
	return FieldErrors{"items": fmt.Sprintf("item_code %s: no such inventory item", code)}.Err()
}

// Taken is the answer of a unique field whose value another record has:
// ECONFLICT naming field.
func Taken(field, value string) error {
	return &Error{Code: ECONFLICT, Message: fmt.Sprintf("%s %s is already used by another record", field, value),
		Fields: map[string]string{field: "is already used"}}
}
