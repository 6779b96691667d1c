package main

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/sandbox"
)

// TestSlowHeadNoChurn: the next transaction to commit waits seconds for a
// row lock another session holds on the target, while later independent
// units have applied and wait for their turn. They wait: none is rolled
// back (the target's Com_rollback does not move while the head waits,
// prepl counts no yield), and once the lock is released everything commits
// and the target matches the source.
func TestSlowHeadNoChurn(t *testing.T) {
	src := source(t, nil)
	tgt := targetServer(t)
	sdb, tdb := sandbox.MustOpen(t, src, ""), sandbox.MustOpen(t, tgt, "")
	setup := []string{"CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT NOT NULL)"}
	for i := 1; i <= 40; i++ {
		setup = append(setup, fmt.Sprintf("INSERT INTO d.t VALUES (%d, 0)", i))
	}
	sandbox.MustExec(t, sdb, setup...)
	sandbox.MustExec(t, tdb, setup...)
	var start string
	if err := sdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&start); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 40; i++ {
		sandbox.MustExec(t, sdb, fmt.Sprintf("UPDATE d.t SET v = v + 1 WHERE id = %d", i))
	}
	// Another session holds the row of the first update.
	lock, err := tdb.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := lock.ExecContext(t.Context(), "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := lock.ExecContext(t.Context(), "SELECT * FROM d.t WHERE id = 1 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}

	r := startPrepl(t, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--start-gtid", start, "--stop-at-end",
		"--workers", "4", "--fixed-workers", "--commit-unit", "1", "--progress", "0")
	// INNODB_TRX is read at the pace of prepl's own monitor: read every
	// 20 ms, InnoDB would never refresh it (see apply.LockWaitEvery).
	var lastRead time.Time
	innodbTRX := func(q string, dest ...any) error {
		time.Sleep(apply.LockWaitEvery - time.Since(lastRead))
		defer func() { lastRead = time.Now() }()
		return tdb.QueryRow(q).Scan(dest...)
	}
	waiting := func() int {
		var n int
		if err := innodbTRX(`SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'`, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitFor(t, "prepl's first update waiting for the row lock", func() bool {
		select {
		case <-r.exited:
			t.Fatalf("prepl exited: %v\n%s", r.err, r.output())
		default:
		}
		return waiting() >= 1
	})
	waitFor(t, "later units applied and waiting for their turn", func() bool {
		n := 0
		for _, w := range r.status(t).WorkerStates {
			if w.State == "waiting-commit" {
				n++
			}
		}
		return n >= 2
	})
	// The head waits for three seconds of the target's own clock (the old
	// rule rolled later units back every 300 ms of it). The window
	// starts again if the head's own wait times out (prepl's
	// innodb_lock_wait_timeout) and it retries: that rollback is its own.
	var trx string
	var before, from int64
	waitFor(t, "three seconds of one lock wait of the head", func() bool {
		var id string
		var secs int64
		err := innodbTRX(`SELECT trx_id, TIMESTAMPDIFF(SECOND, trx_wait_started, NOW()) FROM information_schema.INNODB_TRX
			WHERE trx_state = 'LOCK WAIT' ORDER BY trx_wait_started LIMIT 1`, &id, &secs)
		if err == sql.ErrNoRows {
			return false
		} else if err != nil {
			t.Fatal(err)
		}
		if id != trx {
			trx, before, from = id, comRollback(t, tdb), secs
			return false
		}
		return secs-from >= 3
	})
	if n := comRollback(t, tdb) - before; n != 0 {
		t.Errorf("%d ROLLBACKs on the target while the head waited, want 0", n)
	}
	st := r.status(t)
	if len(st.Yields) != 0 || st.RetriesBy["yield"] != 0 {
		t.Errorf("yields %v, retries %v while the head waited for a lock held outside prepl, want none\n%s", st.Yields, st.RetriesBy, r.output())
	}
	m := scrape(t, r.addr)
	for _, cause := range []string{"lock-wait", "lock-wait-unseen", "head-stall"} {
		if n, ok := m[`prepl_yields_total{cause="`+cause+`"}`]; !ok || n != 0 {
			t.Errorf("prepl_yields_total{cause=%q} = %v (exported: %v), want 0", cause, n, ok)
		}
	}
	if _, err := lock.ExecContext(t.Context(), "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if code := r.wait(t); code != 0 {
		t.Fatalf("prepl replay exited %d\n%s", code, r.output())
	}
	sameRows(t, src, tgt)
}

func comRollback(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var name string
	var n int64
	if err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'Com_rollback'").Scan(&name, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
