package mysql

import (
	"testing"

	"github.com/prepl/prepl/txn"
)

func TestXAOf(t *testing.T) {
	stmt := func(q string) txn.Change { return txn.Change{Stmt: &txn.Statement{SQL: q}} }
	row := txn.Change{Row: &txn.RowChange{Kind: txn.Insert, Table: &txn.Table{Schema: "s", Name: "t"}}}
	x := "X'7831',X'',1"
	cases := []struct {
		name    string
		xa      bool
		changes []txn.Change
		kind    xaKind
		xid     string
	}{
		{"prepare", true, []txn.Change{stmt("XA START " + x), row, stmt("XA END " + x), stmt("XA PREPARE " + x)}, xaPrepare, x},
		{"empty prepare", true, []txn.Change{stmt("XA START " + x), stmt("XA END " + x), stmt("XA PREPARE " + x)}, xaPrepare, x},
		{"commit", true, []txn.Change{stmt("XA COMMIT " + x)}, xaCommit, x},
		{"commit, comment and spaces", true, []txn.Change{stmt("/* c */ xa  commit   " + x + " ")}, xaCommit, x},
		{"rollback", true, []txn.Change{stmt("XA ROLLBACK " + x)}, xaRollback, x},
		{"MySQL one phase", true, []txn.Change{stmt("XA START " + x), row, stmt("XA END " + x), stmt("XA COMMIT " + x + " ONE PHASE")}, xaOnePhase, x},
		{"binary xid with format id", true, []txn.Change{stmt("XA COMMIT X'0a0b',X'7171',7")}, xaCommit, "X'0a0b',X'7171',7"},
		{"not XA", false, []txn.Change{row, stmt("XA COMMIT " + x)}, xaNone, ""},
		{"XA without an XA statement last", true, []txn.Change{stmt("XA START " + x), row}, xaNone, ""},
		{"rollback with rows", true, []txn.Change{row, stmt("XA ROLLBACK " + x)}, xaNone, ""},
		{"nothing", true, nil, xaNone, ""},
	}
	for _, c := range cases {
		kind, xid := xaOf(&txn.Txn{XA: c.xa, Changes: c.changes})
		if kind != c.kind || xid != c.xid {
			t.Errorf("%s: xaOf = %d %q, want %d %q", c.name, kind, xid, c.kind, c.xid)
		}
	}
}

// TestXARows: the XA statements are dropped, rows kept in order; any
// other statement is refused.
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
	if _, err := xaRows(tx, x); err == nil {
		t.Error("a SAVEPOINT inside an XA transaction was accepted")
	}
}
