package dashboard

import (
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// browserInvoiceSale is a sale with what a customer's invoice shows (lines
// with descriptions and tax, a discount, a part payment, the note, terms,
// colour and issuer) and the internal note it must not show.
func browserInvoiceSale(code string) map[string]any {
	return map[string]any{"invoice_code": code, "invoice_number": "INV-" + code, "customer_id": 1,
		"sub_total_amount": "73.50", "discount": "3.50", "total_amount": "73.18", "amount_paid": "20.00",
		"invoice_type": "main", "payment_type": "Mobile Money", "due_date": "2099-01-31", "issued_by": "Kwame Asante",
		"invoice_colour": "#0F766E", "invoice_note": "Thank you for shopping with us.",
		"invoice_terms":         "Payment within 30 days by Mobile Money to 024 000 0000.",
		"payment_internal_note": "Internal: call before delivery",
		"items": []any{
			map[string]any{"item_name": "Rice 5kg", "description": "Jasmine, long grain", "unit_price": "25.00", "quantity": "2", "tax": "2.50"},
			map[string]any{"item_name": "Cooking oil 1L", "description": "Sunflower", "unit_price": "4.50", "quantity": "3", "tax": "0.68"},
			map[string]any{"item_name": "Delivery", "unit_price": "10.00", "quantity": "1"},
		}}
}

// browseInvoiceLink makes a sale's invoice link from its page (the link
// shown in a field its Copy button copies), opens the public page it leads
// to, as the customer would, through the hosted route and its headers
// (axe: no violation at all), and renders the PDF's first page. With
// DASHBOARD_SCREENSHOTS set, the page and the PDF are saved there as
// invoice-page.png and invoice-pdf.png.
func browseInvoiceLink(t *testing.T, o *owner, br *browserTab) {
	const code = "710031"
	o.mustAPI(http.MethodPost, "/api/v1/sales/add", browserInvoiceSale(code))
	page := "/dashboard/sales/" + code
	br.open(t, page)
	br.check(t, "sale-link-controls")
	br.mustSee(t, "No link opens this invoice", "Download PDF", "No reminder sent or planned.")
	if st, p := br.submit(t, page+"/link"); st != http.StatusOK || p != page+"/link" {
		t.Fatalf("create link: %d at %s: %s", st, p, browserClip(br.text(t, "main"), 400))
	}
	br.check(t, "sale-link-created")
	br.mustSee(t, "Invoice link created", "Link active")
	link := browserGet(t, br, "read the link", chromedp.Evaluate[string](`document.getElementById("invoice-link").value`))
	u, err := url.Parse(link)
	if err != nil || !strings.HasPrefix(link, br.base+"/invoices/") {
		t.Fatalf("the link shown is %q", link)
	}
	// The script (an asset the CSP allows) shows the button; a click copies
	// the link, or, where the clipboard is refused, selects it.
	said := browserGet(t, br, "copy the link", chromedp.Evaluate[string](`(async () => {
  const b = document.querySelector('button[data-copy="invoice-link"]');
  if (!b || b.hidden) return "no visible Copy link button";
  b.click();
  for (let i = 0; i < 50 && !document.getElementById("invoice-link-copied").textContent; i++) await new Promise(r => setTimeout(r, 20));
  return document.getElementById("invoice-link-copied").textContent;
})()`, chromedp.EvalAwaitPromise))
	if said != "Copied." && !strings.HasPrefix(said, "Selected") {
		t.Errorf("Copy link: %q", said)
	}

	if st, p := br.open(t, u.Path); st != http.StatusOK || p != u.Path {
		t.Fatalf("the public page: %d at %s", st, p)
	}
	violations := br.check(t, "invoice-page")
	for _, v := range violations {
		t.Errorf("the public invoice page has an axe violation: %s (%s): %s", v.ID, v.Impact, v.Help)
	}
	text := br.text(t, "body")
	for _, want := range []string{"Invoice INV-" + code, "Shop BRPAGES1", "Ama Mensah", "Jasmine, long grain", "Cooking oil 1L",
		"Thank you for shopping with us.", "Payment within 30 days", "Kwame Asante", "53.18"} {
		if !strings.Contains(text, want) {
			t.Errorf("the public page lacks %q", want)
		}
	}
	if strings.Contains(text, "call before delivery") {
		t.Error("the public page shows the internal note")
	}
	shots := os.Getenv("DASHBOARD_SCREENSHOTS")
	if shots == "" {
		return
	}
	// Drawn 1100 wide, so the image fits a README.
	br.run(t, "narrow the window", chromedp.EmulateViewport(1100, 900))
	png := browserGet(t, br, "screenshot the public page", chromedp.FullScreenshot(100))
	br.run(t, "widen the window", chromedp.EmulateViewport(1280, 900))
	if err := os.WriteFile(filepath.Join(shots, "invoice-page.png"), png, 0o644); err != nil {
		t.Error(err)
	}
	browserRenderPDF(t, o, page+"/pdf", filepath.Join(shots, "invoice-pdf"))
}

// browserRenderPDF downloads the PDF at path with the owner's session and
// renders its first page (80 dpi: 661 pixels wide for A4) to out.png.
func browserRenderPDF(t *testing.T, o *owner, path, out string) {
	t.Helper()
	st, pdf, _ := o.get(path)
	if st != http.StatusOK || !strings.HasPrefix(pdf, "%PDF-") {
		t.Fatalf("the PDF: %d", st)
	}
	file := filepath.Join(t.TempDir(), "invoice.pdf")
	if err := os.WriteFile(file, []byte(pdf), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command("pdftoppm", "-png", "-r", "80", "-f", "1", "-l", "1", "-singlefile", file, out).CombinedOutput(); err != nil {
		t.Errorf("pdftoppm (poppler-utils) renders no page: %v: %s", err, msg)
	}
}
