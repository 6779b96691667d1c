package main

import (
	"fmt"

	"github.com/prepl/prepl/analyze"
	"github.com/prepl/prepl/analyze/calibrate"
	"github.com/prepl/prepl/compact"
	"github.com/prepl/prepl/txn"
)

// compactShape is analyze's view of the apply engine's compaction: a
// unit's changes to a compactable table become its net effect, sent as
// multi-row statements (deletes, inserts, overwrites); other changes go
// one statement each, in order. It is what mysql renders.
func compactShape(members []*txn.Txn, cat txn.Catalog) analyze.UnitShape {
	if len(members) == 1 && members[0].Rows() < 2 {
		return analyze.PlainShape(members, cat)
	}
	plan, ok, err := compact.Unit(members, func(schema, name string) (*txn.TableDef, error) {
		if d, ok := cat.Table(schema, name); ok && d != nil {
			return d, nil
		}
		return nil, fmt.Errorf("table %s.%s unknown", schema, name)
	})
	if err != nil || !ok {
		return analyze.PlainShape(members, cat)
	}
	s := analyze.UnitShape{Statements: len(plan.Ordered), Rows: len(plan.Ordered)}
	for _, n := range plan.Nets {
		for _, rows := range [][][]txn.Value{n.Deletes, n.Inserts, n.Updates} {
			s.Statements += (len(rows) + calibrate.StatementRows - 1) / calibrate.StatementRows
			s.Rows += len(rows)
		}
	}
	return s
}
