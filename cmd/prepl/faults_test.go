package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"math/rand"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prepl/prepl/internal/faultproxy"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sandbox"
)

// faultProxy starts a faultproxy to addr that closes with the test.
func faultProxy(t *testing.T, addr string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.Start(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// liveWriter writes counterWorkload's transactions to the source from
// two sessions until stopped (at most max transactions: a bound, not a
// size; tests stop it).
type liveWriter struct {
	stop    chan struct{}
	done    sync.WaitGroup
	written atomic.Int64
	err     atomic.Value
}

func startWriter(t *testing.T, db *sql.DB, firstID, max int) *liveWriter {
	t.Helper()
	w := &liveWriter{stop: make(chan struct{})}
	for s := 0; s < 2; s++ {
		w.done.Add(1)
		go func() {
			defer w.done.Done()
			for i := firstID + s; i < firstID+max; i += 2 {
				select {
				case <-w.stop:
					return
				default:
				}
				tx, err := db.Begin()
				if err == nil {
					_, err = tx.Exec("INSERT INTO w.log VALUES (?, ?, 'live')", i, s)
				}
				if err == nil {
					_, err = tx.Exec("UPDATE w.hot SET n = n + 1 WHERE id = ?", i%4+1)
				}
				if err == nil {
					err = tx.Commit()
				}
				if err != nil {
					w.err.Store(err)
					return
				}
				w.written.Add(1)
			}
		}()
	}
	t.Cleanup(w.finish)
	return w
}

// finish stops the writer and waits for it.
func (w *liveWriter) finish() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	w.done.Wait()
}

// checkWriter fails the test when the writer met an error.
func (w *liveWriter) check(t *testing.T) {
	t.Helper()
	if err, _ := w.err.Load().(error); err != nil {
		t.Fatalf("source writer: %v", err)
	}
}

// caughtUpAndSame waits until prepl has applied everything the source has
// written (GTID positions equal), then stops prepl with SIGTERM and
// compares the target with the source.
func caughtUpAndSame(t *testing.T, r *running, src, tgt *sandbox.Server) {
	t.Helper()
	waitCaughtUp(t, r, sandbox.MustOpen(t, src, ""), sandbox.MustOpen(t, tgt, ""))
	r.cmd.Process.Signal(syscall.SIGTERM)
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM\n%s", code, r.output())
	}
	sameRows(t, src, tgt)
}

// waitCaughtUp waits until the position prepl stored on the target (tdb,
// MySQL or PostgreSQL) is the source's gtid_binlog_pos.
func waitCaughtUp(t *testing.T, r *running, sdb, tdb *sql.DB) {
	t.Helper()
	waitFor(t, "the target to catch up with the source", func() bool {
		select {
		case <-r.exited:
			t.Fatalf("prepl exited before catching up: %v\n%s", r.err, r.output())
		default:
		}
		var want, got string
		sdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&want)
		tdb.QueryRow("SELECT gtid_pos FROM prepl.position WHERE channel = 'default' AND slot = 'main'").Scan(&got)
		return want != "" && sameGTIDPos(want, got)
	})
}

// sameGTIDPos compares MariaDB GTID positions regardless of domain order.
func sameGTIDPos(a, b string) bool {
	pa, err1 := position.ParseMariaDBPos(a)
	pb, err2 := position.ParseMariaDBPos(b)
	if err1 != nil || err2 != nil || len(pa) != len(pb) {
		return false
	}
	for d, n := range pa {
		if pb[d] != n {
			return false
		}
	}
	return true
}

// logCount counts the log lines of r that contain s.
func logCount(r *running, s string) int { return strings.Count(r.output(), s) }

// TestSourceFaultsThroughProxy puts a fault proxy between prepl replicate
// and a source under writes, and injects each kind of fault while prepl
// streams: each run ends with target = source once the fault clears, or,
// for a fault that does not clear, with a clear error within
// --source-reconnect-timeout.
func TestSourceFaultsThroughProxy(t *testing.T) {
	t.Parallel() // it waits on kills, restarts and stalls: let it overlap
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	counterWorkload(t, db, 200, 2)
	nextID := 100000
	// each runs prepl through a new proxy while the source is written to,
	// and calls fault once prepl has applied part of the writes.
	each := func(t *testing.T, extra []string, fault func(*faultproxy.Proxy, *running)) (*running, *sandbox.Server) {
		tgt := targetServer(t)
		p := faultProxy(t, src.Addr())
		w := startWriter(t, db, nextID, 1000000)
		nextID += 1000000
		args := append([]string{"replicate", "--source", "mysql://root@" + p.Addr(), "--target", tgt.URL(), "--workers", "4",
			"--progress", "0", "--heartbeat", "200ms"}, extra...)
		r := startPrepl(t, args...)
		waitFor(t, "prepl to apply some live writes", func() bool { return r.status(t).Transactions.Applied > 250 })
		fault(p, r)
		w.finish()
		w.check(t)
		return r, tgt
	}

	t.Run("cut", func(t *testing.T) {
		r, tgt := each(t, []string{"--source-reconnect-timeout", "1m"}, func(p *faultproxy.Proxy, r *running) {
			for i := 1; i <= 3; i++ {
				before := r.status(t).Transactions.Applied
				p.Cut()
				waitFor(t, "a reconnect after the cut", func() bool { return logCount(r, "reconnected to source") >= i })
				waitFor(t, "progress after the reconnect", func() bool { return r.status(t).Transactions.Applied > before })
			}
		})
		caughtUpAndSame(t, r, src, tgt)
	})

	t.Run("stall-then-recover", func(t *testing.T) {
		r, tgt := each(t, []string{"--source-reconnect-timeout", "2m"}, func(p *faultproxy.Proxy, r *running) {
			accepted := p.Accepted()
			p.Set(faultproxy.Stall) // mid-stream: the open connection stops forwarding
			waitFor(t, "the silence to be noticed", func() bool { return logCount(r, "not even a heartbeat") >= 1 })
			// Reconnect attempts reach the stalled proxy and get no hello:
			// they must time out and be retried, not hang: a second
			// attempt is made only once the first has timed out.
			waitFor(t, "a reconnect attempt after one timed out in the stall", func() bool { return p.Accepted() >= accepted+2 })
			p.Set(faultproxy.Up)
			waitFor(t, "the reconnect once the stall clears", func() bool { return logCount(r, "reconnected to source") >= 1 })
		})
		caughtUpAndSame(t, r, src, tgt)
	})

	t.Run("corrupt-byte", func(t *testing.T) {
		r, tgt := each(t, []string{"--source-reconnect-timeout", "1m"}, func(p *faultproxy.Proxy, r *running) {
			p.CorruptNext(60)
			waitFor(t, "a byte to be corrupted", func() bool { return p.Corrupted() == 1 })
			waitFor(t, "the reconnect after the damaged event", func() bool { return logCount(r, "reconnected to source") >= 1 })
		})
		if !strings.Contains(r.output(), "checksum") {
			t.Errorf("the damaged event was not named as a checksum mismatch:\n%s", r.output())
		}
		caughtUpAndSame(t, r, src, tgt)
	})

	t.Run("stall-gives-up", func(t *testing.T) {
		const timeout = 5 * time.Second
		var stalled time.Time
		r, _ := each(t, []string{"--source-reconnect-timeout", timeout.String()}, func(p *faultproxy.Proxy, r *running) {
			stalled = time.Now()
			p.Set(faultproxy.Stall)
		})
		code := r.wait(t)
		took := time.Since(stalled)
		out := r.output()
		if code != 1 || !strings.Contains(out, "unreachable for") || !strings.Contains(out, "did not answer in time") {
			t.Fatalf("exit %d; want 1 with an error that the source did not answer:\n%s", code, out)
		}
		// Silence is noticed after 3 heartbeats + 2s, then the budget runs;
		// each connection attempt ends by the budget's end. The bound is
		// loose: it tells a give-up from a hang (minutes before).
		t.Logf("gave up %s after the stall began (--source-reconnect-timeout %s)", took.Round(100*time.Millisecond), timeout)
		if limit := timeout + 3*200*time.Millisecond + 2*time.Second + 15*time.Second; took > limit {
			t.Fatalf("gave up after %s, want within %s", took, limit)
		}
	})
}

// TestLagWhileSourceUnreachable makes the source unreachable while it is
// written to: prepl's lag grows in /status, /metrics and the progress
// line alike, and comes down again once the source is back.
func TestLagWhileSourceUnreachable(t *testing.T) {
	t.Parallel() // it waits on kills, restarts and stalls: let it overlap
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	counterWorkload(t, db, 200, 2)
	tgt := targetServer(t)
	p := faultProxy(t, src.Addr())
	w := startWriter(t, db, 100000, 1000000)
	r := startPrepl(t, "replicate", "--source", "mysql://root@"+p.Addr(), "--target", tgt.URL(), "--workers", "4",
		"--progress", "250ms", "--heartbeat", "200ms", "--source-reconnect-timeout", "5m")
	waitFor(t, "prepl to apply live writes", func() bool { return r.status(t).Transactions.Applied > 300 })

	p.Set(faultproxy.Down)
	var first float64
	waitFor(t, "a lag during the outage", func() bool { first = r.status(t).LagSeconds; return first > 0 })
	waitFor(t, "the lag to grow", func() bool { return r.status(t).LagSeconds >= first+1 })
	if m := scrape(t, r.addr)["prepl_lag_seconds"]; m < first+1 {
		t.Errorf("prepl_lag_seconds %v during the outage, /status said %v earlier", m, first+1)
	}
	// The progress line's lag (JSON logs: seconds, as in /status).
	progressLag := func() (last float64, ok bool) {
		for _, line := range strings.Split(r.output(), "\n") {
			var rec struct {
				Msg        string
				LagSeconds *float64 `json:"lag_seconds"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "progress" && rec.LagSeconds != nil {
				last, ok = *rec.LagSeconds, true
			}
		}
		return last, ok
	}
	waitFor(t, "a progress line with the outage's lag", func() bool {
		d, ok := progressLag()
		return ok && d >= first+1
	})
	if written := w.written.Load(); written == 0 {
		t.Fatal("the source was not written to during the outage")
	}
	w.finish()
	w.check(t)

	p.Set(faultproxy.Up)
	var high float64
	waitFor(t, "the lag to come down after the outage", func() bool {
		st := r.status(t)
		high = max(high, st.LagSeconds)
		return st.CaughtUp && st.LagSeconds < first
	})
	t.Logf("lag during the outage: first %.1fs, highest seen %.1fs", first, high)
	caughtUpAndSame(t, r, src, tgt)
}

// TestTargetKilledAtRandomMoments kills the target 20 times, each at a
// random moment of a prepl replicate run, from its first instant (before
// it has connected) to well into applying, and starts it again: every run
// ends with target = source, or with an error that names the target within
// --reconnect-timeout (and then a run without faults gives target =
// source). A run that ends before its kill moment does not count; the
// next moment is drawn within the length of that run, so kills land.
func TestTargetKilledAtRandomMoments(t *testing.T) {
	t.Parallel() // it waits on kills, restarts and stalls: let it overlap
	bin := preplBinary(t)
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	counterWorkload(t, db, 100, 2)
	tgt := targetServer(t)
	tp := faultProxy(t, tgt.Addr()) // the target may come back on another port
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	const reconnect = 30 * time.Second
	args := []string{"replicate", "--source", src.URL(), "--target", "mysql://root@" + tp.Addr(), "--workers", "4",
		"--commit-unit", "1", "--stop-at-end", "--progress", "0", "--reconnect-timeout", reconnect.String()}
	span := 1500 * time.Millisecond // kill moments are drawn from [0, span)
	kills, failures, early, retried := 0, 0, 0, 0
	for run := 0; kills < 20; run++ {
		if run == 60 {
			t.Fatalf("only %d kills landed in 60 runs", kills)
		}
		writeLog(t, db, 1000000+run*10000, 2000, 4)
		at := time.Duration(rng.Int63n(int64(span)))
		r := &preplProc{cmd: exec.Command(bin, args...), out: &strings.Builder{}, exited: make(chan error, 1)}
		r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
		began := time.Now()
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { r.exited <- r.cmd.Wait() }()
		var err error
		select {
		case err = <-r.exited: // done before the kill moment
			span = max(time.Since(began), 50*time.Millisecond)
			early++
			if err != nil {
				t.Fatalf("run %d: prepl failed with no fault: %v\n%s", run, err, r.out.String())
			}
			sameRows(t, src, tgt)
			continue
		case <-time.After(at):
		}
		tgt.Kill()
		kills++
		if rerr := tgt.Restart(context.Background()); rerr != nil {
			t.Fatal(rerr)
		}
		tp.SetUpstream(tgt.Addr())
		select {
		case err = <-r.exited:
		case <-time.After(reconnect + 2*time.Minute):
			r.cmd.Process.Kill()
			t.Fatalf("run %d: prepl hung after the target came back:\n%s", run, r.out.String())
		}
		out := r.out.String()
		lost := strings.Contains(out, "target connection lost") || strings.Contains(out, "reconnect")
		if lost {
			retried++
		}
		t.Logf("run %d: target killed %s after prepl started; prepl saw it: %v; exit: %v", run, at.Round(time.Millisecond), lost, err)
		if err != nil {
			if !strings.Contains(out, "target") {
				t.Fatalf("run %d: prepl failed without naming the target: %v\n%s", run, err, out)
			}
			failures++
			if code, out := runBin(bin, args); code != 0 {
				t.Fatalf("run %d: the run after the failure: exit %d\n%s", run, code, out)
			}
		}
		sameRows(t, src, tgt)
	}
	t.Logf("%d kills (%d seen by prepl as a lost connection): %d runs stopped with an error naming the target, the others reconnected and finished; %d runs ended before their kill moment",
		kills, retried, failures, early)
	if retried == 0 {
		t.Fatal("no kill was seen by prepl: the kills did not land while it used the target")
	}
}

// TestSourceIsTargetRefused: a target that is the source itself, by the
// same address or another way to it, is refused before anything is
// written to it.
func TestSourceIsTargetRefused(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	counterWorkload(t, db, 10, 1)
	p := faultProxy(t, src.Addr())
	for _, target := range []string{src.URL(), "mysql://root@localhost:" + strings.Split(src.Addr(), ":")[1], "mysql://root@" + p.Addr()} {
		code, out := prepl(t, "replicate", "--source", src.URL(), "--target", target, "--stop-at-end", "--progress", "0")
		if code != 2 || !strings.Contains(out, "are the same server") {
			t.Errorf("--target %s: exit %d; want 2, saying source and target are the same server:\n%s", target, code, out)
		}
	}
	var n int
	db.QueryRow("SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'prepl'").Scan(&n)
	if n != 0 {
		t.Error("the source got a prepl schema: something was written before the refusal")
	}
}

// TestTargetDownLagAndNoSourceReconnect makes the target unreachable while
// the source is written to: the transactions read wait, so the lag grows
// (never 0 while work is pending), and prepl, not reading meanwhile, does
// not take the source for silent and does not reconnect to it. Once the
// target is back, prepl catches up with target = source.
func TestTargetDownLagAndNoSourceReconnect(t *testing.T) {
	t.Parallel() // it waits on kills, restarts and stalls: let it overlap
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	counterWorkload(t, db, 200, 2)
	tgt := targetServer(t)
	tp := faultProxy(t, tgt.Addr())
	w := startWriter(t, db, 100000, 1000000)
	const heartbeat = 200 * time.Millisecond
	r := startPrepl(t, "replicate", "--source", src.URL(), "--target", "mysql://root@"+tp.Addr(), "--workers", "4",
		"--progress", "250ms", "--heartbeat", heartbeat.String(), "--reconnect-timeout", "5m")
	waitFor(t, "prepl to apply live writes", func() bool { return r.status(t).Transactions.Applied > 300 })

	tp.Set(faultproxy.Down)
	var first float64
	waitFor(t, "a lag while the target is down", func() bool {
		st := r.status(t)
		first = st.LagSeconds
		return first > 0 && st.InFlight > 0
	})
	// Longer than the source watchdog's timeout (3 heartbeats + 2s) past
	// the first lag seen: prepl has not read the source for that long.
	waitFor(t, "the lag to grow past the watchdog's timeout", func() bool {
		return r.status(t).LagSeconds >= first+(3*heartbeat+2*time.Second).Seconds()+1
	})
	if m := scrape(t, r.addr)["prepl_lag_seconds"]; m < first+1 {
		t.Errorf("prepl_lag_seconds %v while the target is down", m)
	}
	w.finish()
	w.check(t)
	tp.Set(faultproxy.Up)
	waitFor(t, "the catch-up after the target outage", func() bool {
		st := r.status(t)
		return st.CaughtUp && st.LagSeconds < first
	})
	if n := logCount(r, "not even a heartbeat"); n != 0 || r.status(t).Reconnects["source"] != 0 {
		t.Errorf("prepl took the source for silent while it did not read (%d times), source reconnects %d:\n%s",
			n, r.status(t).Reconnects["source"], r.output())
	}
	caughtUpAndSame(t, r, src, tgt)
}

// TestSourceStalledAtStart: a source that accepts connections and never
// answers, from prepl's first connection on, ends the run with an error
// that says so, not a hang.
func TestSourceStalledAtStart(t *testing.T) {
	t.Parallel() // it waits on kills, restarts and stalls: let it overlap
	src := source(t, nil)
	tgt := targetServer(t)
	p := faultProxy(t, src.Addr())
	p.Set(faultproxy.Stall)
	began := time.Now()
	code, out := runBin(preplBinary(t), []string{"replicate", "--source", "mysql://root@" + p.Addr(), "--target", tgt.URL(),
		"--progress", "0", "--source-reconnect-timeout", "5s"}) // killed after 3 minutes: a hang shows as -1
	t.Logf("exit %d after %s", code, time.Since(began).Round(100*time.Millisecond))
	if code != 1 || !strings.Contains(out, "did not answer within") {
		t.Fatalf("exit %d; want 1, saying the source did not answer:\n%s", code, out)
	}
}
