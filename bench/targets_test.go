package bench

import (
	"math"
	"strings"
	"testing"
)

func TestCheckTargets(t *testing.T) {
	mk := func(w, c string, s System, mode string, threads int, median float64, failed int) (Cell, Summary) {
		return Cell{w, c, s, mode, threads}, Summary{Median: median, Min: median, Max: median, Runs: 1, Failed: failed, Txns: 1000}
	}
	sum := map[Cell]Summary{}
	add := func(c Cell, s Summary) { sum[c] = s }
	// oltp A: MariaDB best 10 (optimistic 16); prepl best 4 → 0.40 ≤ 0.5, met.
	add(mk("oltp", "A", MariaDB, SerialMode, 0, 40, 0))
	add(mk("oltp", "A", MariaDB, "optimistic", 16, 10, 0))
	add(mk("oltp", "A", PreplReplicate, "writeset", 4, 4, 0))
	// A faster prepl cell that failed verification never counts.
	add(mk("oltp", "A", PreplReplicate, "aggressive", 16, 1, 1))
	// oltp C: prepl 11 against MariaDB 10: not met (limit 1×).
	add(mk("oltp", "C", MariaDB, "conservative", 4, 10, 0))
	add(mk("oltp", "C", PreplReplay, "writeset", 4, 11, 0))
	// update-index-serial B: MariaDB best 6 (parallel), single-threaded 10;
	// prepl 4: 0.67 of the best (not met), 0.4 of single-threaded (met).
	add(mk("update-index-serial", "B", MariaDB, SerialMode, 0, 10, 0))
	add(mk("update-index-serial", "B", MariaDB, "optimistic", 4, 6, 0))
	add(mk("update-index-serial", "B", PreplReplicate, SerialMode, 0, 4, 0))
	// update-index-serial C: no second target; no prepl run at all.
	add(mk("update-index-serial", "C", MariaDB, SerialMode, 0, 2, 0))

	wl := []Workload{{Name: "oltp"}, {Name: "update-index-serial"}}
	cfgA, _ := ParseConfig("A")
	cfgB, _ := ParseConfig("B")
	cfgC, _ := ParseConfig("C")
	got := checkTargets(sum, wl, []ReplicaConfig{cfgA, cfgB, cfgC})
	want := []struct {
		workload, config, against string
		ratio                     float64
		verdict                   string
	}{
		{"oltp", "A", "MariaDB best", 0.4, "met"},
		{"oltp", "B", "MariaDB best", 0, "n/a: no verified prepl run"},
		{"oltp", "C", "MariaDB best", 1.1, "NOT met"},
		{"update-index-serial", "A", "MariaDB best", 0, "n/a: no verified prepl run"},
		{"update-index-serial", "A", "MariaDB single-threaded", 0, "n/a: no verified prepl run"},
		{"update-index-serial", "B", "MariaDB best", 4.0 / 6, "NOT met"},
		{"update-index-serial", "B", "MariaDB single-threaded", 0.4, "met"},
		{"update-index-serial", "C", "MariaDB best", 0, "n/a: no verified prepl run"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d checks, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Workload != w.workload || g.Config != w.config || g.Against != w.against || g.Verdict() != w.verdict ||
			(g.Ratio()-w.ratio) > 1e-9 || (w.ratio-g.Ratio()) > 1e-9 {
			t.Errorf("check %d: got %s %s %s ratio %.3f %q; want %+v", i, g.Workload, g.Config, g.Against, g.Ratio(), g.Verdict(), w)
		}
	}
	if b := got[0].Prepl; b.Cell.Mode != "writeset" || b.Seconds != 4 {
		t.Errorf("oltp A prepl best = %+v, want writeset at 4 s (the failed aggressive cell must not count)", b)
	}
	if b := got[6].MariaDB; b.Cell.Threads != 0 || b.Seconds != 10 {
		t.Errorf("single-threaded reference = %+v, want threads 0 at 10 s", b)
	}
}

// TestCheckTargetsKeepGTID: a run of MariaDB and prepl --keep-gtid only
// has one target, --keep-gtid at most 2× MariaDB's best in C, and no
// line for the commit-unit systems it did not run.
func TestCheckTargetsKeepGTID(t *testing.T) {
	sum := map[Cell]Summary{}
	add := func(c string, s System, mode string, threads int, median float64) {
		sum[Cell{"update-index", c, s, mode, threads}] = Summary{Median: median, Min: median, Max: median, Runs: 1, Txns: 1000}
	}
	for _, c := range []string{"A", "C"} {
		add(c, MariaDB, SerialMode, 0, 2)
		add(c, MariaDB, "conservative", 16, 1)
		add(c, PreplKeepGTID, SerialMode, 0, 5)
		add(c, PreplKeepGTID, "writeset", 16, 1.5)
	}
	cfgA, _ := ParseConfig("A")
	cfgC, _ := ParseConfig("C")
	got := checkTargets(sum, []Workload{{Name: "update-index"}}, []ReplicaConfig{cfgA, cfgC})
	if len(got) != 1 {
		t.Fatalf("got %d checks, want the keep-gtid one in C: %+v", len(got), got)
	}
	g := got[0]
	if g.Config != "C" || g.Limit != KeepGTIDRatio || g.Prepl.Cell.System != PreplKeepGTID || g.Prepl.Seconds != 1.5 ||
		g.Ratio() != 1.5 || g.Verdict() != "met" {
		t.Errorf("keep-gtid check = %+v ratio %.2f %q; want C, keep-gtid writeset 16 at 1.5 s against 1 s, met", g, g.Ratio(), g.Verdict())
	}
}

// TestCheckWorkers: each prepl cell with workers is judged against the
// best of the same system with fewer workers (its own mode, or serial);
// MariaDB, failed cells and cells with nothing fewer are left out. A miss
// is a loss when every run with the workers is over the limit of every
// run with fewer, and inside the spreads when not.
func TestCheckWorkers(t *testing.T) {
	sum := map[Cell]Summary{}
	add := func(w, c string, s System, mode string, threads int, median float64, failed int) {
		sum[Cell{w, c, s, mode, threads}] = Summary{Median: median, Min: median, Max: median, Runs: 1, Failed: failed}
	}
	spread := func(w, c string, s System, mode string, threads int, lo, hi float64) {
		cell := Cell{w, c, s, mode, threads}
		x := sum[cell]
		x.Min, x.Max = lo, hi
		sum[cell] = x
	}
	add("oltp", "A", PreplReplay, SerialMode, 0, 1.00, 0)
	add("oltp", "A", PreplReplay, "writeset", 4, 1.04, 0)  // 1.04 of serial: met
	add("oltp", "A", PreplReplay, "writeset", 16, 1.20, 0) // 1.20 of serial (the best fewer): not met
	add("oltp", "A", PreplReplay, "optimistic", 4, 0.90, 0)
	add("oltp", "A", PreplReplay, "optimistic", 16, 0.93, 0) // against optimistic 4 (0.90), not writeset: 1.033
	add("oltp", "A", PreplReplicate, "writeset", 4, 0.50, 0) // no replicate run with fewer: left out
	add("oltp", "A", MariaDB, "optimistic", 16, 0.10, 0)     // not prepl: left out
	add("oltp", "C", PreplReplay, SerialMode, 0, 2.00, 0)
	add("oltp", "C", PreplReplay, "writeset", 4, 0.50, 1)  // failed: left out
	add("oltp", "C", PreplReplay, "writeset", 16, 2.20, 0) // the failed 4 never counts as fewer: 1.10 of serial
	spread("oltp", "C", PreplReplay, SerialMode, 0, 1.90, 2.20)
	spread("oltp", "C", PreplReplay, "writeset", 16, 2.00, 2.40) // 2.00 ≤ 1.05 × 2.20: inside the spreads
	cfgA, _ := ParseConfig("A")
	cfgC, _ := ParseConfig("C")
	got := checkWorkers(sum, []Workload{{Name: "oltp"}}, []ReplicaConfig{cfgA, cfgC})
	want := []struct {
		config, mode string
		threads      int
		fewer        int
		ratio        float64
		met, loss    bool
	}{
		{"A", "optimistic", 4, 0, 0.90, true, false},
		{"A", "optimistic", 16, 4, 0.93 / 0.90, true, false},
		{"A", "writeset", 4, 0, 1.04, true, false},
		{"A", "writeset", 16, 0, 1.20, false, true}, // single runs: 1.20 > 1.05 × 1.00
		{"C", "writeset", 16, 0, 1.10, false, false},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d checks, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Cell.Config != w.config || g.Cell.Mode != w.mode || g.Cell.Threads != w.threads || g.Fewer.Cell.Threads != w.fewer ||
			g.Ratio()-w.ratio > 1e-9 || w.ratio-g.Ratio() > 1e-9 || g.Met() != w.met || g.Loss() != w.loss {
			t.Errorf("check %d: got %s %s %d against %d threads, ratio %.3f met %v loss %v; want %+v",
				i, g.Cell.Config, g.Cell.Mode, g.Cell.Threads, g.Fewer.Cell.Threads, g.Ratio(), g.Met(), g.Loss(), w)
		}
	}
}

// TestCheckWorkersPaired: with runs known by repeat, a cell is judged by
// the median of its runs over the same repeat's run with fewer workers,
// so a machine that slows down between repeats moves both sides of a pair.
func TestCheckWorkersPaired(t *testing.T) {
	runs := func(w string, mode string, threads int, secs ...float64) []Result {
		var out []Result
		for i, s := range secs {
			out = append(out, Result{Cell: Cell{w, "C", PreplReplay, mode, threads}, Repeat: i + 1, Seconds: s, Txns: 1, Verified: true})
		}
		return out
	}
	var results []Result
	// drift: the repeats ran at three speeds; 4 workers is 2% over serial
	// in each, though its median is 1.25 of serial's.
	results = append(results, runs("drift", SerialMode, 0, 1.0, 1.6, 2.0)...)
	results = append(results, runs("drift", "writeset", 4, 1.02, 2.0, 2.04)...)
	// slower: 16 workers 8-10% over serial in every repeat, inside the
	// spreads of the two cells.
	results = append(results, runs("slower", SerialMode, 0, 1.0, 1.2, 1.4)...)
	results = append(results, runs("slower", "writeset", 16, 1.08, 1.32, 1.53)...)
	// mixed: 6% over in one repeat, under in the other two.
	results = append(results, runs("mixed", SerialMode, 0, 1.0, 1.0, 1.0)...)
	results = append(results, runs("mixed", "writeset", 4, 1.06, 0.97, 0.99)...)
	// missing: serial has no run of repeat 2 (an interrupted benchmark);
	// only repeats 1 and 3 pair.
	serial := runs("missing", SerialMode, 0, 1.0, 0.5, 1.0)
	results = append(results, serial[0], serial[2])
	results = append(results, runs("missing", "writeset", 4, 1.2, 1.0, 1.1)...)
	cfgC, _ := ParseConfig("C")
	got := checkWorkers(summarize(results), []Workload{{Name: "drift"}, {Name: "slower"}, {Name: "mixed"}, {Name: "missing"}},
		[]ReplicaConfig{cfgC})
	want := []struct {
		workload  string
		paired    []float64
		ratio     float64 // of the medians
		met, loss bool
	}{
		{"drift", []float64{1.02, 1.25, 1.02}, 2.0 / 1.6, true, false},
		{"slower", []float64{1.08, 1.10, 1.093}, 1.32 / 1.2, false, true},
		{"mixed", []float64{1.06, 0.97, 0.99}, 0.99, true, false},
		{"missing", []float64{1.2, 1.1}, 1.1, false, true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d checks, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		same := len(g.Paired) == len(w.paired)
		for j := 0; same && j < len(w.paired); j++ {
			same = math.Abs(g.Paired[j]-w.paired[j]) < 0.001
		}
		if g.Cell.Workload != w.workload || !same || math.Abs(g.Ratio()-w.ratio) > 1e-9 || g.Met() != w.met || g.Loss() != w.loss {
			t.Errorf("check %d: got %s paired %.3f (median %.3f) ratio %.3f met %v loss %v; want %+v",
				i, g.Cell.Workload, g.Paired, g.PairedRatio(), g.Ratio(), g.Met(), g.Loss(), w)
		}
	}
}

// TestWorkersTally: a check is judged only on WorkersJudgedRepeats paired
// repeats; the demo's single short run is "not judged", not "0 of 2 met".
func TestWorkersTally(t *testing.T) {
	check := func(paired ...float64) WorkersCheck {
		return WorkersCheck{Paired: paired, Runs: Summary{Median: 1}, Fewer: Best{Seconds: 1, Found: true}}
	}
	cases := []struct {
		name   string
		checks []WorkersCheck
		want   string
	}{
		{"one repeat each, as make demo runs", []WorkersCheck{check(1.16), check(1.34)}, "not judged: fewer than 3 repeats"},
		{"three repeats, one met, one lost", []WorkersCheck{check(1.0, 1.02, 0.98), check(1.2, 1.1, 1.3)}, "1 of 2 met, 1 a loss in every repeat"},
		{"a miss inside the scatter is no loss", []WorkersCheck{check(1.0, 1.2, 1.1)}, "0 of 1 met, 0 a loss in every repeat"},
		{"some judged, some not", []WorkersCheck{check(1.0, 1.0, 1.0), check(1.5)}, "1 of 1 met, 0 a loss in every repeat (1 more not judged: fewer than 3 repeats)"},
	}
	for _, c := range cases {
		if got := WorkersTally(c.checks); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: WorkersTally = %q, want it to start with %q", c.name, got, c.want)
		}
	}
}
