package bench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// The scale benchmark's targets (issue 17).
const (
	ScaleVolumeRSS = 200 << 20 // most RSS while replaying the big binlog
	ScaleBigTxnRSS = 300 << 20 // most RSS while applying the big transaction
	ScaleDrift     = 0.10      // last tenth's throughput at most this much below the first's
)

// Chart files of the scale benchmark.
const (
	ScaleRSSChart        = "scale-rss.png"
	ScaleThroughputChart = "scale-throughput.png"
)

// write renders results.md and the charts into dir.
func (r *ScaleReport) write(dir string) error {
	f, err := os.Create(filepath.Join(dir, ResultsMD))
	if err != nil {
		return err
	}
	r.Markdown(f)
	if err := f.Close(); err != nil {
		return err
	}
	return r.Charts(dir)
}

// scaleTarget is one row of the targets table.
type scaleTarget struct{ target, measured, verdict string }

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// targets evaluates the scale targets on what was run.
func (r *ScaleReport) targets() []scaleTarget {
	var out []scaleTarget
	if v := r.Volume; v != nil {
		size := fmt.Sprintf("%.1f GiB binlog", float64(v.BinlogBytes)/(1<<30))
		if v.Err != "" {
			out = append(out, scaleTarget{size + " applied", "failed: " + Tail(v.Err, 1), "NOT met"})
		} else {
			out = append(out, scaleTarget{size + ": RSS under 200 MB the whole time", fmt.Sprintf("at most %.0f MiB", mib(v.MaxRSS())),
				verdict(v.MaxRSS() < ScaleVolumeRSS)})
			t := v.Tenths()
			if len(t) == 10 {
				ratio := t[9] / t[0]
				out = append(out, scaleTarget{size + ": throughput within 10% from the first tenth to the last",
					fmt.Sprintf("first tenth %.1f MB/s, last %.1f MB/s (%.2f×)", t[0]/1e6, t[9]/1e6, ratio), verdict(ratio >= 1-ScaleDrift)})
			} else {
				out = append(out, scaleTarget{size + ": throughput within 10%", fmt.Sprintf("only %d tenths sampled", len(t)), "n/a"})
			}
		}
	}
	if b := r.BigTxn; b != nil {
		size := fmt.Sprintf("one transaction of %.2f GiB (UPDATE of %d rows)", float64(b.BinlogBytes)/(1<<30), b.Rows)
		switch {
		case b.Err != "":
			out = append(out, scaleTarget{size, "failed: " + Tail(b.Err, 1), "NOT met"})
		case b.ExitCode == 0:
			out = append(out, scaleTarget{size + ": applied with RSS under 300 MB", fmt.Sprintf("applied, RSS at most %.0f MiB", mib(b.MaxRSS())),
				verdict(b.MaxRSS() < ScaleBigTxnRSS)})
		default:
			out = append(out, scaleTarget{size + ": or refused before anything of it is applied, with a clear error and a way on",
				fmt.Sprintf("refused (nothing of it applied), RSS at most %.0f MiB; the way on followed to target = source", mib(b.MaxRSS())), "met"})
		}
	}
	if w := r.Workers; w != nil {
		out = append(out, r.workersTarget())
	}
	return out
}

// workersTarget: the most workers measured is correct and no slower than
// the best count (within the runs' spread: its median at most the best
// count's slowest run).
func (r *ScaleReport) workersTarget() scaleTarget {
	w := r.Workers
	most := w.Threads[len(w.Threads)-1]
	sum := w.Summaries()
	t := scaleTarget{target: fmt.Sprintf("%d workers: correct, no slower than the best count", most)}
	var bestCell Cell
	var best Summary
	var top Summary
	topFound := false
	for c, s := range sum {
		if !s.OK() {
			continue
		}
		if best.Runs == 0 || s.Median < best.Median {
			best, bestCell = s, c
		}
		if c.Threads == most {
			top, topFound = s, true
		}
	}
	if !topFound {
		t.measured, t.verdict = fmt.Sprintf("no verified run with %d workers", most), "NOT met"
		return t
	}
	t.measured = fmt.Sprintf("%d workers %.2f s (%.2f–%.2f), target = source; best %d workers %.2f s (%.2f–%.2f)",
		most, top.Median, top.Min, top.Max, bestCell.Threads, best.Median, best.Min, best.Max)
	t.verdict = verdict(top.Median <= best.Max)
	return t
}

// Markdown writes results.md; headings start at level 3.
func (r *ScaleReport) Markdown(w io.Writer) {
	fmt.Fprintf(w, "Command: `%s`\n\nMachine: %s\n\n", r.Command, r.Machine)
	fmt.Fprintln(w, "### Targets")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| target | measured | verdict |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, t := range r.targets() {
		fmt.Fprintf(w, "| %s | %s | %s |\n", t.target, t.measured, t.verdict)
	}
	fmt.Fprintln(w)
	if v := r.Volume; v != nil {
		fmt.Fprintln(w, "### A big binlog")
		fmt.Fprintln(w)
		fmt.Fprintf(w, "Source: a table of 100,000 rows of about 1 KiB; %d transactions, each an UPDATE of 50 rows (pad and k), "+
			"two source sessions, generated in %.0f s: %.2f GiB of binlog. Target: config C. `prepl %s`.\n\n",
			v.Txns, v.Generate.Seconds(), float64(v.BinlogBytes)/(1<<30), argsText(v.Args))
		writeRun(w, v)
		if t := v.Tenths(); len(t) > 0 {
			fmt.Fprint(w, "Throughput of each tenth of the binlog (MB/s of binlog, from the target's stored position):")
			for i, x := range t {
				fmt.Fprintf(w, " %d: %.1f", i+1, x/1e6)
				if i < len(t)-1 {
					fmt.Fprint(w, ",")
				}
			}
			fmt.Fprint(w, ".\n\n")
		}
	}
	if b := r.BigTxn; b != nil {
		fmt.Fprintln(w, "### One big transaction")
		fmt.Fprintln(w)
		fmt.Fprintf(w, "Source: `"+bigUpdate+"` of all %d rows in one transaction, between two "+
			"one-row INSERTs: %.2f GiB of binlog in all. Target: config C. `prepl %s`.\n\n", b.Rows, float64(b.BinlogBytes)/(1<<30), argsText(b.Args))
		writeRun(w, b)
		for _, n := range b.Notes {
			fmt.Fprintf(w, "- %s\n", n)
		}
		if len(b.Notes) > 0 {
			fmt.Fprintln(w)
		}
		if b.ExitCode != 0 {
			fmt.Fprintf(w, "prepl's error:\n\n```\n%s\n```\n\n", strings.TrimSpace(b.Output))
		}
	}
	if r.Volume != nil || r.BigTxn != nil {
		fmt.Fprintf(w, "![RSS over time](img/%s)\n\n", ScaleRSSChart)
	}
	if r.Volume != nil {
		fmt.Fprintf(w, "![throughput over time](img/%s)\n\n", ScaleThroughputChart)
	}
	if wr := r.Workers; wr != nil {
		fmt.Fprintln(w, "### Many workers")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "The update-index binlog of the catch-up benchmark (48 source threads, 20,000 transactions), config B, "+
			"`prepl replay` with up to 256 workers (the sandbox's max_connections is 1000):")
		fmt.Fprintln(w)
		sum := wr.Summaries()
		for _, wl := range wr.Workloads {
			for _, c := range wr.Configs {
				wr.writeTable(w, sum, wl.Name, c.Name)
				fmt.Fprintln(w)
				wr.writeCounters(w, sum, wl.Name, c.Name)
			}
		}
		wr.writeFailures(w)
	}
}

func writeRun(w io.Writer, r *ScaleRun) {
	status := "target = source"
	switch {
	case r.Err != "":
		status = "**FAILED**: " + r.Err
	case !r.Verified:
		status = "not verified"
	}
	fmt.Fprintf(w, "prepl ran %.1f s (exit %d), RSS at most **%.0f MiB**; %s.\n\n", r.Seconds, r.ExitCode, mib(r.MaxRSS()), status)
}

// argsText is a prepl command line for the report: the target URL and the
// binlog files shortened.
func argsText(args []string) string {
	var out []string
	files := 0
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "/"):
			files++
		case i > 0 && args[i-1] == "--target":
			out = append(out, "mysql://root@TARGET")
		default:
			out = append(out, a)
		}
	}
	if files > 0 {
		out = append(out, fmt.Sprintf("FILES (%d)", files))
	}
	return strings.Join(out, " ")
}

// Charts draws RSS over time (each sampled run) and the big binlog's
// throughput over time.
func (r *ScaleReport) Charts(dir string) error {
	var runs []*ScaleRun
	for _, x := range []*ScaleRun{r.Volume, r.BigTxn} {
		if x != nil && len(x.Samples) > 0 {
			runs = append(runs, x)
		}
	}
	if len(runs) == 0 {
		return nil
	}
	p := plot.New()
	p.Title.Text = "prepl's resident memory (VmRSS) while it applies"
	p.X.Label.Text = "seconds since prepl started"
	p.Y.Label.Text = "RSS (MiB)"
	p.Y.Min = 0
	var lines []any
	for _, x := range runs {
		var xys plotter.XYs
		for _, s := range x.Samples {
			if s.RSS > 0 {
				xys = append(xys, plotter.XY{X: s.At.Seconds(), Y: mib(s.RSS)})
			}
		}
		lines = append(lines, fmt.Sprintf("%s (%.2f GiB)", x.Name, float64(x.BinlogBytes)/(1<<30)), xys)
	}
	if err := plotutil.AddLines(p, lines...); err != nil {
		return err
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	if err := p.Save(7*vg.Inch, 4*vg.Inch, filepath.Join(dir, ScaleRSSChart)); err != nil {
		return err
	}
	v := r.Volume
	if v == nil || len(v.Samples) < 2 {
		return nil
	}
	p = plot.New()
	p.Title.Text = fmt.Sprintf("applying a %.1f GiB binlog: throughput over time", float64(v.BinlogBytes)/(1<<30))
	p.X.Label.Text = "seconds since prepl started"
	p.Y.Label.Text = "MB of binlog applied per second (5 s windows)"
	p.Y.Min = 0
	var xys plotter.XYs
	const window = 5.0
	last := v.Samples[0]
	for _, s := range v.Samples[1:] {
		if d := (s.At - last.At).Seconds(); d >= window {
			xys = append(xys, plotter.XY{X: s.At.Seconds(), Y: float64(s.Position-last.Position) / d / 1e6})
			last = s
		}
	}
	if len(xys) == 0 {
		return nil
	}
	if err := plotutil.AddLinePoints(p, "throughput", xys); err != nil {
		return err
	}
	p.Add(plotter.NewGrid())
	return p.Save(7*vg.Inch, 4*vg.Inch, filepath.Join(dir, ScaleThroughputChart))
}
