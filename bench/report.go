package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Report is what a benchmark measured, and renders it.
type Report struct {
	Command   string
	Machine   Machine
	Settings  Settings
	Workloads []Workload
	Configs   []ReplicaConfig
	Systems   []System
	Threads   []int
	// Modes per system, in column order.
	Modes   map[System][]string
	Sources []SourceStats
	Results []Result
}

// Settings are the benchmark's parameters printed above the tables.
type Settings struct {
	Rows, Tables, Events, SourceThreads, Repeats int
	RandType                                     string // sysbench --rand-type; "" its default
	PreplArgs, LimitArgs                         []string
}

// Summaries groups the results by cell.
func (r *Report) Summaries() map[Cell]Summary { return summarize(r.Results) }

// Targets evaluates the targets against MariaDB's replica; none
// when the run did not time MariaDB (a run of prepl alone, such as
// make bench's workers part).
func (r *Report) Targets() []TargetCheck {
	if !slices.Contains(r.Systems, MariaDB) {
		return nil
	}
	return checkTargets(r.Summaries(), r.Workloads, r.Configs)
}

// Workers evaluates "workers never hurt" for every prepl cell with workers.
func (r *Report) Workers() []WorkersCheck {
	return checkWorkers(r.Summaries(), r.Workloads, r.Configs)
}

// Failures are the runs that failed or whose target differed from the source.
func (r *Report) Failures() []Result {
	var out []Result
	for _, x := range r.Results {
		if !x.OK() {
			out = append(out, x)
		}
	}
	return out
}

// column is one column of a result table: a system and mode, and the
// cell shown at threads 0 (the system's single-threaded run).
type column struct {
	system System
	mode   string
}

func (r *Report) columns() []column {
	var out []column
	hasParallel := slices.ContainsFunc(r.Threads, func(t int) bool { return t > 0 })
	for _, s := range r.Systems {
		modes := r.Modes[s]
		if !hasParallel || len(modes) == 0 {
			out = append(out, column{s, SerialMode})
			continue
		}
		for _, m := range modes {
			out = append(out, column{s, m})
		}
	}
	return out
}

// cellAt is the cell of column col at a thread count: threads 0 is the
// system's single-threaded cell whatever the mode.
func (col column) cellAt(w, c string, threads int) Cell {
	mode := col.mode
	if threads == 0 {
		mode = SerialMode
	}
	return Cell{Workload: w, Config: c, System: col.system, Mode: mode, Threads: threads}
}

// formatSummary renders a cell: median seconds, and the spread (min–max)
// when there was more than one run; FAIL when any run failed.
func formatSummary(s Summary, ok bool) string {
	switch {
	case !ok:
		return ""
	case s.Failed > 0:
		return fmt.Sprintf("**FAIL** (%d of %d)", s.Failed, s.Failed+s.Runs)
	case s.Runs == 1:
		return fmt.Sprintf("%.2f", s.Median)
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", s.Median, s.Min, s.Max)
}

// writeTable writes the seeds-shaped table of one workload and config:
// rows are thread counts, columns system and mode, cells median seconds.
func (r *Report) writeTable(w io.Writer, sum map[Cell]Summary, wl, cfg string) {
	cols := r.columns()
	fmt.Fprint(w, "| threads |")
	for _, c := range cols {
		fmt.Fprintf(w, " %s |", column{c.system, c.mode}.label())
	}
	fmt.Fprint(w, "\n|---:|")
	for range cols {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, t := range r.Threads {
		fmt.Fprintf(w, "| %d |", t)
		for _, c := range cols {
			s, ok := sum[c.cellAt(wl, cfg, t)]
			fmt.Fprintf(w, " %s |", formatSummary(s, ok))
		}
		fmt.Fprintln(w)
	}
}

func (col column) label() string {
	return Cell{System: col.system, Mode: col.mode}.Label()
}

// Markdown writes results.md. Its headings start at level 3: it is meant
// to be pasted as is under a "Results" heading of docs/benchmarks.md.
func (r *Report) Markdown(w io.Writer) {
	sum := r.Summaries()
	fmt.Fprintf(w, "Command: `%s`\n\n", r.Command)
	fmt.Fprintf(w, "Machine: %s\n\n", r.Machine)
	if m := r.Machine; m.Cores > 0 && m.LoadMax > float64(m.Cores) {
		fmt.Fprintf(w, "**Noise warning**: the load average reached %.1f on %d cores: other work shared the machine "+
			"during the runs, so single runs are noisy; compare medians, and mind the spreads.\n\n", m.LoadMax, m.Cores)
	}
	st := r.Settings
	tables := "one sysbench table"
	if st.Tables > 1 {
		tables = fmt.Sprintf("each of %d sysbench tables", st.Tables)
	}
	data := fmt.Sprintf("%d rows in %s", st.Rows, tables)
	if !slices.ContainsFunc(r.Workloads, func(w Workload) bool { return w.Lua == nil }) {
		data = "data sized by the workload's script (below)"
	}
	fmt.Fprintf(w, "Settings: %s; %d sysbench events per workload (%d source threads for the parallel workloads", data, st.Events, st.SourceThreads)
	if st.RandType != "" {
		fmt.Fprintf(w, ", `--rand-type=%s`", st.RandType)
	}
	fmt.Fprintf(w, "); %d repeat(s) per cell", st.Repeats)
	if len(st.PreplArgs) > 0 {
		fmt.Fprintf(w, "; prepl runs with `%s`", strings.Join(st.PreplArgs, " "))
	}
	fmt.Fprint(w, ".\n\n")
	fmt.Fprintln(w, "Each cell is the median seconds to catch up with the whole workload, with the spread (min–max) "+
		"over the repeats; lower is better. Threads 0 is the single-threaded run "+
		"(MariaDB `slave_parallel_threads=0`, prepl `--workers 0`), the same run in every column of a system. "+
		"MariaDB's time starts at `START SLAVE SQL_THREAD` with the relay log already fetched and stops when `MASTER_GTID_WAIT` returns; "+
		"prepl's is the whole `prepl` process, connecting and reading the binlog included. "+
		"Every run was followed by a checksum of every table on target and source; **FAIL** marks a run that failed or differed.")
	fmt.Fprintln(w)
	r.writeTargets(w)
	r.writeWorkers(w, sum)
	for _, wl := range r.Workloads {
		r.writeWorkload(w, sum, wl)
	}
	r.writeFailures(w)
}

func (r *Report) writeTargets(w io.Writer) {
	checks := r.Targets()
	if len(checks) == 0 {
		return
	}
	fmt.Fprintln(w, "### Targets")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| workload | config | prepl best | MariaDB reference | prepl / MariaDB | target | verdict |")
	fmt.Fprintln(w, "|---|---|---|---|---:|---|---|")
	for _, t := range checks {
		ratio := "–"
		if t.Evaluated() {
			ratio = fmt.Sprintf("%.2f", t.Ratio())
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", t.Workload, t.Config, bestText(t.Prepl),
			t.Against+": "+bestText(t.MariaDB), ratio, t.Goal(), t.Verdict())
	}
	fmt.Fprintln(w)
}

// writeWorkers is the "workers never hurt" table: each prepl cell with
// workers against its best with fewer.
func (r *Report) writeWorkers(w io.Writer, sum map[Cell]Summary) {
	checks := checkWorkers(sum, r.Workloads, r.Configs)
	if len(checks) == 0 {
		return
	}
	fmt.Fprintln(w, "### Workers never hurt")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "prepl with N workers against its best median with fewer (same system, same mode or serial), "+
		"judged by the paired ratio: each repeat's run with N workers over the same repeat's run with fewer, "+
		"made minutes apart or less, so that what the machine did between repeats cancels out; the median over the repeats, "+
		"of at least %d repeats. Target ≤ %.2f: **%s**; a loss in every repeat is every paired ratio over %.2f, "+
		"the other misses have repeats on both sides of the limit.\n\n",
		WorkersJudgedRepeats, WorkersLimit, WorkersTally(checks), WorkersLimit)
	fmt.Fprintln(w, "| workload | config | prepl | workers | seconds | best with fewer | ratio of medians | paired ratio | verdict |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---|---:|---:|---|")
	for _, c := range checks {
		verdict := "met"
		switch {
		case !c.Judged():
			verdict = "not judged (too few repeats)"
		case c.Loss():
			verdict = "NOT met: slower in every repeat"
		case !c.Met():
			verdict = "NOT met (repeats on both sides)"
		}
		paired := fmt.Sprintf("%.2f", c.PairedRatio())
		if len(c.Paired) > 1 {
			paired += fmt.Sprintf(" (%.2f–%.2f)", slices.Min(c.Paired), slices.Max(c.Paired))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s | %.2f | %s | %s |\n", c.Cell.Workload, c.Cell.Config, c.Cell.Label(),
			c.Cell.Threads, formatSummary(sum[c.Cell], true), bestText(c.Fewer), c.Ratio(), paired, verdict)
	}
	fmt.Fprintln(w)
}

func bestText(b Best) string {
	if !b.Found {
		return "–"
	}
	return fmt.Sprintf("%.2f s (%s, %d threads)", b.Seconds, b.Cell.Label(), b.Cell.Threads)
}

func (r *Report) writeWorkload(w io.Writer, sum map[Cell]Summary, wl Workload) {
	fmt.Fprintf(w, "### %s\n\n", wl.Name)
	for _, s := range r.Sources {
		if s.Workload != wl.Name {
			continue
		}
		wait := "no commit wait"
		if s.CommitWait {
			wait = "binlog_commit_wait_count=12, binlog_commit_wait_usec=10000"
		}
		script := "`" + s.Script + "`"
		if s.ScriptArgs != nil {
			opts := "its default options"
			if len(s.ScriptArgs) > 0 {
				opts = "`" + strings.Join(s.ScriptArgs, " ") + "`"
			}
			script = fmt.Sprintf("`bench/lua/%s.lua` (%s; --rows and --tables do not apply; prepared in %.0f s)",
				s.Script, opts, s.Prepare.Seconds())
		}
		fmt.Fprintf(w, "Source binlog: %d transactions of sysbench %s, %d thread(s), %s; "+
			"Binlog_commits / Binlog_group_commits = %d / %d = **%.1f** per group commit; generated in %.1f s (%.0f txn/s).\n\n",
			s.Txns, script, s.SourceThreads, wait, s.BinlogCommits, s.BinlogGroupCommits, s.GroupSize(),
			s.Generate.Seconds(), float64(s.Txns)/math.Max(s.Generate.Seconds(), 1e-9))
	}
	for _, c := range r.Configs {
		fmt.Fprintf(w, "#### %s, config %s: %s\n\n", wl.Name, c.Name, c.Description)
		if c.IOBound {
			r.writeIOBound(w, wl.Name, c)
		}
		r.writeTable(w, sum, wl.Name, c.Name)
		fmt.Fprintln(w)
		r.writeCPU(w, sum, wl.Name, c.Name)
		r.writeCounters(w, sum, wl.Name, c.Name)
	}
	if s, ok := sum[limitCell(wl)]; ok {
		fmt.Fprintf(w, "Physical limit (config C, `prepl replay %s`, one stream of large transactions): %s s",
			strings.Join(r.Settings.LimitArgs, " "), formatSummary(s, true))
		if s.OK() {
			fmt.Fprintf(w, " = %.0f txn/s; CPU per transaction: %s", s.TxnPerSec(), cpuText(s))
			if s.ServerCPU > 0 {
				fmt.Fprintf(w, ". The target server itself was busy %.2f s of it: %.0f txn/s if nothing but the server cost time",
					s.ServerCPU, float64(s.Txns)/s.ServerCPU)
			}
		}
		fmt.Fprint(w, ".\n\n")
	}
}

// writeCPU writes the CPU per transaction of each system's
// single-threaded run: where the time goes when nothing runs in parallel.
func (r *Report) writeCPU(w io.Writer, sum map[Cell]Summary, wl, cfg string) {
	var parts []string
	for _, s := range r.Systems {
		x, ok := sum[Cell{Workload: wl, Config: cfg, System: s, Mode: SerialMode}]
		if ok && x.OK() {
			parts = append(parts, s.Label()+" "+cpuText(x))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "CPU per transaction, single-threaded (median): %s.\n\n", strings.Join(parts, "; "))
	}
}

// writeIOBound says how much bigger than the buffer pool the data is:
// an I/O-bound config is one only if most of the data is not in memory.
func (r *Report) writeIOBound(w io.Writer, wl string, c ReplicaConfig) {
	for _, s := range r.Sources {
		if s.Workload != wl || s.DataBytes == 0 {
			continue
		}
		ratio := float64(s.DataBytes) / float64(c.PoolBytes())
		fmt.Fprintf(w, "Data: %.0f MiB (%d table(s) of %d rows, data and indexes) in a buffer pool of %.0f MiB: **%.1f×** the pool",
			float64(s.DataBytes)/(1<<20), s.Tables, s.Rows, float64(c.PoolBytes())/(1<<20), ratio)
		if ratio < 8 {
			fmt.Fprint(w, " (**less than 8×**: give more --rows or --tables for an I/O-bound run)")
		}
		fmt.Fprint(w, ".\n\n")
	}
}

// writeCounters writes the target server's status counters per source
// transaction for every cell: what bound the run (fsyncs of durable
// commits, page reads from disk).
func (r *Report) writeCounters(w io.Writer, sum map[Cell]Summary, wl, cfg string) {
	var lines []string
	add := func(c Cell) {
		if s, ok := sum[c]; ok && s.OK() {
			lines = append(lines, fmt.Sprintf("| %s | %d | %s |", c.Label(), c.Threads, s.Counters.perTxn(s.Txns)))
		}
	}
	for _, s := range r.Systems {
		add(Cell{Workload: wl, Config: cfg, System: s, Mode: SerialMode})
		for _, m := range r.Modes[s] {
			for _, t := range r.Threads {
				if t > 0 {
					add(Cell{Workload: wl, Config: cfg, System: s, Mode: m, Threads: t})
				}
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "Target server counters per source transaction over the timed run (median of the repeats):")
	fmt.Fprintln(w)
	if rc, err := ParseConfig(cfg); err == nil && rc.IOBound {
		fmt.Fprintln(w, "Then purge: what the run left to InnoDB's purge (removing the index entries its updates delete-marked),")
		fmt.Fprintln(w, "from the end of the timed run until the history list was empty; not in the time above.")
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "| cell | threads | per source transaction |")
	fmt.Fprintln(w, "|---|---:|---|")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w)
}

// cpuText is a cell's CPU per transaction: the target server's, and
// prepl's own when it ran.
func cpuText(s Summary) string {
	if s.Txns == 0 {
		return "–"
	}
	us := func(sec float64) float64 { return sec * 1e6 / float64(s.Txns) }
	if s.PreplCPU > 0 {
		return fmt.Sprintf("%.0f µs in prepl + %.0f µs in the target server", us(s.PreplCPU), us(s.ServerCPU))
	}
	return fmt.Sprintf("%.0f µs in the server", us(s.ServerCPU))
}

func (r *Report) writeFailures(w io.Writer) {
	fails := r.Failures()
	if len(fails) == 0 {
		return
	}
	fmt.Fprintf(w, "### Failed runs (%d)\n\n", len(fails))
	for _, f := range fails {
		msg := f.Err
		if msg == "" {
			msg = "target differs from source"
		}
		msg = strings.ReplaceAll(Tail(msg, 3), "\n", " / ")
		fmt.Fprintf(w, "- %s, repeat %d: %s\n", f.Cell, f.Repeat, msg)
	}
	fmt.Fprintln(w)
}
