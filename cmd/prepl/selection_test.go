package main

import (
	"errors"
	"strings"
	"testing"
)

// TestSelectionThatSelectsNothing: bounds that select nothing (start not
// before stop) are refused as a usage error, naming both; bounds that
// select something, or positions in two different files, are taken.
func TestSelectionThatSelectsNothing(t *testing.T) {
	one, two := []string{"/b/binlog.000001"}, []string{"/b/binlog.000001", "/b/binlog.000002"}
	for _, c := range []struct {
		name  string
		flags selectFlags
		files []string
		err   string // "" when taken
	}{
		{"datetimes swapped", selectFlags{startDatetime: "2026-11-20 10:00:00", stopDatetime: "2026-11-20 09:00:00", timezone: "UTC"}, one,
			"--start-datetime 2026-11-20 10:00:00 is not before --stop-datetime 2026-11-20 09:00:00"},
		{"datetimes equal", selectFlags{startDatetime: "2026-11-20 10:00:00", stopDatetime: "2026-11-20T10:00:00Z", timezone: "UTC"}, one,
			"is not before --stop-datetime"},
		{"datetimes in order", selectFlags{startDatetime: "2026-11-20 09:00:00", stopDatetime: "2026-11-20 09:00:01", timezone: "UTC"}, one, ""},
		{"positions swapped in one file", selectFlags{startPosition: "4000", stopPosition: "3000"}, one,
			"--start-position 4000 is not before --stop-position 3000 in the one file given"},
		{"positions equal in one file", selectFlags{startPosition: "3000", stopPosition: "3000"}, one, "is not before --stop-position"},
		{"positions in order", selectFlags{startPosition: "3000", stopPosition: "4000"}, one, ""},
		{"positions in two files", selectFlags{startPosition: "4000", stopPosition: "3000"}, two, ""},
	} {
		_, err := c.flags.parse(c.files)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v, want it taken", c.name, err)
		case c.err != "" && (!errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want a usage error saying %q", c.name, err, c.err)
		}
	}
}
