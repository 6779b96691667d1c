package analyze

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// WriteText writes the report for people.
func (r *Report) WriteText(w io.Writer) error {
	b := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	s := r.Summary

	p("prepl analyze: %s\n", strings.Join(first(r.Input, 5), " "))
	if len(r.Input) > 5 {
		p("  (and %d more)\n", len(r.Input)-5)
	}
	if r.Partial != "" {
		p("PARTIAL: %s\n", r.Partial)
	}
	for _, w := range r.Warnings {
		p("warning: %s\n", w)
	}
	p("\n%s transactions, %s rows, %s in %s", fmtCount(s.Transactions), fmtCount(s.Rows), fmtBytes(float64(s.Bytes)), plural(len(r.Files), "binlog file"))
	if r.Flavor != "" {
		p(", %s", r.Flavor)
	}
	p("\n")
	if !s.First.IsZero() {
		p("source time %s .. %s (%s", s.First.Format("2006-01-02 15:04:05"), s.Last.Format("2006-01-02 15:04:05 MST"),
			(time.Duration(s.Seconds) * time.Second).String())
		if s.SourceRate > 0 {
			p(", %s on the source", fmtRate(s.SourceRate))
		}
		p(")\n")
	}
	p("transaction size  p50 %s  p90 %s  p99 %s  max %s\n", fmtBytes(s.Size.P50), fmtBytes(s.Size.P90), fmtBytes(s.Size.P99), fmtBytes(float64(s.Size.Max)))
	p("rows per txn      p50 %.0f  p90 %.0f  p99 %.0f  max %d\n", s.RowsPerTxn.P50, s.RowsPerTxn.P90, s.RowsPerTxn.P99, s.RowsPerTxn.Max)
	p("DDL %d, statements inside transactions %d, XA %d, non-transactional %d, big (>= %s) %d\n",
		s.DDL, s.Statements, s.XA, s.NonTransactional, fmtBytes(float64(r.Offenders.BigBytes)), s.Big)
	p("table definitions: %s; %s, %d without a key, %d with keys unknown\n",
		r.Catalog.Source, plural(r.Catalog.Tables, "table"), r.Catalog.NoKey, r.Catalog.KeyUnknown)

	if g := r.GroupCommit; g != nil {
		p("\nGroup commit (MariaDB commit_id)\n")
		p("  %s commits in %s group commits: %.2f transactions per group (Binlog_commits / Binlog_group_commits)\n",
			fmtCount(g.Commits), fmtCount(g.GroupCommits), g.AvgSize)
		p("  group size p50 %.0f  p90 %.0f  p99 %.0f  max %d; %s with a commit_id, %s flagged WAITED\n",
			g.Sizes.P50, g.Sizes.P90, g.Sizes.P99, g.Sizes.Max, fmtCount(g.Tagged), fmtCount(g.Waited))
	}
	if iv := r.SourceIntervals; iv != nil {
		p("\nMySQL intervals (last_committed, sequence_number)\n")
		p("  AMIL %.2f (stddev %.2f), pseudo group commit size 2*AMIL-1 = %.2f, over %s transactions\n",
			iv.AMIL, iv.StdDev, iv.PseudoGroup, fmtCount(iv.Transactions))
		if rot := r.Rotations; rot != nil {
			p("  logical clock restarts (binlog rotations): %d, every %.0f transactions\n", rot.ClockRestarts, rot.TxnsPerRestart)
		}
	}

	p("\nParallelism the binlog holds, per mode (its dependencies, whatever applies it; AMIL as the tutorial defines it)\n")
	p("  %-13s %8s %8s %12s %10s\n", "mode", "AMIL", "pseudo", "crit. path", "bound")
	for _, m := range r.Modes {
		bound := fmt.Sprintf("%.1fx", m.ChainBound)
		if m.ChainBound >= float64(r.Model.History) {
			bound = fmt.Sprintf(">=%dx", r.Model.History) // capped by the history
		}
		p("  %-13s %8.2f %8.2f %12s %10s\n", m.Mode, m.Intervals.AMIL, m.Intervals.PseudoGroup, fmtCount(m.Chain), bound)
	}
	p("  (crit. path: longest chain of transactions each waiting for the one before; bound = transactions / crit. path;\n")
	p("   intervals are capped at the %d transactions of history)\n", r.Model.History)

	p("\nSpeedup prepl's engine gets from workers (its sequencer simulated with the cost model), against serial apply\n")
	p("(%s in %s commit units of up to %d, %.0f transactions each;\n",
		fmtSeconds(r.Serial.Seconds), fmtCount(r.Serial.Units), r.Model.UnitTxns, r.Serial.AvgUnit)
	p("committing every transaction: %s)\n", fmtSeconds(r.Serial.PerTxnSeconds))
	p("  %-13s", "workers")
	for _, w := range r.Model.Workers {
		p(" %6d", w)
	}
	p("\n")
	perMode := func(format string, f func(Prediction) float64) {
		for _, m := range r.Modes {
			p("  %-13s", m.Mode)
			for _, pr := range m.Predictions {
				p(format, f(pr))
			}
			p("\n")
		}
	}
	perMode(" %6.2f", func(pr Prediction) float64 { return pr.Speedup })
	p("  transactions per commit unit, as the engine forms them (a unit grows while the workers are busy):\n")
	perMode(" %6.0f", func(pr Prediction) float64 { return pr.AvgUnit })
	if r.Model.FixedWorkers {
		p("  units in flight, on average (--fixed-workers):\n")
	} else {
		p("  units in flight, on average (the engine's controller starts at one and adds more only while they measure faster):\n")
	}
	perMode(" %6.1f", func(pr Prediction) float64 { return pr.InFlight })
	for _, g := range engineGaps(r) {
		writeWrapped(b, "  ", "    ", g, 100)
	}
	p("  cost model: %s\n", r.Model.Costs.String())
	p("  (%s)\n", r.Model.Costs.Source)
	if len(r.UnitSizes) > 0 {
		p("\nCommit unit sizes (best speedup per mode, with its workers; against serial apply with units of %d)\n", r.Model.UnitTxns)
		p("  %6s %10s", "unit", "serial")
		for _, m := range r.UnitSizes[0].Modes {
			p(" %14s", m.Mode)
		}
		p("\n")
		for _, u := range r.UnitSizes {
			p("  %6d %10s", u.UnitTxns, fmtSeconds(u.SerialSeconds))
			for _, m := range u.Modes {
				p(" %14s", fmt.Sprintf("%.2f (%d)", m.Best.Speedup, m.Best.Workers))
			}
			p("\n")
		}
	}

	p("\nWhat serializes it\n")
	for _, m := range r.Modes {
		var parts []string
		for _, reason := range sortedReasons(m.Waits) {
			parts = append(parts, fmt.Sprintf("%s %s", reason, fmtCount(m.Waits[reason])))
		}
		if len(parts) == 0 {
			parts = []string{"nothing"}
		}
		p("  %-13s waits: %s\n", m.Mode, strings.Join(parts, ", "))
	}
	o := r.Offenders
	offenderList(b, "DDL barriers", o.DDL)
	offenderList(b, "statements inside transactions (barriers)", o.Statements)
	offenderList(b, "tables without a primary key (serialized table-wide)", o.NoKeyTables)
	offenderList(b, "tables whose keys the binlog does not give (serialized table-wide)", o.KeyUnknownTables)
	offenderList(b, "foreign key parents (barriers)", o.FKParents)
	offenderList(b, "tables with triggers (barriers)", o.TriggerTables)
	offenderList(b, "non-transactional tables (barriers)", o.NonTransactional)
	offenderList(b, "tables unknown to the catalog (barriers)", o.UnknownTables)
	if o.XA > 0 {
		p("  XA transactions (barriers): %d\n", o.XA)
	}
	if o.MultiSchema > 0 {
		p("  transactions touching several schemas (barriers in schema mode): %s\n", fmtCount(o.MultiSchema))
	}
	if len(o.HotKeys) > 0 {
		p("  hot keys (rows changed again within %d transactions; %s such changes in all):\n", o.HotKeyWindow, fmtCount(o.HotKeyChanges))
		for _, h := range o.HotKeys {
			p("    %8s  %s\n", fmtCount(h.Transactions), h.Name)
		}
	}
	if len(o.EveryUnit) > 0 {
		p("  hot keys in nearly every commit unit (changed at least once per %.0f transactions, the serial run's unit;\n", r.Serial.AvgUnit)
		p("  in writeset mode every unit waits for the one before it on them):\n")
		for _, h := range o.EveryUnit {
			p("    every %6.1f txns  %s\n", float64(s.Transactions)/float64(h.Transactions), h.Name)
		}
	}
	if len(o.ForeignKeys) > 0 {
		p("  foreign keys to rows changed shortly before (a child row's reference holds its parent row, shared:\n")
		p("  it waits for a change to that row in flight, though it does not change it):\n")
		for _, f := range o.ForeignKeys {
			p("    %8s txns %8s to a row changed within %d before  %s\n", fmtCount(f.Transactions), fmtCount(f.Waits), o.HotKeyWindow, f.Name)
		}
	}
	if largest := notable(o.Largest, s.Size.P50); len(largest) > 0 {
		p("  largest transactions:\n")
		for _, t := range largest {
			mark := ""
			if t.Big {
				mark = "  BIG"
			}
			p("    %10s %8s rows  %-28s %s  est. %s  %s%s\n", fmtBytes(float64(t.Bytes)), fmtCount(uint64(t.Rows)),
				orDash(t.GTID), t.Position, fmtSeconds(t.Seconds), strings.Join(t.Tables, ","), mark)
		}
	}

	p("\nRecommendations\n")
	if len(r.Recommendations) == 0 {
		p("  none: nothing in the numbers calls for a change\n")
	}
	for _, rec := range r.Recommendations {
		writeWrapped(b, "  - ", "    ", rec, 100)
	}

	if len(r.Files) > 1 {
		p("\nPer binlog file\n")
		p("  %-24s %10s %10s %10s %8s %8s %8s\n", "file", "txns", "rows", "bytes", "group", "AMIL", "ws AMIL")
		for i, f := range r.Files {
			if i == 50 {
				p("  ... %d more files (see --json)\n", len(r.Files)-50)
				break
			}
			group, amil := "-", "-"
			if f.AvgGroupSize > 0 {
				group = fmt.Sprintf("%.2f", f.AvgGroupSize)
			}
			if f.SourceIntervals != nil {
				amil = fmt.Sprintf("%.2f", f.SourceIntervals.AMIL)
			}
			p("  %-24s %10s %10s %10s %8s %8s %8.2f\n", f.File, fmtCount(f.Transactions), fmtCount(f.Rows),
				fmtBytes(float64(f.Bytes)), group, amil, f.Writeset.AMIL)
		}
	}

	p("\nAssumptions\n")
	for _, a := range r.Assumptions {
		writeWrapped(b, "  - ", "    ", a, 100)
	}
	return b.Flush()
}

// notable keeps the largest transactions worth listing: big ones, and
// those at least 4 times the median size; at least the largest.
func notable(list []BigTxn, median float64) []BigTxn {
	var out []BigTxn
	for _, t := range list {
		if t.Big || float64(t.Bytes) >= 4*median {
			out = append(out, t)
		}
	}
	if len(out) == 0 && len(list) > 0 {
		out = list[:1]
	}
	return out
}

func offenderList(w io.Writer, title string, list []Offender) {
	if len(list) == 0 {
		return
	}
	fmt.Fprintf(w, "  %s:\n", title)
	for _, o := range list {
		fmt.Fprintf(w, "    %8s txns %8s waited  %s\n", fmtCount(o.Transactions), fmtCount(o.Waits), o.Name)
	}
}

// writeWrapped writes text wrapped at width, the first line after first
// and the others after rest.
func writeWrapped(w io.Writer, first, rest, text string, width int) {
	line := first
	n := 0
	for _, word := range strings.Fields(text) {
		if n > 0 && len(line)+1+len(word) > width {
			fmt.Fprintln(w, line)
			line, n = rest, 0
		}
		if n > 0 {
			line += " "
		}
		line += word
		n++
	}
	fmt.Fprintln(w, line)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// fmtCount writes n with thousands separators.
func fmtCount(n uint64) string {
	s := strconv.FormatUint(n, 10)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

func fmtBytes(v float64) string {
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.1f GiB", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
}

func fmtSeconds(s float64) string {
	switch {
	case s >= 3600:
		return fmt.Sprintf("%.1f h", s/3600)
	case s >= 60:
		return fmt.Sprintf("%.1f min", s/60)
	case s >= 1:
		return fmt.Sprintf("%.2f s", s)
	}
	return fmt.Sprintf("%.1f ms", s*1000)
}

func fmtRate(r float64) string {
	return fmt.Sprintf("%s txn/s", fmtCount(uint64(r+0.5)))
}

// engineGaps says, once per reason, which modes' engine speedup is well
// below the parallelism their binlog holds, and why.
func engineGaps(r *Report) []string {
	var reasons []string
	modes := map[string][]string{}
	for _, m := range r.Modes {
		if m.EngineGap == "" {
			continue
		}
		if _, ok := modes[m.EngineGap]; !ok {
			reasons = append(reasons, m.EngineGap)
		}
		modes[m.EngineGap] = append(modes[m.EngineGap], fmt.Sprintf("%s %s, engine %.2fx with %s", m.Mode, boundText(m, r.Model.History), m.Best.Speedup, plural(m.Best.Workers, "worker")))
	}
	var out []string
	for _, why := range reasons {
		out = append(out, fmt.Sprintf("Why the engine gets less than the binlog holds (%s): %s.", strings.Join(modes[why], "; "), why))
	}
	return out
}
