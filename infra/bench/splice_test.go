package main

import "testing"

func TestSplice(t *testing.T) {
	steps := []step{{"a", "## A", nil}, {"load", "", nil}, {"b", "## B", nil}, {"new", "## New", nil}, {"c", "## C", nil}}
	old := "# Benchmarks\n\nheader\n\n## A\n\nold a\n\n## B\n\nold b\n\n### Sub\n\nold sub\n\n## C\n\nold c\n"
	got := splice(old, []section{{"b", "## B\n\nnew b\n\n"}, {"new", "## New\n\nnew new\n\n"}}, steps, "NOTE\n\n")
	want := "# Benchmarks\n\nheader\n\n## A\n\nold a\n\n## B\n\nNOTE\n\nnew b\n\n## New\n\nNOTE\n\nnew new\n\n## C\n\nold c\n"
	if got != want {
		t.Errorf("splice:\n%s\nwant:\n%s", got, want)
	}
	// Spliced again, each replaces its own (its note too).
	if again := splice(got, []section{{"new", "## New\n\nnewer\n\n"}}, steps, "NOTE\n\n"); again != "# Benchmarks\n\nheader\n\n## A\n\nold a\n\n## B\n\nNOTE\n\nnew b\n\n## New\n\nNOTE\n\nnewer\n\n## C\n\nold c\n" {
		t.Errorf("spliced again:\n%s", again)
	}
	// A section the report lacks, with no step before it there, goes last.
	if got := splice("# Benchmarks\n\n", []section{{"a", "## A\n\na\n\n"}}, steps, ""); got != "# Benchmarks\n\n## A\n\na\n\n" {
		t.Errorf("into an empty report:\n%q", got)
	}
}
