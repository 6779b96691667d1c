package mysql_test

import (
	"context"
	"errors"
	"testing"

	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/verify"
)

// TestCompactedRefusedFallsBack: a compacted statement the target refuses
// with an error other than a duplicate key (here 1235: MariaDB takes no
// INSERT ... ON DUPLICATE KEY UPDATE on a key WITHOUT OVERLAPS, which the
// catalog is made to miss, as a compaction that does not know a form is
// refused would) is reported as ErrCompacted, so that the unit is applied
// again in source order, which the target takes.
func TestCompactedRefusedFallsBack(t *testing.T) {
	ctx := context.Background()
	schema := []string{
		"CREATE DATABASE wo",
		"CREATE TABLE wo.t (id INT, f INT, s DATE, e DATE, PERIOD FOR p(s, e), PRIMARY KEY (id, p WITHOUT OVERLAPS)) ENGINE=InnoDB",
	}
	o := sandbox.Defaults()
	o.Binlog = true
	src := sandbox.MustStart(t, o)
	sdb := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, sdb, schema...)
	sandbox.MustExec(t, sdb,
		"INSERT INTO wo.t VALUES (1, 0, '2000-01-01', '2000-01-02'), (2, 0, '2000-01-01', '2000-01-02')",
		"UPDATE wo.t SET f = 20",
		"UPDATE wo.t SET f = f + 1 WHERE id = 1",
	)
	txs := readTxns(t, src)
	if len(txs) != 3 {
		t.Fatalf("%d transactions in the source's binlog, want 3", len(txs))
	}

	o = sandbox.Defaults()
	o.ServerID = 2
	dst := sandbox.MustStart(t, o)
	ddb := sandbox.MustOpen(t, dst, "")
	sandbox.MustExec(t, ddb, schema...)
	// As SQL: as rows events, the server takes the update of a key
	// WITHOUT OVERLAPS (TestCompactedRowEvents).
	tgt := openTarget(t, dst, dst.URL(), mysql.SQLRows())
	conn, err := tgt.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, tx := range txs {
		if err := tgt.Catalog.LoadTxn(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(i int) {
		t.Helper()
		if err := conn.Commit(ctx, position.Checkpoint{Slot: "0", File: txs[i].End.File, Pos: txs[i].End.Offset}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := tgt.Render(ctx, txs[:1], false)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Send(ctx, b); err != nil {
		t.Fatal(err)
	}
	commit(0)

	d, ok := tgt.Catalog.Table("wo", "t")
	if !ok {
		t.Fatal("wo.t is not in the target's catalog")
	}
	for i := range d.Indexes {
		d.Indexes[i].WithoutOverlaps = false
	}
	b, err = tgt.Render(ctx, txs[1:], true)
	if err != nil {
		t.Fatal(err)
	}
	if b.Saved() == 0 {
		t.Fatal("the unit was not compacted: the test does not test the fallback")
	}
	err = conn.Send(ctx, b)
	if !errors.Is(err, mysql.ErrCompacted) || mysql.ErrorCode(err) != 1235 {
		t.Fatalf("compacted unit refused by the target: got %v, want ErrCompacted wrapping error 1235", err)
	}
	if err := conn.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	// The caller's fallback (package apply): the unit in source order.
	if b, err = tgt.Render(ctx, txs[1:], false); err != nil {
		t.Fatal(err)
	}
	if err := conn.Send(ctx, b); err != nil {
		t.Fatalf("the unit in source order: %v", err)
	}
	commit(2)
	if err := verify.Rows(ctx, sdb, ddb); err != nil {
		t.Fatalf("target differs from source: %v", err)
	}
}
