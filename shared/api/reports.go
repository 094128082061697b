package api

import (
	"net/http"
	"strconv"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/money"
	"bizdata/shared/store"
)

// Reports and the settings they depend on (the account's timezone).

type timezoneSpanJSON struct {
	Timezone string  `json:"timezone"`
	From     *string `json:"from"`
}

type settingsJSON struct {
	BusinessName        string             `json:"business_name"`
	BusinessCode        string             `json:"business_code"`
	Currency            string             `json:"currency"`
	InvoicePrefix       string             `json:"invoice_prefix"`
	Timezone            string             `json:"timezone"`
	TimezoneEffectiveAt *string            `json:"timezone_effective_at"`
	TimezoneHistory     []timezoneSpanJSON `json:"timezone_history"`
}

func toSettingsJSON(st store.Settings) settingsJSON {
	cur := st.Timezones.Current()
	j := settingsJSON{BusinessName: st.Account.Name, BusinessCode: st.Account.BusinessCode, Currency: st.Account.Currency,
		InvoicePrefix: st.Account.InvoicePrefix, Timezone: cur.Name, TimezoneHistory: []timezoneSpanJSON{}}
	if !cur.From.IsZero() {
		at := cur.From.UTC().Format(business.TimeFormat)
		j.TimezoneEffectiveAt = &at
	}
	hist := st.Timezones
	if len(hist) == 0 {
		hist = business.TimezoneHistory{cur}
	}
	for _, s := range hist {
		span := timezoneSpanJSON{Timezone: s.Name}
		if !s.From.IsZero() {
			at := s.From.UTC().Format(business.TimeFormat)
			span.From = &at
		}
		j.TimezoneHistory = append(j.TimezoneHistory, span)
	}
	return j
}

func getSettings(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	st, err := s.store.FindSettings(r.Context(), acct.ID)
	if err != nil {
		return err
	}
	return writeOK(w, "Settings found", map[string]any{"settings": toSettingsJSON(st)})
}

type settingsRequest struct {
	BusinessName Opt[string] `json:"business_name"`
	Timezone     Opt[string] `json:"timezone"`
	// Shown by GET, so a client may send back what it read; they cannot
	// change (see store.SettingsChange).
	InvoicePrefix Opt[string] `json:"invoice_prefix"`
	BusinessCode  Opt[string] `json:"business_code"`
	Currency      Opt[string] `json:"currency"`
}

func updateSettings(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var req settingsRequest
	if err := decodeObject(body, &req, ""); err != nil {
		return err
	}
	fe := business.FieldErrors{}
	var c store.SettingsChange
	for _, f := range []struct {
		name string
		o    Opt[string]
		dst  **string
	}{
		{"business_name", req.BusinessName, &c.Name}, {"timezone", req.Timezone, &c.Timezone},
		{"invoice_prefix", req.InvoicePrefix, &c.InvoicePrefix}, {"currency", req.Currency, &c.Currency},
		{"business_code", req.BusinessCode, &c.BusinessCode},
	} {
		switch {
		case f.o.Set && f.o.Null:
			fe.Add(f.name, "must not be null; leave the field out to keep it")
		case f.o.Set:
			v := f.o.V
			*f.dst = &v
		}
	}
	if c.Timezone != nil { // checked by the store, with the other fields
		tz := strings.TrimSpace(*c.Timezone)
		c.Timezone = &tz
	}
	if err := fe.Err(); err != nil {
		return err
	}
	st, err := s.store.UpdateSettings(r.Context(), acct.ID, c)
	if err != nil {
		return err
	}
	s.keys.forgetAccount(acct.ID)
	return writeOK(w, "Settings updated", map[string]any{"settings": toSettingsJSON(st)})
}

// reportQuery reads a report's query string: only the names given, each at
// most once and not empty (400 naming the parameter otherwise).
func reportQuery(r *http.Request, names ...string) *listQuery {
	return readQuery(r, "leave the parameter out for its default", names...)
}

// figuresJSON is a period's figures (or the totals) as a report shows them.
type figuresJSON struct {
	Start             string            `json:"start,omitempty"`
	End               string            `json:"end,omitempty"`
	SalesCount        int64             `json:"sales_count"`
	Invoiced          string            `json:"invoiced"`
	Collected         string            `json:"collected"`
	Refunded          string            `json:"refunded"`
	Expenses          string            `json:"expenses"`
	Net               string            `json:"net"`
	CollectedByMethod map[string]string `json:"collected_by_method"`
	ExpensesByType    map[string]string `json:"expenses_by_type"`
	// ExpensesOtherTypes is the expenses of the types past the
	// business.MaxExpenseTypes that ExpensesByType names.
	ExpensesOtherTypes string `json:"expenses_other_types"`
}

func centsMap(m map[string]int64) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = money.FormatCents(v)
	}
	return out
}

func toFiguresJSON(f business.Figures) figuresJSON {
	return figuresJSON{SalesCount: f.SalesCount, Invoiced: money.FormatCents(f.Invoiced), Collected: money.FormatCents(f.Collected),
		Refunded: money.FormatCents(f.Refunded), Expenses: money.FormatCents(f.Expenses), Net: money.FormatCents(f.Net()),
		CollectedByMethod: centsMap(f.ByMethod), ExpensesByType: centsMap(f.ByType), ExpensesOtherTypes: money.FormatCents(f.OtherTypes)}
}

func reportSummary(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	q := reportQuery(r, "from", "to", "group_by")
	groupBy := q.oneOf("group_by", business.GroupByDay, business.GroupByWeek, business.GroupByMonth)
	if groupBy == "" {
		groupBy = business.GroupByMonth
	}
	if err := q.err(); err != nil {
		return err
	}
	st, err := s.store.FindSettings(r.Context(), acct.ID)
	if err != nil {
		return err
	}
	asOf := s.store.Now()
	from, to := business.DefaultRange(q.str("from"), q.str("to"), groupBy, st.Timezones.Today(asOf))
	periods, err := business.ReportPeriods(from, to, groupBy)
	if err != nil {
		return err
	}
	dayRanges, months := business.SumsNeeded(periods)
	sums, err := s.store.ReportFigures(r.Context(), acct.ID, st.Timezones, dayRanges, months)
	if err != nil {
		return err
	}
	byPeriod, totals := business.Summarize(periods, sums.Days, sums.Months)
	out := make([]figuresJSON, len(byPeriod))
	for i, p := range byPeriod {
		out[i] = toFiguresJSON(p.Figures)
		out[i].Start, out[i].End = p.Start, p.End
	}
	return writeOK(w, "Report ready", map[string]any{"report": map[string]any{
		"from": from, "to": to, "group_by": groupBy, "timezone": st.Timezones.At(asOf).String(), "currency": st.Account.Currency,
		"as_of": asOf.UTC().Format(business.TimeFormat), "complete": sums.Parked == 0, "periods": out, "totals": toFiguresJSON(totals),
	}})
}

type agingJSON struct {
	Current string `json:"current"`
	D1To30  string `json:"1_30"`
	D31To60 string `json:"31_60"`
	D61To90 string `json:"61_90"`
	Over90  string `json:"over_90"`
}

func toAgingJSON(a business.Aging) agingJSON {
	return agingJSON{Current: money.FormatCents(a.Current), D1To30: money.FormatCents(a.Days1To30), D31To60: money.FormatCents(a.Days31To60),
		D61To90: money.FormatCents(a.Days61To90), Over90: money.FormatCents(a.Over90)}
}

type debtorJSON struct {
	CustomerID  string    `json:"customer_id"`
	Name        string    `json:"name"`
	Outstanding string    `json:"outstanding"`
	Buckets     agingJSON `json:"buckets"`
}

func reportReceivables(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	q := reportQuery(r, "as_of")
	asOf := q.date("as_of")
	if err := q.err(); err != nil {
		return err
	}
	rec, _, err := s.store.Receivables(r.Context(), acct.ID, asOf) // "": today, local
	if err != nil {
		return err
	}
	asOf = rec.AsOf
	debtors := make([]debtorJSON, len(rec.Debtors))
	for i, d := range rec.Debtors {
		debtors[i] = debtorJSON{CustomerID: strconv.FormatInt(d.CustomerID, 10), Name: d.Name, Outstanding: money.FormatCents(d.Outstanding), Buckets: toAgingJSON(d.Aging)}
	}
	return writeOK(w, "Report ready", map[string]any{"report": map[string]any{
		"as_of": asOf, "currency": acct.Currency, "outstanding": money.FormatCents(rec.Outstanding),
		"open_sales": rec.Open, "buckets": toAgingJSON(rec.Aging), "customers": debtors,
	}})
}

type stockAlertJSON struct {
	ItemCode        string `json:"item_code"`
	ItemName        string `json:"item_name"`
	Quantity        string `json:"quantity"`
	MinimumQtyAlert string `json:"minimum_qty_alert"`
	Status          string `json:"status"`
}

func reportInventory(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	if err := reportQuery(r).err(); err != nil {
		return err
	}
	rep, count, _, err := s.store.Inventory(r.Context(), acct.ID)
	if err != nil {
		return err
	}
	alerts := make([]stockAlertJSON, len(rep.Alerts))
	for i, it := range rep.Alerts {
		alerts[i] = stockAlertJSON{ItemCode: it.ItemCode, ItemName: it.ItemName, Quantity: it.Quantity.String(),
			MinimumQtyAlert: it.MinimumQtyAlert.String(), Status: it.Status()}
	}
	return writeOK(w, "Report ready", map[string]any{"report": map[string]any{
		"currency": acct.Currency, "items_count": count,
		"stock_value": rep.StockValue, "retail_value": rep.RetailValue,
		"counts":                map[string]int{business.StockIn: rep.InStock, business.StockLow: rep.LowStock, business.StockOut: rep.OutOfStock},
		"low_and_out_items":     alerts,
		"low_and_out_truncated": rep.AlertsTruncated,
	}})
}
