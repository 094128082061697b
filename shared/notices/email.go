package notices

import (
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/invoice"
	"bizdata/shared/mail"
	"bizdata/shared/store"
)

// ReminderEmail is the reminder of case c: the sale's reminder_message (or
// the default text), the amount due and the invoice's link.
func ReminderEmail(c store.NoticeCase, link string) mail.Message {
	s := c.Sale.Sale
	text := strings.TrimSpace(s.ReminderMessage)
	if text == "" {
		text = business.DefaultReminderText
	}
	var b strings.Builder
	b.WriteString(text)
	b.WriteString("\n\n")
	b.WriteString("Invoice: " + s.InvoiceNumber + "\n")
	b.WriteString("Amount due: " + c.Account.Currency + " " + invoice.BalanceDue(s).String() + "\n")
	b.WriteString("Due date: " + s.DueDate + "\n\n")
	b.WriteString("View and download the invoice: " + link + "\n\n")
	b.WriteString(c.Account.Name + "\n")
	return mail.Message{
		To:      c.CustomerEmail,
		Subject: "Reminder: invoice " + s.InvoiceNumber + " from " + c.Account.Name,
		Text:    b.String(),
	}
}
