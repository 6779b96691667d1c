package mysql_test

import (
	"context"
	"testing"

	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sandbox"
)

// TestMaybeAppliedMarkerFollowsUnits drives Conn.Send as the engine does
// around crashes, with units formed differently each time: a unit that
// wrote a MyISAM table and never committed leaves its rows and its
// marker; a later unit that starts inside the marked range and runs past
// it is applied idempotently and moves the marker's end to its own, so
// that a unit formed after the next crash from its second member alone is
// still known to be maybe applied (else its insert would meet its own
// row); the unit reaching the marker's end clears it with its commit.
func TestMaybeAppliedMarkerFollowsUnits(t *testing.T) {
	ctx := context.Background()
	schema := []string{"CREATE DATABASE n", "CREATE TABLE n.m (id INT PRIMARY KEY, v INT) ENGINE=MyISAM"}
	o := sandbox.Defaults()
	o.Binlog = true
	src := sandbox.MustStart(t, o)
	sdb := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, sdb, schema...)
	sandbox.MustExec(t, sdb, "INSERT INTO n.m VALUES (1, 1)", "INSERT INTO n.m VALUES (2, 2)", "UPDATE n.m SET v = v + 10")
	txs := readTxns(t, src)
	if len(txs) != 3 {
		t.Fatalf("%d row transactions, want 3", len(txs))
	}
	o = sandbox.Defaults()
	o.ServerID = 2
	dst := sandbox.MustStart(t, o)
	ddb := sandbox.MustOpen(t, dst, "")
	sandbox.MustExec(t, ddb, schema...)
	tgt := openTarget(t, dst, dst.URL())
	for _, tx := range txs {
		if err := tgt.Catalog.LoadTxn(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	// send applies a unit of txs on a new connection and, unless commit,
	// leaves it as a crash after its rows would: rolled back, MyISAM rows
	// kept.
	send := func(commit bool, unit ...int) error {
		var members = txs[unit[0] : unit[len(unit)-1]+1]
		b, err := tgt.Render(ctx, members, true)
		if err != nil {
			t.Fatal(err)
		}
		c, err := tgt.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Send(ctx, b); err != nil {
			c.Rollback(ctx)
			return err
		}
		if !commit {
			return c.Rollback(ctx)
		}
		last := members[len(members)-1]
		return c.Commit(ctx, position.Checkpoint{Slot: "main", File: last.End.File, Pos: last.End.Offset, LastGTID: last.GTID})
	}
	marker := func() (last string) {
		m, err := tgt.Marker(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m.Last
	}
	if err := send(false, 0); err != nil {
		t.Fatalf("unit [1]: %v", err)
	}
	if got := marker(); got != txs[0].ID() {
		t.Fatalf("after unit [1]: marker ends at %q, want %q", got, txs[0].ID())
	}
	if err := send(false, 0, 1); err != nil {
		t.Fatalf("unit [1, 2] over the marker of [1]: %v", err)
	}
	if got := marker(); got != txs[1].ID() {
		t.Fatalf("after unit [1, 2]: marker ends at %q, want %q (moved to the unit's end)", got, txs[1].ID())
	}
	if err := send(true, 1); err != nil {
		t.Fatalf("unit [2] inside the moved marker: %v", err)
	}
	if got := marker(); got != "" {
		t.Fatalf("the unit reaching the marker's end committed, marker still ends at %q", got)
	}
	if err := send(true, 2); err != nil {
		t.Fatalf("unit [3], no marker: %v", err)
	}
	var sum int
	if err := ddb.QueryRow("SELECT SUM(v) FROM n.m").Scan(&sum); err != nil || sum != 23 {
		t.Fatalf("SUM(v) = %d (%v), want 23: rows doubled or lost", sum, err)
	}
}
