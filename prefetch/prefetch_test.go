package prefetch

import (
	"reflect"
	"testing"

	"github.com/prepl/prepl/txn"
)

type catalog map[string]*txn.TableDef

func (c catalog) Table(schema, name string) (*txn.TableDef, bool) {
	d, ok := c[schema+"."+name]
	return d, ok
}

func TestQueries(t *testing.T) {
	def := &txn.TableDef{Schema: "sb", Name: "t",
		Columns: []txn.ColumnDef{{Name: "id"}, {Name: "k"}, {Name: "c"}},
		Indexes: []txn.IndexDef{{Name: "PRIMARY", Primary: true, Columns: []int{0}}, {Name: "k_1", Columns: []int{1}},
			{Name: "c_pre", Columns: []int{2}, Prefix: []int{10}}}}
	tb := &txn.Table{Schema: "sb", Name: "t"}
	other := &txn.Table{Schema: "sb", Name: "unknown"}
	tx := &txn.Txn{Changes: []txn.Change{
		{Row: &txn.RowChange{Kind: txn.Update, Table: tb, Before: []txn.Value{int64(1), int64(10), "a"}, After: []txn.Value{int64(1), int64(11), "a"}}},
		{Row: &txn.RowChange{Kind: txn.Insert, Table: tb, After: []txn.Value{int64(2), nil, "b"}}},
		{Row: &txn.RowChange{Kind: txn.Delete, Table: other, Before: []txn.Value{int64(3)}}},
		{Stmt: &txn.Statement{SQL: "DROP TEMPORARY TABLE x"}},
	}}
	got := queries(catalog{"sb.t": def}, tx)
	want := []query{
		{"SELECT `id` FROM `sb`.`t` FORCE INDEX (`PRIMARY`) WHERE (`id`) IN ((?), (?), (?))", []any{int64(1), int64(1), int64(2)}},
		// The insert's k is NULL: no lookup; the prefix index: none.
		{"SELECT `k` FROM `sb`.`t` FORCE INDEX (`k_1`) WHERE (`k`) IN ((?), (?))", []any{int64(10), int64(11)}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("queries:\n got %+v\nwant %+v", got, want)
	}

	// Many keys: SELECTs of at most maxTuples each.
	big := &txn.Txn{}
	for i := 0; i < maxTuples+1; i++ {
		big.Changes = append(big.Changes, txn.Change{Row: &txn.RowChange{Kind: txn.Delete, Table: tb, Before: []txn.Value{int64(i), nil, nil}}})
	}
	if qs := queries(catalog{"sb.t": def}, big); len(qs) != 2 || len(qs[0].args) != maxTuples || len(qs[1].args) != 1 {
		t.Errorf("%d keys: %d queries", maxTuples+1, len(qs))
	}
}
