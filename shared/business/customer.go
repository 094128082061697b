package business

import (
	"net/mail"
	"strings"
	"time"
)

// Customer is a buyer a sale can name by customer_id.
type Customer struct {
	ID        int64
	Name      string
	Email     string
	Phone     string
	Address   string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Version counts writes; an edit succeeds only if it is unchanged.
	Version int64
}

// Validate trims c's text and checks every field. Returns EINVALID naming each
// bad field.
func (c *Customer) Validate() error {
	fe := FieldErrors{}
	c.Name = strings.TrimSpace(c.Name)
	c.Email = strings.TrimSpace(c.Email)
	c.Phone = strings.TrimSpace(c.Phone)
	c.Address = strings.TrimSpace(c.Address)
	CheckText(fe, "name", c.Name, true, 200)
	CheckText(fe, "email", c.Email, false, 254)
	CheckText(fe, "phone", c.Phone, false, 32)
	CheckText(fe, "address", c.Address, false, 500)
	if c.Email != "" {
		if a, err := mail.ParseAddress(c.Email); err != nil || a.Address != c.Email {
			fe.Add("email", "must be an email address such as ama@example.com")
		}
	}
	return fe.Err()
}
