package compact_test

import (
	"fmt"
	"testing"

	"github.com/prepl/prepl/compact"
	"github.com/prepl/prepl/internal/benchlog"
	"github.com/prepl/prepl/txn"
)

// BenchmarkPlan plans a binlog's commit units (up to 500 transactions
// each, prepl's default) with compaction.
func BenchmarkPlan(b *testing.B) {
	for _, w := range benchlog.Workloads {
		b.Run(string(w), func(b *testing.B) {
			txs, rows := benchlog.Txns(b, w)
			units := benchlog.Units(txs, benchlog.UnitTxns)
			cat := benchlog.NewCatalog()
			lookup := func(schema, name string) (*txn.TableDef, error) {
				if d, ok := cat.Table(schema, name); ok {
					return d, nil
				}
				return nil, fmt.Errorf("no table %s.%s", schema, name)
			}
			m := benchlog.Start(b)
			for range b.N {
				for _, u := range units {
					p, err := compact.PlanUnit(u, nil, lookup, true)
					if err != nil {
						b.Fatal(err)
					}
					if len(p.Runs) != 1 || p.Runs[0].Plan == nil {
						b.Fatalf("unit of %d transactions not compacted: %+v", len(u), p)
					}
				}
			}
			m.Report(len(txs), rows)
		})
	}
}
