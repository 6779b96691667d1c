package postgres

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/prepl/prepl/txn"
)

// TestRenderGolden renders one commit unit (rows on a keyed table, a
// keyless one and one with a composite key) in source order and
// compacted, and compares the SQL with testdata/render.golden, reviewed
// by hand (go test -update rewrites it).
func TestRenderGolden(t *testing.T) {
	defs := Defs{}
	for _, q := range []string{
		"CREATE TABLE k (id INT PRIMARY KEY, v VARCHAR(10) CHARACTER SET latin1, n INT UNSIGNED)",
		"CREATE TABLE nk (a INT, b VARCHAR(10))",
		"CREATE TABLE c (x INT NOT NULL, y VARCHAR(5) NOT NULL, z INT, PRIMARY KEY (x, y))",
	} {
		if _, err := TranslateDefs(q, "s", Options{}, defs); err != nil {
			t.Fatal(err)
		}
	}
	tgt := &Target{Catalog: newCatalog(defs)}
	k := &txn.Table{Schema: "s", Name: "k", Types: []byte{txn.TypeLong, txn.TypeVarchar, txn.TypeLong}}
	nk := &txn.Table{Schema: "s", Name: "nk", Types: []byte{txn.TypeLong, txn.TypeVarchar}}
	c := &txn.Table{Schema: "s", Name: "c", Types: []byte{txn.TypeLong, txn.TypeVarchar, txn.TypeLong}}
	all := func(n int) []bool { return []bool{true, true, true}[:n] }
	row := func(kind txn.Kind, tb *txn.Table, before, after []txn.Value) txn.Change {
		rc := &txn.RowChange{Kind: kind, Table: tb, Before: before, After: after}
		if before != nil {
			rc.BeforeCols = all(len(before))
		}
		if after != nil {
			rc.AfterCols = all(len(after))
		}
		return txn.Change{Row: rc}
	}
	unit := []*txn.Txn{
		{GTID: "0-1-1", Changes: []txn.Change{
			row(txn.Insert, k, nil, []txn.Value{int64(1), []byte("caf\xe9"), int64(-1)}),
			row(txn.Insert, nk, nil, []txn.Value{int64(1), nil}),
		}},
		{GTID: "0-1-2", Changes: []txn.Change{
			row(txn.Update, k, []txn.Value{int64(2), []byte("a"), int64(0)}, []txn.Value{int64(2), []byte("it's"), int64(5)}),
			row(txn.Delete, k, []txn.Value{int64(3), nil, nil}, nil),
			row(txn.Update, nk, []txn.Value{int64(1), nil}, []txn.Value{int64(1), []byte("x")}),
			row(txn.Delete, c, []txn.Value{int64(1), []byte("a"), int64(1)}, nil),
			row(txn.Delete, c, []txn.Value{int64(2), []byte("b"), nil}, nil),
		}},
	}
	var out strings.Builder
	for _, compaction := range []bool{false, true} {
		b, err := tgt.Render(context.Background(), unit, compaction)
		if err != nil {
			t.Fatal(err)
		}
		if compaction {
			out.WriteString("==== compacted\n")
		} else {
			out.WriteString("==== in source order\n")
		}
		for _, ch := range b.(*Batch).chunks {
			out.WriteString(string(ch.sql) + ";\n")
		}
	}
	if *update {
		if err := os.WriteFile("testdata/render.golden", []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/render.golden")
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("rendered SQL differs from testdata/render.golden (go test -update to rewrite, then review):\n%s", out.String())
	}
}
