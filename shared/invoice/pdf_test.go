package invoice

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPDF(t *testing.T) {
	t.Run("ShowsTheInvoice", func(t *testing.T) {
		v := sampleView(3)
		b, pages := mustPDF(t, v)
		if pages != 1 {
			t.Errorf("%d pages, want 1", pages)
		}
		text := collapseSpaces(pdfText(t, b, 1, 1))
		want := []string{"Kofi & Sons Hardware", "INVOICE", "Invoice number INV-100042", "Issue date 2026-11-02",
			"Due date 2026-11-30", "Status Partially paid", "Bill to", "Ama Mensah",
			"Item Description Quantity Unit price Tax Amount",
			"Sub-total GHS 1,270.00", "Tax GHS 30.00", "Discount GHS 50.00", "Total GHS 1,250.00", "Amount paid GHS 500.00",
			"Refunded GHS 20.00", "Balance due GHS 770.00",
			"Note Thank you for your business.", "Terms Payment within 30 days.", "Issued by Kofi Boateng", "Page 1 of 1"}
		for _, l := range v.Lines {
			want = append(want, fmt.Sprintf("%s %s %s %s %s %s", l.Item, l.Description, l.Quantity, l.UnitPrice, l.Tax, l.Amount))
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("the PDF's text lacks %q:\n%s", w, text)
			}
		}
	})

	t.Run("OmitsEmptyTaxDiscountAndRefund", func(t *testing.T) {
		v := sampleView(1)
		v.Tax, v.Discount, v.Refunded, v.Note = "", "", "", ""
		b, _ := mustPDF(t, v)
		text := collapseSpaces(pdfText(t, b, 1, 1))
		for _, absent := range []string{"Tax GHS", "Discount", "Refunded", "Note"} {
			if strings.Contains(text, absent) {
				t.Errorf("the PDF shows %q though it is not set", absent)
			}
		}
	})

	t.Run("NamesInOtherScripts", func(t *testing.T) {
		for _, name := range []string{"Иван Петрович Сидоров", "Αλέξανδρος Παπαδόπουλος", "François Dvořák Łukasz Øster", "דוד כהן", "سارة أحمد"} {
			v := sampleView(1)
			v.CustomerName = name
			v.Note = name
			b, _ := mustPDF(t, v)
			// pdftotext marks right-to-left runs with embedding controls.
			text := strings.Map(func(r rune) rune {
				if r >= '\u202a' && r <= '\u202e' {
					return -1
				}
				return r
			}, pdfText(t, b, 1, 1))
			if n := strings.Count(text, name); n != 2 {
				t.Errorf("%q appears %d times in the PDF's text, want 2 (customer and note):\n%s", name, n, text)
			}
		}
	})

	t.Run("OnePageEveryLinesPerPageLines", func(t *testing.T) {
		for _, tc := range []struct{ lines, pages, totalsPage int }{
			{0, 1, 1}, {1, 1, 1}, {10, 1, 1},
			// A full page leaves no room for the totals, which then go on a
			// page of their own.
			{LinesPerPage, 2, 2}, {LinesPerPage + 1, 2, 2}, {60, 3, 3},
		} {
			b, pages := mustPDF(t, sampleView(tc.lines))
			if pages != tc.pages {
				t.Errorf("%d lines: %d pages, want %d", tc.lines, pages, tc.pages)
				continue
			}
			for page := 1; page <= pages; page++ {
				text := collapseSpaces(pdfText(t, b, page, page))
				if got := strings.Contains(text, "Balance due GHS 770.00") || strings.Contains(text, "Sub-total"); got != (page == tc.totalsPage) {
					t.Errorf("%d lines, page %d: totals shown = %v, want them on page %d only", tc.lines, page, got, tc.totalsPage)
				}
				if want := fmt.Sprintf("Page %d of %d", page, pages); !strings.Contains(text, want) {
					t.Errorf("%d lines, page %d: no %q in the footer", tc.lines, page, want)
				}
				first, last := (page-1)*LinesPerPage+1, min(page*LinesPerPage, tc.lines)
				if first > last {
					continue
				}
				if strings.Count(text, "Item Description Quantity") != 1 {
					t.Errorf("%d lines, page %d: the table's header is not repeated once", tc.lines, page)
				}
				if strings.Count(text, "Item-") != last-first+1 || !strings.Contains(text, fmt.Sprintf("Item-%03d ", first)) || !strings.Contains(text, fmt.Sprintf("Item-%03d ", last)) {
					t.Errorf("%d lines, page %d: want lines %d to %d:\n%s", tc.lines, page, first, last, text)
				}
			}
		}
	})

	t.Run("CutsLongTextWithAnEllipsis", func(t *testing.T) {
		v := sampleView(2)
		v.Lines[0].Description = strings.Repeat("very long description ", 20) + "TAIL"
		v.CustomerName = strings.Repeat("Customer ", 30) + "TAIL"
		v.Note = strings.Repeat("A line of the note.\n", 40) + "TAIL"
		v.Terms = strings.Repeat("terms ", 400) + "TAIL"
		b, pages := mustPDF(t, v)
		if pages != 1 {
			t.Errorf("%d pages, want 1: long texts are bounded", pages)
		}
		text := pdfText(t, b, 1, pages)
		if strings.Contains(text, "TAIL") {
			t.Error("text too long for its place was not cut")
		}
		if n := strings.Count(text, "…"); n != 4 {
			t.Errorf("%d ellipses, want 4 (description, customer, note, terms):\n%s", n, text)
		}
		if strings.Count(text, "A line of the note.") != maxTextLines {
			t.Errorf("the note does not keep its own %d first lines", maxTextLines)
		}
	})

	t.Run("ToleratesUnprintableText", func(t *testing.T) {
		v := sampleView(1)
		v.CustomerName = "Emoji 😀 tab\tbell\a end"
		v.Lines[0].Item = "日本語の商品"
		b, _ := mustPDF(t, v)
		if text := pdfText(t, b, 1, 1); !strings.Contains(text, "Emoji \uFFFD tab bell end") {
			t.Errorf("unprintable characters not replaced:\n%s", text)
		}
	})
}

func TestPDFDeterministic(t *testing.T) {
	v := sampleView(30)
	v.CustomerName = "Αλέξανδρος Иван דוד"
	first, _ := mustPDF(t, v)
	second, _ := mustPDF(t, v)
	if !bytes.Equal(first, second) {
		t.Fatal("two renders of one view differ")
	}
	// The file's dates come from the view, not the clock: a render in
	// another second still matches, also for a view without a date.
	undated := v
	undated.UpdatedAt = time.Time{}
	before, _ := mustPDF(t, undated)
	time.Sleep(1100 * time.Millisecond)
	if later, _ := mustPDF(t, v); !bytes.Equal(first, later) {
		t.Error("a render a second later differs")
	}
	if after, _ := mustPDF(t, undated); !bytes.Equal(before, after) {
		t.Error("a view without a date renders differently a second later")
	}
	edited := v
	edited.UpdatedAt = v.UpdatedAt.Add(time.Minute)
	if other, _ := mustPDF(t, edited); bytes.Equal(first, other) {
		t.Error("another version's date gives the same bytes")
	}
}

func TestPDFRasterises(t *testing.T) {
	tool := popplerTool(t, "pdftoppm")
	b, _ := mustPDF(t, sampleView(5))
	path := writePDF(t, b)
	prefix := filepath.Join(filepath.Dir(path), "page")
	if out, err := exec.Command(tool, "-png", "-r", "60", "-f", "1", "-l", "1", "-singlefile", path, prefix).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	f, err := os.Open(prefix + ".png")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("pdftoppm's output is not a PNG: %v", err)
	}
	// A4 at 60 dpi is 496 x 702 pixels.
	if size := img.Bounds().Size(); size.X < 490 || size.X > 500 || size.Y < 695 || size.Y > 705 {
		t.Errorf("page 1 rasterised to %v, want about 496x702 (A4 portrait)", size)
	}
	// The accent bar is drawn in the invoice's colour (#0B7A75).
	if r, g, bl, _ := img.At(10, 10).RGBA(); r>>8 != 0x0b || g>>8 != 0x7a || bl>>8 != 0x75 {
		t.Errorf("top-left pixel = #%02x%02x%02x, want the accent #0b7a75", r>>8, g>>8, bl>>8)
	}
}
