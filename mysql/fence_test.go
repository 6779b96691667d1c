package mysql_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
)

// TestEpochFence: a prepl that lost its channel to another cannot commit.
// The first claims the channel and commits a unit; the second claims it
// (raising the epoch) while the first still runs. The first's next unit,
// sent on a connection opened after the takeover (as a reconnect would),
// is refused at its position write with ErrFenced, and nothing of it is
// committed; the second commits the same unit. A connection the first had
// open with a unit in flight is killed by the takeover: its rows roll back.
func TestEpochFence(t *testing.T) {
	ctx := context.Background()
	o := sandbox.Defaults()
	o.Binlog = true
	src := sandbox.MustStart(t, o)
	sandbox.MustExec(t, sandbox.MustOpen(t, src, ""), "CREATE DATABASE f", "CREATE TABLE f.t (id INT PRIMARY KEY, v INT)",
		"INSERT INTO f.t VALUES (1, 1)", "INSERT INTO f.t VALUES (2, 2)", "INSERT INTO f.t VALUES (3, 3)")
	txs := readTxns(t, src)
	if len(txs) != 3 {
		t.Fatalf("%d transactions in the source's binlog, want 3", len(txs))
	}
	dst, ddb := startTarget(t, "CREATE DATABASE f", "CREATE TABLE f.t (id INT PRIMARY KEY, v INT)")
	claim := func(tgt *mysql.Target) *mysql.Claim {
		t.Helper()
		cl, err := tgt.ClaimChannel(ctx, mysql.ClaimOptions{Wait: time.Second, Lease: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Release)
		return cl
	}

	old := openTarget(t, dst, dst.URL())
	oldClaim := claim(old)
	conn, err := old.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := applyUnit(t, old, conn, txs[:1], false); err != nil {
		t.Fatalf("the active's unit: %v", err)
	}
	inFlight, err := old.Conn(ctx) // a unit sent, not committed, when the takeover comes
	if err != nil {
		t.Fatal(err)
	}
	sendUnit(t, old, inFlight, txs[2:3])

	// The old active's lock goes (the target drops it when a hung
	// process stops pinging); the new one claims the channel.
	oldClaim.Release()
	cur := openTarget(t, dst, dst.URL())
	curClaim := claim(cur)
	if curClaim.Epoch != oldClaim.Epoch+1 {
		t.Fatalf("epoch %d after the takeover, want %d", curClaim.Epoch, oldClaim.Epoch+1)
	}

	stale, err := old.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = applyUnitErr(t, old, stale, txs[1:2])
	if !errors.Is(err, mysql.ErrFenced) {
		t.Fatalf("a commit under the old epoch: %v, want ErrFenced", err)
	}
	stale.Rollback(ctx)
	if err := inFlight.Commit(ctx, endOf(txs[2:3])); err == nil {
		t.Fatal("the old active's unit in flight at the takeover committed")
	}
	var n int
	ddb.QueryRow("SELECT COUNT(*) FROM f.t").Scan(&n)
	if n != 1 {
		t.Fatalf("%d rows on the target after the fenced commits, want 1 (the first unit's)", n)
	}
	ps, err := cur.Positions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ps["0"].Pos, txs[0].End.Offset; got != want {
		t.Fatalf("stored position %d after the fenced commit, want %d (the first unit's end)", got, want)
	}

	conn2, err := cur.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := applyUnit(t, cur, conn2, txs[1:], false); err != nil {
		t.Fatalf("the new active's unit: %v", err)
	}
	ddb.QueryRow("SELECT COUNT(*) FROM f.t").Scan(&n)
	if n != 3 {
		t.Fatalf("%d rows on the target, want 3", n)
	}
}

// sendUnit renders txs as one unit and sends it: its transaction stays open.
func sendUnit(t *testing.T, tgt *mysql.Target, conn apply.Conn, txs []*txn.Txn) {
	t.Helper()
	if err := conn.Send(context.Background(), renderUnit(t, tgt, txs, false)); err != nil {
		t.Fatal(err)
	}
}

// applyUnitErr sends txs as one unit and commits it: Commit's error.
func applyUnitErr(t *testing.T, tgt *mysql.Target, conn apply.Conn, txs []*txn.Txn) error {
	t.Helper()
	sendUnit(t, tgt, conn, txs)
	return conn.Commit(context.Background(), endOf(txs))
}
