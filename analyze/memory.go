package analyze

import (
	"slices"

	"github.com/prepl/prepl/depend"
)

// SimulatedRuns counts the apply runs an analysis with opt simulates at
// most: per commit unit size, the serial run and one per (mode, workers);
// domain mode shares writeset's runs while the binlog has one GTID domain
// and gets its own (and writeset new ones) from a second domain on, which
// is counted here.
func SimulatedRuns(opt Options) int {
	opt = opt.withDefaults()
	modes := slices.DeleteFunc(slices.Clone(opt.Modes), func(m depend.Mode) bool { return m == depend.Domain })
	perSize := len(modes)
	if slices.Contains(opt.Modes, depend.Domain) {
		if !slices.Contains(modes, depend.Writeset) {
			perSize++ // domain's runs before a second domain are writeset's
		}
		perSize++ // domain's own runs after it
	}
	sizes := []int{opt.UnitTxns}
	for _, n := range opt.CompareUnits {
		if !slices.Contains(sizes, n) {
			sizes = append(sizes, n)
		}
	}
	return len(sizes) * (1 + perSize*len(opt.Workers))
}

// MemoryLimit is the soft memory limit (for debug.SetMemoryLimit) that
// keeps an analysis with opt in bounded memory without starving the
// collector. What it holds is bounded by the window: the transactions the
// simulated runs have in flight, shared by all of them and decoded into
// about 8 times their binlog bytes, and, per run, its units and the
// dependency tracker's locks for them, about a sixth of the window (both
// measured at the peak of the TPC-C-like binlog of docs/benchmarks.md:
// 190 MB shared and 124 MB over 29 runs with a 24 MiB window). The limit
// is half as much again, plus 64 MiB: with a limit at the live heap
// itself the collector runs back to back (40 s of CPU instead of 17 s on
// that binlog).
func MemoryLimit(opt Options) int64 {
	opt = opt.withDefaults()
	w := int64(opt.WindowBytes)
	live := 8*w + int64(SimulatedRuns(opt))*w/6
	return live*3/2 + 64<<20
}
