package dashboard

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// pages holds every page's template, each parsed with the layout.
type pages struct{ byName map[string]*template.Template }

// mustParsePages parses the embedded templates; a template that does not
// parse is a programming error, caught by every test.
func mustParsePages() *pages {
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html"))
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".html")
		if name == "layout" {
			continue
		}
		p.byName[name] = template.Must(template.Must(layout.Clone()).ParseFS(templateFS, n))
	}
	return p
}

// view is what every page's template gets: the frame's facts and the page's
// own Data.
type view struct {
	Title    string
	Nav      string // the navigation entry to mark as current
	SignedIn bool
	Live     bool
	Account  business.Account
	Email    string
	CSRF     string
	Path     string // the request's path and query, for the live/test switch to come back to
	Notice   string
	Error    string
	Fields   map[string]string
	Shown    *shownSecret
	Form     url.Values
	SignUp   bool
	Data     any
}

// render writes page name (templates/<name>.html inside the layout) with
// data, for visit v (nil on the signed-out pages).
func (s *Server) render(w http.ResponseWriter, r *http.Request, v *visit, name, title, nav string, data any) error {
	vw := view{Title: title, Nav: nav, Path: r.URL.RequestURI(), Data: data, SignUp: s.cfg.SignUp}
	if r.Method != http.MethodGet { // a page drawn by a form: the switch goes back to its section
		vw.Path = "/dashboard/" + nav
		if nav == "overview" || nav == "" {
			vw.Path = "/dashboard"
		}
	}
	if v != nil {
		vw.SignedIn, vw.Live, vw.Account, vw.Email, vw.CSRF = true, v.acct.Livemode(), v.acct, v.session.Email, v.csrf
		vw.Notice, vw.Shown, vw.Form = v.notice, v.shown, v.form
		if v.err != nil {
			vw.Error = businessMessage(v.err)
			var be *business.Error
			if errors.As(v.err, &be) {
				vw.Fields = be.Fields
			}
		}
	}
	return s.write(w, name, vw, http.StatusOK)
}

// write executes page name into a buffer first, so a template error is a
// clean 500, never half a page.
func (s *Server) write(w http.ResponseWriter, name string, vw view, status int) error {
	t, ok := s.pages.byName[name]
	if !ok {
		return fmt.Errorf("no page template %q", name)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", vw); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return nil
}

// businessMessage is what a person is told of err: the API's message (which
// names the first bad field; the page shows every field's error beside it).
func businessMessage(err error) string {
	var be *business.Error
	if !errors.As(err, &be) {
		return "Something went wrong on our side; try again in a moment."
	}
	return be.Message
}

// renderError writes the error page with status and message.
func (s *Server) renderError(w http.ResponseWriter, r *http.Request, v *visit, status int, message string) {
	vw := view{Title: http.StatusText(status), Path: r.URL.RequestURI(), Error: message, SignUp: s.cfg.SignUp}
	if v != nil {
		vw.SignedIn, vw.Live, vw.Account, vw.Email, vw.CSRF = true, v.acct.Livemode(), v.acct, v.session.Email, v.csrf
	}
	if err := s.write(w, "error", vw, status); err != nil {
		s.log.ErrorContext(r.Context(), "dashboard render failed", "error", err.Error())
		http.Error(w, message, status)
	}
}

// renderFailure answers err as the API would: its status, its message for a
// person, and for a fault of ours the log's cause and a plain apology.
func (s *Server) renderFailure(w http.ResponseWriter, r *http.Request, v *visit, err error) {
	err = store.Unavailable(err)
	status := api.StatusOf(err)
	msg := businessMessage(err)
	switch {
	case status == http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "1")
		msg = "The database is busy or unreachable; try again in a moment."
	case status >= 500:
		s.log.ErrorContext(r.Context(), "dashboard request failed", "path", r.URL.Path, "error", err.Error())
		msg = "Something went wrong on our side; try again in a moment."
	}
	s.renderError(w, r, v, status, msg)
}

// statusOf is the status a refusal is answered with.
func statusOf(err error) int { return api.StatusOf(store.Unavailable(err)) }

// retryAfter is a Retry-After value in whole seconds, at least 1.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(int(max((d+time.Second-1)/time.Second, 1)))
}

// serveAsset serves an embedded stylesheet or image.
func serveAsset(s *Server, w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	b, err := assetFS.ReadFile("assets/" + name)
	if err != nil || strings.Contains(name, "/") {
		s.renderError(w, r, nil, http.StatusNotFound, "There is no such file.")
		return
	}
	w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write(b)
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"money": moneyText,
	"when":  formatWhen,
	"withCSRF": func(csrf string) template.HTML {
		return template.HTML(`<input type="hidden" name="csrf" value="` + template.HTMLEscapeString(csrf) + `">`)
	},
	"field": func(fields map[string]string, name string) string { return fields[name] },
	"formv": formValue,
	"query": withQuery,
	"chart": overviewChart,
}

// formValue is what the refused form sent for name, or def when no form
// was refused or it had no such field (a page's other forms keep theirs).
func formValue(form url.Values, name, def string) string {
	if !form.Has(name) {
		return def
	}
	return form.Get(name)
}

// moneyText is formatMoney for the templates, whose amounts are the API's
// text (a report's) or its money.Amount (a sale's, an expense's).
func moneyText(amount any, currency string) (string, error) {
	switch a := amount.(type) {
	case string:
		return formatMoney(a, currency), nil
	case fmt.Stringer:
		return formatMoney(a.String(), currency), nil
	}
	return "", fmt.Errorf("money: %T is not an amount", amount)
}

// formatMoney writes an API amount ("1250.5" or "1250.50") with its
// currency and thousands separators: "GHS 1,250.50".
func formatMoney(amount, currency string) string {
	neg := strings.HasPrefix(amount, "-")
	amount = strings.TrimPrefix(amount, "-")
	whole, frac, _ := strings.Cut(amount, ".")
	frac = (frac + "00")[:2]
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if b.Len() == 0 {
		b.WriteByte('0')
	}
	sign := ""
	if neg {
		sign = "-"
	}
	return strings.TrimSpace(currency + " " + sign + b.String() + "." + frac)
}

// formatWhen writes an API timestamp (RFC 3339, or a list's UTC
// "2006-01-02 15:04:05") as a person reads it, in the business's timezone,
// as YYYY-MM-DD HH:MM: every date the dashboard shows or takes is written
// the one way its filters take it and the API writes it; anything else as
// it is.
func formatWhen(ts, timezone string) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		// The lists' "2006-01-02 15:04:05", in UTC.
		if t, err = time.Parse(time.DateTime, ts); err != nil {
			return ts
		}
	}
	if loc, err := business.LoadTimezone(timezone); err == nil {
		t = t.In(loc)
	}
	return t.Format("2006-01-02 15:04")
}

// withQuery returns base's query with key set to value (removed when value
// is ""), as "?…" for a link.
func withQuery(base url.Values, key, value string) string {
	q := url.Values{}
	for k, vs := range base {
		q[k] = append([]string(nil), vs...)
	}
	if value == "" {
		q.Del(key)
	} else {
		q.Set(key, value)
	}
	if len(q) == 0 {
		return "?"
	}
	return "?" + q.Encode()
}
