package calibrate

import (
	"math"
	"testing"
	"time"

	"github.com/prepl/prepl/analyze"
)

// A run's start: the process, two connections one after the other, and
// on a target without prepl's position tables a DDL for the schema and
// each of its tables.
func TestStartCost(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name                  string
		process, connect, ddl time.Duration
		hasTables             bool
		want                  time.Duration
	}{
		{"tables there: no DDL", 10 * ms, 2 * ms, 25 * ms, true, 14 * ms},
		{"new target: four DDL", 10 * ms, 2 * ms, 25 * ms, false, 114 * ms},
		{"slow connections count twice", 10 * ms, 30 * ms, 25 * ms, true, 70 * ms},
	} {
		if got := startCost(tc.process, tc.connect, tc.ddl, tc.hasTables); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The execution costs scaled to the binlog's own units keep their split
// and add up, for those units, to the time the target took.
func TestScaleWork(t *testing.T) {
	c := analyze.Costs{Stmt: 20 * time.Microsecond, Row: 10 * time.Microsecond, PerKiB: 4 * time.Microsecond,
		Commit: 300 * time.Microsecond, DDL: 10 * time.Millisecond}
	units := []analyze.UnitShape{{Statements: 1, Rows: 500}, {Statements: 3, Rows: 1200}}
	bytes := []int{300 << 10, 900 << 10}
	model := func(c analyze.Costs) (s float64) {
		for i, u := range units {
			s += c.Work(u, bytes[i], false)
		}
		return s
	}
	for _, sent := range []time.Duration{5 * time.Millisecond, 50 * time.Millisecond, 500 * time.Millisecond} {
		got := ScaleWork(c, sent, model(c))
		if m := model(got); math.Abs(m-sent.Seconds()) > 1e-4*sent.Seconds() {
			t.Errorf("sent %v: the scaled model gives %.6f s", sent, m)
		}
		if r := float64(got.Row) / float64(got.Stmt); math.Abs(r-0.5) > 1e-3 {
			t.Errorf("sent %v: row/statement %.4f, want the scratch table's 0.5", sent, r)
		}
		if got.Commit != c.Commit || got.DDL != c.DDL {
			t.Errorf("sent %v: commit %v, DDL %v changed", sent, got.Commit, got.DDL)
		}
	}
	if got := ScaleWork(c, 0, model(c)); got != c {
		t.Errorf("nothing measured: %+v, want the costs unchanged", got)
	}
}
