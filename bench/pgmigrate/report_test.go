package pgmigrate

import (
	"strings"
	"testing"
)

func TestSummaryAndTarget(t *testing.T) {
	run := func(r int, sys string, cp, cu float64, err string) Result {
		return Result{Repeat: r, System: sys, Copy: cp, CatchUp: cu, Err: err}
	}
	for _, c := range []struct {
		name                string
		results             []Result
		met                 bool
		copyRow, catchUpRow string // the summary table's rows, from the prepl column on
	}{
		{"both phases at most half", []Result{
			run(1, Prepl, 2, 1, ""), run(1, Chameleon, 10, 8, ""),
			run(2, Prepl, 3, 2, ""), run(2, Chameleon, 12, 4, ""),
			run(3, Prepl, 4, 1.5, ""), run(3, Chameleon, 11, 6, ""),
		}, true,
			"| 3.0 s (2.0–4.0) | 11.0 s (10.0–12.0) | 0.27 | 0.20, 0.25, 0.36 | ≤ 0.50 | yes |",
			"| 1.5 s (1.0–2.0) | 6.0 s (4.0–8.0) | 0.25 | 0.12, 0.50, 0.25 | ≤ 0.50 | yes |"},
		{"under half on the medians, over in a repeat", []Result{
			run(1, Prepl, 2, 1, ""), run(1, Chameleon, 10, 8, ""),
			run(2, Prepl, 6, 1, ""), run(2, Chameleon, 10, 8, ""),
			run(3, Prepl, 3, 1, ""), run(3, Chameleon, 10, 8, ""),
		}, false,
			"| 3.0 s (2.0–6.0) | 10.0 s (10.0–10.0) | 0.30 | 0.20, 0.60, 0.30 | ≤ 0.50 | no |",
			"| 1.0 s (1.0–1.0) | 8.0 s (8.0–8.0) | 0.12 | 0.12, 0.12, 0.12 | ≤ 0.50 | yes |"},
		{"catch-up over half", []Result{
			run(1, Prepl, 2, 5, ""), run(1, Chameleon, 10, 8, ""),
		}, false,
			"| 2.0 s (2.0–2.0) | 10.0 s (10.0–10.0) | 0.20 | 0.20 | ≤ 0.50 | yes |",
			"| 5.0 s (5.0–5.0) | 8.0 s (8.0–8.0) | 0.62 | 0.62 | ≤ 0.50 | no |"},
		{"a failed run is not met, its time left out", []Result{
			run(1, Prepl, 2, 1, ""), run(1, Chameleon, 10, 8, ""),
			run(2, Prepl, 2, 0, "catch-up: target differs"), run(2, Chameleon, 10, 8, ""),
		}, false,
			"| 2.0 s (2.0–2.0) | 10.0 s (10.0–10.0) | 0.20 | 0.20, 0.20 | ≤ 0.50 | yes |",
			"| 1.0 s (1.0–1.0), 1 of 2 runs | 8.0 s (8.0–8.0) | 0.12 | 0.12 | ≤ 0.50 | no |"},
		{"one side never finished", []Result{
			run(1, Prepl, 2, 1, ""), run(1, Chameleon, 0, 0, "copy: init_replica failed"),
		}, false,
			"| 2.0 s (2.0–2.0) | failed (0 of 1 runs) | – | – | ≤ 0.50 | no |",
			"| 1.0 s (1.0–1.0) | failed (0 of 1 runs) | – | – | ≤ 0.50 | no |"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := &Report{Results: c.results}
			if got := rep.Met(); got != c.met {
				t.Errorf("Met() = %v, want %v", got, c.met)
			}
			var md strings.Builder
			rep.Markdown(&md)
			for _, row := range []string{c.copyRow, c.catchUpRow} {
				if !strings.Contains(md.String(), row) {
					t.Errorf("no row ending %q in\n%s", row, md.String())
				}
			}
		})
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 100000: "100,000", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// A copy-only run is met on its copies alone and has no catch-up row.
func TestCopyOnlyReport(t *testing.T) {
	rep := &Report{CopyOnly: true, Results: []Result{
		{Repeat: 1, System: Prepl, Copy: 2}, {Repeat: 1, System: Chameleon, Copy: 10},
	}}
	if !rep.Met() {
		t.Error("Met() = false for a copy at 0.20 and no catch-up, want true")
	}
	var md strings.Builder
	rep.Markdown(&md)
	if !strings.Contains(md.String(), "| 2.0 s (2.0–2.0) | 10.0 s (10.0–10.0) | 0.20 | 0.20 | ≤ 0.50 | yes |") || strings.Contains(md.String(), "catch-up: `prepl") {
		t.Errorf("copy-only report: want the copy row and no catch-up row in\n%s", md.String())
	}
	rep.Results[0].Copy = 6
	if rep.Met() {
		t.Error("Met() = true for a copy at 0.60, want false")
	}
}

// pgloader only copies: it has a copy row and no catch-up row, and
// counts for Met on its copies alone, beside pg_chameleon's two phases.
func TestCopyOnlyPeer(t *testing.T) {
	rep := &Report{Results: []Result{
		{Repeat: 1, System: Prepl, Copy: 2, CatchUp: 1}, {Repeat: 1, System: Chameleon, Copy: 10, CatchUp: 8},
		{Repeat: 1, System: Pgloader, Copy: 5},
	}}
	if !rep.Met() {
		t.Error("Met() = false with prepl at 0.20 and 0.12 of pg_chameleon and 0.40 of pgloader's copy, want true")
	}
	var md strings.Builder
	rep.Markdown(&md)
	out := md.String()
	for _, want := range []string{
		"| copy: `prepl copy` | pgloader `pgloader` (LOAD DATABASE) | 2.0 s (2.0–2.0) | 5.0 s (5.0–5.0) | 0.40 | 0.40 | ≤ 0.50 | yes |",
		"| catch-up: `prepl replicate --stop-at-end` | pg_chameleon `start_replica` until replayed | 1.0 s (1.0–1.0) | 8.0 s (8.0–8.0) | 0.12 |",
		"| 1 | pgloader | after another | 5.00 | – | yes (after the copy; it has no catch-up) |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "catch-up: `prepl replicate --stop-at-end` | pgloader") {
		t.Errorf("a catch-up row for pgloader, which only copies:\n%s", out)
	}
	rep.Results[2].Copy = 3 // prepl at 0.67 of pgloader's copy
	if rep.Met() {
		t.Error("Met() = true with prepl at 0.67 of pgloader's copy, want false")
	}
}
