package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
	"github.com/prepl/prepl/verify"
)

// triggerSchema has a table whose triggers set a column and write an
// audit row: rows applied from the binlog must not fire them.
var triggerSchema = []string{
	"CREATE DATABASE tg",
	"CREATE TABLE tg.t (id INT PRIMARY KEY, v INT, note VARCHAR(40))",
	"CREATE TABLE tg.audit (id INT AUTO_INCREMENT PRIMARY KEY, rid INT, op VARCHAR(10))",
	"CREATE TABLE tg.plain (id INT PRIMARY KEY, v INT)",
	"CREATE TRIGGER tg.t_bi BEFORE INSERT ON tg.t FOR EACH ROW SET NEW.note = CONCAT('bi', NEW.v)",
	"CREATE TRIGGER tg.t_ai AFTER INSERT ON tg.t FOR EACH ROW INSERT INTO tg.audit (rid, op) VALUES (NEW.id, 'ins')",
	"CREATE TRIGGER tg.t_au AFTER UPDATE ON tg.t FOR EACH ROW INSERT INTO tg.audit (rid, op) VALUES (NEW.id, 'upd')",
}

// readTxns returns the row transactions of s's binlog (DDL left out).
func readTxns(t *testing.T, s *sandbox.Server) []*txn.Txn {
	t.Helper()
	db := sandbox.MustOpen(t, s, "")
	sandbox.MustExec(t, db, "FLUSH BINARY LOGS")
	files, err := s.BinlogFiles()
	if err != nil {
		t.Fatal(err)
	}
	r, err := fileset.Open(files, fileset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []*txn.Txn
	for {
		tx, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if !tx.IsDDL() {
			out = append(out, tx)
		}
	}
}

// startTarget starts a target sandbox (server id 2) with schema.
func startTarget(t *testing.T, schema ...string) (*sandbox.Server, *sql.DB) {
	t.Helper()
	o := sandbox.Defaults()
	o.ServerID = 2
	dst := sandbox.MustStart(t, o)
	ddb := sandbox.MustOpen(t, dst, "")
	sandbox.MustExec(t, ddb, schema...)
	return dst, ddb
}

// applyUnit renders txs as one unit (compacted or not), sends it and commits
// it with txs' end as the position; it returns the batch as text and
// Send's error (rolled back).
func applyUnit(t *testing.T, tgt *mysql.Target, conn apply.Conn, txs []*txn.Txn, compact bool) (string, error) {
	t.Helper()
	ctx := context.Background()
	b := renderUnit(t, tgt, txs, compact)
	if err := conn.Send(ctx, b); err != nil {
		if rerr := conn.Rollback(ctx); rerr != nil {
			t.Fatal(rerr)
		}
		return fmt.Sprint(b), err
	}
	if err := conn.Commit(ctx, endOf(txs)); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(b), nil
}

// renderUnit loads txs' tables into tgt's catalog and renders them as one
// unit, compacted or not.
func renderUnit(t *testing.T, tgt *mysql.Target, txs []*txn.Txn, compact bool) apply.Batch {
	t.Helper()
	ctx := context.Background()
	for _, tx := range txs {
		if err := tgt.Catalog.LoadTxn(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	b, err := tgt.Render(ctx, txs, compact)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// endOf is the position after txs (slot "0", as applyUnit stores it).
func endOf(txs []*txn.Txn) position.Checkpoint {
	end := txs[len(txs)-1].End
	return position.Checkpoint{Slot: "0", File: end.File, Pos: end.Offset}
}

func openTarget(t *testing.T, s *sandbox.Server, url string, opts ...mysql.Option) *mysql.Target {
	t.Helper()
	e, err := mysql.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := mysql.Open(context.Background(), e, "test", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	return tgt
}

// TestBinlogStatementKeepsTriggersQuiet applies a trigger table's rows
// with BINLOG statements inside prepl's transaction: a rolled back unit
// leaves nothing (BINLOG does not commit), a committed one leaves the
// source's rows and no second audit row, and a missing row is an error
// that names the transaction.
func TestBinlogStatementKeepsTriggersQuiet(t *testing.T) {
	ctx := context.Background()
	o := sandbox.Defaults()
	o.Binlog = true
	src := sandbox.MustStart(t, o)
	sdb := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, sdb, triggerSchema...)
	sandbox.MustExec(t, sdb,
		"INSERT INTO tg.t (id, v) VALUES (1, 10), (2, 20)",
		"BEGIN", "INSERT INTO tg.plain VALUES (1, 1)", "UPDATE tg.t SET v = v + 1", "INSERT INTO tg.plain VALUES (2, 2)", "COMMIT",
		"INSERT INTO tg.plain VALUES (3, 3)",
	)
	txs := readTxns(t, src)

	o = sandbox.Defaults()
	o.ServerID = 2
	dst := sandbox.MustStart(t, o)
	ddb := sandbox.MustOpen(t, dst, "")
	sandbox.MustExec(t, ddb, triggerSchema...)
	tgt := openTarget(t, dst, dst.URL())
	conn, err := tgt.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// One unit of every transaction, rolled back: nothing stays.
	b := renderUnit(t, tgt, txs, true)
	if err := conn.Send(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := conn.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	ddb.QueryRow("SELECT (SELECT COUNT(*) FROM tg.t) + (SELECT COUNT(*) FROM tg.audit) + (SELECT COUNT(*) FROM tg.plain)").Scan(&n)
	if n != 0 {
		t.Fatalf("%d rows stayed after ROLLBACK: a BINLOG statement committed", n)
	}
	// Now for real, with compaction, committed with the position.
	b, err = tgt.Render(ctx, txs, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Send(ctx, b); err != nil {
		t.Fatal(err)
	}
	last := txs[len(txs)-1]
	if err := conn.Commit(ctx, position.Checkpoint{Slot: "0", File: last.End.File, Pos: last.End.Offset}); err != nil {
		t.Fatal(err)
	}
	if err := verify.Rows(ctx, sdb, ddb); err != nil {
		t.Fatalf("target differs from source: %v", err)
	}
	// A row the target lacks: the error names the transaction.
	sandbox.MustExec(t, ddb, "DELETE FROM tg.t WHERE id = 2")
	b, err = tgt.Render(ctx, txs[1:2], false)
	if err != nil {
		t.Fatal(err)
	}
	err = conn.Send(ctx, b)
	conn.Rollback(ctx)
	if !errors.Is(err, mysql.ErrRowCount) || !strings.Contains(err.Error(), txs[1].GTID) || !strings.Contains(err.Error(), txs[1].Start.String()) {
		t.Fatalf("missing row: got %v, want a row count error naming GTID %s at %s", err, txs[1].GTID, txs[1].Start)
	}
}
