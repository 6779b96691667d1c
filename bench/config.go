package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"time"
)

// Config is one benchmark run: the matrix to measure and where to write it.
type Config struct {
	// Prepl is the prepl binary timed (prepl bench passes itself), so the
	// benchmark measures exactly what users run.
	Prepl     string
	Workloads []Workload
	Rows      int // rows in each sysbench table
	// Tables is the number of sysbench tables (default 1); RandType is
	// sysbench's --rand-type ("" keeps its default, special: most
	// accesses on 1% of the rows; uniform spreads them over all rows,
	// as an I/O-bound config needs).
	Tables   int
	RandType string
	// ScriptArgs are options for the scripts of the tree (bench/lua), e.g.
	// --warehouses=4 for tpcc; they replace Rows and Tables there.
	ScriptArgs []string
	Events     int // sysbench --events: transactions in each workload's binlog
	// SourceThreads is the sysbench threads of the parallel workloads
	// (the serial one uses 1).
	SourceThreads int
	Threads       []int // replica worker counts; 0 is single-threaded
	Configs       []ReplicaConfig
	Systems       []System
	MariaDBModes  []string // slave_parallel_mode values
	PreplModes    []string // prepl --mode values
	PreplArgs     []string // extra flags for every timed prepl run, e.g. --commit-unit 1
	// LimitArgs are the prepl replay flags of the physical-limit run; nil
	// skips it.
	LimitArgs []string
	Repeats   int
	OutDir    string
	// Keep keeps the sources, snapshots and the targets of failed runs on
	// disk (their paths are printed) instead of removing them.
	Keep bool
	// SaveBinlog, when set, is a directory each workload's binlog files
	// are copied to (SaveBinlog/<workload>/, with its start GTID).
	SaveBinlog string
	// RunTimeout bounds one timed run; a run that takes longer fails.
	RunTimeout time.Duration
	// Command is the command line, printed in results.md.
	Command string
	// Progress receives a line per step (stderr in prepl bench).
	Progress io.Writer
}

// DefaultLimitArgs measure the physical limit: one connection, durability
// off (config C), as few target transactions as prepl can make of the
// binlog, so commits and coordination cost nothing and what is left is
// getting the row changes into InnoDB.
var DefaultLimitArgs = []string{"--workers", "0", "--commit-unit", "1000000", "--window", "1GiB"}

// ErrNoSysbench is returned when sysbench is not installed.
var ErrNoSysbench = errors.New("sysbench not found: install it with `apt-get install -y sysbench` (or run `make deps`)")

// check validates the configuration, says what to fix, and fills in the
// defaults of the optional fields.
func (c *Config) check() error {
	switch {
	case c.Prepl == "":
		return errors.New("no prepl binary given")
	case len(c.Workloads) == 0:
		return errors.New("no workload: give at least one of " + fmt.Sprint(workloadNames()))
	case len(c.Configs) == 0:
		return errors.New("no replica config: give at least one of A, B, C")
	case len(c.Threads) == 0:
		return errors.New("no thread count")
	case c.Rows < 1 || c.Events < 1:
		return fmt.Errorf("rows (%d) and events (%d) must be 1 or more", c.Rows, c.Events)
	case c.Repeats < 1:
		return fmt.Errorf("repeats (%d) must be 1 or more", c.Repeats)
	case c.OutDir == "":
		return errors.New("no output directory")
	}
	for _, t := range c.Threads {
		if t < 0 {
			return fmt.Errorf("thread count %d: must be 0 or more", t)
		}
	}
	for _, m := range c.MariaDBModes {
		if !slices.Contains(MariaDBModes, m) {
			return fmt.Errorf("unknown MariaDB slave_parallel_mode %q (want one of %v)", m, MariaDBModes)
		}
	}
	if _, err := os.Stat(c.Prepl); err != nil {
		return fmt.Errorf("prepl binary: %w (build it with `make build`)", err)
	}
	if _, err := exec.LookPath("sysbench"); err != nil {
		return ErrNoSysbench
	}
	if c.Tables < 1 {
		c.Tables = 1
	}
	if c.SourceThreads < 1 {
		c.SourceThreads = 48
	}
	if c.RunTimeout <= 0 {
		c.RunTimeout = 30 * time.Minute
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return nil
}

// modes are the modes measured for a system at a thread count above 0.
func (c *Config) modes(s System) []string {
	switch s {
	case MariaDB:
		return c.MariaDBModes
	case PreplReplicate, PreplReplay, PreplKeepGTID, PreplPrefetch:
		return c.PreplModes
	}
	return nil
}

// plannedRun is one timed run the benchmark will make.
type plannedRun struct {
	Cell
	Repeat int
}

// cells lists the cells of one workload and config, in column order:
// per system its single-threaded cell (threads 0), then each mode at each
// thread count above 0.
func (c *Config) cells(w Workload, rc ReplicaConfig) []Cell {
	var out []Cell
	for _, s := range c.Systems {
		if slices.Contains(c.Threads, 0) {
			out = append(out, Cell{Workload: w.Name, Config: rc.Name, System: s, Mode: SerialMode})
		}
		for _, m := range c.modes(s) {
			for _, t := range c.Threads {
				if t > 0 {
					out = append(out, Cell{Workload: w.Name, Config: rc.Name, System: s, Mode: m, Threads: t})
				}
			}
		}
	}
	return out
}

// limitCell is the physical-limit cell of a workload: config C.
func limitCell(w Workload) Cell {
	return Cell{Workload: w.Name, Config: "C", System: Limit, Mode: "one stream", Threads: 0}
}

// plan lists every run in execution order: per workload, per config, the
// repeats outermost so a slow drift of the machine spreads over every cell
// instead of biasing one; the physical limit last.
func (c *Config) plan() [][]plannedRun {
	var out [][]plannedRun // one slice per workload
	for _, w := range c.Workloads {
		var runs []plannedRun
		for _, rc := range c.Configs {
			cells := c.cells(w, rc)
			for r := 1; r <= c.Repeats; r++ {
				for _, cell := range cells {
					runs = append(runs, plannedRun{cell, r})
				}
			}
		}
		if c.LimitArgs != nil {
			for r := 1; r <= c.Repeats; r++ {
				runs = append(runs, plannedRun{limitCell(w), r})
			}
		}
		out = append(out, runs)
	}
	return out
}
