package txn

import "testing"

// TestXAGroup: each XA group is told apart by its last statement.
func TestXAGroup(t *testing.T) {
	stmt := func(q string) Change { return Change{Stmt: &Statement{SQL: q}} }
	row := Change{Row: &RowChange{Kind: Insert, Table: &Table{Schema: "s", Name: "t"}}}
	x := "X'7831',X'',1"
	cases := []struct {
		name    string
		xa      bool
		changes []Change
		kind    XAKind
		xid     string
	}{
		{"prepare", true, []Change{stmt("XA START " + x), row, stmt("XA END " + x), stmt("XA PREPARE " + x)}, XAPrepare, x},
		{"empty prepare", true, []Change{stmt("XA START " + x), stmt("XA END " + x), stmt("XA PREPARE " + x)}, XAPrepare, x},
		{"commit", true, []Change{stmt("XA COMMIT " + x)}, XACommit, x},
		{"commit, comment and spaces", true, []Change{stmt("/* c */ xa  commit   " + x + " ")}, XACommit, x},
		{"rollback", true, []Change{stmt("XA ROLLBACK " + x)}, XARollback, x},
		{"MySQL one phase", true, []Change{stmt("XA START " + x), row, stmt("XA END " + x), stmt("XA COMMIT " + x + " ONE PHASE")}, XAOnePhase, x},
		{"binary xid with format id", true, []Change{stmt("XA COMMIT X'0a0b',X'7171',7")}, XACommit, "X'0a0b',X'7171',7"},
		{"not XA", false, []Change{row, stmt("XA COMMIT " + x)}, XANone, ""},
		{"XA without an XA statement last", true, []Change{stmt("XA START " + x), row}, XANone, ""},
		{"rollback with rows", true, []Change{row, stmt("XA ROLLBACK " + x)}, XANone, ""},
		{"nothing", true, nil, XANone, ""},
	}
	for _, c := range cases {
		kind, xid := (&Txn{XA: c.xa, Changes: c.changes}).XAGroup()
		if kind != c.kind || xid != c.xid {
			t.Errorf("%s: XAGroup = %d %q, want %d %q", c.name, kind, xid, c.kind, c.xid)
		}
	}
}
