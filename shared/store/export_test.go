package store

// PaymentItem is paymentItem for tests that write a sale's payment records
// directly, as the store stores them.
var PaymentItem = paymentItem

// SaleItem is saleItem, for tests that store a sale as an earlier release
// did.
var SaleItem = saleItem
