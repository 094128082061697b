package business

import (
	"fmt"
	"sort"
	"time"
)

// Summaries: the periods a report covers and the figures of each.
// Everything here is arithmetic on values; where the figures are kept and
// how they are read is the store's.

// Report groupings.
const (
	GroupByDay   = "day"
	GroupByWeek  = "week"
	GroupByMonth = "month"
)

// The longest range each grouping reports at once.
const (
	MaxDaysByDay     = 400
	MaxDaysByWeek    = 3 * 366
	MaxMonthsByMonth = 120
)

// Period is a span of local dates, both inclusive.
type Period struct {
	Start, End string
}

// DefaultRange returns the range a summary covers when from or to is not
// given: to defaults to today, and from to the start of the twelfth month
// (by month), the twelfth week (by week) or the 31st day (by day) back.
func DefaultRange(from, to, groupBy, today string) (string, string) {
	if to == "" {
		to = today
	}
	if from != "" {
		return from, to
	}
	t, err := time.Parse(DateFormat, to)
	if err != nil {
		return from, to // reported by ReportPeriods
	}
	switch groupBy {
	case GroupByDay:
		t = t.AddDate(0, 0, -30)
	case GroupByWeek:
		t = weekStart(t).AddDate(0, 0, -7*11)
	default:
		t = time.Date(t.Year(), t.Month()-11, 1, 0, 0, 0, 0, time.UTC)
	}
	return t.Format(DateFormat), to
}

// weekStart is the Monday of t's week (weeks run Monday to Sunday, as ISO
// 8601 has them).
func weekStart(t time.Time) time.Time {
	return t.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7))
}

// ReportPeriods splits the local dates from..to (inclusive) into periods by
// day, week (Monday to Sunday) or month; the first and last are cut at from
// and to. Returns EINVALID naming the parameter: a date that is not one,
// to before from, an unknown grouping, or a range longer than the grouping
// allows (400 days by day, 3 years by week, 10 years by month).
func ReportPeriods(from, to, groupBy string) ([]Period, error) {
	if groupBy == "" {
		groupBy = GroupByMonth
	}
	if groupBy != GroupByDay && groupBy != GroupByWeek && groupBy != GroupByMonth {
		return nil, FieldErrors{"group_by": "must be day, week or month"}.Err()
	}
	f, ferr := time.Parse(DateFormat, from)
	t, terr := time.Parse(DateFormat, to)
	if fe := (FieldErrors{}); ferr != nil || terr != nil {
		if ferr != nil && from != "" { // an empty from follows an unreadable to
			fe.Add("from", "must be a real date YYYY-MM-DD")
		}
		if terr != nil {
			fe.Add("to", "must be a real date YYYY-MM-DD")
		}
		return nil, fe.Err()
	}
	if t.Before(f) {
		return nil, FieldErrors{"to": "must not be before from"}.Err()
	}
	days := int(t.Sub(f).Hours()/24) + 1
	switch {
	case groupBy == GroupByDay && days > MaxDaysByDay:
		return nil, FieldErrors{"to": fmt.Sprintf("must be at most %d days from from when group_by is day (asked %d); group by week or month for longer", MaxDaysByDay, days)}.Err()
	case groupBy == GroupByWeek && days > MaxDaysByWeek:
		return nil, FieldErrors{"to": fmt.Sprintf("must be at most %d days from from when group_by is week (asked %d); group by month for longer", MaxDaysByWeek, days)}.Err()
	case groupBy == GroupByMonth && (t.Year()-f.Year())*12+int(t.Month()-f.Month())+1 > MaxMonthsByMonth:
		return nil, FieldErrors{"to": fmt.Sprintf("must be within %d months (10 years) of from", MaxMonthsByMonth)}.Err()
	}
	var out []Period
	for start := f; !start.After(t); {
		var next time.Time
		switch groupBy {
		case GroupByDay:
			next = start.AddDate(0, 0, 1)
		case GroupByWeek:
			next = weekStart(start).AddDate(0, 0, 7)
		default:
			next = time.Date(start.Year(), start.Month()+1, 1, 0, 0, 0, 0, time.UTC)
		}
		end := next.AddDate(0, 0, -1)
		if end.After(t) {
			end = t
		}
		out = append(out, Period{Start: start.Format(DateFormat), End: end.Format(DateFormat)})
		start = next
	}
	return out, nil
}

// FullMonth reports whether p is a whole calendar month, whose figures the
// month's sums hold.
func (p Period) FullMonth() bool {
	start, err := time.Parse(DateFormat, p.Start)
	if err != nil || start.Day() != 1 {
		return false
	}
	return start.AddDate(0, 1, -1).Format(DateFormat) == p.End
}

// SumsNeeded returns what a summary of periods reads: the whole months
// (yyyy-mm) whose sums stand for them, and the ranges of days for the rest
// (adjacent periods in one range).
func SumsNeeded(periods []Period) (days []Period, months []string) {
	for _, p := range periods {
		switch {
		case p.FullMonth():
			months = append(months, p.Start[:7])
		case len(days) > 0 && nextDay(days[len(days)-1].End) == p.Start:
			days[len(days)-1].End = p.End
		default:
			days = append(days, p)
		}
	}
	return days, months
}

func nextDay(d string) string {
	t, _ := time.Parse(DateFormat, d)
	return t.AddDate(0, 0, 1).Format(DateFormat)
}

// PeriodFigures is one period of a summary with its figures.
type PeriodFigures struct {
	Period
	Figures
}

// Summarize adds each day's figures (by local date) into the periods, and
// the periods into the totals; a whole month takes its month's sums (by
// yyyy-mm) instead, when months is given. Days outside every period are
// left out. Each period and the totals name at most MaxExpenseTypes
// expense types (LimitTypes).
func Summarize(periods []Period, days, months map[string]Figures) ([]PeriodFigures, Figures) {
	out := make([]PeriodFigures, len(periods))
	var total Figures
	dates := make([]string, 0, len(days))
	for d := range days {
		dates = append(dates, d)
	}
	sort.Strings(dates)
	for i, p := range periods {
		out[i].Period = p
		if months != nil && p.FullMonth() {
			out[i].Add(months[p.Start[:7]])
		} else {
			for _, d := range dates {
				if d >= p.Start && d <= p.End {
					out[i].Add(days[d])
				}
			}
		}
		total.Add(out[i].Figures)
		out[i].LimitTypes()
	}
	total.LimitTypes()
	return out, total
}
