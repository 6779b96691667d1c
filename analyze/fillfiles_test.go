package analyze

import (
	"slices"
	"strconv"
	"testing"
)

// TestFillFiles: files read between the first and the last that started
// a transaction get a line of their own, with no transactions; files
// before the first or after the last (skipped by a start or stop
// position) do not.
func TestFillFiles(t *testing.T) {
	line := func(name string, txns uint64) FileSummary {
		return FileSummary{File: name, Summary: Summary{Transactions: txns}}
	}
	for _, c := range []struct {
		name  string
		fs    []FileSummary
		files []string
		want  []string // file:transactions
	}{
		{"binlogs, every file starts one", []FileSummary{line("b.1", 3), line("b.2", 4)},
			[]string{"/d/b.1", "/d/b.2"}, []string{"b.1:3", "b.2:4"}},
		{"relay files inside transactions", []FileSummary{line("r.2", 5), line("r.5", 1)},
			[]string{"/d/r.1", "/d/r.2", "/d/r.3", "/d/r.4", "/d/r.5", "/d/r.6"}, []string{"r.2:5", "r.3:0", "r.4:0", "r.5:1"}},
		{"one file", []FileSummary{line("r.1", 2)}, []string{"r.1"}, []string{"r.1:2"}},
		{"a live source: no files", []FileSummary{line("b.7", 2), line("b.8", 1)}, nil, []string{"b.7:2", "b.8:1"}},
		{"nothing analyzed", nil, []string{"/d/b.1", "/d/b.2"}, nil},
	} {
		var got []string
		for _, f := range FillFiles(c.fs, c.files) {
			got = append(got, f.File+":"+strconv.FormatUint(f.Transactions, 10))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
