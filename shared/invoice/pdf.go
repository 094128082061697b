package invoice

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/go-pdf/fpdf"
)

// The PDF's text is set in DejaVu Sans, embedded (subset) in every file, so
// that names in Latin, Greek, Cyrillic, Hebrew and Arabic scripts print
// wherever the file is opened. DejaVu has no Chinese, Japanese or Korean
// glyphs: such characters print as empty boxes; the hosted page, which uses
// the reader's own fonts, shows them.

//go:embed fonts/DejaVuSans.ttf
var fontRegular []byte

//go:embed fonts/DejaVuSans-Bold.ttf
var fontBold []byte

// LinesPerPage is how many invoice lines one PDF page holds; the totals
// follow the last line, on the last page.
const LinesPerPage = 25

// Page geometry, in millimetres on A4 portrait (210 x 297).
const (
	fontFamily   = "DejaVu"
	marginX      = 15.0
	contentWidth = 180.0
	barHeight    = 26.0
	tableTop     = 62.0
	rowHeight    = 7.0
	totalsRow    = 6.0
	textLine     = 4.5
	pageBottom   = 279.0 // text stops here; the footer is below
	// maxTextLines bounds the note and the terms, so the totals and the
	// texts after them always fit on one page together.
	maxTextLines = 10
	ellipsis     = "…"
)

// tableColumns are the lines table's columns; their widths add up to
// contentWidth.
var tableColumns = []struct {
	title string
	width float64
	align string
	value func(Line) string
}{
	{"Item", 38, "L", func(l Line) string { return l.Item }},
	{"Description", 60, "L", func(l Line) string { return l.Description }},
	{"Quantity", 16, "R", func(l Line) string { return l.Quantity }},
	{"Unit price", 22, "R", func(l Line) string { return l.UnitPrice }},
	{"Tax", 20, "R", func(l Line) string { return l.Tax }},
	{"Amount", 24, "R", func(l Line) string { return l.Amount }},
}

var (
	inkColour   = rgb{0x1a, 0x1a, 0x1a}
	mutedColour = rgb{0x55, 0x55, 0x55}
	ruleColour  = rgb{0xd0, 0xd4, 0xda}
)

// PDF renders v as an A4 invoice: a header on every page, LinesPerPage
// lines a page under a repeated table header, the totals, note, terms and
// issuer after the last line, and "Page i of n" in each footer. Text too
// long for its cell is cut with an ellipsis. The bytes depend only on v:
// the file's dates are v.UpdatedAt (or the Unix epoch when it is zero)
// and nothing else varies, so a sale's version always yields the same file.
func PDF(v View) ([]byte, error) {
	r := &pdfRenderer{v: v, accent: accentOf(v.Colour), pdf: fpdf.New("P", "mm", "A4", "")}
	r.setUp()
	chunks := lineChunks(v.Lines)
	for i, chunk := range chunks {
		if i > 0 {
			r.pdf.AddPage()
		}
		r.lines(chunk)
	}
	r.totalsAndTexts()
	var buf bytes.Buffer
	if err := r.pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("invoice: render PDF: %w", err)
	}
	return buf.Bytes(), nil
}

// pdfRenderer draws one invoice.
type pdfRenderer struct {
	v      View
	accent accent
	pdf    *fpdf.Fpdf
}

// setUp fixes everything that would otherwise vary between runs (dates,
// the order of the catalogue) and starts the first page.
func (r *pdfRenderer) setUp() {
	p := r.pdf
	stamp := r.v.UpdatedAt.UTC()
	if r.v.UpdatedAt.IsZero() {
		stamp = time.Unix(0, 0).UTC()
	}
	p.SetCreationDate(stamp)
	p.SetModificationDate(stamp)
	p.SetCatalogSort(true)
	p.SetProducer("", false)
	p.SetTitle("Invoice "+r.v.InvoiceNumber, true)
	p.SetAuthor(r.v.BusinessName, true)
	p.SetLang("en")
	p.AddUTF8FontFromBytes(fontFamily, "", fontRegular)
	p.AddUTF8FontFromBytes(fontFamily, "B", fontBold)
	p.SetMargins(marginX, 10, marginX)
	p.SetAutoPageBreak(true, 297-pageBottom)
	p.AliasNbPages("")
	p.SetHeaderFunc(r.header)
	p.SetFooterFunc(r.footer)
	p.AddPage()
}

// lineChunks splits the lines into pages; an invoice without lines still
// has one page, with the table's header.
func lineChunks(lines []Line) [][]Line {
	chunks := [][]Line{nil}
	for i := 0; i < len(lines); i += LinesPerPage {
		chunks = append(chunks, lines[i:min(i+LinesPerPage, len(lines))])
	}
	if len(chunks) > 1 {
		chunks = chunks[1:]
	}
	return chunks
}

// header draws the accent bar with the business's name, then who is billed
// and the invoice's number, dates and status, on every page.
func (r *pdfRenderer) header() {
	p, v := r.pdf, r.v
	r.fill(r.accent.fill)
	p.Rect(0, 0, 210, barHeight, "F")
	r.text(r.accent.text)
	p.SetFont(fontFamily, "B", 16)
	p.SetXY(marginX, 8)
	r.cell(120, 10, v.BusinessName, "L")
	r.cell(contentWidth-120, 10, "INVOICE", "R")

	p.SetXY(marginX, 32)
	p.SetFont(fontFamily, "", 8)
	r.text(mutedColour)
	r.cell(95, 5, "Bill to", "L")
	p.SetXY(marginX, 37)
	p.SetFont(fontFamily, "B", 11)
	r.text(inkColour)
	r.cell(95, 6, v.CustomerName, "L")

	details := []labelled{{Label: "Invoice number", Value: v.InvoiceNumber}, {Label: "Issue date", Value: v.IssueDate}}
	if v.DueDate != "" {
		details = append(details, labelled{Label: "Due date", Value: v.DueDate})
	}
	details = append(details, labelled{Label: "Status", Value: statusLabel(v.Status)})
	for i, d := range details {
		p.SetXY(120, 32+float64(i)*5.5)
		p.SetFont(fontFamily, "", 9)
		r.text(mutedColour)
		r.cell(32, 5.5, d.Label, "L")
		p.SetFont(fontFamily, "B", 9)
		r.text(inkColour)
		r.cell(43, 5.5, d.Value, "R")
	}
	p.SetXY(marginX, tableTop)
}

// footer draws the invoice number and "Page i of n".
func (r *pdfRenderer) footer() {
	p := r.pdf
	p.SetXY(marginX, -12)
	p.SetFont(fontFamily, "", 8)
	r.text(mutedColour)
	r.cell(contentWidth/2, 5, "Invoice "+r.v.InvoiceNumber, "L")
	// {nb} is replaced with the page count when the file is written.
	r.cell(contentWidth/2, 5, fmt.Sprintf("Page %d of {nb}", p.PageNo()), "R")
}

// lines draws the table header and one page's lines.
func (r *pdfRenderer) lines(chunk []Line) {
	p := r.pdf
	p.SetXY(marginX, tableTop)
	r.fill(r.accent.fill)
	r.text(r.accent.text)
	p.SetFont(fontFamily, "B", 8.5)
	for _, c := range tableColumns {
		p.CellFormat(c.width, rowHeight, c.title, "", 0, c.align, true, 0, "")
	}
	p.Ln(rowHeight)
	r.draw(ruleColour)
	p.SetLineWidth(0.2)
	for _, l := range chunk {
		for i, c := range tableColumns {
			style := ""
			r.text(inkColour)
			if i == 0 {
				style = "B"
			} else if i == 1 {
				r.text(mutedColour)
			}
			p.SetFont(fontFamily, style, 9)
			r.cell(c.width, rowHeight, c.value(l), c.align)
		}
		p.Ln(rowHeight)
		p.Line(marginX, p.GetY(), marginX+contentWidth, p.GetY())
	}
}

// totalsAndTexts draws the totals, then the note, terms and issuer, on a
// new page when they do not fit under the last line.
func (r *pdfRenderer) totalsAndTexts() {
	p := r.pdf
	totals, texts := totalsOf(r.v), textsOf(r.v)
	p.SetFont(fontFamily, "", 9)
	wrapped := make([][]string, len(texts))
	height := 4 + float64(len(totals))*totalsRow
	for i, t := range texts {
		wrapped[i] = r.wrap(t.Value, contentWidth)
		height += 4 + 5 + float64(len(wrapped[i]))*textLine
	}
	if p.GetY()+height > pageBottom {
		p.AddPage()
	}
	p.SetY(p.GetY() + 4)
	for _, t := range totals {
		style := ""
		if t.Grand {
			style = "B"
			r.draw(inkColour)
			p.SetLineWidth(0.4)
			p.Line(110, p.GetY(), marginX+contentWidth, p.GetY())
		}
		p.SetX(110)
		p.SetFont(fontFamily, style, 9.5)
		r.text(inkColour)
		r.cell(45, totalsRow, t.Label, "L")
		r.cell(contentWidth+marginX-155, totalsRow, t.Value, "R")
		p.Ln(totalsRow)
	}
	for i, t := range texts {
		p.SetY(p.GetY() + 4)
		p.SetFont(fontFamily, "B", 9)
		r.cell(contentWidth, 5, t.Label, "L")
		p.Ln(5)
		p.SetFont(fontFamily, "", 9)
		for _, line := range wrapped[i] {
			p.CellFormat(contentWidth, textLine, line, "", 1, "L", false, 0, "")
		}
	}
}

// wrap breaks text into lines of at most width in the current font, keeping
// the merchant's own line breaks, at most maxTextLines of them; the last
// kept line ends in an ellipsis when text was left out.
func (r *pdfRenderer) wrap(text string, width float64) []string {
	lines := r.pdf.SplitText(printable(text, true), width)
	if len(lines) <= maxTextLines {
		return visualLines(lines)
	}
	lines = lines[:maxTextLines]
	lines[maxTextLines-1] = r.fit(lines[maxTextLines-1]+ellipsis, width)
	return visualLines(lines)
}

func visualLines(lines []string) []string {
	for i, l := range lines {
		lines[i] = visualOrder(l)
	}
	return lines
}

// cell draws one line of text in a cell of the given width, cut to fit.
func (r *pdfRenderer) cell(width, height float64, text, align string) {
	text = visualOrder(r.fit(printable(text, false), width))
	r.pdf.CellFormat(width, height, text, "", 0, align, false, 0, "")
}

// fit cuts text to the width of a cell (less its padding) in the current
// font, ending it with an ellipsis when it was cut.
func (r *pdfRenderer) fit(text string, width float64) string {
	room := width - 2*r.pdf.GetCellMargin()
	if r.pdf.GetStringWidth(text) <= room {
		return text
	}
	runes := []rune(strings.TrimSuffix(text, ellipsis))
	lo, hi := 0, len(runes) // the longest prefix that fits has between lo and hi runes
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if r.pdf.GetStringWidth(string(runes[:mid])+ellipsis) <= room {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return strings.TrimRightFunc(string(runes[:lo]), unicode.IsSpace) + ellipsis
}

// printable replaces what the font cannot draw: control characters become
// spaces (line breaks too, unless keepBreaks) and characters beyond the
// Basic Multilingual Plane, which the PDF library cannot index, become
// U+FFFD.
func printable(text string, keepBreaks bool) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' && keepBreaks:
			return r
		case r > 0xFFFF:
			return unicode.ReplacementChar
		case unicode.IsControl(r):
			return ' '
		}
		return r
	}, strings.ReplaceAll(text, "\r\n", "\n"))
}

func (r *pdfRenderer) fill(c rgb) { r.pdf.SetFillColor(int(c.r), int(c.g), int(c.b)) }
func (r *pdfRenderer) text(c rgb) { r.pdf.SetTextColor(int(c.r), int(c.g), int(c.b)) }
func (r *pdfRenderer) draw(c rgb) { r.pdf.SetDrawColor(int(c.r), int(c.g), int(c.b)) }
