package invoice

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
)

// The hosted page is served under a Content-Security-Policy with no
// 'unsafe-inline', yet its accent colour changes per invoice. Its styles
// are therefore one <style> element whose SHA-256 hash the policy names
// (PageCSP): the page stays a single, self-contained, printable response,
// and no other inline style or script can run. The colour enters that
// style only after strict "#RRGGBB" validation, as a CSS custom property.

//go:embed templates/*.html templates/page.css
var templateFiles embed.FS

var (
	pageTemplate = template.Must(template.ParseFS(templateFiles, "templates/page.html", "templates/head.html"))
	pageCSS      = mustRead("templates/page.css")
	notFoundPage = mustRender(template.Must(template.ParseFS(templateFiles, "templates/notfound.html", "templates/head.html")))
)

// BasePolicy is the Content-Security-Policy of the invoice pages without
// their style hash: the same as the dashboard's, so the pages load nothing
// but themselves and cannot be framed.
const BasePolicy = "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'"

// pageData is what the page template reads.
type pageData struct {
	View
	CSS                      template.CSS
	StatusLabel, StatusClass string
	Totals, Texts            []labelled
	BalanceDueWithCurrency   string
	// PDFHref is the "Download PDF" link, as the caller gave it.
	PDFHref string
}

// Page renders the hosted invoice page: a complete HTML document of v, every
// value escaped by html/template. pdfHref is the address of the same
// invoice's PDF (a relative "…/pdf" works); an empty one shows no link. The
// page must be served with PageCSP's policy for its styles to apply. It
// returns an error only if the template cannot run, which is a fault.
func Page(v View, pdfHref string) ([]byte, error) {
	data := pageData{
		View:                   v,
		CSS:                    template.CSS(pageStyle(accentOf(v.Colour))),
		StatusLabel:            statusLabel(v.Status),
		StatusClass:            statusClass(v.Status),
		Totals:                 totalsOf(v),
		Texts:                  textsOf(v),
		BalanceDueWithCurrency: withCurrency(v.Currency, v.BalanceDue),
		PDFHref:                pdfHref,
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("invoice: render page: %w", err)
	}
	return buf.Bytes(), nil
}

// pageStyle is the page's stylesheet in the given accent: the colours as
// custom properties ahead of the fixed rules.
func pageStyle(a accent) string {
	return fmt.Sprintf(":root{--accent:%s;--on-accent:%s}\n%s", a.fill.hex(), a.text.hex(), pageCSS)
}

// NotFoundPage is the page for an unknown, revoked or malformed invoice
// link: the same bytes whatever the cause, so the answer tells nothing
// about which links once existed. Serve it with PageCSP(NotFoundPage()).
func NotFoundPage() []byte {
	return bytes.Clone(notFoundPage)
}

// PageCSP returns the Content-Security-Policy header value for page, one of
// this package's pages: BasePolicy plus a style-src that allows exactly the
// page's <style> element by its SHA-256 hash (no 'unsafe-inline'). A page
// without a style element gets BasePolicy.
func PageCSP(page []byte) string {
	style, ok := styleContent(page)
	if !ok {
		return BasePolicy
	}
	sum := sha256.Sum256(style)
	return BasePolicy + "; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// styleContent finds the text of the first <style> element, which is what a
// browser hashes to match a style-src source. This package's pages carry
// one plain <style> element, so no HTML parsing is needed.
func styleContent(page []byte) ([]byte, bool) {
	_, rest, ok := bytes.Cut(page, []byte("<style>"))
	if !ok {
		return nil, false
	}
	style, _, ok := bytes.Cut(rest, []byte("</style>"))
	return style, ok
}

func mustRead(name string) []byte {
	b, err := templateFiles.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time: cannot fail
	}
	return b
}

// mustRender renders a template that reads no data, once, at start.
func mustRender(t *template.Template) []byte {
	var buf bytes.Buffer
	if err := t.Execute(&buf, nil); err != nil {
		panic(err) // a fixed template: fails in every test run or never
	}
	return buf.Bytes()
}
