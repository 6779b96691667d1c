package run

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Go's soft memory limit keeps the heap near what prepl holds, where
// GOGC=400 alone (cmd/prepl's main) would let a live heap of 100 MiB take 500 MiB.
// But a limit below the live heap has the collector run without end: one
// transaction bigger than --memory-budget, applied alone, is live whole.
// So after each collection the limit is set to the base, or to 3/2 of
// the heap still live when that is more: the collector then works as
// with GOGC=50 while the big transaction is held, and the limit comes
// back to the base once it is gone.

// MemoryLimitRoom is what the base limit allows beyond the budget: the
// runtime, connections, table definitions, and garbage between
// collections. 64 MiB left the collector too little garbage to collect
// on a binlog of wide rows (the TPC-C-like workload: 345,000 row changes
// of 196 MB): it ran back to back, the scavenger handing pages to the OS
// that the next unit faulted in again (madvise alone 14-21% of prepl's
// CPU), and prepl took 11.5-13.4 s of CPU; with 160 MiB, 5.4-6.4 s, RSS
// 245 MB -> 280 MB (docs/benchmarks.md, "The memory limit").
const MemoryLimitRoom = 160 << 20

var (
	memoryLimitBase atomic.Int64
	memoryLimitOnce sync.Once
)

// SetMemoryLimit sets Go's soft memory limit from a --memory-budget of
// budget bytes, unless GOMEMLIMIT in the environment does.
func SetMemoryLimit(budget int) {
	if os.Getenv("GOMEMLIMIT") == "" {
		keepMemoryLimit(int64(budget) + MemoryLimitRoom)
	}
}

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

// DefaultMemoryBudget, --memory-budget's default, keeps prepl's RSS under 200 MB on the scale
// benchmark's binlog (docs/benchmarks.md, make bench-scale).
const DefaultMemoryBudget = "96MiB"

// WindowOf is the --window a memory budget leaves when none is given: a
// quarter of it. analyze predicts replay/replicate with the window of the
// default budget (DefaultWindow), so both take the default from here.
func WindowOf(budget int) int { return budget / 4 }

// DefaultWindow is --window's default: WindowOf the default --memory-budget,
// written as a size ParseBytes reads back ("24MiB").
func DefaultWindow() string {
	b, err := ParseBytes(DefaultMemoryBudget)
	if err != nil {
		panic("DefaultMemoryBudget: " + err.Error())
	}
	return FormatBytes(WindowOf(b))
}

// DefaultMaxTxnSize is --max-txn-size's default, below the 4 GiB of
// binlog.DefaultMaxTxnSize (a library caller's): prepl holds a
// transaction whole in memory, about 5 times its binlog size.
const DefaultMaxTxnSize = "256MiB"

// FormatBytes writes n as a size ParseBytes reads back: in GiB, MiB or KiB
// when it is a whole number of them ("1GiB", "24MiB"), else in bytes.
func FormatBytes(n int) string {
	for _, u := range []struct {
		suffix string
		size   int
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.Itoa(n/u.size) + u.suffix
		}
	}
	return strconv.Itoa(n)
}

// ParseBytes reads "64MiB", "1GiB", "500KB" or a plain number of bytes.
func ParseBytes(s string) (int, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}}
	mult := 1
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q (want e.g. 64MiB)", s)
	}
	return n * mult, nil
}
