package bench

import (
	"strings"
	"testing"
)

func TestFormatSummary(t *testing.T) {
	for _, c := range []struct {
		s    Summary
		ok   bool
		want string
	}{
		{Summary{}, false, ""},
		{Summary{Median: 1.234, Min: 1.234, Max: 1.234, Runs: 1}, true, "1.23"},
		{Summary{Median: 2, Min: 1.5, Max: 2.25, Runs: 3}, true, "2.00 (1.50–2.25)"},
		{Summary{Median: 2, Min: 2, Max: 2, Runs: 2, Failed: 1}, true, "**FAIL** (1 of 3)"},
	} {
		if got := formatSummary(c.s, c.ok); got != c.want {
			t.Errorf("formatSummary(%+v) = %q, want %q", c.s, got, c.want)
		}
	}
}

func TestWriteTable(t *testing.T) {
	r := &Report{Threads: []int{0, 4}, Systems: []System{MariaDB, PreplReplicate},
		Modes: map[System][]string{MariaDB: {"conservative", "optimistic"}, PreplReplicate: {"writeset"}}}
	res := func(s System, mode string, threads int, secs ...float64) []Result {
		var out []Result
		for i, x := range secs {
			out = append(out, Result{Cell: Cell{"oltp", "A", s, mode, threads}, Repeat: i + 1, Seconds: x, Txns: 10, Verified: true})
		}
		return out
	}
	var results []Result
	results = append(results, res(MariaDB, SerialMode, 0, 10, 12, 11)...)
	results = append(results, res(MariaDB, "conservative", 4, 5, 5, 5)...)
	results = append(results, res(MariaDB, "optimistic", 4, 4)...)
	results = append(results, res(PreplReplicate, SerialMode, 0, 3)...)
	results = append(results, Result{Cell: Cell{"oltp", "A", PreplReplicate, "writeset", 4}, Repeat: 1, Txns: 10, Err: "boom"})
	var b strings.Builder
	r.writeTable(&b, summarize(results), "oltp", "A")
	want := `| threads | MariaDB conservative | MariaDB optimistic | prepl writeset |
|---:|---:|---:|---:|
| 0 | 11.00 (10.00–12.00) | 11.00 (10.00–12.00) | 3.00 |
| 4 | 5.00 (5.00–5.00) | 4.00 | **FAIL** (1 of 1) |
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestTableWithOnlySerial(t *testing.T) {
	r := &Report{Threads: []int{0}, Systems: []System{MariaDB},
		Modes: map[System][]string{MariaDB: {"conservative"}}}
	var b strings.Builder
	r.writeTable(&b, summarize([]Result{{Cell: Cell{"oltp", "C", MariaDB, SerialMode, 0}, Seconds: 1, Txns: 1, Verified: true}}), "oltp", "C")
	if !strings.HasPrefix(b.String(), "| threads | MariaDB serial |\n") || !strings.Contains(b.String(), "| 0 | 1.00 |") {
		t.Errorf("serial-only table:\n%s", b.String())
	}
}

func TestMarkdownNamesFailures(t *testing.T) {
	r := &Report{Command: "prepl bench", Threads: []int{0}, Systems: []System{MariaDB, PreplReplicate},
		Workloads: []Workload{{Name: "oltp", Script: "oltp_read_write"}}, Configs: Configs[:1],
		Results: []Result{{Cell: Cell{"oltp", "A", PreplReplicate, SerialMode, 0}, Repeat: 2, Seconds: 0.1, Txns: 5}}}
	var b strings.Builder
	r.Markdown(&b)
	for _, want := range []string{"### Targets", "#### oltp, config A", "**FAIL** (1 of 1)", "### Failed runs (1)",
		"oltp/A prepl serial threads=0, repeat 2: target differs from source"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("results.md lacks %q:\n%s", want, b.String())
		}
	}
}

// A run of prepl alone has no MariaDB targets to report, only whether
// workers hurt.
func TestMarkdownPreplOnly(t *testing.T) {
	r := &Report{Command: "prepl bench", Threads: []int{0, 4}, Systems: []System{PreplReplay},
		Modes:     map[System][]string{PreplReplay: {"writeset"}},
		Workloads: []Workload{{Name: "oltp", Script: "oltp_read_write"}}, Configs: Configs[:1],
	}
	for rep := 1; rep <= WorkersJudgedRepeats; rep++ {
		r.Results = append(r.Results,
			Result{Cell: Cell{"oltp", "A", PreplReplay, SerialMode, 0}, Repeat: rep, Seconds: 2, Txns: 5, Verified: true},
			Result{Cell: Cell{"oltp", "A", PreplReplay, "writeset", 4}, Repeat: rep, Seconds: 2.2, Txns: 5, Verified: true})
	}
	if got := r.Targets(); got != nil {
		t.Errorf("targets without a MariaDB run: %+v", got)
	}
	var b strings.Builder
	r.Markdown(&b)
	if strings.Contains(b.String(), "### Targets") {
		t.Errorf("results.md has a targets table without a MariaDB run:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "**0 of 1 met, 1 a loss in every repeat**") ||
		!strings.Contains(b.String(), "| 1.10 | 1.10 (1.10–1.10) | NOT met: slower in every repeat |") {
		t.Errorf("results.md lacks the workers check:\n%s", b.String())
	}
}

func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 31250, "0 5k 10k 15k 20k 25k 30k"},
		{0, 100, "0 20 40 60 80 100"},
		{0, 7, "0 1 2 3 4 5 6 7"},
		{0, 0.5, "0 0.1 0.2 0.3 0.4 0.5"},
		{0, 12500, "0 2k 4k 6k 8k 10k 12k"},
	} {
		var got []string
		for _, tk := range niceTicks(c.lo, c.hi) {
			got = append(got, tk.Label)
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("niceTicks(%v, %v) = %q, want %q", c.lo, c.hi, g, c.want)
		}
	}
	if niceTicks(1, 1) != nil {
		t.Error("ticks on an empty range")
	}
}

func TestCPUText(t *testing.T) {
	for _, c := range []struct {
		s    Summary
		want string
	}{
		{Summary{Txns: 1000, ServerCPU: 0.5}, "500 µs in the server"},
		{Summary{Txns: 1000, PreplCPU: 0.02, ServerCPU: 0.1}, "20 µs in prepl + 100 µs in the target server"},
		{Summary{}, "–"},
	} {
		if got := cpuText(c.s); got != c.want {
			t.Errorf("cpuText(%+v) = %q, want %q", c.s, got, c.want)
		}
	}
}
