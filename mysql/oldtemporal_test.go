package mysql

import (
	"context"
	"reflect"
	"testing"

	"github.com/prepl/prepl/txn"
)

// TestRedecode: a rows event of MariaDB's pre-10.1 temporal format is
// decoded again with the target's fractional digits where a column has
// some or the reader could not decode it, its changes replaced in place;
// the other events keep theirs; a target column that is not temporal is
// an error.
func TestRedecode(t *testing.T) {
	tb := &txn.Table{Schema: "o", Name: "t", Types: []byte{txn.TypeLong, txn.TypeTime, txn.TypeDatetime}}
	def := &txn.TableDef{Schema: "o", Name: "t", Columns: []txn.ColumnDef{{Name: "id", DataType: "int"},
		{Name: "t", DataType: "time", FSP: 2}, {Name: "d", DataType: "datetime"}}}
	var asked [][]int
	decoded := func(id int64) txn.RowChange {
		return txn.RowChange{Kind: txn.Insert, Table: tb, After: []txn.Value{id, txn.Temporal("00:00:00.00"), nil}, Event: &txn.RowsEvent{}}
	}
	redecode := func(fsp []int) ([]txn.RowChange, error) {
		asked = append(asked, fsp)
		return []txn.RowChange{decoded(1), decoded(2)}, nil
	}
	ev := &txn.RowsEvent{Redecode: redecode, Undecoded: true}
	plain := &txn.RowChange{Kind: txn.Insert, Table: tb, After: []txn.Value{int64(9), nil, nil}, Event: &txn.RowsEvent{}}
	stmt := &txn.Statement{SQL: "SELECT 1"}
	tx := &txn.Txn{Changes: []txn.Change{{Stmt: stmt}, {Row: &txn.RowChange{Kind: txn.Insert, Table: tb, Event: ev}}, {Row: plain}}}
	c := NewCatalog(nil)
	c.tables["o.t"] = def
	if err := c.Redecode(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{0, 2, 0}}; !reflect.DeepEqual(asked, want) {
		t.Errorf("decoded with %v, want %v", asked, want)
	}
	if len(tx.Changes) != 4 || tx.Changes[0].Stmt != stmt || tx.Changes[3].Row != plain ||
		tx.Changes[1].Row.After[0] != int64(1) || tx.Changes[2].Row.After[0] != int64(2) {
		t.Errorf("changes after decoding: %+v", tx.Changes)
	}

	// Decoded by the reader, and no column with digits: kept as it is.
	asked = nil
	def.Columns[1].FSP = 0
	kept := &txn.RowChange{Kind: txn.Insert, Table: tb, After: []txn.Value{int64(3), nil, nil}, Event: &txn.RowsEvent{Redecode: redecode}}
	tx = &txn.Txn{Changes: []txn.Change{{Row: kept}}}
	if err := c.Redecode(context.Background(), tx); err != nil || asked != nil || tx.Changes[0].Row != kept {
		t.Errorf("an event without digits decoded again (%v, %v)", asked, err)
	}

	def.Columns[2].DataType = "varchar"
	tx = &txn.Txn{Changes: []txn.Change{{Row: &txn.RowChange{Kind: txn.Insert, Table: tb, Event: ev}}}}
	if err := c.Redecode(context.Background(), tx); err == nil {
		t.Error("a target column of another type gave the digits")
	}
}
