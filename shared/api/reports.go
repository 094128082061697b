package api

import (
	"net/http"
	"strings"

	"bizdata/shared/business"
	"bizdata/shared/store"
	"bizdata/shared/wire"
)

// Reports and the settings they depend on (the account's timezone).

func getSettings(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	st, err := s.store.FindSettings(r.Context(), acct.ID)
	if err != nil {
		return err
	}
	return writeOK(w, "Settings found", map[string]any{"settings": wire.NewSettings(st.Account, st.Timezones)})
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
	req, err := readJSON[settingsRequest](r)
	if err != nil {
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
	return writeOK(w, "Settings updated", map[string]any{"settings": wire.NewSettings(st.Account, st.Timezones)})
}

// reportQuery reads a report's query string: only the names given, each at
// most once and not empty (400 naming the parameter otherwise).
func reportQuery(r *http.Request, names ...string) *listQuery {
	return readQuery(r, "leave the parameter out for its default", names...)
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
	out := make([]wire.Figures, len(byPeriod))
	for i, p := range byPeriod {
		out[i] = wire.NewFigures(p)
	}
	return writeOK(w, "Report ready", map[string]any{"report": wire.SummaryReport{
		AsOf: asOf.UTC().Format(business.TimeFormat), Complete: sums.Parked == 0, Currency: st.Account.Currency, From: from,
		GroupBy: groupBy, Periods: out, Timezone: st.Timezones.At(asOf).String(), To: to, Totals: wire.NewFigures(business.PeriodFigures{Figures: totals}),
	}})
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
	return writeOK(w, "Report ready", map[string]any{"report": wire.NewReceivablesReport(rec, acct.Currency)})
}

func reportInventory(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	if err := reportQuery(r).err(); err != nil {
		return err
	}
	rep, count, _, err := s.store.Inventory(r.Context(), acct.ID)
	if err != nil {
		return err
	}
	return writeOK(w, "Report ready", map[string]any{"report": wire.NewInventoryReport(rep, count, acct.Currency)})
}
