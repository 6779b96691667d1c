package mysql

import (
	"testing"

	"github.com/prepl/prepl/txn"
)

// TestXARows: the XA statements are dropped, rows kept in order; a
// savepoint is kept out (txn.XARows resolves it); any other statement is
// refused.
func TestXARows(t *testing.T) {
	x := "X'7831',X'',1"
	r1 := &txn.RowChange{Kind: txn.Insert, Table: &txn.Table{Schema: "s", Name: "t"}}
	r2 := &txn.RowChange{Kind: txn.Delete, Table: &txn.Table{Schema: "s", Name: "u"}}
	tx := &txn.Txn{XA: true, GTID: "0-1-5", Changes: []txn.Change{{Stmt: &txn.Statement{SQL: "XA START " + x}}, {Row: r1}, {Row: r2},
		{Stmt: &txn.Statement{SQL: "XA END " + x}}, {Stmt: &txn.Statement{SQL: "XA PREPARE " + x}}}}
	rows, err := xaRows(tx, x)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows.Changes) != 2 || rows.Changes[0].Row != r1 || rows.Changes[1].Row != r2 || len(tx.Changes) != 5 {
		t.Errorf("xaRows kept %d changes (source left with %d), want the 2 rows in order and the source untouched", len(rows.Changes), len(tx.Changes))
	}
	tx.Changes = append(tx.Changes[:1], append([]txn.Change{{Stmt: &txn.Statement{SQL: "SAVEPOINT a"}}}, tx.Changes[1:]...)...)
	if rows, err := xaRows(tx, x); err != nil || len(rows.Changes) != 2 {
		t.Errorf("a SAVEPOINT inside an XA transaction: %v, want the 2 rows", err)
	}
	tx.Changes[1].Stmt.SQL = "DROP TEMPORARY TABLE a"
	if _, err := xaRows(tx, x); err == nil {
		t.Error("a DROP TEMPORARY TABLE inside an XA transaction was accepted")
	}
}
