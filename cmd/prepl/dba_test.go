package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prepl/prepl/metrics"
	"github.com/prepl/prepl/sandbox"
)

// TestUsageGNU: --version, flags after arguments, a short message for an
// unknown flag, each command showing and taking only its flags, --flag in
// the help, completion scripts and the man page.
func TestUsageGNU(t *testing.T) {
	if code, out := prepl(t, "--version"); code != 0 || !strings.HasPrefix(out, "prepl ") {
		t.Errorf("prepl --version: exit %d\n%s", code, out)
	}
	// Flags after the file: the target is taken (and is unreachable: 1).
	if code, out := prepl(t, "replay", fixtureDir+"mysql-bin.checksum-none", "--target", "mysql://root@127.0.0.1:1", "--progress=0", "--reconnect-timeout=1ms"); code != 1 ||
		strings.Contains(out, "--target is required") {
		t.Errorf("replay FILE --target URL: exit %d, want 1 from connecting\n%s", code, out)
	}
	// A missing file is a usage error (2), named, before any connection.
	if code, out := prepl(t, "replay", "--target", "mysql://root@127.0.0.1:1", "/nonexistent/binlog.000002"); code != 2 ||
		!strings.Contains(out, "/nonexistent/binlog.000002") || strings.Contains(out, "127.0.0.1:1") {
		t.Errorf("replay of a missing file: exit %d, want 2 naming the file, no connection\n%s", code, out)
	}
	code, out := prepl(t, "replicate", "--source", "mysql://a@b:1", "--bogus")
	if code != 2 || !strings.Contains(out, "unknown flag: --bogus") || strings.Count(out, "\n") > 2 {
		t.Errorf("unknown flag: exit %d, want 2 and a short message:\n%s", code, out)
	}
	_, help := prepl(t, "status", "--help")
	if !strings.Contains(help, "  --target string") || !strings.Contains(help, "--max-lag duration") || strings.Contains(help, "--workers") ||
		strings.Contains(help, "\n  -target") {
		t.Errorf("prepl status --help shows other commands' flags or single dashes:\n%s", help)
	}
	if code, out := prepl(t, "status", "--target", "mysql://root@127.0.0.1:1", "--workers", "3"); code != 2 || !strings.Contains(out, "unknown flag: --workers") {
		t.Errorf("status --workers: exit %d, want 2\n%s", code, out)
	}

	bash := mustPrepl(t, "completion", "bash")
	for _, want := range []string{"complete -o default -F _prepl prepl", "skip) opts=\"--channel --config", "--max-load", "--throttle-flag-file"} {
		if !strings.Contains(bash, want) {
			t.Errorf("bash completion lacks %q", want)
		}
	}
	if sh, err := exec.LookPath("bash"); err == nil {
		cmd := exec.Command(sh, "-n")
		cmd.Stdin = strings.NewReader(bash)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("bash -n on the completion script: %v\n%s", err, out)
		}
	}
	zsh := mustPrepl(t, "completion", "zsh")
	for _, want := range []string{"#compdef prepl", "'--target=[target server URL", "'*--include=[", "'--stop-at-end[", "'skip:record"} {
		if !strings.Contains(zsh, want) {
			t.Errorf("zsh completion lacks %q", want)
		}
	}
	if code, out := prepl(t, "completion", "fish"); code != 2 {
		t.Errorf("completion fish: exit %d\n%s", code, out)
	}
	man := mustPrepl(t, "man")
	for _, want := range []string{".TH PREPL 1", ".SS replicate", ".SS skip", `\-\-max\-load`, `\-\-gtid string`, ".SH EXIT STATUS"} {
		if !strings.Contains(man, want) {
			t.Errorf("man page lacks %q", want)
		}
	}
	// docs/prepl.1 is what make man writes: it had gone stale (a default
	// changed, the page still said the old one). The .TH line carries the
	// month and the version, so it is left out.
	committed, err := os.ReadFile("../../docs/prepl.1")
	if err != nil {
		t.Fatal(err)
	}
	_, gen, _ := strings.Cut(man, "\n")
	_, doc, _ := strings.Cut(string(committed), "\n")
	if gen != doc {
		t.Errorf("docs/prepl.1 differs from what prepl man writes now: run make man")
	}
}

// TestSkipPastDivergedTransaction: a diverged target stops prepl with an
// error naming the table, the key and the image expected; prepl skip
// records the transaction, and the next run goes past exactly that one.
func TestSkipPastDivergedTransaction(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, db, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)",
		"INSERT INTO d.t VALUES (1,0),(2,0),(3,0),(4,0),(5,0),(6,0)")
	tgt := targetServer(t)
	mustPrepl(t, append([]string{"replay", "--target", tgt.URL(), "--progress", "0"}, binlogFiles(t, src)...)...)
	tdb := sandbox.MustOpen(t, tgt, "")
	sandbox.MustExec(t, tdb, "DELETE FROM d.t WHERE id = 5") // the target diverges
	sandbox.MustExec(t, db, "UPDATE d.t SET v = 1 WHERE id = 1", "UPDATE d.t SET v = 7 WHERE id = 5", "UPDATE d.t SET v = 1 WHERE id = 2")
	var last string
	db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&last)
	parts := strings.Split(last, "-")
	n, _ := strconv.Atoi(parts[2])
	bad := fmt.Sprintf("%s-%s-%d", parts[0], parts[1], n-1)

	args := append([]string{"replay", "--target", tgt.URL(), "--progress", "0", "--commit-unit", "1"}, binlogFiles(t, src)...)
	code, out := prepl(t, args...)
	if code != 2 || !strings.Contains(out, bad) || !strings.Contains(out, "update on d.t") ||
		!strings.Contains(out, "no row with key (id=5) matches the expected before image (id=5, v=0)") {
		t.Fatalf("exit %d, want 2 naming %s, table d.t, key id=5 and the before image:\n%s", code, bad, out)
	}
	if code, out := prepl(t, "skip", "--target", tgt.URL(), "--channel", "replay"); code != 2 || !strings.Contains(out, "--gtid") {
		t.Fatalf("skip without --gtid: exit %d\n%s", code, out)
	}
	// A mistyped channel: recorded, with a warning naming the channels
	// that have a position; the right one gets no warning.
	if out := mustPrepl(t, "skip", "--target", tgt.URL(), "--channel", "replya", "--gtid", bad); !strings.Contains(out,
		"warning: channel replya has no stored position on this target (channels that have one: replay)") {
		t.Errorf("skip on a channel without a position: no warning naming the channels that have one:\n%s", out)
	}
	if out := mustPrepl(t, "skip", "--target", tgt.URL(), "--channel", "replay", "--gtid", bad); strings.Contains(out, "warning:") {
		t.Errorf("skip on the channel that stopped warns:\n%s", out)
	}
	// A crash right after the request is marked done, before the position
	// past the transaction is stored: the next run must skip it again, not
	// stop on it as if no skip had been asked.
	if code, out := runBinEnv(preplBinary(t), []string{"PREPL_TEST_CRASH=after-skip-mark:" + bad}, args); code != -1 {
		t.Fatalf("prepl was to kill itself after marking the skip of %s, exited %d:\n%s", bad, code, out)
	}
	code, out = prepl(t, args...)
	if code != 0 || !strings.Contains(out, "skipping a transaction as prepl skip asked") || !strings.Contains(out, "skipped 1") {
		t.Fatalf("replay after prepl skip: exit %d, want 0 with one transaction skipped:\n%s", code, out)
	}
	var v1, v2, n5 int
	tdb.QueryRow("SELECT v FROM d.t WHERE id = 1").Scan(&v1)
	tdb.QueryRow("SELECT v FROM d.t WHERE id = 2").Scan(&v2)
	tdb.QueryRow("SELECT COUNT(*) FROM d.t WHERE id = 5").Scan(&n5)
	var pos string
	tdb.QueryRow("SELECT gtid_pos FROM prepl.position WHERE channel = 'replay' AND slot = 'main'").Scan(&pos)
	if v1 != 1 || v2 != 1 || n5 != 0 || !strings.Contains(pos, last) {
		t.Fatalf("after the skip: v1=%d v2=%d (want 1, 1: the transactions around it applied), row 5 count %d (want 0), position %q (want %s)",
			v1, v2, n5, pos, last)
	}
	// reset asks; --yes answers; then the channel starts where it is told.
	mustPrepl(t, "reset", "--target", tgt.URL(), "--channel", "replay", "--start-gtid", last, "--yes")
	var rows int
	tdb.QueryRow("SELECT COUNT(*) FROM prepl.skip WHERE channel = 'replay'").Scan(&rows)
	tdb.QueryRow("SELECT gtid_pos FROM prepl.position WHERE channel = 'replay'").Scan(&pos)
	if rows != 0 || pos != last {
		t.Fatalf("after reset: %d skip rows, position %q, want 0 and %s", rows, pos, last)
	}
	// The next run starts after the reset position: nothing left to apply.
	if out := mustPrepl(t, args...); !strings.Contains(out, "applied 0 transactions") {
		t.Fatalf("replay after reset at the end:\n%s", out)
	}
}

func post(t *testing.T, addr, path string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+path, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", path, resp.Status)
	}
}

// heldStill writes more on the source while prepl is held and checks that
// the applied position does not move although prepl sees the source move.
func heldStill(t *testing.T, r *running, db *sql.DB, first int) metrics.Status {
	t.Helper()
	var held metrics.Status
	waitFor(t, "nothing in flight while held", func() bool {
		held = r.status(t)
		return held.InFlight == 0
	})
	writeLog(t, db, first, 200, 4)
	end := gtidPos(t, db)
	waitFor(t, "prepl to see the source's new end", func() bool {
		st := r.status(t)
		return st.SourceEnd != nil && st.SourceEnd.GTIDPos == end
	})
	if st := r.status(t); st.Applied.GTIDPosition != held.Applied.GTIDPosition || st.Transactions.Applied != held.Transactions.Applied {
		t.Fatalf("the position moved while held: %s -> %s", held.Applied.GTIDPosition, st.Applied.GTIDPosition)
	}
	return held
}

// TestPauseHoldsPositionAndResumeCatchesUp: POST /pause holds the position
// still while the source is written to, prepl skip is refused meanwhile,
// and POST /resume catches up.
func TestPauseHoldsPositionAndResumeCatchesUp(t *testing.T) {
	src, tgt := source(t, nil), targetServer(t)
	db := sandbox.MustOpen(t, src, "")
	counterWorkload(t, db, 100, 2)
	r := startPrepl(t, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--workers", "4")
	waitFor(t, "the first catch-up", func() bool { return r.status(t).CaughtUp })

	post(t, r.addr, "/pause")
	if st := r.status(t); !st.Paused {
		t.Fatalf("status after POST /pause: paused=%v", st.Paused)
	}
	heldStill(t, r, db, 10000)
	if m := scrape(t, r.addr); m["prepl_paused"] != 1 {
		t.Errorf("prepl_paused = %v, want 1", m["prepl_paused"])
	}
	if code, out := prepl(t, "skip", "--target", tgt.URL(), "--gtid", "0-1-1"); code == 0 || !strings.Contains(out, "a prepl runs on channel") {
		t.Errorf("skip while prepl runs: exit %d\n%s", code, out)
	}
	post(t, r.addr, "/resume")
	want := gtidPos(t, db)
	waitFor(t, "the catch-up after resume", func() bool {
		st := r.status(t)
		return !st.Paused && st.Applied.GTIDPosition == want
	})
	if m := scrape(t, r.addr); m["prepl_paused"] != 0 || m["prepl_paused_seconds_total"] <= 0 {
		t.Errorf("after resume: prepl_paused = %v, prepl_paused_seconds_total = %v", m["prepl_paused"], m["prepl_paused_seconds_total"])
	}
	sameRows(t, src, tgt)
	// The signals do the same: SIGUSR1 pauses, SIGUSR2 resumes.
	r.cmd.Process.Signal(syscall.SIGUSR1)
	waitFor(t, "a pause by SIGUSR1", func() bool { return r.status(t).Paused })
	r.cmd.Process.Signal(syscall.SIGUSR2)
	waitFor(t, "a resume by SIGUSR2", func() bool { return !r.status(t).Paused })
}

func gtidPos(t *testing.T, db *sql.DB) string {
	t.Helper()
	var p string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMaxLoadHoldsApply: while sessions sleeping on the target keep
// Threads_running above --max-load, nothing new is applied; once they
// end, prepl catches up, and the time throttled is in the metrics.
func TestMaxLoadHoldsApply(t *testing.T) {
	t.Parallel() // waits on servers, a replica and delays: overlaps with the other parallel tests
	src, tgt := source(t, nil), targetServer(t)
	db := sandbox.MustOpen(t, src, "")
	counterWorkload(t, db, 100, 2)
	tdb := sandbox.MustOpen(t, tgt, "")
	ctx, stopLoad := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tdb.ExecContext(ctx, "SELECT SLEEP(600)") // ends when ctx is cancelled (KILL QUERY by the driver)
		}()
	}
	defer func() { stopLoad(); wg.Wait() }()
	waitFor(t, "the load on the target", func() bool {
		var name string
		var n int
		tdb.QueryRow("SHOW GLOBAL STATUS LIKE 'Threads_running'").Scan(&name, &n)
		return n > 5
	})
	r := startPrepl(t, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--workers", "4", "--max-load", "Threads_running=4")
	waitFor(t, "throttling on max-load", func() bool { _, ok := r.status(t).Throttled["max-load"]; return ok })
	heldStill(t, r, db, 10000)
	stopLoad()
	wg.Wait()
	want := gtidPos(t, db)
	waitFor(t, "the catch-up once the load is gone", func() bool {
		st := r.status(t)
		return len(st.Throttled) == 0 && st.Applied.GTIDPosition == want
	})
	m := scrape(t, r.addr)
	if m[`prepl_throttled_seconds_total{reason="max-load"}`] <= 0 || m[`prepl_throttled{reason="max-load"}`] != 0 {
		t.Errorf("throttle metrics: %v seconds, now %v", m[`prepl_throttled_seconds_total{reason="max-load"}`], m[`prepl_throttled{reason="max-load"}`])
	}
	if !strings.Contains(r.output(), `"reason":"max-load"`) {
		t.Errorf("no log line names the throttling:\n%s", r.output())
	}
	sameRows(t, src, tgt)
	r.cmd.Process.Signal(syscall.SIGTERM)
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM\n%s", code, r.output())
	}
	// --critical-load met (Threads_running counts the check itself): a
	// clean stop with exit 1, the position kept.
	sandbox.MustExec(t, db, "INSERT INTO w.log VALUES (99999, 0, 'last')")
	code, out := prepl(t, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--critical-load", "Threads_running=1")
	if code != 1 || !strings.Contains(out, "critical load on the target: Threads_running=") {
		t.Fatalf("--critical-load: exit %d, want 1 naming the load\n%s", code, out)
	}
	var pos string
	tdb.QueryRow("SELECT gtid_pos FROM prepl.position WHERE channel = 'default' AND slot = 'main'").Scan(&pos)
	if pos == "" {
		t.Fatal("no position stored after the critical-load stop")
	}
}

// TestDelayHoldsApply: with --delay, a transaction read from the source
// waits (status shows the reason "delay") and is not on the target, then
// is applied no earlier than its commit second plus the delay; SIGTERM
// while waiting stops cleanly.
func TestDelayHoldsApply(t *testing.T) {
	t.Parallel() // waits on servers, a replica and delays: overlaps with the other parallel tests
	const delay = 4 * time.Second
	src, tgt := source(t, nil), targetServer(t)
	db := sandbox.MustOpen(t, src, "")
	counterWorkload(t, db, 100, 2)
	tdb := sandbox.MustOpen(t, tgt, "")
	r := startPrepl(t, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--workers", "4", "--delay", delay.String(), "--progress", "500ms")
	want := gtidPos(t, db)
	waitFor(t, "the workload applied", func() bool { return r.status(t).Applied.GTIDPosition == want })

	t0 := time.Now()
	if _, err := db.Exec("INSERT INTO w.log VALUES (999999, 0, 'delayed')"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delay to hold", func() bool { _, ok := r.status(t).Throttled["delay"]; return ok })
	var n int
	if err := tdb.QueryRow("SELECT COUNT(*) FROM w.log WHERE id = 999999").Scan(&n); err != nil || n != 0 {
		t.Fatalf("while the delay holds: %d rows on the target (err %v), want 0", n, err)
	}
	waitFor(t, "the delayed row", func() bool {
		tdb.QueryRow("SELECT COUNT(*) FROM w.log WHERE id = 999999").Scan(&n)
		return n == 1
	})
	// The commit time is whole seconds: due is at least delay-1s after t0.
	if e := time.Since(t0); e < delay-time.Second {
		t.Errorf("applied %v after the source commit, want at least %v", e, delay-time.Second)
	}
	sameRows(t, src, tgt)
	if !strings.Contains(r.output(), "applied from") {
		t.Errorf("no progress line says what the delay waits for:\n%s", r.output())
	}

	// A stop while waiting: exit 0 at once, the waiting transaction not applied.
	if _, err := db.Exec("INSERT INTO w.log VALUES (1000000, 0, 'delayed')"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delay to hold", func() bool { _, ok := r.status(t).Throttled["delay"]; return ok })
	r.cmd.Process.Signal(syscall.SIGTERM)
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM\n%s", code, r.output())
	}
	tdb.QueryRow("SELECT COUNT(*) FROM w.log WHERE id = 1000000").Scan(&n)
	if n != 0 {
		t.Errorf("the waiting transaction was applied on stop")
	}
}
