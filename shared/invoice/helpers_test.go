package invoice

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
)

// pdfToolsRequiredEnv turns missing poppler tools (pdftotext, pdftoppm) from
// a skip into a failure, so CI cannot pass without reading the PDFs.
const pdfToolsRequiredEnv = "INVOICE_PDF_REQUIRED"

func init() {
	// pdfcpu would otherwise write its configuration into the user's
	// configuration folder on first use.
	model.ConfigPath = "disable"
}

// sampleView is an invoice with n lines, every field set.
func sampleView(n int) View {
	v := View{
		BusinessName:  "Kofi & Sons Hardware",
		Currency:      "GHS",
		InvoiceNumber: "INV-100042",
		IssueDate:     "2026-11-02",
		DueDate:       "2026-11-30",
		CustomerName:  "Ama Mensah",
		SubTotal:      "1,270.00",
		Tax:           "30.00",
		Discount:      "50.00",
		Total:         "1,250.00",
		AmountPaid:    "500.00",
		Refunded:      "20.00",
		BalanceDue:    "770.00",
		Status:        StatusPartiallyPaid,
		Note:          "Thank you for your business.",
		Terms:         "Payment within 30 days.",
		IssuedBy:      "Kofi Boateng",
		Colour:        "#0B7A75",
		Version:       7,
		UpdatedAt:     time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC),
	}
	for i := range n {
		v.Lines = append(v.Lines, Line{
			Item:        fmt.Sprintf("Item-%03d", i+1),
			Description: fmt.Sprintf("Galvanised roofing sheet, batch %d", i+1),
			Quantity:    "2",
			UnitPrice:   "10.00",
			Tax:         "1.50",
			Amount:      "21.50",
		})
	}
	return v
}

// mustPDF renders v and checks that pdfcpu reads and validates the file
// strictly, returning its bytes and page count.
func mustPDF(t testing.TB, v View) ([]byte, int) {
	t.Helper()
	b, err := PDF(v)
	if err != nil {
		t.Fatalf("PDF: %v", err)
	}
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationStrict
	ctx, err := api.ReadContext(bytes.NewReader(b), conf)
	if err != nil {
		t.Fatalf("pdfcpu cannot read the PDF: %v", err)
	}
	if err := api.ValidateContext(ctx); err != nil {
		t.Fatalf("pdfcpu finds the PDF invalid: %v", err)
	}
	pages, err := api.PageCount(bytes.NewReader(b), conf)
	if err != nil {
		t.Fatalf("pdfcpu PageCount: %v", err)
	}
	return b, pages
}

// popplerTool finds one of poppler's command-line tools, skipping the test
// when it is missing unless INVOICE_PDF_REQUIRED=1.
func popplerTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv(pdfToolsRequiredEnv) == "1" {
			t.Fatalf("%s not found and %s=1: install it (apt-get install poppler-utils)", name, pdfToolsRequiredEnv)
		}
		t.Skipf("%s not found; install it (apt-get install poppler-utils) to read the PDFs, or set %s=1 to fail instead", name, pdfToolsRequiredEnv)
	}
	return path
}

// writePDF saves b in the test's temporary folder and returns its path.
func writePDF(t *testing.T, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "invoice.pdf")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// pdfText extracts the text of pages first to last (1-based) with pdftotext.
func pdfText(t *testing.T, b []byte, first, last int) string {
	t.Helper()
	tool := popplerTool(t, "pdftotext")
	out, err := exec.Command(tool, "-layout", "-enc", "UTF-8", "-f", fmt.Sprint(first), "-l", fmt.Sprint(last), writePDF(t, b), "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, out)
	}
	return string(out)
}

// collapseSpaces joins the words of extracted text with single spaces, since
// pdftotext lays cells out with runs of spaces.
func collapseSpaces(s string) string { return strings.Join(strings.Fields(s), " ") }
