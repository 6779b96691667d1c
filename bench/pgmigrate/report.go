package pgmigrate

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/prepl/prepl/bench"
)

// The systems measured: prepl, and the peers that install on the
// machine (pg_chameleon from git mirrors, pgloader from Debian).
const (
	Prepl     = "prepl"
	Chameleon = "pg_chameleon"
	Pgloader  = "pgloader"
)

// copyOnly are the peers that only copy: pgloader has no change capture.
var copyOnly = map[string]bool{Pgloader: true}

// TargetRatio is the issues' target: prepl's time at most half of a
// peer's, for the copy and for the catch-up.
const TargetRatio = 0.5

// Result is one system's run of one repeat. A phase's time counts only
// when the phase ran and the target was then equal to the source.
type Result struct {
	Repeat  int
	System  string
	First   bool    // ran before the other system in this repeat
	Copy    float64 // seconds; 0 when it failed
	CatchUp float64 // seconds; 0 when it failed or did not run
	Err     string  // the first failure: of a step or of target = source
}

// Summary is the median and spread of a system's times of one phase.
type Summary struct {
	Median, Min, Max float64
	Runs, Of         int // runs that count, of runs made
}

func summarize(results []Result, system string, phase func(Result) float64) Summary {
	var xs []float64
	s := Summary{}
	for _, r := range results {
		if r.System != system {
			continue
		}
		s.Of++
		if v := phase(r); v > 0 {
			xs = append(xs, v)
		}
	}
	s.Runs = len(xs)
	s.Median = bench.Median(xs)
	if len(xs) > 0 {
		s.Min, s.Max = slices.Min(xs), slices.Max(xs)
	}
	return s
}

func copyTime(r Result) float64    { return r.Copy }
func catchUpTime(r Result) float64 { return r.CatchUp }

func (s Summary) String() string {
	if s.Runs == 0 {
		return fmt.Sprintf("failed (0 of %d runs)", s.Of)
	}
	out := fmt.Sprintf("%.1f s (%.1f–%.1f)", s.Median, s.Min, s.Max)
	if s.Runs < s.Of {
		out += fmt.Sprintf(", %d of %d runs", s.Runs, s.Of)
	}
	return out
}

// ratio is prepl's median over a peer's, NaN when either has none.
func ratio(p, c Summary) float64 {
	if p.Runs == 0 || c.Runs == 0 {
		return math.NaN()
	}
	return p.Median / c.Median
}

// Report is what a run measured and where.
type Report struct {
	Command  string
	Machine  bench.Machine
	Versions []string // PostgreSQL, the peers (pg_chameleon and its libraries, pgloader)
	Notes    []string // what was not measured, and why (a peer that does not install)
	Data     string   // the data set copied
	Binlog   []string // the binlog caught up with, per repeat
	Results  []Result
	CopyOnly bool // no catch-up phase ran
}

// peers are the systems beside prepl in the results, in order.
func (rep *Report) peers() []string {
	var out []string
	for _, r := range rep.Results {
		if r.System != Prepl && !slices.Contains(out, r.System) {
			out = append(out, r.System)
		}
	}
	return out
}

// Met reports whether prepl met the target beside every peer, in both
// phases (the copy alone with CopyOnly, or for a peer that only copies).
func (rep *Report) Met() bool {
	peers := rep.peers()
	for _, peer := range peers {
		if !rep.met(copyTime, peer) || !rep.CopyOnly && !copyOnly[peer] && !rep.met(catchUpTime, peer) {
			return false
		}
	}
	return len(peers) > 0
}

// met reports whether prepl took at most TargetRatio of peer's time in
// every repeat of the phase, every run of both counting: a ratio of
// medians under the target with repeats over it is not met.
func (rep *Report) met(phase func(Result) float64, peer string) bool {
	p, c := summarize(rep.Results, Prepl, phase), summarize(rep.Results, peer, phase)
	ratios := rep.perRepeat(phase, peer)
	if p.Runs < p.Of || c.Runs < c.Of || len(ratios) == 0 {
		return false
	}
	for _, r := range ratios {
		if r > TargetRatio {
			return false
		}
	}
	return true
}

// Markdown writes the report: the summary table with the target, then
// every run.
func (rep *Report) Markdown(w io.Writer) {
	peers := rep.peers()
	fmt.Fprintf(w, "#### prepl beside %s: into PostgreSQL\n\n", strings.Join(peers, " and "))
	fmt.Fprintf(w, "Command: `%s`\n\n", rep.Command)
	fmt.Fprintf(w, "Machine: %s.\n\n", rep.Machine)
	if len(rep.Versions) > 0 {
		fmt.Fprintf(w, "Versions: %s.\n\n", strings.Join(rep.Versions, "; "))
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "%s\n\n", n)
	}
	fmt.Fprintf(w, "Data: %s.\n\n", rep.Data)
	for i, b := range rep.Binlog {
		fmt.Fprintf(w, "Binlog of repeat %d: %s.\n", i+1, b)
	}
	fmt.Fprintf(w, "\n| phase | beside | prepl | the other | prepl / the other | per repeat | target | met |\n|---|---|---|---|---|---|---|---|\n")
	phases := []struct {
		name  string
		phase func(Result) float64
		verbs map[string]string
	}{
		{"copy: `prepl copy`", copyTime, map[string]string{Chameleon: "`init_replica`", Pgloader: "`pgloader` (LOAD DATABASE)"}},
		{"catch-up: `prepl replicate --stop-at-end`", catchUpTime, map[string]string{Chameleon: "`start_replica` until replayed"}},
	}
	checked := "yes (after the copy and after the catch-up)"
	if rep.CopyOnly {
		phases, checked = phases[:1], "yes (after the copy; no catch-up ran)"
	}
	for _, ph := range phases {
		for _, peer := range peers {
			verb, ok := ph.verbs[peer]
			if !ok {
				continue // a peer without the phase
			}
			p, c := summarize(rep.Results, Prepl, ph.phase), summarize(rep.Results, peer, ph.phase)
			met := "no"
			if rep.met(ph.phase, peer) {
				met = "yes"
			}
			rs, per := "–", "–"
			if r := ratio(p, c); !math.IsNaN(r) {
				rs = fmt.Sprintf("%.2f", r)
			}
			if ratios := rep.perRepeat(ph.phase, peer); len(ratios) > 0 {
				per = fmt.Sprintf("%.2f", ratios[0])
				for _, r := range ratios[1:] {
					per += fmt.Sprintf(", %.2f", r)
				}
			}
			fmt.Fprintf(w, "| %s | %s %s | %s | %s | %s | %s | ≤ %.2f | %s |\n", ph.name, peer, verb, p, c, rs, per, TargetRatio, met)
		}
	}
	fmt.Fprintf(w, "\nMedian (min–max) of the runs whose target was then equal to the source; prepl / the other is the ratio of the medians, per repeat the ratio of each repeat's two times; met: per repeat at most the target in every repeat, every run counting.\n\n")
	fmt.Fprintf(w, "| repeat | system | ran | copy s | catch-up s | target = source |\n|---|---|---|---|---|---|\n")
	for _, r := range rep.Results {
		order := "after another"
		if r.First {
			order = "first"
		}
		ok := checked
		if copyOnly[r.System] && !rep.CopyOnly {
			ok = "yes (after the copy; it has no catch-up)"
		}
		if r.Err != "" {
			ok = "no: " + strings.ReplaceAll(strings.SplitN(r.Err, "\n", 2)[0], "|", `\|`)
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s |\n", r.Repeat, r.System, order, secs(r.Copy), secs(r.CatchUp), ok)
	}
}

// perRepeat is prepl's time over peer's in each repeat in which both
// counted.
func (rep *Report) perRepeat(phase func(Result) float64, peer string) []float64 {
	times := map[int][2]float64{}
	var repeats []int
	for _, r := range rep.Results {
		t, seen := times[r.Repeat]
		if !seen {
			repeats = append(repeats, r.Repeat)
		}
		switch r.System {
		case Prepl:
			t[0] = phase(r)
		case peer:
			t[1] = phase(r)
		}
		times[r.Repeat] = t
	}
	var out []float64
	for _, n := range repeats {
		if t := times[n]; t[0] > 0 && t[1] > 0 {
			out = append(out, t[0]/t[1])
		}
	}
	return out
}

func secs(v float64) string {
	if v <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", v)
}
