package invoice

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"io"
	"slices"
	"strings"
	"testing"
)

// htmlElement is one element of a parsed page, with its own text.
type htmlElement struct {
	name  string
	attrs map[string]string
	text  string
}

// parseHTML reads a page with encoding/xml in its HTML mode (void elements,
// HTML entities, lenient syntax), failing on markup it cannot read, and
// lists its elements in document order.
func parseHTML(t *testing.T, page []byte) []*htmlElement {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(page))
	dec.Strict = false
	dec.AutoClose = xml.HTMLAutoClose
	dec.Entity = xml.HTMLEntity
	var all, open []*htmlElement
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("parse page: %v\n%s", err, page)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			el := &htmlElement{name: strings.ToLower(tok.Name.Local), attrs: map[string]string{}}
			for _, a := range tok.Attr {
				el.attrs[strings.ToLower(a.Name.Local)] = a.Value
			}
			all, open = append(all, el), append(open, el)
		case xml.EndElement:
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
		case xml.CharData:
			if len(open) > 0 {
				open[len(open)-1].text += string(tok)
			}
		}
	}
	return all
}

// elements lists the page's elements with the given name.
func elements(all []*htmlElement, name string) []*htmlElement {
	var out []*htmlElement
	for _, el := range all {
		if el.name == name {
			out = append(out, el)
		}
	}
	return out
}

// mustPage renders v and parses it.
func mustPage(t *testing.T, v View, pdfHref string) ([]byte, []*htmlElement) {
	t.Helper()
	page, err := Page(v, pdfHref)
	if err != nil {
		t.Fatalf("Page: %v", err)
	}
	return page, parseHTML(t, page)
}

// texts lists the trimmed own text of the page's elements named name.
func texts(all []*htmlElement, name string) []string {
	var out []string
	for _, el := range elements(all, name) {
		out = append(out, strings.TrimSpace(el.text))
	}
	return out
}

func TestPage(t *testing.T) {
	t.Run("ShowsTheInvoice", func(t *testing.T) {
		v := sampleView(3)
		_, doc := mustPage(t, v, "/invoices/tok/pdf")
		if got := texts(doc, "h1"); len(got) != 1 || got[0] != "Invoice INV-100042" {
			t.Errorf("h1 = %q, want the invoice number", got)
		}
		if html := elements(doc, "html"); len(html) != 1 || html[0].attrs["lang"] != "en" {
			t.Errorf("the page has no lang: %+v", html)
		}
		rowHeads := texts(doc, "th")
		for _, l := range v.Lines {
			if !slices.Contains(rowHeads, l.Item) {
				t.Errorf("line %q is not a row header of the table: %q", l.Item, rowHeads)
			}
		}
		details := texts(doc, "dd")
		for _, want := range []string{v.InvoiceNumber, v.IssueDate, v.DueDate, v.CustomerName, "GHS 770.00"} {
			if !slices.Contains(details, want) {
				t.Errorf("the summary lacks %q: %q", want, details)
			}
		}
		cells := texts(doc, "td")
		for _, want := range []string{"GHS 1,270.00", "GHS 30.00", "GHS 50.00", "GHS 1,250.00", "GHS 500.00", "GHS 20.00", "GHS 770.00", "Galvanised roofing sheet, batch 2", "21.50"} {
			if !slices.Contains(cells, want) {
				t.Errorf("the tables lack %q: %q", want, cells)
			}
		}
		if strings.Count(strings.Join(rowHeads, "|"), "Tax") != 2 {
			t.Errorf("want Tax as the lines' column and as a total: %q", rowHeads)
		}
		for _, want := range []string{"Sub-total", "Discount", "Total", "Amount paid", "Refunded", "Balance due"} {
			if !slices.Contains(rowHeads, want) {
				t.Errorf("the totals lack the row %q: %q", want, rowHeads)
			}
		}
		paragraphs := texts(doc, "p")
		for _, want := range []string{v.Note, v.Terms, v.IssuedBy, v.BusinessName} {
			if !slices.Contains(paragraphs, want) {
				t.Errorf("the page lacks %q: %q", want, paragraphs)
			}
		}
		links := elements(doc, "a")
		if len(links) != 1 || links[0].attrs["href"] != "/invoices/tok/pdf" || strings.TrimSpace(links[0].text) != "Download PDF" {
			t.Errorf("links = %+v, want one Download PDF link to the given address", links)
		}
	})

	t.Run("OmitsEmptyTaxDiscountRefundAndTexts", func(t *testing.T) {
		v := sampleView(1)
		v.Tax, v.Discount, v.Refunded, v.Note, v.Terms, v.IssuedBy, v.DueDate = "", "", "", "", " ", "", ""
		_, doc := mustPage(t, v, "")
		rowHeads := texts(doc, "th")
		if strings.Count(strings.Join(rowHeads, "|"), "Tax") != 1 {
			t.Errorf("want Tax only as the lines' column header: %q", rowHeads)
		}
		for _, absent := range []string{"Discount", "Refunded"} {
			if slices.Contains(rowHeads, absent) {
				t.Errorf("the totals show %q though it is not set", absent)
			}
		}
		if got := texts(doc, "h2"); strings.Join(got, ",") != "Items,Totals" {
			t.Errorf("headings = %q, want only Items and Totals", got)
		}
		if slices.Contains(texts(doc, "dt"), "Due date") {
			t.Error("the summary shows a due date though there is none")
		}
		if len(elements(doc, "a")) != 0 {
			t.Error("a Download PDF link without an address")
		}
	})

	t.Run("EscapesHostileText", func(t *testing.T) {
		hostile := `<script>alert(1)</script>`
		v := sampleView(1)
		v.CustomerName, v.BusinessName, v.Note = hostile, hostile, hostile
		v.Lines[0].Item = `"><img src=x onerror=alert(1)>`
		page, doc := mustPage(t, v, "javascript:alert(1)")
		lower := strings.ToLower(string(page))
		if strings.Contains(lower, "<script") || strings.Contains(lower, "<img") || strings.Contains(lower, "javascript:") {
			t.Errorf("hostile text reached the markup:\n%s", page)
		}
		if !slices.Contains(texts(doc, "dd"), hostile) {
			t.Errorf("the customer's name does not read back as written: %q", texts(doc, "dd"))
		}
		if !slices.Contains(texts(doc, "th"), v.Lines[0].Item) {
			t.Errorf("the item does not read back as written: %q", texts(doc, "th"))
		}
	})

	t.Run("NoScriptNoInlineStyleAttributes", func(t *testing.T) {
		_, doc := mustPage(t, sampleView(2), "pdf")
		for _, el := range doc {
			if el.name == "script" {
				t.Error("the page has a <script> element")
			}
			if _, ok := el.attrs["style"]; ok {
				t.Errorf("<%s> has a style attribute", el.name)
			}
			for a := range el.attrs {
				if strings.HasPrefix(a, "on") {
					t.Errorf("<%s> has an event handler %s", el.name, a)
				}
			}
			if el.name == "th" && el.attrs["scope"] != "col" && el.attrs["scope"] != "row" {
				t.Errorf("table header %q has no scope", el.text)
			}
		}
		if n := len(elements(doc, "style")); n != 1 {
			t.Errorf("%d <style> elements, want 1", n)
		}
	})

	t.Run("Noindex", func(t *testing.T) {
		for name, page := range map[string][]byte{"invoice": must(Page(sampleView(1), "pdf")), "not found": NotFoundPage()} {
			var robots string
			for _, m := range elements(parseHTML(t, page), "meta") {
				if m.attrs["name"] == "robots" {
					robots = m.attrs["content"]
				}
			}
			if !strings.Contains(robots, "noindex") {
				t.Errorf("%s page: robots meta = %q, want noindex", name, robots)
			}
		}
	})

	t.Run("StatusBadge", func(t *testing.T) {
		for status, want := range map[string]string{
			StatusPaid: "Paid", StatusPartiallyPaid: "Partially paid", StatusUnpaid: "Unpaid",
			StatusOverdue: "Overdue", StatusVoid: "Void", "disputed": "Disputed",
		} {
			v := sampleView(1)
			v.Status = status
			_, doc := mustPage(t, v, "pdf")
			var badge *htmlElement
			for _, p := range elements(doc, "p") {
				if strings.HasPrefix(p.attrs["class"], "status ") {
					badge = p
				}
			}
			wantClass := "status status-" + strings.ReplaceAll(status, " ", "-")
			if status == "disputed" {
				wantClass = "status status-other"
			}
			if badge == nil || strings.TrimSpace(badge.text) != want || badge.attrs["class"] != wantClass {
				t.Errorf("status %q: badge = %+v, want %q with class %q", status, badge, want, wantClass)
			}
		}
	})
}

func TestPageCSP(t *testing.T) {
	for name, page := range map[string][]byte{"invoice": must(Page(sampleView(2), "pdf")), "not found": NotFoundPage()} {
		t.Run(name, func(t *testing.T) {
			styles := elements(parseHTML(t, page), "style")
			if len(styles) != 1 {
				t.Fatalf("%d style elements, want 1", len(styles))
			}
			sum := sha256.Sum256([]byte(styles[0].text))
			csp := PageCSP(page)
			want := "style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
			if !strings.Contains(csp, want) {
				t.Errorf("CSP %q does not allow the page's style (%s)", csp, want)
			}
			for _, directive := range []string{"default-src 'self'", "frame-ancestors 'none'", "form-action 'self'", "base-uri 'none'", "object-src 'none'"} {
				if !strings.Contains(csp, directive) {
					t.Errorf("CSP %q lacks %q", csp, directive)
				}
			}
			if strings.Contains(csp, "unsafe") {
				t.Errorf("CSP %q allows unsafe sources", csp)
			}
		})
	}
	t.Run("ChangesWithTheColour", func(t *testing.T) {
		a, b := sampleView(1), sampleView(1)
		b.Colour = "#FFCC00"
		if PageCSP(must(Page(a, "pdf"))) == PageCSP(must(Page(b, "pdf"))) {
			t.Error("two colours give the same style hash")
		}
	})
}

func TestPageColour(t *testing.T) {
	for _, tc := range []struct{ colour, accent, text string }{
		{"#0B7A75", "#0b7a75", "#ffffff"},
		{"#ffcc00", "#ffcc00", "#000000"},
		{"#FFFFFF", "#ffffff", "#000000"},
		{"#000000", "#000000", "#ffffff"},
		{"", "#1f4e79", "#ffffff"},
		{"red", "#1f4e79", "#ffffff"},
		{"#fff", "#1f4e79", "#ffffff"},
		{"#12345G", "#1f4e79", "#ffffff"},
		{"#1234567", "#1f4e79", "#ffffff"},
		{"#123456;}body{display:none", "#1f4e79", "#ffffff"},
		{"</style><script>alert(1)</script>", "#1f4e79", "#ffffff"},
	} {
		v := sampleView(1)
		v.Colour = tc.colour
		page, doc := mustPage(t, v, "pdf")
		style := elements(doc, "style")[0].text
		want := ":root{--accent:" + tc.accent + ";--on-accent:" + tc.text + "}"
		if !strings.HasPrefix(style, want) {
			t.Errorf("colour %q: style starts %q, want %q", tc.colour, style[:min(len(style), 60)], want)
		}
		if len(tc.colour) > len("#RRGGBB") && strings.Contains(string(page), tc.colour) {
			t.Errorf("invalid colour %q reached the page", tc.colour)
		}
	}
}

func TestNotFoundPage(t *testing.T) {
	a, b := NotFoundPage(), NotFoundPage()
	if !bytes.Equal(a, b) {
		t.Error("two not-found pages differ")
	}
	a[0] = 'X' // a caller's change must not leak into the next page
	if bytes.Equal(a, NotFoundPage()) {
		t.Error("NotFoundPage returns shared bytes")
	}
	doc := parseHTML(t, b)
	if !slices.Contains(texts(doc, "p"), "This invoice link is not valid. Ask the business that sent it for a new one.") {
		t.Errorf("paragraphs = %q", texts(doc, "p"))
	}
	if len(elements(doc, "script")) != 0 {
		t.Error("the not-found page has a script")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
