package mysql

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/prepl/prepl/txn"
)

// TestScriptDDL: a DDL prints as execDDL sends it (its session, its
// database, the statement, the reset), then prepl's row session; what the
// client would misread is made runnable: a USE of the database a CREATE
// DATABASE is making (prepl goes on past its error) is a comment, a body
// with semicolons goes between DELIMITER lines, and a trailing line
// comment does not swallow the semicolon.
func TestScriptDDL(t *testing.T) {
	var out bytes.Buffer
	tgt := NewOffline()
	s, err := tgt.NewScript(&out, true)
	if err != nil {
		t.Fatal(err)
	}
	format := &txn.Format{Flavor: txn.MariaDB}
	stmt := func(schema, q string) *txn.Statement {
		return &txn.Statement{SQL: q, Schema: schema, DDL: true, CharsetClient: 46, CollationConn: 46, CollationServer: 8,
			UnixMicro: 1_600_000_000_500_000, ForeignKeyChecks: true, UniqueChecks: true}
	}
	sts := []*txn.Statement{
		stmt("d", "CREATE DATABASE d"),
		stmt("d", "CREATE PROCEDURE p() BEGIN SELECT 1; SELECT '$$'; END"),
		stmt("", "DROP TABLE d.t -- gone"),
	}
	for i, st := range sts {
		tx := &txn.Txn{GTID: "0-1-1", Domain: 0, ServerID: 1, SeqNo: uint64(i + 1), Format: format, Changes: []txn.Change{{Stmt: st}}}
		if err := s.Txn(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
	}
	after := DDLSessionReset + ";\n" + RowSession + ";\n"
	want := RowSession + ";\n" + ScriptNote +
		DDLSession(sts[0], true, nil) + ";\n-- USE `d` (the database does not exist yet: prepl goes on past the error)\n" +
		"CREATE DATABASE d;\n" + after +
		DDLSession(sts[1], true, nil) + ";\nUSE `d`;\n" +
		"DELIMITER $$$\nCREATE PROCEDURE p() BEGIN SELECT 1; SELECT '$$'; END\n$$$\nDELIMITER ;\n" + after +
		DDLSession(sts[2], true, nil) + ";\n" +
		"DROP TABLE d.t -- gone\n;\n" + after
	if got := out.String(); got != want {
		t.Errorf("script:\n%s\nwant:\n%s", got, want)
	}
}

// TestScriptRows: a transaction's rows print as the batch Render writes
// for it, one statement a line, then COMMIT; the offline target renders
// with the definitions put in its catalog.
func TestScriptRows(t *testing.T) {
	ctx := context.Background()
	d := &txn.TableDef{Schema: "d", Name: "t", Columns: []txn.ColumnDef{{Name: "id", DataType: "int"}, {Name: "v", DataType: "int", Nullable: true}},
		Indexes: []txn.IndexDef{{Name: "PRIMARY", Primary: true, Columns: []int{0}}}, Transactional: true}
	tb := &txn.Table{Schema: "d", Name: "t", Types: []byte{txn.TypeLong, txn.TypeLong}, Meta: []uint16{0, 0}, Nullable: []bool{false, true}}
	ins := func(id, v int64) txn.Change {
		return txn.Change{Row: &txn.RowChange{Kind: txn.Insert, Table: tb, After: []txn.Value{id, v}}}
	}
	tx := &txn.Txn{GTID: "0-1-5", SeqNo: 5, Changes: []txn.Change{ins(1, 10), ins(2, 20), ins(3, 30)}}
	for _, compaction := range []bool{true, false} {
		var out bytes.Buffer
		tgt := NewOffline()
		tgt.Catalog.Put("d", "t", d)
		s, err := tgt.NewScript(&out, compaction)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Txn(ctx, tx); err != nil {
			t.Fatal(err)
		}
		b, err := tgt.Render(ctx, []*txn.Txn{tx}, compaction)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		want.WriteString(RowSession + ";\n" + ScriptNote)
		want.WriteString(strings.SplitN(b.(*Batch).String(), "\n", 2)[1]) // after "-- chunk 0"
		want.WriteString("COMMIT;\n")
		if out.String() != want.String() {
			t.Errorf("compaction %v: script:\n%s\nwant:\n%s", compaction, out.String(), want.String())
		}
		if !bytes.Contains(out.Bytes(), []byte("),(")) {
			t.Errorf("compaction %v: the three inserts are not one multi-row INSERT:\n%s", compaction, out.String())
		}
	}
}
