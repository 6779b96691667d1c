package mycopy

import (
	"fmt"
	"io"
	"slices"

	"github.com/prepl/prepl/bench"
)

// Report is what the benchmark measured.
type Report struct {
	Command string
	Machine bench.Machine
	Tools   string // mydumper --version
	Data    string
	Threads int
	Results []Result
}

// Summary is the median and spread of one figure of a system's runs.
type Summary struct {
	Median, Min, Max float64
	Runs, Of         int // runs that count, of runs made
}

func (r *Report) summarize(system string, figure func(Result) float64) Summary {
	var xs []float64
	var s Summary
	for _, res := range r.Results {
		if res.System != system {
			continue
		}
		s.Of++
		if res.Err == "" {
			xs = append(xs, figure(res))
		}
	}
	s.Runs = len(xs)
	if len(xs) > 0 {
		s.Median, s.Min, s.Max = bench.Median(xs), slices.Min(xs), slices.Max(xs)
	}
	return s
}

func (s Summary) String() string {
	if s.Runs == 0 {
		return "failed"
	}
	t := fmt.Sprintf("%.2f (%.2f–%.2f)", s.Median, s.Min, s.Max)
	if s.Runs < s.Of {
		t += fmt.Sprintf(", %d of %d failed", s.Of-s.Runs, s.Of)
	}
	return t
}

var figures = []struct {
	name string
	of   func(Result) float64
}{
	{"seconds", func(r Result) float64 { return r.Seconds }},
	{"own CPU s", func(r Result) float64 { return r.CPU }},
	{"target server CPU s", func(r Result) float64 { return r.TargetCPU }},
	{"source server CPU s", func(r Result) float64 { return r.SourceCPU }},
	{"all CPU s", func(r Result) float64 { return r.CPU + r.TargetCPU + r.SourceCPU }},
}

// Ratio is prepl's median of figure f over mydumper + myloader's; 0
// when either has no run.
func (r *Report) Ratio(f int) float64 {
	p, m := r.summarize(Prepl, figures[f].of), r.summarize(MyDumper, figures[f].of)
	if p.Runs == 0 || m.Runs == 0 || m.Median == 0 {
		return 0
	}
	return p.Median / m.Median
}

// Markdown writes the report: the figures' medians (min–max) and
// prepl's ratio to mydumper + myloader, then every run.
func (r *Report) Markdown(w io.Writer) {
	fmt.Fprintf(w, "Data: %s. Threads: %d (prepl copy --workers; mydumper and myloader --threads). Targets: fresh MariaDB sandboxes, innodb_flush_log_at_trx_commit=1, no binlog.\n\n", r.Data, r.Threads)
	fmt.Fprintf(w, "Machine: %s. %s.\n\n", r.Machine, r.Tools)
	fmt.Fprintf(w, "Command: `%s`\n\n", r.Command)
	fmt.Fprintf(w, "| median (min–max) | %s | %s | prepl / mydumper + myloader |\n|---|---|---|---|\n", Prepl, MyDumper)
	for i, f := range figures {
		ratio := "–"
		if v := r.Ratio(i); v > 0 {
			ratio = fmt.Sprintf("%.2f", v)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", f.name, r.summarize(Prepl, f.of), r.summarize(MyDumper, f.of), ratio)
	}
	fmt.Fprintf(w, "\nTarget %.1f: ", TargetRatio)
	if v := r.Ratio(0); v > 0 && v <= TargetRatio {
		fmt.Fprintf(w, "met on the median seconds (%.2f).\n\n", v)
	} else {
		fmt.Fprintf(w, "not met on the median seconds (%.2f).\n\n", v)
	}
	fmt.Fprintf(w, "| repeat | system | first | seconds | own CPU s | target CPU s | source CPU s | target = source |\n|---|---|---|---|---|---|---|---|\n")
	for _, res := range r.Results {
		ok := "yes"
		if res.Err != "" {
			ok = "FAILED: " + res.Err
		}
		fmt.Fprintf(w, "| %d | %s | %v | %.2f | %.2f | %.2f | %.2f | %s |\n", res.Repeat, res.System, res.First, res.Seconds, res.CPU, res.TargetCPU, res.SourceCPU, ok)
	}
}
