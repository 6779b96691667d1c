package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prepl/prepl/sandbox"
)

// TestReplayRelayLogsCatchesUpReplica: a lagging MariaDB replica (its SQL
// thread stopped, its I/O thread fetching, relay logs rotated every 4 KiB
// so that transactions go on from one file into the next) is caught up
// by prepl replay applying its own relay logs from where its SQL thread
// stands (Relay_Log_File, Relay_Log_Pos), in commit units and with
// --keep-gtid; then its replication is pointed past them and started
// again, and it equals the source, before and after the source writes
// more (docs/pitr.md).
func TestReplayRelayLogsCatchesUpReplica(t *testing.T) {
	for _, args := range [][]string{{"--workers", "4"}, {"--workers", "4", "--keep-gtid"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) { catchUpFromRelayLogs(t, args) })
	}
}

func catchUpFromRelayLogs(t *testing.T, args []string) {
	src := source(t, nil)
	rep := sandbox.MustStart(t, sandbox.RelayReplica())
	sdb, rdb := sandbox.MustOpen(t, src, ""), sandbox.MustOpen(t, rep, "")
	sandbox.MustExec(t, sdb, "CREATE DATABASE lag", "CREATE TABLE lag.t (id INT PRIMARY KEY, v VARCHAR(300), n INT)",
		"INSERT INTO lag.t VALUES (1, 'one', 1), (2, 'two', 2)")
	sandbox.MustExec(t, rdb, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = %d, MASTER_USER = 'root', "+
		"MASTER_USE_GTID = slave_pos", src.Port), "START SLAVE")
	var done int
	if err := rdb.QueryRow("SELECT MASTER_GTID_WAIT(?, 30)", gtidPos(t, sdb)).Scan(&done); err != nil || done != 0 {
		t.Fatalf("replica did not catch up: %d %v", done, err)
	}
	sandbox.MustExec(t, rdb, "STOP SLAVE SQL_THREAD") // the replica lags from here
	sandbox.MustExec(t, sdb,
		"INSERT INTO lag.t SELECT seq, REPEAT(CHAR(65 + seq % 26), 200), seq FROM mysql.seq_10_to_500", // one statement over many relay files
		"UPDATE lag.t SET n = n * 2 WHERE id % 3 = 0",
		"ALTER TABLE lag.t ADD COLUMN w INT NOT NULL DEFAULT 5",
		"DELETE FROM lag.t WHERE id BETWEEN 100 AND 150",
		"CREATE TABLE lag.u (id INT PRIMARY KEY, t TEXT)")
	for i := 0; i < 40; i++ {
		sandbox.MustExec(t, sdb, fmt.Sprintf("INSERT INTO lag.u VALUES (%d, REPEAT('u', %d))", i, 50*i),
			fmt.Sprintf("UPDATE lag.t SET v = 'changed %d', w = w + %d WHERE id = %d", i, i, 10+i))
	}
	end := gtidPos(t, sdb)
	sandbox.MustWaitFetched(t, rdb, end, 30*time.Second)
	sandbox.MustExec(t, rdb, "STOP SLAVE IO_THREAD")
	st := sandbox.MustSlaveStatus(t, rdb)
	relays, err := filepath.Glob(filepath.Join(rep.DataDir(), "relay-bin.0*"))
	if err != nil {
		t.Fatal(err)
	}
	analyzeListsEveryRelayFile(t, relays)
	var from []string // the SQL thread's file and the ones after it
	for _, p := range relays {
		if filepath.Base(p) >= st["Relay_Log_File"] {
			from = append(from, p)
		}
	}
	if len(from) < 10 {
		t.Fatalf("relay logs from %s: %v; want many", st["Relay_Log_File"], from)
	}
	var slavePos string
	if err := rdb.QueryRow("SELECT @@gtid_slave_pos").Scan(&slavePos); err != nil {
		t.Fatal(err)
	}
	// Stopped short of the end, then run again without the stop: it
	// resumes from the position stored, checked against the relay logs.
	var domain, server, last int
	if _, err := fmt.Sscanf(end, "%d-%d-%d", &domain, &server, &last); err != nil {
		t.Fatal(err)
	}
	replay := append(append([]string{"replay", "--target", rep.URL(), "--progress", "0",
		"--start-position", st["Relay_Log_Pos"]}, args...), from...)
	out := mustPrepl(t, append([]string{replay[0], "--stop-gtid", fmt.Sprintf("%d-%d-%d", domain, server, last-10)}, replay[1:]...)...)
	if !strings.Contains(out, "applied 75 transactions") {
		t.Fatalf("prepl replay of the relay logs up to 10 before the end:\n%s", out)
	}
	if out = mustPrepl(t, replay...); !strings.Contains(out, "applied 10 transactions") {
		t.Fatalf("prepl replay of the relay logs, again:\n%s", out)
	}
	sameRows(t, src, rep)

	// Replication goes on past what prepl applied.
	sandbox.MustExec(t, rdb, "SET GLOBAL gtid_slave_pos = '"+end+"'", "START SLAVE")
	sandbox.MustExec(t, sdb, "INSERT INTO lag.u VALUES (1000, 'after')", "UPDATE lag.t SET n = -1 WHERE id = 1")
	if err := rdb.QueryRow("SELECT MASTER_GTID_WAIT(?, 30)", gtidPos(t, sdb)).Scan(&done); err != nil || done != 0 {
		t.Fatalf("replica did not go on after prepl: %d %v (%v)", done, err, sandbox.MustSlaveStatus(t, rdb)["Last_SQL_Error"])
	}
	sameRows(t, src, rep)
}

// analyzeListsEveryRelayFile: prepl analyze of relay logs gives a line to
// every file from the first transaction to the last, those that hold only
// the middle of a transaction (the INSERT of 491 rows spans several) with
// no transactions.
func analyzeListsEveryRelayFile(t *testing.T, relays []string) {
	t.Helper()
	rep := analyzeJSON(t, relays...)
	var names, all []string
	starts := 0
	for _, f := range rep.Files {
		names = append(names, f.File)
		if f.Transactions > 0 {
			starts++
		}
	}
	for _, p := range relays {
		all = append(all, filepath.Base(p))
	}
	i := slices.Index(all, names[0])
	if i < 0 || i+len(names) > len(all) || !slices.Equal(all[i:i+len(names)], names) || starts == len(names) {
		t.Fatalf("prepl analyze lists %v (%d with transactions starting), want a run of the relay files %v with some that start none",
			names, starts, all)
	}
}
