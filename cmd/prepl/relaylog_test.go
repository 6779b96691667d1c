package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prepl/prepl/sandbox"
)

// TestRelayLogResumesAfterSourcePurge: replicate --relay-dir reads ahead
// of a stalled applier (a table of the target locked) into relay files;
// prepl is killed, the source flushes and purges every binlog the relay
// holds and writes more; prepl started again with the same --relay-dir,
// after a crash-torn tail is put on its last relay file, repairs the
// tail, applies from the relay log, resumes the source at the relay's
// end by GTID, and the target equals the source. mariadb-binlog reads a
// relay file (when installed).
func TestRelayLogResumesAfterSourcePurge(t *testing.T) {
	src := source(t, func(o *sandbox.Options) { o.Flags = append(o.Flags, "--max-binlog-size=4096") })
	tgt := targetServer(t)
	sdb, tdb := sandbox.MustOpen(t, src, ""), sandbox.MustOpen(t, tgt, "")
	dir := t.TempDir()
	args := []string{"replicate", "--source", src.URL(), "--target", tgt.URL(), "--stop-at-end", "--progress", "0",
		"--relay-dir", dir, "--relay-file-size", "4KiB"}
	sandbox.MustExec(t, sdb, "CREATE DATABASE r", "CREATE TABLE r.t (id INT PRIMARY KEY, v VARCHAR(200), n INT)",
		"INSERT INTO r.t VALUES (1, 'one', 1)")
	mustPrepl(t, args...)

	// The applier stalls on a lock while prepl reads the rest into the relay.
	ctx := context.Background()
	lock, err := tdb.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.ExecContext(ctx, "LOCK TABLES r.t WRITE"); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 300; i++ {
		sandbox.MustExec(t, sdb, fmt.Sprintf("INSERT INTO r.t VALUES (%d, REPEAT('x', %d), %d)", i, i%150, i))
		if i%7 == 0 {
			sandbox.MustExec(t, sdb, fmt.Sprintf("UPDATE r.t SET n = n + 1 WHERE id = %d", i/2))
		}
	}
	applied := appliedOn(t, tgt, "default")
	before := applied()
	run := startPrepl(t, args...)
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(run.output(), "relay log: holds everything") {
		select {
		case <-run.exited:
			t.Fatalf("prepl ended before its relay log held everything: %v\n%s", run.err, run.output())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the relay log did not get everything in 2 minutes\n%s", run.output())
		}
	}
	// Status and metrics show the relay log while the applier stalls.
	var st struct {
		Relay *struct {
			Dir   string `json:"dir"`
			Bytes int64  `json:"bytes"`
			Files int    `json:"files"`
		} `json:"relay"`
	}
	waitFor(t, "the relay log in /status", func() bool { // once the engine has published its first figures
		return json.Unmarshal([]byte(httpGet(t, "http://"+run.addr+"/status")), &st) == nil && st.Relay != nil
	})
	if st.Relay.Dir != dir || st.Relay.Files < 2 || st.Relay.Bytes < 10000 {
		t.Errorf("/status relay = %+v; want the relay log of %s, several files", st.Relay, dir)
	}
	if m := httpGet(t, "http://"+run.addr+"/metrics"); !strings.Contains(m, "prepl_relay_bytes ") || !strings.Contains(m, "prepl_relay_oldest_file_age_seconds ") {
		t.Errorf("/metrics lacks the relay log's gauges")
	}
	run.cmd.Process.Signal(syscall.SIGKILL)
	<-run.exited
	if _, err := lock.ExecContext(ctx, "UNLOCK TABLES"); err != nil {
		t.Fatal(err)
	}
	lock.Close()
	if got := applied(); got != before {
		t.Fatalf("the stalled applier applied %d transactions; the test needs it stalled", got-before)
	}

	// The source forgets what the relay holds.
	files, err := src.BinlogFiles()
	if err != nil {
		t.Fatal(err)
	}
	sandbox.MustExec(t, sdb, "FLUSH BINARY LOGS")
	last := ""
	waitFor(t, "the purge of the source's binlogs", func() bool {
		var first string
		var size any
		if err := sdb.QueryRow("SHOW BINARY LOGS").Scan(&first, &size); err != nil {
			return false
		}
		if last == "" {
			rows, _ := sdb.Query("SHOW BINARY LOGS")
			for rows.Next() {
				rows.Scan(&last, &size)
			}
			rows.Close()
		}
		sandbox.MustExec(t, sdb, "PURGE BINARY LOGS TO '"+last+"'")
		sdb.QueryRow("SHOW BINARY LOGS").Scan(&first, &size)
		return first == last
	})
	if len(files) < 3 {
		t.Fatalf("source binlogs %v: want several", files)
	}
	sandbox.MustExec(t, sdb, "UPDATE r.t SET v = 'after purge' WHERE id % 10 = 0", "INSERT INTO r.t VALUES (1000, 'last', 0)")

	relays, err := filepath.Glob(filepath.Join(dir, "relay.0*"))
	if err != nil || len(relays) < 3 {
		t.Fatalf("relay files %v (%v): want several", relays, err)
	}
	if bin, err := exec.LookPath("mariadb-binlog"); err == nil {
		if b, err := exec.Command(bin, "-v", relays[len(relays)-1]).CombinedOutput(); err != nil || !strings.Contains(string(b), "### ") {
			t.Fatalf("mariadb-binlog %s: %v\n%s", relays[len(relays)-1], err, b)
		}
	} else {
		t.Log("mariadb-binlog not installed: the relay file is not read by it")
	}
	// prepl's own file reader reads them: analyze counts their transactions.
	var txns uint64
	for _, f := range analyzeJSON(t, relays...).Files {
		txns += f.Transactions
	}
	if txns < 299 {
		t.Errorf("prepl analyze of the relay files counts %d transactions, want the 299 and more read while the applier stalled", txns)
	}
	// A crash cut the last file inside an event: the first 40 bytes of
	// one after the last complete transaction.
	lastRelay := relays[len(relays)-1]
	b, err := os.ReadFile(lastRelay)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(lastRelay, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(b[len(b)-200 : len(b)-160])
	f.Close()

	got := mustPrepl(t, args...)
	for _, want := range []string{"truncating what follows the last complete transaction", "resuming from the relay log"} {
		if !strings.Contains(got, want) {
			t.Errorf("prepl's output lacks %q:\n%s", want, got)
		}
	}
	sameRows(t, src, tgt)
}

// TestRelayLogKillNine: prepl with --relay-dir killed with SIGKILL while
// it reads and applies (at two points), then run again to the source's
// end: the target equals the source. The relay's tail the kill cut is
// repaired; what the relay does not hold durably is read from the source.
func TestRelayLogKillNine(t *testing.T) {
	src := source(t, nil)
	sdb := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, sdb, "CREATE DATABASE k", "CREATE TABLE k.t (id INT PRIMARY KEY, v VARCHAR(200), n INT)")
	stmts := make([]string, 0, 3000)
	for i := 1; i <= 3000; i++ {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO k.t VALUES (%d, REPEAT('k', %d), %d)", i, i%180, i))
	}
	sandbox.MustExec(t, sdb, stmts...)
	tgt := targetServer(t)
	args := []string{"replicate", "--source", src.URL(), "--target", tgt.URL(), "--stop-at-end", "--progress", "0",
		"--relay-dir", t.TempDir(), "--relay-file-size", "64KiB", "--workers", "2"}
	applied := appliedOn(t, tgt, "default")
	for _, at := range []int64{20, 1500} {
		if killAt(t, preplBinary(t), args, applied, at) {
			t.Logf("prepl finished before %d transactions were applied", at)
		}
	}
	mustPrepl(t, args...)
	sameRows(t, src, tgt)
}
