package depend_test

import (
	"testing"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/internal/benchlog"
)

// BenchmarkKeys computes the writeset of every transaction of a binlog,
// one at a time (--commit-unit 1).
func BenchmarkKeys(b *testing.B) {
	for _, w := range benchlog.Workloads {
		b.Run(string(w), func(b *testing.B) {
			txs, rows := benchlog.Txns(b, w)
			cat := benchlog.NewCatalog()
			m := benchlog.Start(b)
			for range b.N {
				for _, tx := range txs {
					if _, why := depend.Keys(tx, cat); why != depend.ReasonNone {
						b.Fatalf("%s is a barrier: %s", tx.ID(), why)
					}
				}
			}
			m.Report(len(txs), rows)
		})
	}
}

// BenchmarkTracker feeds a binlog's commit units (prepl's defaults:
// writeset mode, up to 500 transactions each, merged) to the tracker, and
// starts and finishes each as soon as it is ready.
func BenchmarkTracker(b *testing.B) {
	for _, w := range benchlog.Workloads {
		b.Run(string(w), func(b *testing.B) {
			txs, rows := benchlog.Txns(b, w)
			units := benchlog.Units(txs, benchlog.UnitTxns)
			cat := benchlog.NewCatalog()
			m := benchlog.Start(b)
			for range b.N {
				tr := depend.New(depend.Writeset, cat)
				for _, u := range units {
					tr.Add(depend.Merge(u))
					for _, s := range tr.Ready() {
						tr.Done(s.Seq)
					}
				}
				if tr.Pending() != 0 {
					b.Fatalf("%d units left pending", tr.Pending())
				}
			}
			m.Report(len(txs), rows)
		})
	}
}
