package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prepl/prepl/metrics"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sandbox"
)

// waitFor polls cond until it holds. The deadline only ends a test that
// hangs; no test depends on how fast anything is.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sourceTxns is how many transactions a sandbox source (one server id)
// has written: the sum over GTID domains of gtid_binlog_pos's sequence
// numbers.
func sourceTxns(t *testing.T, db *sql.DB) uint64 {
	t.Helper()
	var pos string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		t.Fatal(err)
	}
	seqs, err := position.ParseMariaDBPos(pos)
	if err != nil {
		t.Fatalf("gtid_binlog_pos: %v", err)
	}
	var total uint64
	for _, n := range seqs {
		total += n
	}
	return total
}

// running is a prepl process started from the binary, logging JSON.
type running struct {
	cmd    *exec.Cmd
	addr   string // --metrics-addr as bound
	mu     sync.Mutex
	log    strings.Builder
	exited chan struct{}
	err    error
}

// startPrepl starts the prepl binary with args plus --metrics-addr on a
// free port and JSON logs, and waits until it serves /status.
func startPrepl(t *testing.T, args ...string) *running {
	t.Helper()
	args = append(args, "--metrics-addr", "127.0.0.1:0", "--log-format", "json")
	r := &running{cmd: exec.Command(preplBinary(t), args...), exited: make(chan struct{})}
	stderr, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.cmd.Stdout = io.Discard
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			r.mu.Lock()
			r.log.WriteString(line + "\n")
			r.mu.Unlock()
			var rec struct{ Status string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Status != "" {
				select {
				case addr <- strings.TrimSuffix(strings.TrimPrefix(rec.Status, "http://"), "/status"):
				default:
				}
			}
		}
		r.err = r.cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-r.exited:
		default:
			r.cmd.Process.Kill()
			<-r.exited
		}
	})
	select {
	case r.addr = <-addr:
	case <-r.exited:
		t.Fatalf("prepl exited before serving /status: %v\n%s", r.err, r.output())
	case <-time.After(90 * time.Second):
		t.Fatalf("prepl did not log its status address\n%s", r.output())
	}
	return r
}

func (r *running) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.log.String()
}

func (r *running) status(t *testing.T) metrics.Status {
	t.Helper()
	st, err := metrics.Fetch(context.Background(), r.addr)
	if err != nil {
		t.Fatalf("GET /status: %v\n%s", err, r.output())
	}
	return st
}

// wait waits for the process to exit and returns its exit code.
func (r *running) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-r.exited:
	case <-time.After(2 * time.Minute):
		t.Fatalf("prepl did not exit\n%s", r.output())
	}
	if ee, ok := r.err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if r.err != nil {
		t.Fatalf("prepl: %v", r.err)
	}
	return 0
}

// scrape reads /metrics into series (as written: name{labels}) → value.
func scrape(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad metrics line %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

func TestMetricsAndStatusDuringRun(t *testing.T) {
	t.Parallel()
	src, tgt := source(t, nil), targetServer(t)
	db := sandbox.MustOpen(t, src, "")
	counterWorkload(t, db, 400, 4)
	first := sourceTxns(t, db)

	r := startPrepl(t, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--workers", "4", "--progress", "250ms")
	var st metrics.Status
	waitFor(t, "the first catch-up", func() bool {
		st = r.status(t)
		return st.CaughtUp && st.Transactions.Applied == first
	})
	if st.Command != "replicate" || st.Source != src.URL() || st.Target != tgt.URL() || st.Workers != 4 || st.Mode != "writeset" ||
		st.State != "running" || st.LagSeconds != 0 || st.InFlight != 0 || len(st.WorkerStates) != 4 || st.SourceEnd == nil {
		t.Errorf("status once caught up: %+v", st)
	}
	for i, w := range st.WorkerStates {
		if w.ID != i+1 || w.State == "" {
			t.Errorf("worker %d: %+v", i+1, w)
		}
	}
	m := scrape(t, r.addr)
	for series, want := range map[string]float64{
		"prepl_transactions_applied_total": float64(first), "prepl_lag_seconds": 0, "prepl_caught_up": 1,
		"prepl_in_flight_transactions": 0, "prepl_queue_bytes": 0, `prepl_reconnects_total{peer="source"}`: 0,
	} {
		if got, ok := m[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	for _, series := range []string{`prepl_worker_busy_seconds_total{worker="4"}`, "prepl_commit_unit_transactions_count",
		"prepl_window_bytes", "process_start_time_seconds", "go_goroutines"} {
		if _, ok := m[series]; !ok {
			t.Errorf("%s missing from /metrics", series)
		}
	}

	// More source writes: the counters move up to the new total, and never back.
	done := make(chan struct{})
	go func() { defer close(done); writeLog(t, db, 1000, 1200, 4) }()
	last := m["prepl_transactions_applied_total"]
	for moving := true; moving; {
		select {
		case <-done:
			moving = false
		default:
		}
		v := scrape(t, r.addr)["prepl_transactions_applied_total"]
		if v < last {
			t.Fatalf("prepl_transactions_applied_total went back from %v to %v", last, v)
		}
		last = v
	}
	total := sourceTxns(t, db)
	waitFor(t, "the second catch-up", func() bool {
		st = r.status(t)
		return st.CaughtUp && st.Transactions.Applied == total
	})
	m = scrape(t, r.addr)
	if m["prepl_transactions_applied_total"] != float64(total) || m["prepl_lag_seconds"] != 0 || m["prepl_rows_applied_total"] < float64(2*1200) {
		t.Errorf("after the second catch-up: applied %v (want %d), lag %v, rows %v",
			m["prepl_transactions_applied_total"], total, m["prepl_lag_seconds"], m["prepl_rows_applied_total"])
	}
	if st.Applied.LastGTID == "" || st.Read.LastGTID != st.Applied.LastGTID || st.Applied.GTIDPosition != st.SourceEnd.GTIDPos {
		t.Errorf("positions once caught up: read %+v applied %+v source %+v", st.Read, st.Applied, st.SourceEnd)
	}

	// prepl status shows the stored position and the live status.
	out := mustPrepl(t, "status", "--target", tgt.URL(), "--metrics-addr", r.addr)
	for _, want := range []string{"applied " + strconv.FormatUint(total, 10), "live: prepl", "replicate, running", "caught up: yes", "worker 4:"} {
		if !strings.Contains(out, want) {
			t.Errorf("prepl status lacks %q:\n%s", want, out)
		}
	}
	code, out := prepl(t, "status", "--target", tgt.URL(), "--metrics-addr", "127.0.0.1:1")
	if code != statusCritical || !strings.Contains(out, "live: no prepl answers at 127.0.0.1:1") || !strings.Contains(out, "applied") {
		t.Errorf("prepl status with nothing at the metrics address: exit %d, want %d (CRITICAL)\n%s", code, statusCritical, out)
	}

	waitFor(t, "a progress line and a caught-up line", func() bool {
		return strings.Contains(r.output(), `"msg":"progress"`) && strings.Contains(r.output(), `"msg":"caught up with the source"`)
	})
	for _, want := range []string{`"msg":"replicate started"`, `"lag_seconds":`, `"transactions_per_second":`} {
		if !strings.Contains(r.output(), want) {
			t.Errorf("log lacks %s", want)
		}
	}
	// Numbers are numbers, named as in /status.
	for _, line := range strings.Split(r.output(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "progress" {
			continue
		}
		for _, k := range []string{"lag_seconds", "transactions_per_second", "queue_bytes", "in_flight", "applied"} {
			if _, ok := rec[k].(float64); !ok {
				t.Errorf("progress line: %s = %#v, want a JSON number\n%s", k, rec[k], line)
			}
		}
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0\n%s", code, r.output())
	}
	sameRows(t, src, tgt)
}

// writeLog writes n transactions to counterWorkload's tables from
// sessions concurrent sessions, with log ids from first on.
func writeLog(t *testing.T, db *sql.DB, first, n, sessions int) {
	var wg sync.WaitGroup
	for s := 0; s < sessions; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := first + s; i < first+n; i += sessions {
				tx, err := db.Begin()
				if err == nil {
					_, err = tx.Exec("INSERT INTO w.log VALUES (?, ?, 'more')", i, s)
				}
				if err == nil {
					_, err = tx.Exec("UPDATE w.hot SET n = n + 1 WHERE id = ?", i%4+1)
				}
				if err == nil {
					err = tx.Commit()
				}
				if err != nil {
					t.Errorf("write log %d: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestSignalsStopCleanly stops prepl with SIGTERM while the source is
// being written to and prepl is applying, restarts it, and compares. Then
// it stops prepl with a second signal while the transactions in flight
// wait for a row lock held on the target, so that the graceful stop cannot
// end before it: prepl exits at once, and a restart still ends with target
// = source.
func TestSignalsStopCleanly(t *testing.T) {
	t.Parallel()
	src := source(t, func(o *sandbox.Options) { o.CommitWaitCount, o.CommitWaitUsec = 4, 2000 })
	tgt := targetServer(t)
	db := sandbox.MustOpen(t, src, "")
	counterWorkload(t, db, 2000, 8)
	args := []string{"replicate", "--source", src.URL(), "--target", tgt.URL(), "--workers", "4", "--commit-unit", "5", "--progress", "0"}

	// writeLive writes to the source until stopped; every transaction
	// changes hot row 1.
	writeLive := func(first int) (stop func()) {
		quit, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			for i := first; ; i++ {
				select {
				case <-quit:
					return
				default:
				}
				_, err := db.Exec("BEGIN; INSERT INTO w.log VALUES (?, 0, 'live'); UPDATE w.hot SET n = n + 1 WHERE id = 1; COMMIT", i)
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
		return func() { close(quit); <-done }
	}

	// One signal, mid-run.
	stop := writeLive(100000)
	r := startPrepl(t, args...)
	waitFor(t, "prepl to be applying", func() bool {
		st := r.status(t)
		return st.Transactions.Applied >= 300 && st.InFlight > 0
	})
	r.cmd.Process.Signal(syscall.SIGTERM)
	code := r.wait(t)
	stop()
	if code != 0 || !strings.Contains(r.output(), "stopped on signal") {
		t.Fatalf("one SIGTERM: exit %d, want 0 and a stop line\n%s", code, r.output())
	}
	mustPrepl(t, append(args[:len(args):len(args)], "--stop-at-end")...)
	sameRows(t, src, tgt)

	// Two signals while the transactions in flight wait for a lock on the
	// target: from here on every source transaction changes hot row 1.
	lock, err := sandbox.MustOpen(t, tgt, "").Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()
	if _, err := lock.Exec("UPDATE w.hot SET n = n + 1000000 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	stop = writeLive(200000)
	r = startPrepl(t, args...)
	waitFor(t, "transactions in flight", func() bool { return r.status(t).InFlight > 0 })
	r.cmd.Process.Signal(syscall.SIGTERM)
	waitFor(t, "prepl to acknowledge the first signal", func() bool { return strings.Contains(r.output(), "signal received") })
	r.cmd.Process.Signal(syscall.SIGTERM)
	code = r.wait(t)
	stop()
	lock.Rollback()
	if code != 128+int(syscall.SIGTERM) || !strings.Contains(r.output(), "second signal") {
		t.Fatalf("two SIGTERMs: exit %d, want %d\n%s", code, 128+int(syscall.SIGTERM), r.output())
	}

	mustPrepl(t, append(args[:len(args):len(args)], "--stop-at-end")...)
	sameRows(t, src, tgt)
}
