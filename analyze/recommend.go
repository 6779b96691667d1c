package analyze

import (
	"fmt"
	"strings"

	"github.com/prepl/prepl/depend"
)

// recommend turns the report's numbers into advice in plain words. Every
// piece of advice is emitted only when the numbers it quotes support it.
func recommend(r *Report) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	txns := float64(r.Summary.Transactions)
	if txns == 0 {
		return []string{"The binlog holds no complete transaction: nothing to analyze."}
	}

	bm, bp := r.best()
	switch {
	case bp.Speedup >= 1.2:
		e := bm.enough()
		add("Apply with prepl replay/replicate --mode %s --workers %d: predicted %.1fx faster than serial apply (%s), and more workers add less than 10%% (best %.1fx at %d).",
			bm.Mode, e.Workers, e.Speedup, fmtRate(e.TxnRate), bp.Speedup, bp.Workers)
	case bm.Mode != "":
		msg := fmt.Sprintf("With commit units of %d, parallel workers will not help prepl's engine much on this binlog: no mode is predicted faster than %.2fx.",
			r.Model.UnitTxns, bp.Speedup)
		if bm.EngineGap != "" {
			msg += fmt.Sprintf(" The binlog itself holds more parallelism (%s mode: %s), which an applier committing every transaction on its own could use; prepl's engine gets less from workers because %s.", bm.Mode, boundText(bm, r.Model.History), bm.EngineGap)
		} else {
			msg += " What serializes it is listed above."
		}
		add("%s Commit units already save most (serial: %s with units of %d, %s committing every transaction).",
			msg, fmtSeconds(r.Serial.Seconds), r.Model.UnitTxns, fmtSeconds(r.Serial.PerTxnSeconds))
	}
	if u, m, p := r.bestUnitSize(); u != r.Model.UnitTxns && p.Speedup >= 1.1*max(bp.Speedup, 1) {
		why := "larger units save commits, which are paid one at a time"
		if u < r.Model.UnitTxns {
			why = fmt.Sprintf("a unit waits for every unit any of its transactions depends on, so units of %d depend on the unit before them more often and run one after another", r.Model.UnitTxns)
		}
		add("Commit units of %d transactions would be faster here: replay/replicate --commit-unit %d --mode %s --workers %d is predicted at %.1fx serial apply with units of %d (%s), against %.2fx with units of %d: %s.",
			u, u, m, p.Workers, p.Speedup, r.Model.UnitTxns, fmtRate(p.TxnRate), bp.Speedup, r.Model.UnitTxns, why)
	}

	if m, ok := r.Mode(string(depend.DefaultMode)); ok {
		if mb, last := m.Best, lastPrediction(m); last.Workers > mb.Workers && last.Speedup < 0.8*mb.Speedup {
			add("In %s mode, more than %s is slower (%.2fx at %d workers against %.2fx at %d): units in flight together conflict and wait for one another, and the target's cores are shared (%.0f transactions per unit at %d workers, %.0f at %d); use --workers %d.",
				m.Mode, plural(mb.Workers, "worker"), last.Speedup, last.Workers, mb.Speedup, mb.Workers, last.AvgUnit, last.Workers, mb.AvgUnit, mb.Workers, mb.Workers)
		}
	}

	co, okCO := r.Mode("commit-order")
	ws, okWS := r.Mode("writeset")
	if okCO && okWS {
		cb, wb := maxSpeedup(co), maxSpeedup(ws)
		switch {
		case wb >= 1.2 && wb > 1.2*cb:
			add("Writeset mode finds more parallelism than the source's group commits (%.1fx against %.1fx): keep replay/replicate --mode writeset (the default).", wb, cb)
		case cb >= 1.2 && cb > 1.2*wb:
			add("Commit-order mode beats writeset here (%.1fx against %.1fx): the source's group commits hold parallelism that prepl's key analysis cannot prove (see tables without keys, foreign keys).", cb, wb)
		}
	}

	if g := r.GroupCommit; g != nil && g.Commits >= 100 && g.AvgSize < 4 {
		add("Group commits on the source average %.1f transactions (Binlog_commits / Binlog_group_commits = %d / %d): too small for commit-order parallelism. Raise binlog_commit_wait_count (e.g. 12) and binlog_commit_wait_usec (e.g. 10000) on the source, or use writeset mode, which does not need them.",
			g.AvgSize, g.Commits, g.GroupCommits)
	}

	if s := r.SourceIntervals; s != nil && s.Transactions >= 100 && s.PseudoGroup < 4 {
		msg := fmt.Sprintf("The source's intervals have an AMIL of %.2f (pseudo group commit size %.1f): little for LOGICAL_CLOCK parallelism. Raise binlog_group_commit_sync_delay on the source, or set binlog_transaction_dependency_tracking=WRITESET (MySQL 5.7.22+, 8.0)", s.AMIL, s.PseudoGroup)
		if okWS {
			msg += fmt.Sprintf(", or use prepl's writeset mode (AMIL %.2f, pseudo group size %.1f)", ws.Intervals.AMIL, ws.Intervals.PseudoGroup)
		}
		add("%s.", msg)
	}
	if rot := r.Rotations; rot != nil && rot.ClockRestarts > 0 && rot.TxnsPerRestart < 10000 {
		add("MySQL's logical clock restarts with every binlog file (%d times, every %.0f transactions): nothing of one file runs with the next in commit-order mode. Raise max_binlog_size, or use writeset mode, which follows dependencies across files.",
			rot.ClockRestarts, rot.TxnsPerRestart)
	}

	o := r.Offenders
	for _, t := range first(o.NoKeyTables, 3) {
		if t.Waits >= 10 && float64(t.Waits) >= 0.01*txns {
			add("Add a primary key to %s: %d transactions change it and %d of them waited for an earlier one, because rows without a key can only be told apart table-wide.", t.Name, t.Transactions, t.Waits)
		}
	}
	if len(o.KeyUnknownTables) > 0 {
		var names []string
		var n uint64
		for _, t := range o.KeyUnknownTables {
			names = append(names, t.Name)
			n += t.Transactions
		}
		add("The binlog does not say the keys of %d tables (%s; binlog_row_metadata is not FULL), so the prediction serializes their %d transactions table by table. Set binlog_row_metadata=FULL on the source, or give --catalog mysql://... to read the keys from a server.",
			r.Catalog.KeyUnknown, strings.Join(first(names, 3), ", "), n)
	}
	for _, t := range first(o.FKParents, 3) {
		if t.Transactions >= 10 {
			add("Changes to %s, a foreign key parent, run alone in writeset mode (a delete may cascade): %d transactions. Commit-order or optimistic mode does not need that.", t.Name, t.Transactions)
		}
	}
	for _, t := range first(o.TriggerTables, 3) {
		if t.Transactions >= 10 {
			add("Changes to %s run alone: it has triggers on the target (%d transactions).", t.Name, t.Transactions)
		}
	}
	for _, t := range first(o.NonTransactional, 3) {
		if t.Transactions >= 10 {
			add("Convert %s to InnoDB: its %d non-transactional changes cannot be rolled back, so each runs alone in every mode.", t.Name, t.Transactions)
		}
	}
	if len(o.HotKeys) > 0 {
		h := o.HotKeys[0]
		if h.Transactions >= 10 && float64(h.Transactions) >= 0.05*txns {
			add("Row %s is changed by %d transactions within %d of each other (%.0f%% of all): they run one after the other in any mode. Spread that row (e.g. a counter split over several rows) to let them run together.",
				h.Name, h.Transactions, o.HotKeyWindow, 100*float64(h.Transactions)/txns)
		}
	}
	if ws, ok := r.Mode(string(depend.Writeset)); ok && len(o.EveryUnit) > 0 && maxSpeedup(ws) < 1.2 {
		var names []string
		for _, h := range first(o.EveryUnit, 3) {
			names = append(names, h.Name)
		}
		more := ""
		if n := len(o.EveryUnit) - len(names); n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		msg := fmt.Sprintf("%s%s are changed in nearly every commit unit (units of %.0f transactions): in writeset mode every unit waits for the one before it on them, so workers add nothing (%.2fx at best).",
			strings.Join(names, ", "), more, r.Serial.AvgUnit, maxSpeedup(ws))
		if len(o.ForeignKeys) > 0 {
			f := o.ForeignKeys[0]
			msg += fmt.Sprintf(" Foreign keys reference changed rows too: through %s, %d transactions referenced a parent row changed within %d transactions before them (a reference waits for a change in flight to its row).",
				f.Name, f.Waits, o.HotKeyWindow)
		}
		add("%s", msg)
	}
	for _, b := range first(o.Largest, 3) {
		if !b.Big {
			continue
		}
		add("Split transaction %s (%s, %d rows, about %s to apply, at %s): while it runs, in-order commit holds back everything after it (the seeds' advice: avoid big transactions).",
			bigName(b), fmtBytes(float64(b.Bytes)), b.Rows, fmtSeconds(b.Seconds), b.Position)
	}
	if r.Summary.DDL >= 10 && float64(r.Summary.DDL) >= 0.01*txns {
		add("%d DDL statements (%.1f%% of transactions) each drain the pipeline and run alone: batch schema changes, or keep them out of busy periods.",
			r.Summary.DDL, 100*float64(r.Summary.DDL)/txns)
	}
	var stmtWaits uint64
	for _, s := range o.Statements {
		stmtWaits += s.Transactions
	}
	if stmtWaits >= 10 && float64(stmtWaits) >= 0.01*txns {
		add("%d transactions carry SQL statements among their rows (e.g. %q): each is a barrier, since a statement may touch anything.", stmtWaits, o.Statements[0].Name)
	}
	if c := r.Model.Costs.Cores; c > 0 && bp.Workers > 0 {
		e := bm.enough()
		if float64(e.Workers) > 2*c {
			add("The target runs about %.1f units at full speed at once; the prediction already accounts for it, so more than %d workers mostly wait.", c, e.Workers)
		}
	}
	return out
}

// bestUnitSize returns the commit unit size, mode and prediction with the
// largest speedup among the compared unit sizes.
func (r *Report) bestUnitSize() (int, string, Prediction) {
	unit, mode, best := r.Model.UnitTxns, "", Prediction{}
	for _, u := range r.UnitSizes {
		for _, m := range u.Modes {
			if m.Best.Speedup > best.Speedup+1e-9 {
				unit, mode, best = u.UnitTxns, m.Mode, m.Best
			}
		}
	}
	return unit, mode, best
}

// lastPrediction is the prediction with the most workers.
func lastPrediction(m ModeReport) Prediction {
	var p Prediction
	for _, x := range m.Predictions {
		if x.Workers > p.Workers {
			p = x
		}
	}
	return p
}

func maxSpeedup(m ModeReport) float64 {
	var b float64
	for _, p := range m.Predictions {
		b = max(b, p.Speedup)
	}
	return b
}

func first[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func bigName(b BigTxn) string {
	if b.GTID != "" {
		return "GTID " + b.GTID
	}
	return "at " + b.Position
}

// boundText is a mode's critical-path bound in words.
func boundText(m ModeReport, history int) string {
	if m.ChainBound >= float64(history) {
		return fmt.Sprintf("at least %dx", history)
	}
	return fmt.Sprintf("up to %.1fx", m.ChainBound)
}
