package prefetch

import (
	"reflect"
	"testing"

	"github.com/prepl/prepl/txn"
)

// sbtest is sysbench's table: id primary key, k a secondary index, c
// with a prefix index (left out: a whole value would not name an entry).
var sbtest = &txn.TableDef{Schema: "sb", Name: "t",
	Columns: []txn.ColumnDef{{Name: "id", DataType: "int"}, {Name: "k", DataType: "int"}, {Name: "c", DataType: "char", Charset: "latin1"}}}

var sbtestStats = []statRow{{"PRIMARY", "id", 0}, {"c_pre", "c", 10}, {"k_1", "k", 0}}

func TestNewTable(t *testing.T) {
	got := newTable(sbtest, sbtestStats)
	want := []index{{name: "PRIMARY", primary: true, columns: []int{0}}, {name: "k_1", columns: []int{1, 0}}}
	if got == nil || !reflect.DeepEqual(got.indexes, want) {
		t.Fatalf("newTable: got %+v, want indexes %+v", got, want)
	}
	// A secondary index that holds a primary key column names it once.
	two := &txn.TableDef{Columns: []txn.ColumnDef{{Name: "a"}, {Name: "b"}}}
	got = newTable(two, []statRow{{"PRIMARY", "a", 0}, {"PRIMARY", "b", 0}, {"ba", "b", 0}})
	if want := []int{1, 0}; got == nil || !reflect.DeepEqual(got.indexes[1].columns, want) {
		t.Errorf("index (b) on primary key (a, b): got %+v, want columns %v", got, want)
	}
	for name, c := range map[string]struct {
		def   *txn.TableDef
		stats []statRow
	}{
		"no primary key":   {sbtest, []statRow{{"k_1", "k", 0}}},
		"prefix primary":   {sbtest, []statRow{{"PRIMARY", "c", 4}}},
		"system-versioned": {&txn.TableDef{SystemVersioned: true, Columns: sbtest.Columns}, sbtestStats},
	} {
		if got := newTable(c.def, c.stats); got != nil {
			t.Errorf("%s: got %+v, want nothing to read ahead", name, got)
		}
	}
}

func TestReads(t *testing.T) {
	tb := &txn.Table{Schema: "sb", Name: "t", Types: []byte{3, 3, 254}} // LONG, LONG, STRING
	other := &txn.Table{Schema: "sb", Name: "unknown", Types: []byte{3}}
	def := newTable(sbtest, sbtestStats)
	lookup := func(schema, name string) *table {
		if schema+"."+name == "sb.t" {
			return def
		}
		return nil
	}
	tx := &txn.Txn{Changes: []txn.Change{
		{Row: &txn.RowChange{Kind: txn.Update, Table: tb, Before: []txn.Value{int64(1), int64(10), []byte("a")}, After: []txn.Value{int64(1), int64(11), []byte("a")}}},
		{Row: &txn.RowChange{Kind: txn.Insert, Table: tb, After: []txn.Value{int64(2), nil, []byte("b")}}},
		{Row: &txn.RowChange{Kind: txn.Delete, Table: other, Before: []txn.Value{int64(3)}}},
		{Stmt: &txn.Statement{SQL: "DROP TEMPORARY TABLE x"}},
	}}
	got := reads([]*txn.Txn{tx}, lookup)
	want := []read{
		// Each primary key once.
		{"SELECT `id` FROM `sb`.`t` FORCE INDEX (`PRIMARY`) WHERE (`id`) IN ((1),(2))", 0},
		// The before and after entries of k; the insert's k is NULL: none.
		{"SELECT `k`,`id` FROM `sb`.`t` FORCE INDEX (`k_1`) WHERE (`k`,`id`) IN ((10,1),(11,1))", 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reads:\n got %v\nwant %v", got, want)
	}

	// Many rows: one SELECT per index for every chunkRows rows, each
	// with the place of its first row; a row changed twice is read once,
	// at its first change.
	big := &txn.Txn{}
	for i := 0; i < chunkRows+1; i++ {
		big.Changes = append(big.Changes, txn.Change{Row: &txn.RowChange{Kind: txn.Update, Table: tb,
			Before: []txn.Value{int64(i), int64(i), nil}, After: []txn.Value{int64(i), int64(i + 1), nil}}})
	}
	big.Changes = append(big.Changes, big.Changes[0])
	got = reads([]*txn.Txn{big}, lookup)
	if len(got) != 4 || got[0].row != 0 || got[1].row != 0 || got[2].row != chunkRows || got[3].row != chunkRows {
		t.Errorf("%d updates: got %v, want 4 SELECTs, at rows 0, 0, %d, %d", chunkRows+1, got, chunkRows, chunkRows)
	}
}
