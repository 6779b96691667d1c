package analyze

import (
	"testing"

	"github.com/prepl/prepl/depend"
)

// TestHotRowWorkPerTxn pins the simulations' work on a stream that fills
// the engine's window while every transaction updates one hot row (a
// TPC-C district): each simulated run takes a bounded number of clock
// steps per transaction, whatever the stream's length. A sequencer
// deadline left in the past once made each step a nanosecond of
// simulated time, so a 182 MB binlog was still being analyzed after 14
// minutes; the simulation now panics on such a deadline, and this counts
// the steps.
func TestHotRowWorkPerTxn(t *testing.T) {
	const n = 4000
	opt := Options{WindowBytes: 64 << 10, UnitTxns: 50, Workers: []int{1, 4, 16}, Costs: fastCommit}
	a := New(opt)
	var g gen
	for i := 0; i < n; i++ {
		tx := g.txn(upd(tblT, 1), upd(tblT, int64(2+i)))
		tx.Size = 2 << 10 // 32 transactions fill the window
		a.Add(tx)
	}
	a.Finish()
	for _, us := range a.sizes {
		for _, rs := range append(maps(us.runs), us.serial) {
			per := float64(rs.steps) / n
			if per > 8 {
				t.Errorf("%s with %d workers: %d clock steps for %d transactions (%.1f each): want a few per transaction",
					rs.mode, rs.workers, rs.steps, n, per)
			}
		}
	}
}

func maps(runs map[depend.Mode][]*sim) []*sim {
	var out []*sim
	for _, rs := range runs {
		out = append(out, rs...)
	}
	return out
}
