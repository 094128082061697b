package store

import (
	"testing"
	"time"

	"bizdata/shared/business"

	"pgregory.net/rapid"
)

// TestAgingRoundTrips: any debt's amounts by due date (dates from 1900 to
// 2199, cents of either sign, and an undated amount left to its own
// attribute) come back from the view's encoding as they went in, a few
// bytes a date; a cut-short or unknown encoding is refused, never misread.
func TestAgingRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		due := map[string]int64{}
		base := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
		for range rapid.IntRange(0, 400).Draw(t, "dates") {
			d := base.AddDate(0, 0, rapid.IntRange(0, 300*366).Draw(t, "day")).Format(business.DateFormat)
			if c := rapid.Int64Range(-1e15, 1e15).Draw(t, "cents"); c != 0 {
				due[d] = c
			}
		}
		b := encodeAging(map[string]int64{owedNoDue: 5})
		if len(b) != 1 {
			t.Fatalf("an undated amount encoded in the aging: %v", b)
		}
		b = encodeAging(due)
		got := map[string]int64{}
		if err := decodeAging(b, got); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(due) {
			t.Fatalf("%d dates back, want %d", len(got), len(due))
		}
		for d, c := range due {
			if got[d] != c {
				t.Fatalf("%s: %d back, want %d", d, got[d], c)
			}
		}
		if len(due) > 0 {
			if err := decodeAging(b[:len(b)-1], map[string]int64{}); err == nil {
				t.Fatal("a cut-short aging was read")
			}
		}
	})
	if err := decodeAging([]byte{2}, map[string]int64{}); err == nil {
		t.Fatal("an aging of an unknown format was read")
	}
	// A customer with a year of open due dates of up to 9,999.99 each.
	year := map[string]int64{}
	for i := range 365 {
		year[time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i).Format(business.DateFormat)] = 999999 - int64(i)
	}
	if n := len(encodeAging(year)); n > 365*5 {
		t.Fatalf("a year of due dates took %d bytes", n)
	}
}
