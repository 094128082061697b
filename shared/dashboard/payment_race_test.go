package dashboard

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// TestRacingPaymentsRecordOnce: the same payment form sent four times at
// once (a double click, two tabs) records one payment; the others are
// refused with 409, because each edit is made only if the sale is still
// the one its payment was computed from (If-Match).
func TestRacingPaymentsRecordOnce(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("PAYRACE1")
	salesFixture(t, o, "330001", "0.00")
	csrf := o.csrfOf()
	form := url.Values{"form": {"payment"}, "amount": {"5.00"}, "payment_type": {"Cash"}, "paid_before": {"0.00"}}
	statuses := make([]int, 4)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], _, _ = o.postWith("/dashboard/sales/330001/payments", form, csrf)
		}()
	}
	wg.Wait()
	ok := 0
	for _, st := range statuses {
		switch st {
		case http.StatusOK:
			ok++
		case http.StatusConflict:
		default:
			t.Errorf("a racing payment answered %d", st)
		}
	}
	sale := salesGet(t, o, "330001")
	if ok != 1 || sale.Sales.AmountPaid != "5.00" {
		t.Fatalf("%d of 4 racing payments succeeded (%v); the sale shows %s paid", ok, statuses, sale.Sales.AmountPaid)
	}
}

// TestPaidSaleOffersNoPayment: a sale with nothing left to pay shows no
// payment form, only that nothing is owed.
func TestPaidSaleOffersNoPayment(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("PAYDONE1")
	salesFixture(t, o, "330002", "25.00")
	_, page, _ := o.get("/dashboard/sales/330002")
	mustContain(t, page, "Nothing is left to pay on this sale.", `action="/dashboard/sales/330002/refunds"`)
	if strings.Contains(page, `action="/dashboard/sales/330002/payments"`) {
		t.Fatal("a paid sale offers a payment form")
	}
}
