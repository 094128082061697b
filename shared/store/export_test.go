package store

import "time"

// PaymentItem is paymentItem for tests that write a sale's payment records
// directly, as the store stores them.
var PaymentItem = paymentItem

// SetClock makes s read the time from now (tests of expiry).
func (s *Store) SetClock(now func() time.Time) { s.now = now }

// SaleItem is saleItem, for tests that store a sale as an earlier release
// did.
var SaleItem = saleItem
