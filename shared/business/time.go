package business

import "time"

// Wire formats: dates YYYY-MM-DD and datetimes YYYY-MM-DD HH:MM:SS, in UTC.
const (
	DateFormat = "2006-01-02"
	TimeFormat = "2006-01-02 15:04:05"
)

// CheckDate records a problem with a YYYY-MM-DD field (a real calendar date).
func CheckDate(fe FieldErrors, field, v string) {
	if _, err := time.Parse(DateFormat, v); err != nil {
		fe.Add(field, "must be a real date YYYY-MM-DD")
	}
}
