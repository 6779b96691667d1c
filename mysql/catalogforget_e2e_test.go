package mysql_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prepl/prepl/compact"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
)

// TestDDLForgetsOnlyWhatItChanges applies DDL through ApplyDDL on a
// MariaDB target: after ALTER TABLE child ADD FOREIGN KEY ... REFERENCES
// parent ON DELETE CASCADE the cached parent sees the cascade (a unit
// deleting from it is not compacted), and a DDL on one table leaves an
// unrelated table's definition cached (no load of it from the target).
func TestDDLForgetsOnlyWhatItChanges(t *testing.T) {
	ctx := context.Background()
	s := sandbox.MustStart(t, sandbox.Defaults())
	sandbox.MustExec(t, sandbox.MustOpen(t, s, ""), "CREATE DATABASE d",
		"CREATE TABLE d.parent (id INT PRIMARY KEY)",
		"CREATE TABLE d.child (id INT PRIMARY KEY, p INT)",
		"CREATE TABLE d.other (id INT PRIMARY KEY)")
	tgt := openTarget(t, s, s.URL())
	cat := tgt.Catalog
	load := func(name string) *txn.TableDef {
		t.Helper()
		d, err := cat.Load(ctx, "d", name)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, n := range []string{"parent", "child", "other"} {
		load(n)
	}
	if p := load("parent"); p.Referenced || len(p.Cascades) > 0 {
		t.Fatalf("d.parent before the foreign key: referenced %v, cascades %v", p.Referenced, p.Cascades)
	}
	seq := uint64(0)
	ddl := func(sql string) {
		t.Helper()
		seq++
		st := &txn.Statement{SQL: sql, Schema: "d", ForeignKeyChecks: true, UniqueChecks: true}
		gtid := "0-1-" + string(rune('0'+seq))
		tx := &txn.Txn{GTID: gtid, ServerID: 1, SeqNo: seq, Changes: []txn.Change{{Stmt: st}}}
		after := position.Checkpoint{GTIDPos: gtid, LastGTID: gtid, File: "binlog.000001", Pos: uint32(1000 + seq)}
		if _, err := tgt.ApplyDDL(ctx, tx, position.Checkpoint{}, after, ""); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	before := cat.Loads()
	ddl("ALTER TABLE child ADD FOREIGN KEY (p) REFERENCES parent (id) ON DELETE CASCADE")
	if _, ok := cat.Table("d", "other"); !ok {
		t.Error("d.other forgotten after an ALTER TABLE of d.child")
	}
	p := load("parent")
	if !p.Referenced || len(p.Cascades) != 1 || p.Cascades[0].Child != "d.child" {
		t.Fatalf("d.parent after the child's foreign key: referenced %v, cascades %+v; want the cascade from d.child", p.Referenced, p.Cascades)
	}
	load("child")
	load("other")
	if n := cat.Loads() - before; n != 2 {
		t.Errorf("after the ALTER of d.child, %d definitions read again, want 2 (d.parent, d.child)", n)
	}
	m := &txn.Table{Schema: "d", Name: "parent", Types: []byte{3}}
	del := &txn.Txn{GTID: "0-1-99", Changes: []txn.Change{{Row: &txn.RowChange{Kind: txn.Delete, Table: m, Before: []txn.Value{int64(1)}}}}}
	lookup := func(schema, name string) (*txn.TableDef, error) { return cat.Load(ctx, schema, name) }
	if _, ok, err := compact.Unit([]*txn.Txn{del}, lookup); err != nil || ok {
		t.Errorf("a unit deleting from d.parent, whose delete cascades now: compacted %v (%v), want not", ok, err)
	}

	before = cat.Loads()
	ddl("CREATE INDEX i ON other (id)")
	load("parent")
	load("child")
	load("other")
	if n := cat.Loads() - before; n != 1 {
		t.Errorf("after a CREATE INDEX on d.other, %d definitions read again, want 1", n)
	}
}

// TestDDLDefaultDatabaseMissing: a DDL whose default database the target
// lacks fails, as on MariaDB's replica, with a message that says so; the
// same DDL with names qualified runs.
func TestDDLDefaultDatabaseMissing(t *testing.T) {
	ctx := context.Background()
	s := sandbox.MustStart(t, sandbox.Defaults())
	sandbox.MustExec(t, sandbox.MustOpen(t, s, ""), "CREATE DATABASE d")
	tgt := openTarget(t, s, s.URL())
	for i, c := range []struct {
		sql  string
		fail bool
	}{
		{"CREATE TABLE t (id INT PRIMARY KEY)", true},
		{"CREATE TABLE d.t (id INT PRIMARY KEY)", false},
	} {
		st := &txn.Statement{SQL: c.sql, Schema: "nodb", ForeignKeyChecks: true, UniqueChecks: true}
		gtid := "0-1-" + string(rune('1'+i))
		tx := &txn.Txn{GTID: gtid, ServerID: 1, SeqNo: uint64(i + 1), Changes: []txn.Change{{Stmt: st}}}
		after := position.Checkpoint{GTIDPos: gtid, LastGTID: gtid, File: "binlog.000001", Pos: uint32(1000 + i)}
		_, err := tgt.ApplyDDL(ctx, tx, position.Checkpoint{}, after, "")
		if (err != nil) != c.fail {
			t.Fatalf("%s: %v, want failing %v", c.sql, err, c.fail)
		}
		if err != nil && !strings.Contains(err.Error(), "default database `nodb` does not exist on the target") {
			t.Errorf("%s: %v does not say the default database is missing", c.sql, err)
		}
	}
}
