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

// TestXARowsSavepoints: the rows an XA transaction keeps are those its
// savepoints left, by the server's rules; a statement that is no
// savepoint, or a savepoint never set, is refused.
func TestXARowsSavepoints(t *testing.T) {
	x := "X'7831',X'',1"
	stmt := func(q string) Change { return Change{Stmt: &Statement{SQL: q}} }
	rows := map[string]Change{}
	row := func(n string) Change {
		if _, ok := rows[n]; !ok {
			rows[n] = Change{Row: &RowChange{Kind: Insert, Table: &Table{Schema: "s", Name: n}}}
		}
		return rows[n]
	}
	cases := []struct {
		name    string
		changes []Change
		want    string // the rows kept, by table name; "!" for refused
	}{
		{"savepoint, nothing undone", []Change{row("a"), stmt("SAVEPOINT `savep`"), row("b")}, "ab"},
		{"rollback to", []Change{row("a"), stmt("SAVEPOINT `s1`"), row("b"), row("c"), stmt("ROLLBACK TO `s1`"), row("d")}, "ad"},
		{"rollback to twice: the savepoint stays", []Change{stmt("SAVEPOINT s"), row("a"), stmt("ROLLBACK TO SAVEPOINT s"), row("b"), stmt("rollback work to savepoint S"), row("c")}, "c"},
		{"rollback to the outer drops the inner", []Change{stmt("SAVEPOINT o"), row("a"), stmt("SAVEPOINT i"), row("b"), stmt("ROLLBACK TO o"), row("c"), stmt("ROLLBACK TO i")}, "!"},
		{"a savepoint set again moves", []Change{stmt("SAVEPOINT o"), row("a"), stmt("SAVEPOINT i"), row("b"), stmt("SAVEPOINT o"), row("c"), stmt("ROLLBACK TO o"), row("d"), stmt("ROLLBACK TO o"), row("e")}, "abe"},
		{"release drops it and the later ones", []Change{stmt("SAVEPOINT a"), row("a"), stmt("SAVEPOINT b"), stmt("RELEASE SAVEPOINT a"), row("b"), stmt("ROLLBACK TO b")}, "!"},
		{"release keeps the rows", []Change{stmt("SAVEPOINT a"), row("a"), stmt("RELEASE SAVEPOINT `a`"), row("b")}, "ab"},
		{"quoted names", []Change{stmt("SAVEPOINT `a``b c`"), row("a"), stmt("/* x */ ROLLBACK TO `a``b c`;"), row("b")}, "b"},
		{"rollback to a savepoint never set", []Change{row("a"), stmt("ROLLBACK TO s")}, "!"},
		{"another statement", []Change{row("a"), stmt("DROP TEMPORARY TABLE t")}, "!"},
		{"a savepoint with something after", []Change{stmt("SAVEPOINT a b")}, "!"},
	}
	for _, c := range cases {
		tx := &Txn{XA: true, Changes: append(append([]Change{stmt("XA START " + x)}, c.changes...), stmt("XA END "+x), stmt("XA PREPARE "+x))}
		n := len(tx.Changes)
		got, other := tx.XARows()
		var kept string
		if other != nil {
			kept = "!"
		} else {
			for _, ch := range got.Changes {
				if ch.Row == nil {
					t.Errorf("%s: a statement kept: %q", c.name, ch.Stmt.SQL)
					continue
				}
				kept += ch.Row.Table.Name
			}
		}
		if kept != c.want || len(tx.Changes) != n {
			t.Errorf("%s: kept %q (source left with %d changes), want %q (and %d)", c.name, kept, len(tx.Changes), c.want, n)
		}
	}
}
