package compact

import (
	"fmt"

	"github.com/prepl/prepl/txn"
)

// UnitPlan is how a commit unit is sent to a target, decided before the
// target writes anything: runs of consecutive members, each either
// verbatim (the target applies the source's own events, e.g. MariaDB's
// BINLOG statement for a table with triggers there) or SQL, compacted
// (Plan) or in source order (Plan nil). A target only writes SQL for a
// plan.
type UnitPlan struct {
	Runs []Run
	// Compaction is what the plan was made with: a target may plan again
	// a member only it can read (an XA group, once its XA statements are
	// stripped).
	Compaction bool
}

// Run is a part of a unit's plan.
type Run struct {
	Txs []*txn.Txn
	// Verbatim names the table that makes the run's single member go
	// verbatim ("" for a run sent as SQL).
	Verbatim string
	// Plan is the run's net effect (Unit); nil: its changes in source
	// order (compaction off, one change, or a unit compaction leaves to
	// the server).
	Plan *Plan
}

// Verbatim reports, for a member, the table that makes the target apply
// it verbatim ("" for none).
type Verbatim func(tx *txn.Txn) (string, error)

// PlanError is an error of Lookup while planning the run that starts
// with Tx; it names the transaction.
type PlanError struct {
	Tx  *txn.Txn
	Err error
}

func (e *PlanError) Error() string {
	if e.Tx.GTID != "" {
		return fmt.Sprintf("apply GTID %s (%s): %v", e.Tx.GTID, e.Tx.Start, e.Err)
	}
	return fmt.Sprintf("apply transaction at %s: %v", e.Tx.Start, e.Err)
}
func (e *PlanError) Unwrap() error { return e.Err }

// PlanUnit plans a unit's members txs (in order): a member verbatim
// reports a table for goes alone, verbatim; the members between them are
// runs of SQL, each compacted with Unit when compaction is on and it
// holds more than one row change. An error of verbatim is returned as it
// is; one of lookup as a *PlanError.
func PlanUnit(txs []*txn.Txn, verbatim Verbatim, lookup Lookup, compaction bool) (UnitPlan, error) {
	p := UnitPlan{Compaction: compaction}
	sqlRun := func(run []*txn.Txn) error {
		r := Run{Txs: run}
		if compaction && !(len(run) == 1 && run[0].Rows() < 2) {
			plan, ok, err := Unit(run, lookup)
			if err != nil {
				return &PlanError{Tx: run[0], Err: err}
			}
			if ok {
				r.Plan = &plan
			}
		}
		p.Runs = append(p.Runs, r)
		return nil
	}
	start := 0
	for i, tx := range txs {
		table := ""
		if verbatim != nil {
			var err error
			if table, err = verbatim(tx); err != nil {
				return UnitPlan{}, err
			}
		}
		if table == "" {
			continue
		}
		if i > start {
			if err := sqlRun(txs[start:i]); err != nil {
				return UnitPlan{}, err
			}
		}
		p.Runs = append(p.Runs, Run{Txs: txs[i : i+1], Verbatim: table})
		start = i + 1
	}
	if start < len(txs) {
		if err := sqlRun(txs[start:]); err != nil {
			return UnitPlan{}, err
		}
	}
	return p, nil
}
