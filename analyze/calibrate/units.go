package calibrate

import (
	"time"

	"github.com/prepl/prepl/analyze"
)

// SampleTxns is how many of the binlog's first transactions the CLI sends
// to the target, as the engine's units, to time the target's own work on
// them (rolled back: nothing changes).
const SampleTxns = 5000

// ScaleWork fits the execution costs (Stmt, Row, PerKiB) to the target's
// time on the binlog's own units: sent is what the target took to run
// them, model the cost model's Work for the same units. The scratch
// table's measurements set the split between statements, rows and bytes;
// the binlog's units set the level. The scratch table's rows are neither
// the binlog's tables (secondary indexes to maintain, rows appended at the
// end of a key or changed at random places) nor its mix of inserts,
// updates and deletes, which change the target's time per row by half or
// more (measured: a row change that moves a secondary index entry costs
// 12.8 µs where one that does not costs 8.6 µs). With nothing measured,
// c is returned as it is.
func ScaleWork(c analyze.Costs, sent time.Duration, model float64) analyze.Costs {
	if sent <= 0 || model <= 0 {
		return c
	}
	k := sent.Seconds() / model
	c.Stmt = time.Duration(float64(c.Stmt) * k)
	c.Row = time.Duration(float64(c.Row) * k)
	c.PerKiB = time.Duration(float64(c.PerKiB) * k)
	return c
}
