package analyze

import (
	"testing"

	"github.com/prepl/prepl/depend"
)

// TestSimulatedRunsCountsTheRuns: the count MemoryLimit relies on is the
// number of runs the analyzer really simulates at once, domain mode's own
// included once a second GTID domain appears.
func TestSimulatedRunsCountsTheRuns(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  Options
	}{
		{"defaults", Options{}},
		{"writeset only", Options{Modes: []depend.Mode{depend.Writeset}, Workers: []int{1, 4, 16}}},
		{"domain without writeset", Options{Modes: []depend.Mode{depend.Domain, depend.CommitOrder}, Workers: []int{2, 8}}},
		{"compared unit sizes", Options{Modes: []depend.Mode{depend.Writeset, depend.Optimistic}, Workers: []int{4}, UnitTxns: 100, CompareUnits: []int{1, 100, 50}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(tc.opt)
			var g gen
			for i := range 4 {
				tx := g.txn(upd(tblT, int64(i)))
				tx.Domain = uint32(i / 2) // a second domain half-way
				a.Add(tx)
			}
			live := 0
			for _, us := range a.sizes {
				live++ // serial
				for _, rs := range us.runs {
					live += len(rs)
				}
			}
			a.Finish()
			if got := SimulatedRuns(tc.opt); got != live {
				t.Errorf("SimulatedRuns = %d, the analyzer runs %d", got, live)
			}
		})
	}
}

// TestMemoryLimit: 8 windows for the shared transactions and a sixth of
// a window per run, half as much again, plus 64 MiB.
func TestMemoryLimit(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name string
		opt  Options
		want int64
	}{
		// 1 + 5 modes' runs (commit-order, writeset, optimistic, schema,
		// domain's own) × 7 worker counts = 36 runs; window 64 MiB:
		// live 8×64 + 36×64/6 = 512 + 384 = 896; ×1.5 = 1344; + 64.
		{"defaults", Options{}, 1408 * mib},
		// 24 MiB window (replay's default): 8×24 + 36×4 = 336; 504 + 64.
		{"replay's window", Options{WindowBytes: 24 * mib}, 568 * mib},
		// writeset, 3 worker counts: 4 runs: 192 + 16 = 208; 312 + 64.
		{"writeset, 3 worker counts", Options{WindowBytes: 24 * mib, Modes: []depend.Mode{depend.Writeset}, Workers: []int{1, 4, 16}}, 376 * mib},
		// the same with a second unit size (and one repeated): 8 runs:
		// 192 + 32 = 224; 336 + 64.
		{"two unit sizes", Options{WindowBytes: 24 * mib, Modes: []depend.Mode{depend.Writeset}, Workers: []int{1, 4, 16}, CompareUnits: []int{50, sequencerDefaultUnit()}}, 400 * mib},
	} {
		if got := MemoryLimit(tc.opt); got != tc.want {
			t.Errorf("%s: MemoryLimit = %d MiB, want %d MiB", tc.name, got/mib, tc.want/mib)
		}
	}
}

func sequencerDefaultUnit() int { return Options{}.withDefaults().UnitTxns }
