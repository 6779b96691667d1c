package sequencer

import (
	"testing"
	"time"
)

// The controller against synthetic throughput curves: rate(limit) in
// transactions per second, one sample per 100 ms interval. Each case
// checks where it settles and what its probes cost: the transactions a
// run at the controller's limits commits against a run held at the
// curve's best limit all along.
func TestController(t *testing.T) {
	curve := func(pts map[int]float64) func(int, int) float64 {
		return func(n, _ int) float64 { return pts[n] }
	}
	cases := []struct {
		name      string
		max       int
		rate      func(limit, interval int) float64
		intervals int
		want      int     // the limit at the end
		minShare  float64 // committed / committed at the best limit
	}{
		{"workers hurt: stays at 1", 16, curve(map[int]float64{1: 1000, 2: 900, 4: 800, 8: 700, 16: 600}), 300, 1, 0.99},
		{"more is faster: climbs to the ceiling", 16, curve(map[int]float64{1: 100, 2: 190, 4: 350, 8: 600, 16: 900}), 300, 16, 0.95},
		{"a peak at 4", 16, curve(map[int]float64{1: 100, 2: 150, 4: 200, 8: 170, 16: 120}), 300, 4, 0.97},
		{"flat beyond 2: keeps the fewer", 16, curve(map[int]float64{1: 100, 2: 200, 4: 204, 8: 203, 16: 202}), 300, 2, 0.95},
		{"ceiling 1", 1, curve(map[int]float64{1: 100}), 50, 1, 1},
		{"ceiling 3: probes 2 then 3", 3, curve(map[int]float64{1: 100, 2: 150, 3: 200}), 200, 3, 0.95},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctl := NewController(c.max)
			best := 0.0
			for n := 1; n <= c.max; n++ {
				best = max(best, c.rate(n, 0))
			}
			var got, ideal float64
			for i := 0; i < c.intervals; i++ {
				r := c.rate(ctl.Limit(), i)
				got += r
				ideal += best
				ctl.Observe(Sample{Elapsed: 100 * time.Millisecond, Txns: uint64(r / 10)})
			}
			if ctl.Limit() != c.want {
				t.Errorf("limit %d at the end, want %d", ctl.Limit(), c.want)
			}
			if got/ideal < c.minShare {
				t.Errorf("committed %.3f of what the best limit would, want at least %.3f", got/ideal, c.minShare)
			}
		})
	}
}

// A workload that changes: the controller follows it both ways.
func TestControllerFollowsChange(t *testing.T) {
	up := map[int]float64{1: 100, 2: 190, 4: 350, 8: 600}
	down := map[int]float64{1: 1000, 2: 800, 4: 600, 8: 400}
	ctl := NewController(8)
	feed := func(pts map[int]float64, n int) {
		for i := 0; i < n; i++ {
			ctl.Observe(Sample{Elapsed: 100 * time.Millisecond, Txns: uint64(pts[ctl.Limit()] / 10)})
		}
	}
	feed(up, 200)
	if ctl.Limit() != 8 {
		t.Fatalf("limit %d after a workload that gains with units in flight, want 8", ctl.Limit())
	}
	feed(down, 300)
	if ctl.Limit() != 1 {
		t.Fatalf("limit %d after the workload turned, want 1", ctl.Limit())
	}
	feed(up, 400)
	if ctl.Limit() != 8 {
		t.Fatalf("limit %d after it turned back, want 8", ctl.Limit())
	}
}

func TestControllerSignals(t *testing.T) {
	// Starved samples say nothing: no change, and a probe is dropped.
	ctl := NewController(8)
	for i := 0; i < 100; i++ {
		ctl.Observe(Sample{Elapsed: 100 * time.Millisecond, Txns: 1000, Starved: true})
	}
	if ctl.Limit() != 1 {
		t.Errorf("limit %d after starved samples only, want 1", ctl.Limit())
	}
	ctl.Observe(Sample{Elapsed: 100 * time.Millisecond, Txns: 10})
	ctl.Observe(Sample{Elapsed: 100 * time.Millisecond, Txns: 10})
	if ctl.Limit() != 2 {
		t.Fatalf("limit %d after two intervals, want the probe at 2", ctl.Limit())
	}
	ctl.Observe(Sample{Elapsed: 100 * time.Millisecond, Txns: 1000, Starved: true})
	if ctl.Limit() != 1 {
		t.Errorf("limit %d after a starved probe, want 1", ctl.Limit())
	}
	// More rollbacks than commits: half as many in flight at once.
	ctl = NewController(8)
	for i := 0; i < 200 && ctl.Limit() < 8; i++ {
		ctl.Observe(Sample{Elapsed: 100 * time.Millisecond, Txns: uint64(10 * ctl.Limit())})
	}
	if ctl.Limit() != 8 {
		t.Fatalf("limit %d, want 8 to start with", ctl.Limit())
	}
	ctl.Observe(Sample{Elapsed: 100 * time.Millisecond, Txns: 100, Units: 10, Conflicts: 15})
	if ctl.Limit() != 4 {
		t.Errorf("limit %d after more conflicts than commits, want 4", ctl.Limit())
	}
}
