package invoice

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// labelled is one labelled value of an invoice, such as "Total" and its amount.
type labelled struct {
	Label, Value string
	// Grand marks the amount the customer is asked for, set in bold.
	Grand bool
}

// totalsOf lists the amounts under the lines, in the order both the page and
// the PDF show them: tax, a discount or a refund appears only when the view
// has one, so a plain invoice does not show empty rows.
func totalsOf(v View) []labelled {
	rows := []labelled{{Label: "Sub-total", Value: v.SubTotal}}
	if v.Tax != "" {
		rows = append(rows, labelled{Label: "Tax", Value: v.Tax})
	}
	if v.Discount != "" {
		rows = append(rows, labelled{Label: "Discount", Value: v.Discount})
	}
	rows = append(rows,
		labelled{Label: "Total", Value: v.Total},
		labelled{Label: "Amount paid", Value: v.AmountPaid})
	if v.Refunded != "" {
		rows = append(rows, labelled{Label: "Refunded", Value: v.Refunded})
	}
	rows = append(rows, labelled{Label: "Balance due", Value: v.BalanceDue, Grand: true})
	for i := range rows {
		rows[i].Value = withCurrency(v.Currency, rows[i].Value)
	}
	return rows
}

// textsOf lists the merchant's words after the totals, those that are set.
func textsOf(v View) []labelled {
	var rows []labelled
	for _, t := range []labelled{{Label: "Note", Value: v.Note}, {Label: "Terms", Value: v.Terms}, {Label: "Issued by", Value: v.IssuedBy}} {
		if strings.TrimSpace(t.Value) != "" {
			rows = append(rows, t)
		}
	}
	return rows
}

// withCurrency prefixes an amount with its currency code, when there is one.
func withCurrency(currency, amount string) string {
	if currency == "" {
		return amount
	}
	return currency + " " + amount
}

// statusLabel is how a status reads to the customer: "Partially paid".
// An unknown status reads as it is rather than as a guess.
func statusLabel(status string) string {
	first, size := utf8.DecodeRuneInString(status)
	if size == 0 {
		return ""
	}
	return string(unicode.ToUpper(first)) + status[size:]
}

// statusClass names the status's badge style; an unknown status gets a
// neutral one.
func statusClass(status string) string {
	switch status {
	case StatusPaid, StatusPartiallyPaid, StatusUnpaid, StatusOverdue, StatusVoid:
		return strings.ReplaceAll(status, " ", "-")
	}
	return "other"
}
