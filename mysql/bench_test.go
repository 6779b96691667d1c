package mysql

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/compact"
	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/internal/benchlog"
	"github.com/prepl/prepl/txn"
)

// benchTarget is a target with the benchmark table in its catalog and no
// server: rendering reads nothing else.
func benchTarget() *Target {
	d := benchlog.Table()
	return &Target{Catalog: &Catalog{tables: map[string]*txn.TableDef{d.QualifiedName(): d}}, IsMariaDB: true}
}

// planUnit is what the apply engine does before rendering a unit
// (apply.renderUnit): plan it with the target's lookups, compaction on.
func planUnit(ctx context.Context, t *Target, u []*txn.Txn) (compact.UnitPlan, error) {
	return compact.PlanUnit(u, func(tx *txn.Txn) (string, error) { return t.Verbatim(ctx, tx) }, t.Lookup(ctx), true)
}

// BenchmarkRender renders a binlog's commit units, planned beforehand:
// up to 500 transactions a unit (prepl's default, compacted) and one
// (--commit-unit 1).
func BenchmarkRender(b *testing.B) {
	ctx := context.Background()
	for _, w := range benchlog.Workloads {
		for _, size := range []int{benchlog.UnitTxns, 1} {
			b.Run(fmt.Sprintf("%s/unit=%d", w, size), func(b *testing.B) {
				txs, rows := benchlog.Txns(b, w)
				t := benchTarget()
				units := benchlog.Units(txs, size)
				plans := make([]compact.UnitPlan, len(units))
				for i, u := range units {
					var err error
					if plans[i], err = planUnit(ctx, t, u); err != nil {
						b.Fatal(err)
					}
				}
				m := benchlog.Start(b)
				for range b.N {
					for i, u := range units {
						if _, err := t.RenderPlan(ctx, u, plans[i]); err != nil {
							b.Fatal(err)
						}
					}
				}
				m.Report(len(txs), rows)
			})
		}
	}
}

// BenchmarkPipeline is all the CPU prepl spends on a transaction but the
// network's and the apply runtime's: a binlog file read and decoded, its
// transactions grouped into commit units (prepl's defaults), each unit's
// writeset tracked, its compaction planned and its SQL rendered.
func BenchmarkPipeline(b *testing.B) {
	benchlog.PerFile(b, pipeline)
}

func pipeline(b *testing.B, path string) (txns, rows int) {
	ctx := context.Background()
	t := benchTarget()
	r, err := fileset.Open([]string{path}, fileset.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	tr := depend.New(depend.Writeset, t.Catalog)
	units := map[uint64][]*txn.Txn{}
	var unit []*txn.Txn
	seal := func() {
		merged := depend.Merge(unit)
		units[merged.Seq] = unit
		tr.Add(merged)
		unit = nil
		for _, s := range tr.Ready() {
			u := units[s.Seq]
			delete(units, s.Seq)
			p, err := planUnit(ctx, t, u)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := t.RenderPlan(ctx, u, p); err != nil {
				b.Fatal(err)
			}
			tr.Done(s.Seq)
		}
	}
	for {
		tx, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		txns++
		rows += tx.Rows()
		if len(unit) > 0 && (len(unit) == benchlog.UnitTxns || !depend.CanJoin(depend.Writeset, unit[0], unit[len(unit)-1], tx)) {
			seal()
		}
		unit = append(unit, tx)
	}
	if len(unit) > 0 {
		seal()
	}
	if tr.Pending() != 0 {
		b.Fatalf("%d units left pending", tr.Pending())
	}
	return txns, rows
}
