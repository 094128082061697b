package store

// PaymentItem is paymentItem for tests that write a sale's payment records
// directly, as the store stores them.
var PaymentItem = paymentItem
