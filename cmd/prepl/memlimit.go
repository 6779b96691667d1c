package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Go's soft memory limit keeps the heap near what prepl holds, where
// GOGC=400 alone (main) would let a live heap of 100 MiB take 500 MiB.
// But a limit below the live heap has the collector run without end: one
// transaction bigger than --memory-budget, applied alone, is live whole.
// So after each collection the limit is set to the base, or to 3/2 of
// the heap still live when that is more: the collector then works as
// with GOGC=50 while the big transaction is held, and the limit comes
// back to the base once it is gone.

// memoryLimitRoom is what the base limit allows beyond the budget: the
// runtime, connections, table definitions, and garbage between
// collections. 64 MiB left the collector too little garbage to collect
// on a binlog of wide rows (the TPC-C-like workload: 345,000 row changes
// of 196 MB): it ran back to back, the scavenger handing pages to the OS
// that the next unit faulted in again (madvise alone 14-21% of prepl's
// CPU), and prepl took 11.5-13.4 s of CPU; with 160 MiB, 5.4-6.4 s, RSS
// 245 MB -> 280 MB (docs/benchmarks.md, "The memory limit").
const memoryLimitRoom = 160 << 20

var (
	memoryLimitBase atomic.Int64
	memoryLimitOnce sync.Once
)

// keepMemoryLimit sets the soft memory limit to base, raised after each
// collection as the live heap needs.
func keepMemoryLimit(base int64) {
	memoryLimitBase.Store(base)
	debug.SetMemoryLimit(base)
	memoryLimitOnce.Do(func() { runtime.SetFinalizer(new(gcSentinel), afterGC) })
}

// gcSentinel is garbage as soon as it is made: its finalizer runs after
// each collection, and arms itself again.
type gcSentinel struct{ _ [16]byte } // not a tiny allocation, which may never be finalized

func afterGC(s *gcSentinel) {
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	limit := memoryLimitBase.Load()
	if live[0].Value.Kind() == metrics.KindUint64 {
		limit = max(limit, int64(live[0].Value.Uint64())*3/2)
	}
	debug.SetMemoryLimit(limit)
	runtime.SetFinalizer(s, afterGC)
}
