package sequencer

import (
	"math"
	"math/rand/v2"
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

// Samples scatter: on a busy machine one interval measures a third
// faster or slower than the next at the same limit. Each interval's rate
// is the curve's times a factor drawn uniformly within ±scatter (seeded:
// the same draws every run), and the controller must not take the
// scatter for a gain.
func TestControllerScatter(t *testing.T) {
	// No gain: each doubling costs 4% (connections, smaller units).
	noGain := func(n int) float64 { return 1000 / (1 + 0.04*math.Log2(float64(n))) }
	gain := func(n int) float64 { return map[int]float64{1: 100, 2: 190, 4: 350, 8: 600, 16: 900}[n] }
	cases := []struct {
		name      string
		max       int
		rate      func(limit int) float64
		scatter   float64
		wantMax   int     // the limit at the end is at most
		wantMin   int     // and at least
		minShare  float64 // committed / committed at the best limit
		maxAbove2 float64 // share of intervals run above 2 units in flight
	}{
		{"ceiling 256, no gain, ±40%: stays low", 256, noGain, 0.4, 2, 1, 0.97, 0.05},
		{"ceiling 16, no gain, ±60%: stays low", 16, noGain, 0.6, 2, 1, 0.97, 0.05},
		{"ceiling 256, no gain, ±80%: stays low", 256, noGain, 0.8, 2, 1, 0.97, 0.05},
		{"ceiling 256, no gain, steady: stays at 1", 256, noGain, 0, 1, 1, 0.98, 0},
		{"more is faster, ±30%: still climbs", 16, gain, 0.3, 16, 4, 0.8, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(17, 256))
			ctl := NewController(c.max)
			best := 0.0
			for n := 1; n <= c.max; n *= 2 {
				best = max(best, c.rate(n))
			}
			const intervals = 1000
			var got, ideal float64
			above := 0
			for i := 0; i < intervals; i++ {
				r := c.rate(ctl.Limit())
				got += r
				ideal += best
				if ctl.Limit() > 2 {
					above++
				}
				r *= 1 + c.scatter*(2*rng.Float64()-1)
				ctl.Observe(Sample{Elapsed: 100 * time.Millisecond, Txns: uint64(r / 10), Units: 20})
			}
			if l := ctl.Limit(); l < c.wantMin || l > c.wantMax {
				t.Errorf("limit %d at the end, want %d to %d", l, c.wantMin, c.wantMax)
			}
			if got/ideal < c.minShare {
				t.Errorf("committed %.3f of what the best limit would, want at least %.3f", got/ideal, c.minShare)
			}
			if a := float64(above) / intervals; a > c.maxAbove2 {
				t.Errorf("above 2 units in flight in %.2f of the intervals, want at most %.2f", a, c.maxAbove2)
			}
		})
	}
}

// Rolled-back work is a cost: a level that commits a little faster but
// rolls back a third of its attempts (fewer than it commits, so no
// immediate step down) loses to one unit at a time, which rolls back
// nothing. --keep-gtid on hot rows: the commits are one at a time
// whatever the limit, and more units in flight only add conflicts.
func TestControllerConflictsCost(t *testing.T) {
	ctl := NewController(16)
	climb := map[int]float64{1: 100, 2: 190, 4: 350, 8: 600, 16: 900}
	for i := 0; i < 300; i++ {
		ctl.Observe(Sample{Elapsed: 100 * time.Millisecond, Txns: uint64(climb[ctl.Limit()] / 10), Units: 10})
	}
	if ctl.Limit() != 16 {
		t.Fatalf("limit %d, want 16 to start with", ctl.Limit())
	}
	storm := func(n int) Sample {
		s := Sample{Elapsed: 100 * time.Millisecond, Txns: 100, Units: 100}
		if n > 1 {
			s.Txns, s.Units, s.Conflicts = 110, 110, 50
		}
		return s
	}
	settled := map[int]int{}
	for i := 0; i < 600; i++ {
		ctl.Observe(storm(ctl.Limit()))
		if i >= 300 {
			settled[ctl.Settled()]++
		}
	}
	if ctl.Settled() != 1 || settled[1] != 300 {
		t.Errorf("settled at %v over the last 300 intervals of a conflict storm, want 1 all along", settled)
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
