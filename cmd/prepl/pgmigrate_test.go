package main

import (
	"context"
	"strings"
	"syscall"
	"testing"

	"github.com/prepl/prepl/bench"
	"github.com/prepl/prepl/sandbox"
)

// TestMigrateToPostgresUnderLoad is issue 14's migration end to end: a
// sysbench database on a MariaDB source moves into PostgreSQL while
// sysbench keeps writing to it. prepl copy takes its consistent snapshot
// under the load, prepl replicate continues from the snapshot's position
// (no --start-gtid) while the load goes on, and once the load stops and
// prepl has applied the source's last transaction, prepl verify finds
// the two equal.
func TestMigrateToPostgresUnderLoad(t *testing.T) {
	src := source(t, nil)
	sb := bench.Sysbench{Server: src, Tables: 4, TableSize: 5000}
	if err := sb.Prepare(context.Background(), "oltp_read_write"); err != nil {
		t.Fatal(err)
	}
	pg := sandbox.MustStartPostgres(t)
	url := pg.URL("postgres")
	sdb, pdb := sandbox.MustOpen(t, src, ""), sandbox.MustOpenPostgres(t, pg, "postgres")

	// The load: bounded in time, ended earlier by cancel.
	loadCtx, stopLoad := context.WithCancel(context.Background())
	var loadErr error
	loadDone := make(chan struct{})
	go func() {
		loadErr = sb.Run(loadCtx, "oltp_read_write", bench.RunSpec{Threads: 2, Seconds: 120, Rate: 100})
		close(loadDone)
	}()
	defer func() { stopLoad(); <-loadDone }()
	loading := func(what string) {
		from := sourceTxns(t, sdb)
		waitFor(t, "sysbench to write "+what, func() bool {
			select {
			case <-loadDone:
				t.Fatalf("sysbench ended %s: %v", what, loadErr)
			default:
			}
			return sourceTxns(t, sdb) > from
		})
	}

	loading("before the copy")
	before := sourceTxns(t, sdb)
	out := mustPrepl(t, "copy", "--source", src.URL(), "--target", url, "--progress=false")
	if sourceTxns(t, sdb) == before {
		t.Fatalf("the source wrote nothing during the copy: the snapshot was not taken under load\n%s", out)
	}

	r := startPrepl(t, "replicate", "--source", src.URL(), "--target", url, "--workers", "4")
	waitFor(t, "prepl to apply transactions written after the snapshot", func() bool { return r.status(t).Transactions.Applied > 0 })
	loading("while prepl replicates")

	stopLoad()
	<-loadDone // killed: its error says so
	// A killed client's last COMMIT may still be running on the server:
	// the source's position is final once its sessions are gone.
	waitFor(t, "sysbench's sessions to end", func() bool {
		var n int
		sdb.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = 'sbtest'").Scan(&n)
		return n == 0
	})
	waitCaughtUp(t, r, sdb, pdb)
	r.cmd.Process.Signal(syscall.SIGTERM)
	if code := r.wait(t); code != 0 {
		t.Fatalf("prepl replicate: exit %d after SIGTERM\n%s", code, r.output())
	}
	if out := mustPrepl(t, "verify", "--source", src.URL(), "--target", url); !strings.Contains(out, "equal") {
		t.Fatalf("verify: %s", out)
	}
	var rows int
	if err := pdb.QueryRow("SELECT count(*) FROM sbtest.sbtest3").Scan(&rows); err != nil || rows == 0 {
		t.Fatalf("sbtest.sbtest3 on the target: %d rows, %v", rows, err)
	}
}
