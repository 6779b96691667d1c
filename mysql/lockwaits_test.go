package mysql_test

import (
	"database/sql"
	"slices"
	"testing"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/sandbox"
)

// TestLockWaitsFresh polls LockWaits as the engine's monitor does (every
// apply.LockWaitEvery) while the waits change under it: each change is in
// the next answers. InnoDB serves these tables from a cache that a poll
// every 50 ms kept from ever refreshing, so the engine saw a wait that was
// over and never the one that held its next unit to commit.
func TestLockWaitsFresh(t *testing.T) {
	srv := sandbox.MustStart(t, sandbox.Defaults())
	db := sandbox.MustOpen(t, srv, "")
	sandbox.MustExec(t, db, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)", "INSERT INTO d.t VALUES (1)")
	tgt := openTarget(t, srv, srv.URL())
	ctx := t.Context()
	session := func() (*sql.Conn, uint64) {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		var id uint64
		if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		execConn(t, c, "SET SESSION innodb_lock_wait_timeout = 100", "BEGIN")
		return c, id
	}
	lockRow := func(c *sql.Conn) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := c.ExecContext(ctx, "SELECT * FROM d.t WHERE id = 1 FOR UPDATE")
			done <- err
		}()
		return done
	}
	// Poll at the monitor's pace until want is among the waits, at most 20
	// polls.
	seen := func(what string, want apply.ConnWait) {
		t.Helper()
		for i := 0; i < 20; i++ {
			time.Sleep(apply.LockWaitEvery)
			ws, err := tgt.LockWaits(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(ws, want) {
				return
			}
		}
		t.Fatalf("%s (%v) not among the lock waits after 20 polls every %s", what, want, apply.LockWaitEvery)
	}
	a, aID := session()
	b, bID := session()
	c, cID := session()
	if err := <-lockRow(a); err != nil {
		t.Fatal(err)
	}
	bDone := lockRow(b)
	seen("b waiting for a", apply.ConnWait{Requester: bID, Blocker: aID})
	execConn(t, a, "COMMIT")
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
	cDone := lockRow(c)
	seen("c waiting for b, once a has committed", apply.ConnWait{Requester: cID, Blocker: bID})
	execConn(t, b, "COMMIT")
	if err := <-cDone; err != nil {
		t.Fatal(err)
	}
}

func execConn(t *testing.T, c *sql.Conn, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := c.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
