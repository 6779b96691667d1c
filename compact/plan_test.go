package compact

import (
	"errors"
	"testing"

	"github.com/prepl/prepl/txn"
)

// TestPlanUnit: members a target applies verbatim split the unit into
// runs; the runs between them are planned as Unit would, and compaction
// off, or a run of one row change, keeps source order.
func TestPlanUnit(t *testing.T) {
	// Table nk stands for a table with triggers on the target: its
	// members go verbatim.
	verbatim := func(tx *txn.Txn) (string, error) {
		if tx.Changes[0].Row.Table == tbl("nk") {
			return "s.nk has triggers", nil
		}
		return "", nil
	}
	a, b, v, c := tx(ins("k", row(1, 1))), tx(ins("k", row(2, 2))), tx(ins("nk", row(3, 3))), tx(ins("k", row(4, 4)))
	for _, tc := range []struct {
		name       string
		txs        []*txn.Txn
		compaction bool
		want       string // per run: V (verbatim), P (planned), O (source order), with its member count
	}{
		{"one change: source order", []*txn.Txn{a}, true, "O1"},
		{"two members: planned", []*txn.Txn{a, b}, true, "P2"},
		{"compaction off", []*txn.Txn{a, b}, false, "O2"},
		{"a verbatim member splits the unit", []*txn.Txn{a, b, v, c}, true, "P2 V1 O1"},
		{"verbatim first", []*txn.Txn{v, a, b}, true, "V1 P2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PlanUnit(tc.txs, verbatim, lookup, tc.compaction)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for i, r := range p.Runs {
				if i > 0 {
					got += " "
				}
				switch {
				case r.Verbatim != "":
					got += "V"
				case r.Plan != nil:
					got += "P"
				default:
					got += "O"
				}
				got += string(rune('0' + len(r.Txs)))
			}
			if got != tc.want || p.Compaction != tc.compaction {
				t.Errorf("runs %s (compaction %v), want %s", got, p.Compaction, tc.want)
			}
		})
	}
	// A table lookup fails: the error names the run's first member.
	x := tx(ins("gone", row(1, 1)))
	_, err := PlanUnit([]*txn.Txn{a, x}, verbatim, lookup, true)
	var pe *PlanError
	if !errors.As(err, &pe) || pe.Tx != a {
		t.Errorf("lookup error: %v, want a PlanError naming the run's first member", err)
	}
}
