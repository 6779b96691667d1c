package analyze

import (
	"testing"

	"github.com/prepl/prepl/txn"
)

// mapCatalog is a txn.Catalog of table definitions by schema.name.
type mapCatalog map[string]*txn.TableDef

func (m mapCatalog) Table(schema, name string) (*txn.TableDef, bool) {
	d, ok := m[schema+"."+name]
	return d, ok
}

// A parent d.p (id) and a child d.c (id, pid, v) whose pid references
// p.id without an action.
var (
	fkParentMap = &txn.Table{Schema: "d", Name: "p", Types: []byte{txn.TypeLong, txn.TypeLong}, Nullable: []bool{false, true}, Names: []string{"id", "n"}, PrimaryKey: []int{0}}
	fkChildMap  = &txn.Table{Schema: "d", Name: "c", Types: []byte{txn.TypeLong, txn.TypeLong, txn.TypeLong}, Nullable: []bool{false, true, true}, Names: []string{"id", "pid", "v"}, PrimaryKey: []int{0}}
	fkCatalog   = mapCatalog{
		"d.p": {Schema: "d", Name: "p", Transactional: true, Referenced: true,
			Columns: []txn.ColumnDef{{Name: "id", DataType: "int"}, {Name: "n", DataType: "int", Nullable: true}},
			Indexes: []txn.IndexDef{{Name: "PRIMARY", Primary: true, Columns: []int{0}}}},
		"d.c": {Schema: "d", Name: "c", Transactional: true,
			Columns: []txn.ColumnDef{{Name: "id", DataType: "int"}, {Name: "pid", DataType: "int", Nullable: true}, {Name: "v", DataType: "int", Nullable: true}},
			Indexes: []txn.IndexDef{{Name: "PRIMARY", Primary: true, Columns: []int{0}}},
			ForeignKeys: []txn.ForeignKeyDef{{Name: "fk_p", Columns: []int{1}, RefTable: "p", RefColumns: []string{"id"},
				OnDelete: "NO ACTION", OnUpdate: "NO ACTION"}}},
	}
)

func rowIns(t *txn.Table, vals ...txn.Value) txn.Change {
	return txn.Change{Row: &txn.RowChange{Kind: txn.Insert, Table: t, After: vals, AfterCols: allCols(len(vals))}}
}

func rowUpd(t *txn.Table, before, after []txn.Value) txn.Change {
	return txn.Change{Row: &txn.RowChange{Kind: txn.Update, Table: t, Before: before, After: after,
		BeforeCols: allCols(len(before)), AfterCols: allCols(len(after))}}
}

func allCols(n int) []bool {
	c := make([]bool, n)
	for i := range c {
		c[i] = true
	}
	return c
}

// TestForeignKeysToChangedRows: a transaction is counted once per foreign
// key it references through, and as referencing a changed row when a
// parent row it references was changed by one of the HotWindow
// transactions before it (not by itself only).
func TestForeignKeysToChangedRows(t *testing.T) {
	var g gen
	txs := []*txn.Txn{
		// 1: changes parent 1.
		g.txn(rowUpd(fkParentMap, []txn.Value{int64(1), int64(0)}, []txn.Value{int64(1), int64(5)})),
		// 2: references parent 1, changed by 1 just before: counted, to a changed row.
		g.txn(rowIns(fkChildMap, int64(10), int64(1), int64(0))),
		// 3: references parent 2, never changed: counted, not to a changed row.
		g.txn(rowIns(fkChildMap, int64(11), int64(2), int64(0))),
		// 4: a NULL reference references nothing: not counted.
		g.txn(rowIns(fkChildMap, int64(12), nil, int64(0))),
		// 5: changes parent 3 and references it itself: counted, not to a
		// row another transaction changed.
		g.txn(rowUpd(fkParentMap, []txn.Value{int64(3), int64(0)}, []txn.Value{int64(3), int64(1)}),
			rowIns(fkChildMap, int64(13), int64(3), int64(0))),
		// 6: two rows referencing parent 1 (changed by 1, five back) and 2:
		// counted once, to a changed row.
		g.txn(rowIns(fkChildMap, int64(14), int64(1), int64(0)), rowIns(fkChildMap, int64(15), int64(2), int64(0))),
		// 7: an update of a child row keeping its reference to parent 3
		// (changed by 5): it holds no reference, not counted.
		g.txn(rowUpd(fkChildMap, []txn.Value{int64(13), int64(3), int64(0)}, []txn.Value{int64(13), int64(3), int64(9)})),
		// 8: an update moving child 11 from parent 2 to parent 3 (changed
		// by 5, three back): counted once, to a changed row.
		g.txn(rowUpd(fkChildMap, []txn.Value{int64(11), int64(2), int64(0)}, []txn.Value{int64(11), int64(3), int64(0)})),
		// 9: references parent 1, last changed by 1, eight back: beyond a
		// window of 5, not to a changed row.
		g.txn(rowIns(fkChildMap, int64(16), int64(1), int64(0))),
	}
	rep := analyzeAll(Options{Catalog: fkCatalog, HotWindow: 5, Workers: []int{1}}, txs)
	want := []Offender{{Name: "d.c (pid) → d.p (id)", Transactions: 6, Waits: 3, First: "0-1-2"}}
	got := rep.Offenders.ForeignKeys
	if len(got) != len(want) || got[0] != want[0] {
		t.Errorf("foreign keys %+v, want %+v", got, want)
	}

	// Without the catalog, the binlog's metadata has no foreign keys.
	if rep := analyzeAll(Options{HotWindow: 5, Workers: []int{1}}, txs); len(rep.Offenders.ForeignKeys) != 0 {
		t.Errorf("foreign keys without a catalog: %+v", rep.Offenders.ForeignKeys)
	}
}

// TestEveryUnit: a hot key is in nearly every unit when its changes times
// the transactions per unit reach the binlog's transactions.
func TestEveryUnit(t *testing.T) {
	hot := []Offender{{Name: "a", Transactions: 250}, {Name: "b", Transactions: 100}, {Name: "c", Transactions: 99}}
	for _, tc := range []struct {
		txns    uint64
		avgUnit float64
		want    []string
	}{
		// 1000 transactions in units of 10: every 10 transactions or
		// more often. a every 4, b every 10, c every 10.1.
		{1000, 10, []string{"a", "b"}},
		// units of 4: only a (every 4).
		{1000, 4, []string{"a"}},
		// units of 3.9: none.
		{1000, 3.9, nil},
		// units of 1 transaction: a unit is a transaction, nothing is
		// "in every unit".
		{100, 1, nil},
	} {
		var got []string
		for _, o := range everyUnit(hot, tc.txns, tc.avgUnit) {
			got = append(got, o.Name)
		}
		if len(got) != len(tc.want) || (len(got) > 0 && (got[0] != tc.want[0] || got[len(got)-1] != tc.want[len(tc.want)-1])) {
			t.Errorf("%d transactions, units of %.1f: %v, want %v", tc.txns, tc.avgUnit, got, tc.want)
		}
	}
}
