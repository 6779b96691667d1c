package analyze

import (
	"fmt"
	"time"

	"github.com/prepl/prepl/txn"
)

// Costs is the cost model of applying transactions on the target, the input
// of the scheduler simulation. Execution work (rows, statements, bytes) runs
// on the worker's connection and competes for the target's cores; commits
// are separate: one per commit unit, paid in source order one after the
// other, because an external applier cannot overlap in-order commits (its
// round trip and the target's fsync).
type Costs struct {
	Stmt time.Duration `json:"stmt_ns"` // per statement sent (parse, round trip share, execution start)
	Row  time.Duration `json:"row_ns"`  // per row a statement changes

	PerKiB time.Duration `json:"per_kib_ns"` // per KiB of binlog event bytes (wide rows, blobs)
	Commit time.Duration `json:"commit_ns"`  // per target commit: round trip and fsync, serialized in source order
	DDL    time.Duration `json:"ddl_ns"`     // per DDL statement; it runs alone
	// Cores is how many units' execution the target runs at full speed at
	// once (its cores, less what the applier itself uses); 0 means as many
	// as there are workers.
	Cores float64 `json:"cores"`
	// ReadTxn and ReadKiB are prepl's own CPU per transaction (reading
	// and decoding the binlog, rendering SQL): how fast transactions reach
	// the former, which sets how much a unit can grow while the workers
	// are busy.
	ReadTxn time.Duration `json:"read_txn_ns"`
	ReadKiB time.Duration `json:"read_kib_ns"`
	// Local: prepl runs on the target's machine (a loopback or socket
	// target: --calibrate sets it), so its own CPU (the reader's pace)
	// takes from the cores the target executes with: on a busy machine,
	// apply time tends to prepl's CPU plus the server's rather than the
	// larger of the two.
	Local bool `json:"local,omitempty"`
	// Start is what a run costs besides applying, once whatever the
	// workers: starting prepl, connecting, reading the stored position,
	// scanning the binlog files for continuity, and on a target without
	// prepl's position tables, creating them. It is added to every
	// predicted time (the benchmark times the whole process).
	Start time.Duration `json:"start_ns"`
	// Conflict is how long a row conflict between concurrent units stalls
	// the earlier one in optimistic mode before the engine rolls the later
	// one back (its lock monitor polls every 50 ms; a stall it cannot see
	// is broken after 300 ms).
	Conflict time.Duration `json:"conflict_ns"`
	// Source says where the numbers come from ("defaults", "calibrated on
	// mysql://...", "flags").
	Source string `json:"source"`
}

// DefaultCosts are the costs measured with `prepl analyze --calibrate` on a
// sandbox target of the project's benchmark machine (2 cores, MariaDB
// 10.11, no binlog, innodb_flush_log_at_trx_commit=1), with Cores left
// unlimited: a prediction of the binlog's parallelism rather than of one
// machine. Calibrate against the real target for a prediction of it.
var DefaultCosts = Costs{
	Stmt:   25 * time.Microsecond,
	Row:    10 * time.Microsecond,
	PerKiB: 4 * time.Microsecond,
	Commit: 300 * time.Microsecond,
	DDL:    10 * time.Millisecond,
	// prepl's CPU per transaction, measured on the same machine (the
	// benchmark's prepl_cpu_s of `prepl replay --workers 0` over five
	// sysbench workloads of 0.6 to 2.2 KiB per transaction, fitted): 4 µs
	// + 11 µs per KiB.
	ReadTxn:  4 * time.Microsecond,
	ReadKiB:  11 * time.Microsecond,
	Conflict: 100 * time.Millisecond,
	Source:   "defaults (measured on the project's 2-core benchmark machine; use --calibrate for your target)",
}

// UnitShape is how the apply engine sends a commit unit to the target:
// how many statements, changing how many rows.
type UnitShape struct {
	Statements int
	Rows       int
}

// Shaper tells the shape of a unit (its members, in order), reading table
// definitions from cat. The CLI gives the engine's compaction (package
// compact: a unit's net effect per table as multi-row statements); the
// default, PlainShape, is one statement per change.
type Shaper func(members []*txn.Txn, cat txn.Catalog) UnitShape

// PlainShape sends every row change and every statement as a statement of
// its own: the engine without compaction.
func PlainShape(members []*txn.Txn, _ txn.Catalog) UnitShape {
	var s UnitShape
	for _, t := range members {
		for _, ch := range t.Changes {
			s.Statements++
			if ch.Row != nil {
				s.Rows++
			}
		}
	}
	return s
}

// withDefaults fills zero fields from DefaultCosts.
func (c Costs) withDefaults() Costs {
	d := DefaultCosts
	if c.Row > 0 {
		d.Row = c.Row
	}
	if c.Stmt > 0 {
		d.Stmt = c.Stmt
	}
	if c.PerKiB > 0 {
		d.PerKiB = c.PerKiB
	}
	if c.Commit > 0 {
		d.Commit = c.Commit
	}
	if c.DDL > 0 {
		d.DDL = c.DDL
	}
	if c.Cores > 0 {
		d.Cores = c.Cores
	}
	if c.ReadTxn > 0 {
		d.ReadTxn = c.ReadTxn
	}
	if c.ReadKiB > 0 {
		d.ReadKiB = c.ReadKiB
	}
	if c.Conflict > 0 {
		d.Conflict = c.Conflict
	}
	if c.Start > 0 {
		d.Start = c.Start
	}
	d.Local = c.Local || d.Local
	if c.Source != "" {
		d.Source = c.Source
	}
	return d
}

// String is the model in one line, for reports.
func (c Costs) String() string {
	cores := "unlimited"
	if c.Cores > 0 {
		cores = fmt.Sprintf("%.1f", c.Cores)
	}
	where := ""
	if c.Local {
		where = ", on the target's cores"
	}
	return fmt.Sprintf("statement %s, row %s, per KiB %s, commit %s, DDL %s, target cores %s; optimistic conflict stall %s; prepl's CPU %s + %s/KiB per transaction%s; start %s",
		fmtDur(c.Stmt), fmtDur(c.Row), fmtDur(c.PerKiB), fmtDur(c.Commit), fmtDur(c.DDL), cores, fmtDur(c.Conflict), fmtDur(c.ReadTxn), fmtDur(c.ReadKiB), where, fmtDur(c.Start))
}

// Work is the execution time of a unit of shape sh and size bytes, in
// seconds, without its commit. A DDL costs DDL whatever its size.
func (c Costs) Work(sh UnitShape, bytes int, ddl bool) float64 {
	if ddl {
		return c.DDL.Seconds()
	}
	return float64(sh.Statements)*c.Stmt.Seconds() + float64(sh.Rows)*c.Row.Seconds() +
		float64(bytes)/1024*c.PerKiB.Seconds()
}

// txnWork is the execution time of tx alone, without its commit.
func (c Costs) txnWork(tx *txn.Txn, shape Shaper, cat txn.Catalog) float64 {
	return c.Work(shape([]*txn.Txn{tx}, cat), tx.Size, tx.IsDDL())
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/1e6)
	case d >= time.Microsecond:
		return fmt.Sprintf("%.1fµs", float64(d)/1e3)
	}
	return fmt.Sprintf("%dns", d.Nanoseconds())
}
